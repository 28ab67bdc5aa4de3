"""One board on one shard against the same board on three, on a Redis Cluster of its own, through
the store as the service calls it (bench/README.md, "1 shard against 3 shards")."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import multiprocessing
import os
import random
import sys
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, replace
from typing import Any

import redis

from leaderboards import store
from scripts.redis_cluster import LocalRedisCluster
from seasons.scoring import composite_score

from . import core
from .core import BenchError, at_least, latency_summary, percentile, program_main, say
from .engines import COMMAND_TIMEOUT_SECONDS, redis_facts, set_memory
from .environment import django_setup, settings_env
from .machine import Window, python_probe_ms
from .openloop import SendLag, slots
from .scores import ID_BYTES, MAX_LOADED_POINTS, SEASON_SECONDS, player_id, standings

KEY_PREFIX = "bench:shards:"
OPERATIONS = {"rank": "Rank (competition)", "top100": "Top 100", "ingest": "Ingest, batches of 100"}
TOP = BATCH = 100
TRIPS = "round trips in sequence / requests to nodes (COMMAND GETKEYS among them) / Redis commands"
# Calls each client makes before its window (connections made, slots learnt, scripts loaded),
# and how long after the phase is set up its window opens.
WARMUP_CALLS = 20
STARTUP_SECONDS = 120.0
START_DELAY_SECONDS = 3.0
# This machine is shared: a phase starts once the other processes have used at most QUIET_CORES
# over QUIET_WINDOW_SECONDS, and runs again when they took more during it.
QUIET_CORES = 0.25
QUIET_WINDOW_SECONDS = 2.0
OPTIONS = (
    ("--players", 1_000_000, "players"),
    ("--processes", 4, "client processes"),
    ("--closed-seconds", 10.0, "each closed-loop phase"),
    ("--open-seconds", 20.0, "each open-loop phase"),
    ("--rate-share", 0.5, "the reads' fixed rate, a share of the slower layout's closed-loop rate"),
    ("--ingest-rate", 6000.0, "standings a second offered"),
    ("--compare-players", 1000, "players whose ranks are compared"),
    ("--round-trip-calls", 1000, "calls the round trips are counted on"),
    ("--quiet-seconds", 120.0, "how long a phase waits at most for others to be quiet (0: not)"),
    ("--attempts", 3, "runs of a phase at most while other processes disturb it"),
)


@dataclass(frozen=True)
class Layout:
    name: str
    season_id: int
    shards: int


LAYOUTS = (Layout("1 shard", 1, 1), Layout("3 shards", 2, 3))


@dataclass(frozen=True)
class Load:
    """One client's part of a phase: `rate` calls a second from `offset` seconds after the
    window opens (open loop), or as many as it can (closed loop, rate None)."""

    operation: str
    layout: Layout
    players: int
    seed: int
    start_at: float  # the window's opening, time.time()
    seconds: float
    rate: float | None = None
    offset: float = 0.0


def operation_call(
    operation: str, layout: Layout, players: int, rng: random.Random
) -> Callable[[], object]:
    """One call of `operation` on `layout`'s season, a random player each time."""
    season, shards = layout.season_id, layout.shards
    if operation == "rank":
        player = lambda: player_id(rng.randrange(players))  # noqa: E731
        return lambda: store.read_rank(season, player(), competition=True, shards=shards)
    if operation == "top100":
        return lambda: store.read_page(season, offset=0, limit=TOP, competition=True, shards=shards)
    # The mirror's write: absolute totals that only rise, each above every loaded one, so ZADD GT
    # takes every write (a standing moved, as a new result moves it).
    raised = itertools.count(MAX_LOADED_POINTS + 1)

    def standing() -> store.StandingWrite:
        score = composite_score(
            points=next(raised), elapsed=rng.randrange(SEASON_SECONDS), lowest_first=False
        )
        return store.StandingWrite(season, player_id(rng.randrange(players)), score, shards=shards)

    return lambda: store.write_standings([standing() for _ in range(BATCH)])


_all_started: Any = None


def client_start(variables: dict[str, str], all_started: Any) -> None:
    """A client process: Django pointed at the cluster, as the harness is."""
    global _all_started
    _all_started = all_started
    django_setup(variables, migrate=False)


def client_ready() -> int:
    """Returns once every client process has started, so that each process takes one call."""
    _all_started.wait(timeout=STARTUP_SECONDS)
    return os.getpid()


def client_run(load: Load) -> dict[str, Any]:
    """One client's calls' latencies in ms (closed loop: from the call; open loop: from the
    call's slot), the calls it sent late, and the slots it never got to."""
    rng = random.Random(f"{load.seed}-{load.operation}-{load.offset}-{os.getpid()}")
    call = operation_call(load.operation, load.layout, load.players, rng)
    for _ in range(WARMUP_CALLS):
        call()
    start = time.monotonic() + (load.start_at - time.time())
    end, ready_early = start + load.seconds, start - time.monotonic()
    latencies: list[float] = []
    lag, unsent = SendLag(), 0
    if load.rate is None:
        time.sleep(max(0.0, start - time.monotonic()))
        while (began := time.monotonic()) < end:
            call()
            latencies.append((time.monotonic() - began) * 1000)
    else:
        for slot in (schedule := slots(start + load.offset, 1 / load.rate, end)):
            if time.monotonic() >= end:
                unsent = 1 + sum(1 for _ in schedule)
                break
            time.sleep(max(0.0, slot - time.monotonic()))
            lag.sent(slot)
            call()
            latencies.append((time.monotonic() - slot) * 1000)
    figures = {"latencies_ms": latencies, "late": lag.late, "unsent": unsent}
    return figures | {"ready_early": ready_early}


@dataclass
class Clients:
    """The pool of client processes, the parts each phase's CPU is split by, and how patient a
    phase is with the other processes of a shared machine."""

    pool: ProcessPoolExecutor
    processes: int
    cpu_groups: dict[str, int]
    options: Any

    def cores(self, window: Window) -> dict[str, Any]:
        """The three nodes, the clients (the harness among them), every other process."""
        cpu = window.cpu
        nodes, clients = sum(cpu[f"node {i}"] for i in (1, 2, 3)), cpu["clients"] + cpu["harness"]
        parts = {"redis_nodes": nodes, "clients": clients}
        parts["other"] = max(0.0, cpu["machine_busy"] - nodes - clients)
        rounded = {k: round(v, 3) for k, v in parts.items()}
        return rounded | {"machine_busy": cpu["machine_busy"], "by_part": cpu}

    def phase(
        self, operation: str, layout: Layout, seconds: float, rate: float | None
    ) -> dict[str, Any]:
        """The phase once the machine is quiet (waiting at most --quiet-seconds); again while the
        others took more than QUIET_CORES during it, --attempts times at most, keeping the
        attempt they disturbed least (by their CPU, never by the figures)."""
        tried = []
        for _ in range(self.options.attempts):
            began = time.monotonic()
            while time.monotonic() - began < self.options.quiet_seconds:
                with Window(self.cpu_groups) as window:
                    time.sleep(QUIET_WINDOW_SECONDS)
                if self.cores(window)["other"] <= QUIET_CORES:
                    break
            figures = self.phase_once(operation, layout, seconds, rate)
            tried.append(figures | {"quiet_waited_seconds": round(time.monotonic() - began, 1)})
            if figures["cpu_cores"]["other"] <= QUIET_CORES:
                break
        kept = min(tried, key=lambda figures: figures["cpu_cores"]["other"])
        return kept | {"attempts": len(tried)}

    def phase_once(
        self, operation: str, layout: Layout, seconds: float, rate: float | None
    ) -> dict[str, Any]:
        start_at, count = time.time() + START_DELAY_SECONDS, self.processes
        load = Load(operation, layout, self.options.players, self.options.seed, start_at, seconds)
        loads = [load] * count
        if rate is not None:  # open loop: the clients' slots interleave evenly
            loads = [replace(load, rate=rate / count, offset=i / rate) for i in range(count)]
        futures = [self.pool.submit(client_run, load) for load in loads]
        time.sleep(max(0.0, start_at - time.time()))
        window = Window(self.cpu_groups).start()
        time.sleep(max(0.0, start_at + seconds - time.time()))
        window.load_stopped()
        parts = [future.result(timeout=seconds + 120) for future in futures]
        if min(part["ready_early"] for part in parts) < 0:
            raise BenchError(f"{operation} on {layout.name}: a client was not ready in time")
        latencies = sorted(ms for part in parts for ms in part["latencies_ms"])
        cores = self.cores(window)
        figures: dict[str, Any] = {"seconds": seconds, "calls": len(latencies)}
        figures |= {"calls_per_s": round(len(latencies) / seconds, 1), **latency_summary(latencies)}
        figures |= {"p99_9_ms": round(percentile(latencies, 99.9), 4), "cpu_cores": cores}
        if latencies:
            per_call = seconds / len(latencies) * 1e6
            figures["redis_cpu_us_per_call"] = round(cores["redis_nodes"] * per_call, 1)
            figures["client_cpu_us_per_call"] = round(cores["clients"] * per_call, 1)
        if rate is not None:
            late, unsent = (sum(part[key] for part in parts) for key in ("late", "unsent"))
            figures.update(offered_per_s=rate, late=late, unsent=unsent)
        return figures


def round_trips(
    cluster: LocalRedisCluster, run: Callable[[int], None], calls: int
) -> dict[str, Any]:
    """Requests, commands and COMMAND GETKEYS each node received a call, by its own counters,
    over `calls` calls one at a time (`run(count)` makes them). Round trips in sequence = the most
    step requests a node got + GETKEYS. Each node's INFO, on a connection opened before, counts
    once: taken off."""

    def counters(node: redis.Redis) -> tuple[int, int, int]:
        info = node.info("stats", "commandstats")
        getkeys = int(info.get("cmdstat_command|getkeys", {}).get("calls", 0))
        return int(info["total_reads_processed"]), int(info["total_commands_processed"]), getkeys

    with contextlib.ExitStack() as stack:
        nodes = [stack.enter_context(cluster.node(port)) for port in cluster.ports]
        for node in nodes:
            node.ping()
        run(WARMUP_CALLS)
        before = [counters(node) for node in nodes]
        run(calls)
        after = [counters(node) for node in nodes]
    requests, commands, getkeys = (
        [(a[k] - b[k] - (k < 2)) / calls for a, b in zip(after, before, strict=True)]
        for k in (0, 1, 2)
    )
    steps = max(r - g for r, g in zip(requests, getkeys, strict=True))
    return {
        "calls": calls,
        "requests_per_node": [round(r, 2) for r in requests],
        "getkeys_per_node": [round(g, 2) for g in getkeys],
        "commands_per_node": [round(c, 2) for c in commands],
        "round_trips": round(steps + sum(getkeys), 2),
        "node_requests": round(sum(requests), 2),
        "getkeys": round(sum(getkeys), 2),
        "commands": round(sum(commands) - sum(getkeys), 2),
    }


def operation_round_trips(
    cluster: LocalRedisCluster, operation: str, layout: Layout, options: Any
) -> dict[str, Any]:
    """round_trips of `operation` as a thread calls the store (Django's views, Celery's mirror);
    for the rank also from the event loop (store.aread_rank, the API's rank endpoint)."""
    call = operation_call(operation, layout, options.players, random.Random(operation))
    calls, season, shards = options.round_trip_calls, layout.season_id, layout.shards

    def thread_calls(count: int) -> None:
        for _ in range(count):
            call()

    figures = {"round_trips": round_trips(cluster, thread_calls, calls)}
    if operation == "rank":
        rng = random.Random("event-loop")

        async def ranks(count: int) -> None:
            for _ in range(count):
                player = player_id(rng.randrange(options.players))
                await store.aread_rank(season, player, competition=True, shards=shards)

        with contextlib.closing(asyncio.new_event_loop()) as loop:
            run = lambda count: loop.run_until_complete(ranks(count))  # noqa: E731
            figures["round_trips_event_loop"] = round_trips(cluster, run, calls)
    return figures


def answers_compare(players: int, sample: int, seed: int) -> dict[str, Any]:
    """Both layouts give the same answers: the board's size, the competition rank of `sample`
    random players, and the top 100; a difference stops the run before anything is timed."""
    sizes = [store.board_size(lay.season_id, shards=lay.shards) for lay in LAYOUTS]
    if sizes != [players, players]:
        raise BenchError(f"board sizes {sizes}, {players} players loaded")
    rng = random.Random(f"compare-{seed}")
    for _ in range(sample):
        player = player_id(rng.randrange(players))
        one, three = (
            store.read_rank(lay.season_id, player, competition=True, shards=lay.shards)
            for lay in LAYOUTS
        )
        if one != three or one[1] is None:
            raise BenchError(f"rank of {player}: {one} on one shard, {three} on three")
    pages = [
        store.read_page(lay.season_id, offset=0, limit=TOP, competition=True, shards=lay.shards)
        for lay in LAYOUTS
    ]
    if pages[0] != pages[1] or len(pages[0][1]) != min(TOP, players):
        raise BenchError("the top 100 differs between one shard and three")
    equal = {"ranks_equal": True, "top100_equal": True}
    return {"board_size": sizes[0], "players_compared": sample} | equal


def placement(cluster: LocalRedisCluster, layout: Layout) -> dict[str, Any]:
    """Each of the layout's sets on the node that holds it (asked there: another would refuse),
    its players and MEMORY USAGE."""
    held, sets = cluster.keys_by_port(f"{KEY_PREFIX}*"), []
    for shard in range(layout.shards):
        key = store.standings_key(layout.season_id, layout.shards, shard)
        port = next(port for port, keys in held.items() if key in keys)
        with redis.Redis("127.0.0.1", port, socket_timeout=COMMAND_TIMEOUT_SECONDS) as node:
            players, usage = set_memory(node, key)
        node_number = cluster.ports.index(port) + 1
        sets.append({"shard": shard, "key": key, "node": node_number, "players": players})
        sets[-1]["memory_usage_bytes"] = usage
    nodes = range(1, len(cluster.ports) + 1)
    by_node = [sum(s["players"] for s in sets if s["node"] == i) for i in nodes]
    total, memory = sum(s["players"] for s in sets), sum(s["memory_usage_bytes"] for s in sets)
    per_player = round(memory / total, 1) if total else 0.0
    return {"sets": sets, "players_by_node": by_node, "memory_usage_bytes_per_player": per_player}


def on_cluster(
    cluster: LocalRedisCluster, clients: Clients, options: Any, result: dict[str, Any]
) -> None:
    with cluster.node(cluster.ports[0]) as node:
        engine, version, allocator = redis_facts(node)
    nodes = enumerate(zip(cluster.ports, cluster.servers, strict=True), 1)
    result |= {
        "engine": {"engine": engine, "version": version, "mem_allocator": allocator},
        "nodes": [{"node": i, "port": port, "pid": node.pid} for i, (port, node) in nodes],
        "cores": os.cpu_count(),
        "client_processes": clients.processes,
        "attempts": options.attempts,
        "quiet_seconds": options.quiet_seconds,
        "seasons": {layout.name: asdict(layout) for layout in LAYOUTS},
        "load": {},
        "placement": {},
        "operations": {},
    }
    for layout in LAYOUTS:
        say(f"loading {options.players:,} players on {layout.name}", "shards")
        began, season = time.monotonic(), layout.season_id
        chunks = lambda: standings(options.players, options.seed)  # noqa: E731
        loaded = store.rebuild_standings(season, chunks, worsening=False, shards=layout.shards)
        seconds = time.monotonic() - began
        result["load"][layout.name] = {"players": loaded, "seconds": round(seconds, 2)}
        result["load"][layout.name]["players_per_s"] = round(loaded / seconds)
        result["placement"][layout.name] = placement(cluster, layout)
    say("comparing the answers of both layouts", "shards")
    sample = min(options.compare_players, options.players)
    result["answers"] = answers_compare(options.players, sample, options.seed)
    for operation in OPERATIONS:
        layouts: dict[str, Any] = {}
        for layout in LAYOUTS:
            say(f"{operation} on {layout.name}: round trips, closed loop", "shards")
            figures = operation_round_trips(cluster, operation, layout, options)
            layouts[layout.name] = figures
            figures["closed"] = clients.phase(operation, layout, options.closed_seconds, None)
        if operation == "ingest":
            rate = options.ingest_rate / BATCH
        else:
            slower = min(figures["closed"]["calls_per_s"] for figures in layouts.values())
            rate = max(1, round(options.rate_share * slower))
        for layout in LAYOUTS:
            say(f"{operation} on {layout.name}: {rate:g}/s open loop", "shards")
            opened = clients.phase(operation, layout, options.open_seconds, rate)
            layouts[layout.name]["open"] = opened
        result["operations"][operation] = {"layouts": layouts, "fixed_rate": rate}


def other_cores(result: dict[str, Any]) -> dict[str, float]:
    """What the rest of the machine used during the timed phases kept, in cores, and how many
    phases it disturbed (above QUIET_CORES) or had to be run again for."""
    phases = [
        figures[loop]
        for operation in result["operations"].values()
        for figures in operation["layouts"].values()
        for loop in ("closed", "open")
    ]
    found = [phase["cpu_cores"]["other"] for phase in phases]
    return {
        "mean": round(sum(found) / len(found), 3),
        "max": round(max(found), 3),
        "phases": len(phases),
        "phases_disturbed": sum(other > QUIET_CORES for other in found),
        "phases_run_again": sum(phase["attempts"] > 1 for phase in phases),
    }


def _ratio(sharded: float, one: float) -> str:
    return f"{sharded / one:.2f}" if one else "–"


def _trips(t: dict[str, Any]) -> str:
    return f"{t['round_trips']:g} / {t['node_requests']:g} ({t['getkeys']:g}) / {t['commands']:g}"


def report(result: dict[str, Any]) -> str:
    one, sharded = names = [layout.name for layout in LAYOUTS]
    rows: list[tuple[str, ...]] = []
    others: list[list[str]] = [[], []]

    def add(label: str, cells: Iterable[str], ratio: str = "") -> None:
        rows.append((label, *cells, ratio))

    for operation, name in OPERATIONS.items():
        figures = result["operations"][operation]
        layouts = [figures["layouts"][n] for n in names]
        closed, opened = [f["closed"] for f in layouts], [f["open"] for f in layouts]
        scale, per = (BATCH, "standing") if operation == "ingest" else (1, "read")
        rates = [c["calls_per_s"] * scale for c in closed]
        unit = "standings/s" if operation == "ingest" else "reads/s"
        add(f"{name}, closed loop: {unit}", (f"{r:,.0f}" for r in rates), _ratio(*rates[::-1]))
        p50 = f"{_ratio(opened[1]['p50_ms'], opened[0]['p50_ms'])} (p50)"
        batches = figures["fixed_rate"]
        if operation == "ingest":
            offered = f"{batches * BATCH:,.0f} standings/s ({batches:g} batches/s)"
            cells = (f"{o['p50_ms']:.2f} / {o['p99_ms']:.2f}" for o in opened)
            add(f"{name} at {offered}: batch p50 / p99 ms", cells, p50)
        else:
            cells = (f"{o['p50_ms']:.2f} / {o['p99_ms']:.2f} / {o['p99_9_ms']:.2f}" for o in opened)
            add(f"{name} at {batches:,.0f}/s (open loop): p50 / p99 / p99.9 ms", cells, p50)
        add(f"{name}: {TRIPS}, a call", (_trips(f["round_trips"]) for f in layouts))
        if operation == "rank":
            label = f"{name} from the event loop (aread_rank, the API's rank endpoint): the same"
            add(label, (_trips(f["round_trips_event_loop"]) for f in layouts))
        cpu = [
            (c["redis_cpu_us_per_call"] / scale, c["client_cpu_us_per_call"] / scale)
            for c in closed
        ]
        cells = (f"{redis_us:.1f} / {client_us:.1f}" for redis_us, client_us in cpu)
        ratio = f"{_ratio(sum(cpu[1]), sum(cpu[0]))} (sum)"
        add(f"{name}: CPU a {per} at saturation, Redis / client (us)", cells, ratio)
        for cores, c in zip(others, closed, strict=True):
            cores.append(f"{c['cpu_cores']['other']:.2f}")
    label = "Other processes' CPU during the closed loops, rank / top 100 / ingest (cores)"
    add(label, (" / ".join(cores) for cores in others))
    loads = [result["load"][name]["players_per_s"] for name in names]
    add("Load (rebuild_standings): players/s", (f"{v:,.0f}" for v in loads), _ratio(*loads[::-1]))
    spread = [result["placement"][name] for name in names]
    add(
        "Players on node 1 / 2 / 3",
        (" / ".join(f"{c:,}" for c in s["players_by_node"]) for s in spread),
    )
    memory = [s["memory_usage_bytes_per_player"] for s in spread]
    cells = (f"{m:.1f}" for m in memory)
    add("MEMORY USAGE of the set(s): bytes a player", cells, _ratio(*memory[::-1]))
    engine, other, machine = result["engine"], result["machine"]["other_cores"], result["machine"]
    return "\n".join([
        f"1 shard vs 3 shards: {result['players']:,} players ({result['id_bytes']}-byte ids) on a "
        f"local Redis Cluster of 3 primaries ({engine['engine']} {engine['version']}), through "
        f"leaderboards/store.py; {result['client_processes']} client processes; the clients and "
        f"the 3 nodes share {result['cores']} cores",
        "",
        *core.table(f" | {one} | {sharded} | {sharded} / {one}", "lrrr", rows),
        "",
        f"Answers compared before timing: board size, competition ranks of "
        f"{result['answers']['players_compared']:,} random players and the top 100, equal on both "
        "layouts. Fixed rates: the same for both layouts. Each phase started once the other "
        f"processes on the machine had used at most {QUIET_CORES} cores over "
        f"{QUIET_WINDOW_SECONDS:g} s, and ran again (at most {result['attempts']} times) when they "
        f"took more during it, the least disturbed run kept: {other['phases_run_again']} of "
        f"{other['phases']} phases ran again, {other['phases_disturbed']} kept more than "
        f"{QUIET_CORES}; the others used {other['mean']:.2f} cores on average during the phases "
        f"kept (at most {other['max']:.2f}). Load average {machine['load_average_start'][0]:.2f} "
        f"at the start, {machine['load_average_end'][0]:.2f} at the end.",
    ])  # fmt: skip


def machine_now(when: str) -> dict[str, Any]:
    """The fixed Python loop's time and the load average (this machine is shared)."""
    load = [round(v, 2) for v in os.getloadavg()]
    return {f"python_probe_ms_{when}": python_probe_ms(), f"load_average_{when}": load}


def measure(options: Any, result: dict[str, Any]) -> None:
    """The cluster started, Django pointed at it and the client processes started, then both
    layouts measured on it; the cluster stopped however that ends."""
    result |= {"players": options.players, "id_bytes": ID_BYTES, "seed": options.seed}
    machine, cluster = machine_now("start"), LocalRedisCluster()
    try:
        say(f"starting a Redis Cluster of 3 primaries on {cluster.ports}", "shards")
        cluster.start()
        variables = settings_env(
            LEADERBOARD_REDIS_URL=cluster.url,
            LEADERBOARD_REDIS_CLUSTER="true",
            LEADERBOARD_KEY_PREFIX=KEY_PREFIX,
        )
        django_setup(variables, migrate=False)
        context, count = multiprocessing.get_context("spawn"), options.processes
        initargs = (variables, context.Barrier(count))
        with ProcessPoolExecutor(
            count, mp_context=context, initializer=client_start, initargs=initargs
        ) as pool:
            futures = [pool.submit(client_ready) for _ in range(count)]
            pids = {future.result(timeout=STARTUP_SECONDS) for future in futures}
            if len(pids) != count:
                raise BenchError(f"{len(pids)} client processes started, not {count}")
            groups = {f"node {i}": node.pid for i, node in enumerate(cluster.servers, start=1)}
            clients = Clients(pool, count, groups | {"clients": os.getpid()}, options)
            on_cluster(cluster, clients, options, result)
    finally:
        cluster.stop()
    result["machine"] = machine | machine_now("end") | {"other_cores": other_cores(result)}


def main(argv: list[str] | None = None) -> int:
    check = at_least(players=TOP, processes=1, attempts=1)
    return program_main("shards", __doc__, OPTIONS, argv, check, measure, report)


if __name__ == "__main__":
    sys.exit(main())
