"""One board on one shard against the same board on three, side by side on a local Redis Cluster
of three primaries that this command starts (nothing on disk) and stops: the same players in two
seasons, one a single sorted set (on one node), the other spread over three sets (one a node), read
and written through the store (leaderboards/store.py) as the service reads and writes them.

    python -m bench.shards [--players 1000000]

The store needs only a season's id and its shards: the two seasons are the ids 1 (one shard) and
2 (three shards) under the bench's own key prefix on the bench's own cluster, with no Board or
Season rows and no database. Both are loaded with store.rebuild_standings (12-byte ids as
bench/engines.py's, points and times from bench/scores.py); their answers (the board's size,
competition ranks of a sample of players, the top 100) are compared before anything is timed.
Then, for each layout: rank and top-100 reads and the mirror's write (write_standings, batches of
100) from several client processes, closed loop (as fast as they go) and open loop at one fixed
rate for both layouts (each call timed from its slot, so a call that waited for the one before
it counts the wait); the round trips and node requests of each operation, from the nodes' own
counters; players and memory per node. The clients and the three nodes share the machine's cores.

Results go to bench/results/shards-latest.json, and a Markdown table to the standard output.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import multiprocessing
import os
import random
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any

import redis
import redis.cluster

from leaderboards import store
from scripts import devservices
from scripts.redis_cluster import LocalRedisCluster
from seasons.scoring import composite_score

from .engines import COMMAND_TIMEOUT_SECONDS, ID_BYTES, SEASON_SECONDS, player_id
from .environment import SETTINGS_MODULE, django_setup
from .errors import BenchError
from .machine import python_probe_ms
from .options import seed_and_results_file_add
from .processes import stop_on_sigterm
from .scores import CHUNK, MAX_LOADED_POINTS, chunk_scores
from .stats import latency_summary, percentile
from .window import Window

KEY_PREFIX = "bench:shards:"
OPERATIONS = ("rank", "top100", "ingest")
TOP = 100
BATCH = 100
# Calls each client makes before its window (connections made, the cluster's slots learnt,
# scripts loaded), and how long after the phase is set up its window opens.
WARMUP_CALLS = 20
STARTUP_SECONDS = 120.0
START_DELAY_SECONDS = 3.0
# An open-loop call sent this long after its slot counts as late: the client, not Redis, fell
# behind (the slot's wait is in its latency either way).
LATE_SECONDS = 0.05
# This machine is shared: a phase starts once the other processes have used at most QUIET_CORES
# over QUIET_WINDOW_SECONDS, and runs again when they took more during it.
QUIET_CORES = 0.25
QUIET_WINDOW_SECONDS = 2.0


@dataclass(frozen=True)
class Layout:
    name: str
    season_id: int
    shards: int


LAYOUTS = (Layout("1 shard", 1, 1), Layout("3 shards", 2, 3))


@dataclass(frozen=True)
class Load:
    """What one client process does in a phase: `rate` calls a second from `offset` seconds after
    the window opens (open loop), or as many as it can (closed loop, rate None)."""

    operation: str
    layout: Layout
    players: int
    seed: int
    start_at: float  # the window's opening, time.time()
    seconds: float
    rate: float | None = None
    offset: float = 0.0


def season_chunks(players: int, seed: int) -> Iterator[list[tuple[str, int]]]:
    """The bench's players with their composite scores, a chunk at a time."""
    for start in range(0, players, CHUNK):
        count = min(CHUNK, players - start)
        points, elapsed = chunk_scores(seed, start, count, SEASON_SECONDS)
        yield [
            (
                player_id(start + i),
                composite_score(points=points[i], elapsed=elapsed[i], lowest_first=False),
            )
            for i in range(count)
        ]


def operation_call(
    operation: str, layout: Layout, *, players: int, rng: random.Random
) -> Callable[[], object]:
    """One call of `operation` on `layout`'s season, a random player each time."""
    season, shards = layout.season_id, layout.shards
    if operation == "rank":
        return lambda: store.read_rank(
            season, player_id(rng.randrange(players)), competition=True, shards=shards
        )
    if operation == "top100":
        return lambda: store.read_page(season, offset=0, limit=TOP, competition=True, shards=shards)
    # The mirror's write: absolute totals that only rise, each above every loaded one, so ZADD GT
    # takes every write (a standing moved, as a new result moves it).
    raised = itertools.count(MAX_LOADED_POINTS + 1)
    return lambda: store.write_standings(
        [
            store.StandingWrite(
                season,
                player_id(rng.randrange(players)),
                composite_score(
                    points=next(raised), elapsed=rng.randrange(SEASON_SECONDS), lowest_first=False
                ),
                shards=shards,
            )
            for _ in range(BATCH)
        ]
    )


_all_started: Any = None


def client_start(variables: dict[str, str], all_started: Any) -> None:
    """A client process: Django pointed at the cluster, as the harness is."""
    global _all_started
    _all_started = all_started
    django_setup(variables, migrate=False)


def client_ready() -> int:
    """Returns once every client process has started (each holds one of these calls until then,
    so each process takes one)."""
    _all_started.wait(timeout=STARTUP_SECONDS)
    return os.getpid()


def client_run(load: Load) -> dict[str, Any]:
    """One client's part of a phase: its calls' latencies in ms (closed loop: from the call; open
    loop: from the call's slot), the calls it sent late, and the slots it never got to."""
    rng = random.Random(f"{load.seed}-{load.operation}-{load.offset}-{os.getpid()}")
    call = operation_call(load.operation, load.layout, players=load.players, rng=rng)
    for _ in range(WARMUP_CALLS):
        call()
    start = time.perf_counter() + (load.start_at - time.time())
    end = start + load.seconds
    ready_early = start - time.perf_counter()
    latencies: list[float] = []
    late = unsent = 0
    if load.rate is None:
        time.sleep(max(0.0, start - time.perf_counter()))
        while (began := time.perf_counter()) < end:
            call()
            latencies.append((time.perf_counter() - began) * 1000)
    else:
        interval = 1 / load.rate
        due = start + load.offset
        while due < end:
            now = time.perf_counter()
            if now >= end:
                unsent += 1
            else:
                if now < due:
                    time.sleep(due - now)
                if time.perf_counter() - due > LATE_SECONDS:
                    late += 1
                call()
                latencies.append((time.perf_counter() - due) * 1000)
            due += interval
    return {"latencies_ms": latencies, "late": late, "unsent": unsent, "ready_early": ready_early}


@dataclass
class Clients:
    """The pool of client processes, what the CPU of each phase is split by, and how patient a
    phase is with the other processes of a shared machine."""

    pool: ProcessPoolExecutor
    processes: int
    cpu_groups: dict[str, int]
    quiet_seconds: float
    attempts: int

    def cores(self, window: Window) -> dict[str, Any]:
        """The window's CPU in cores: the three nodes, the clients (the harness among them), and
        every other process on the machine."""
        cpu = window.figures()["cpu_cores"]
        redis_cores = sum(cpu[f"node {i}"] for i in (1, 2, 3))
        client_cores = cpu["clients"] + cpu["harness"]
        return {
            "redis_nodes": round(redis_cores, 3),
            "clients": round(client_cores, 3),
            "other": round(max(0.0, cpu["machine_busy"] - redis_cores - client_cores), 3),
            "machine_busy": cpu["machine_busy"],
            "by_part": cpu,
        }

    def quiet_wait(self) -> float:
        """Wait (at most quiet_seconds) until the other processes have used at most QUIET_CORES
        over QUIET_WINDOW_SECONDS; returns the seconds waited."""
        began = time.monotonic()
        while time.monotonic() - began < self.quiet_seconds:
            with Window(cpu_groups=self.cpu_groups) as window:
                time.sleep(QUIET_WINDOW_SECONDS)
            if self.cores(window)["other"] <= QUIET_CORES:
                break
        return round(time.monotonic() - began, 1)

    def phase(
        self,
        operation: str,
        layout: Layout,
        *,
        players: int,
        seed: int,
        seconds: float,
        rate: float | None,
    ) -> dict[str, Any]:
        """The phase once the machine is quiet; again while other processes took more than
        QUIET_CORES during it, `attempts` times at most, keeping the attempt they disturbed least
        (chosen by the others' CPU, never by the figures)."""
        tried = []
        for _ in range(self.attempts):
            waited = self.quiet_wait()
            figures = self.phase_once(
                operation, layout, players=players, seed=seed, seconds=seconds, rate=rate
            )
            tried.append({**figures, "quiet_waited_seconds": waited})
            if figures["cpu_cores"]["other"] <= QUIET_CORES:
                break
        kept = min(tried, key=lambda figures: figures["cpu_cores"]["other"])
        return {**kept, "attempts": len(tried)}

    def phase_once(
        self,
        operation: str,
        layout: Layout,
        *,
        players: int,
        seed: int,
        seconds: float,
        rate: float | None,
    ) -> dict[str, Any]:
        start_at = time.time() + START_DELAY_SECONDS
        loads = [
            Load(
                operation,
                layout,
                players,
                seed,
                start_at,
                seconds,
                rate=None if rate is None else rate / self.processes,
                # The clients' slots interleave evenly.
                offset=0.0 if rate is None else index / rate,
            )
            for index in range(self.processes)
        ]
        futures = [self.pool.submit(client_run, load) for load in loads]
        time.sleep(max(0.0, start_at - time.time()))
        window = Window(cpu_groups=self.cpu_groups).start()
        time.sleep(max(0.0, start_at + seconds - time.time()))
        window.load_stopped()
        parts = [future.result(timeout=seconds + 120) for future in futures]
        if min(part["ready_early"] for part in parts) < 0:
            raise BenchError(f"{operation} on {layout.name}: a client was not ready in time")
        latencies = sorted(ms for part in parts for ms in part["latencies_ms"])
        calls = len(latencies)
        cores = self.cores(window)
        figures: dict[str, Any] = {
            "seconds": seconds,
            "calls": calls,
            "calls_per_s": round(calls / seconds, 1),
            **latency_summary(latencies),
            "p99_9_ms": round(percentile(latencies, 99.9), 4),
            "cpu_cores": cores,
        }
        if calls:
            per_call = seconds / calls * 1e6
            figures["redis_cpu_us_per_call"] = round(cores["redis_nodes"] * per_call, 1)
            figures["client_cpu_us_per_call"] = round(cores["clients"] * per_call, 1)
        if rate is not None:
            figures.update(
                offered_per_s=rate,
                late=sum(part["late"] for part in parts),
                unsent=sum(part["unsent"] for part in parts),
            )
        return figures


@dataclass(frozen=True)
class NodeCounters:
    requests: int  # read events: a request's arrival, one for a whole pipeline
    commands: int  # a script's own commands among them
    getkeys: int  # COMMAND GETKEYS: a client asking where a command's keys are


def node_counters(nodes: list[redis.Redis]) -> list[NodeCounters]:
    counters = []
    for node in nodes:
        info = node.info("stats", "commandstats")
        counters.append(
            NodeCounters(
                int(info["total_reads_processed"]),
                int(info["total_commands_processed"]),
                int(info.get("cmdstat_command|getkeys", {}).get("calls", 0)),
            )
        )
    return counters


def round_trips(
    cluster: LocalRedisCluster, run: Callable[[int], None], *, calls: int
) -> dict[str, Any]:
    """What each node received a call, over `calls` calls one at a time (`run(count)` makes
    them), from the nodes' own counters (each node's INFO is asked on a connection opened
    before, and counts once in its own figures: taken off). Within one of the store's steps the
    nodes are asked in parallel (redis-py's cluster pipeline writes to every node, then reads),
    so a step waits for the node asked most; a COMMAND GETKEYS is a call of its own, made while
    the pipeline is routed, before anything of it is sent. Round trips in sequence = the most
    requests any node got for the store's steps + the COMMAND GETKEYS."""
    nodes = [cluster.node(port) for port in cluster.ports]
    try:
        for node in nodes:
            node.ping()
        run(WARMUP_CALLS)
        before = node_counters(nodes)
        run(calls)
        after = node_counters(nodes)
    finally:
        for node in nodes:
            node.close()
    getkeys = [(a.getkeys - b.getkeys) / calls for a, b in zip(after, before, strict=True)]
    requests = [(a.requests - b.requests - 1) / calls for a, b in zip(after, before, strict=True)]
    commands = [(a.commands - b.commands - 1) / calls for a, b in zip(after, before, strict=True)]
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


def store_round_trips(
    cluster: LocalRedisCluster, operation: str, layout: Layout, *, players: int, calls: int
) -> dict[str, Any]:
    """round_trips of `operation` as a thread calls the store (Django's views, Celery's mirror)."""
    call = operation_call(operation, layout, players=players, rng=random.Random(operation))

    def run(count: int) -> None:
        for _ in range(count):
            call()

    return round_trips(cluster, run, calls=calls)


def event_loop_round_trips(
    cluster: LocalRedisCluster, layout: Layout, *, players: int, calls: int
) -> dict[str, Any]:
    """round_trips of the rank read from the event loop (store.aread_rank, what the API's rank
    endpoint runs: leaderboards/fast_reads.py), all on one loop, as a web process runs it."""
    rng = random.Random("event-loop")

    async def ranks(count: int) -> None:
        for _ in range(count):
            player = player_id(rng.randrange(players))
            await store.aread_rank(layout.season_id, player, competition=True, shards=layout.shards)

    loop = asyncio.new_event_loop()
    try:
        return round_trips(
            cluster, lambda count: loop.run_until_complete(ranks(count)), calls=calls
        )
    finally:
        loop.close()


def answers_compare(*, players: int, sample: int, seed: int) -> dict[str, Any]:
    """Both layouts give the same answers: the board's size, the competition rank of `sample`
    random players, and the top 100; a difference stops the run before anything is timed."""
    one, sharded = LAYOUTS
    sizes = [store.board_size(layout.season_id, shards=layout.shards) for layout in LAYOUTS]
    if sizes != [players, players]:
        raise BenchError(f"board sizes {sizes}, {players} players loaded")
    rng = random.Random(f"compare-{seed}")
    for _ in range(sample):
        player = player_id(rng.randrange(players))
        answers = [
            store.read_rank(layout.season_id, player, competition=True, shards=layout.shards)
            for layout in (one, sharded)
        ]
        if answers[0] != answers[1] or answers[0][1] is None:
            raise BenchError(f"rank of {player}: {answers[0]} on one shard, {answers[1]} on three")
    pages = [
        store.read_page(
            layout.season_id, offset=0, limit=TOP, competition=True, shards=layout.shards
        )
        for layout in (one, sharded)
    ]
    if pages[0] != pages[1] or len(pages[0][1]) != min(TOP, players):
        raise BenchError("the top 100 differs between one shard and three")
    return {
        "board_size": sizes[0],
        "players_compared": sample,
        "ranks_equal": True,
        "top100_equal": True,
    }


def placement(cluster: LocalRedisCluster, layout: Layout) -> dict[str, Any]:
    """Each of the layout's sets on the node that holds it (asked directly: a node that did not
    hold it would refuse), its players and MEMORY USAGE (SAMPLES 0: every element)."""
    router = redis.cluster.RedisCluster.from_url(cluster.url, decode_responses=True)
    try:
        sets = []
        for shard in range(layout.shards):
            key = store.standings_key(layout.season_id, layout.shards, shard)
            port = int(router.get_node_from_key(key).port)
            with redis.Redis("127.0.0.1", port, socket_timeout=COMMAND_TIMEOUT_SECONDS) as node:
                players = int(node.zcard(key))
                usage = int(node.memory_usage(key, samples=0) or 0)
            sets.append(
                {
                    "shard": shard,
                    "key": key,
                    "node": cluster.ports.index(port) + 1,
                    "players": players,
                    "memory_usage_bytes": usage,
                }
            )
    finally:
        router.close()
    players_by_node = [0] * len(cluster.ports)
    for found in sets:
        players_by_node[found["node"] - 1] += found["players"]
    total = sum(found["players"] for found in sets)
    memory = sum(found["memory_usage_bytes"] for found in sets)
    return {
        "sets": sets,
        "players_by_node": players_by_node,
        "memory_usage_bytes_per_player": round(memory / total, 1) if total else 0.0,
    }


def engine_of(cluster: LocalRedisCluster) -> dict[str, str]:
    with cluster.node(cluster.ports[0]) as node:
        engine, version = devservices.server_engine(node.info("server"))
        allocator = str(node.info("memory")["mem_allocator"])
    return {"engine": engine, "version": version, "mem_allocator": allocator}


def _ratio(sharded: float, one: float) -> str:
    return f"{sharded / one:.2f}" if one else "–"


def _trips_cells(trips: list[dict[str, Any]]) -> str:
    return (
        "".join(
            f"| {t['round_trips']:g} / {t['node_requests']:g} ({t['getkeys']:g}) "
            f"/ {t['commands']:g} "
            for t in trips
        )
        + "| |"
    )


def table(result: dict[str, Any]) -> str:
    one, sharded = (layout.name for layout in LAYOUTS)
    engine = result["engine"]
    lines = [
        f"1 shard vs 3 shards: {result['players']:,} players ({result['id_bytes']}-byte ids) on a "
        f"local Redis Cluster of 3 primaries ({engine['engine']} {engine['version']}), through "
        f"leaderboards/store.py; {result['client_processes']} client processes; the clients and "
        f"the 3 nodes share {result['cores']} cores",
        "",
        f"| | {one} | {sharded} | {sharded} / {one} |",
        "|---|---:|---:|---:|",
    ]
    names = {"rank": "Rank (competition)", "top100": "Top 100", "ingest": "Ingest, batches of 100"}
    for operation in OPERATIONS:
        figures = result["operations"][operation]
        layouts = [figures["layouts"][one], figures["layouts"][sharded]]
        closed = [layout["closed"] for layout in layouts]
        opened = [layout["open"] for layout in layouts]
        trips = [layout["round_trips"] for layout in layouts]
        name = names[operation]
        if operation == "ingest":
            rates = [c["calls_per_s"] * BATCH for c in closed]
            lines.append(
                f"| {name}, closed loop: standings/s | {rates[0]:,.0f} | {rates[1]:,.0f} "
                f"| {_ratio(rates[1], rates[0])} |"
            )
            batches = figures["fixed_rate"]
            offered = f"{batches * BATCH:,.0f} standings/s ({batches:g} batches/s)"
            lines.append(
                f"| {name} at {offered}: batch p50 / p99 ms "
                + "".join(f"| {o['p50_ms']:.2f} / {o['p99_ms']:.2f} " for o in opened)
                + f"| {_ratio(opened[1]['p50_ms'], opened[0]['p50_ms'])} (p50) |"
            )
        else:
            rates = [c["calls_per_s"] for c in closed]
            lines.append(
                f"| {name}, closed loop: reads/s | {rates[0]:,.0f} | {rates[1]:,.0f} "
                f"| {_ratio(rates[1], rates[0])} |"
            )
            lines.append(
                f"| {name} at {figures['fixed_rate']:,.0f}/s (open loop): p50 / p99 / p99.9 ms "
                + "".join(
                    f"| {o['p50_ms']:.2f} / {o['p99_ms']:.2f} / {o['p99_9_ms']:.2f} "
                    for o in opened
                )
                + f"| {_ratio(opened[1]['p50_ms'], opened[0]['p50_ms'])} (p50) |"
            )
        lines.append(
            f"| {name}: round trips in sequence / requests to nodes (COMMAND GETKEYS among them) "
            "/ Redis commands, a call " + _trips_cells(trips)
        )
        if operation == "rank":
            lines.append(
                f"| {name} from the event loop (aread_rank, the API's rank endpoint): the same "
                + _trips_cells([layout["round_trips_event_loop"] for layout in layouts])
            )
        per = "standing" if operation == "ingest" else "read"
        scale = BATCH if operation == "ingest" else 1
        cpu = [
            (c["redis_cpu_us_per_call"] / scale, c["client_cpu_us_per_call"] / scale)
            for c in closed
        ]
        lines.append(
            f"| {name}: CPU a {per} at saturation, Redis / client (us) "
            + "".join(f"| {redis_us:.1f} / {client_us:.1f} " for redis_us, client_us in cpu)
            + f"| {_ratio(sum(cpu[1]), sum(cpu[0]))} (sum) |"
        )
    others = [
        " / ".join(
            f"{result['operations'][operation]['layouts'][name]['closed']['cpu_cores']['other']:.2f}"
            for operation in OPERATIONS
        )
        for name in (one, sharded)
    ]
    lines.append(
        "| Other processes' CPU during the closed loops, rank / top 100 / ingest (cores) "
        + "".join(f"| {found} " for found in others)
        + "| |"
    )
    loads = [result["load"][name] for name in (one, sharded)]
    lines.append(
        "| Load (rebuild_standings): players/s "
        + "".join(f"| {load['players_per_s']:,.0f} " for load in loads)
        + f"| {_ratio(loads[1]['players_per_s'], loads[0]['players_per_s'])} |"
    )
    spread = [result["placement"][name] for name in (one, sharded)]
    lines.append(
        "| Players on node 1 / 2 / 3 "
        + "".join(
            "| " + " / ".join(f"{count:,}" for count in found["players_by_node"]) + " "
            for found in spread
        )
        + "| |"
    )
    memory = [found["memory_usage_bytes_per_player"] for found in spread]
    lines.append(
        "| MEMORY USAGE of the set(s): bytes a player "
        + "".join(f"| {per_player:.1f} " for per_player in memory)
        + f"| {_ratio(memory[1], memory[0])} |"
    )
    answers = result["answers"]
    other = result["machine"]["other_cores"]
    lines += [
        "",
        f"Answers compared before timing: board size, competition ranks of "
        f"{answers['players_compared']:,} random players and the top 100, equal on both layouts. "
        "Fixed rates: the same for both layouts. Each phase started once the other processes on "
        f"the machine had used at most {QUIET_CORES} cores over {QUIET_WINDOW_SECONDS:g} s, and "
        f"ran again (at most {result['attempts']} times) when they took more during it, the least "
        f"disturbed run kept: {other['phases_run_again']} of {other['phases']} phases ran again, "
        f"{other['phases_disturbed']} kept more than {QUIET_CORES}; the others used "
        f"{other['mean']:.2f} cores on average during the phases kept (at most "
        f"{other['max']:.2f}). Load average {result['machine']['load_average_start'][0]:.2f} at "
        f"the start, {result['machine']['load_average_end'][0]:.2f} at the end.",
    ]
    return "\n".join(lines)


def options_parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.shards", description=__doc__)
    parser.add_argument("--players", type=int, default=1_000_000, help="players (1,000,000)")
    parser.add_argument("--processes", type=int, default=4, help="client processes (4)")
    parser.add_argument(
        "--closed-seconds", type=float, default=10.0, help="each closed-loop phase (10)"
    )
    parser.add_argument(
        "--open-seconds", type=float, default=20.0, help="each open-loop phase (20)"
    )
    parser.add_argument(
        "--rate-share",
        type=float,
        default=0.5,
        help="the reads' fixed rate, a share of the slower layout's closed-loop rate (0.5)",
    )
    parser.add_argument(
        "--ingest-rate", type=float, default=6000.0, help="standings a second offered (6,000)"
    )
    parser.add_argument(
        "--compare-players", type=int, default=1000, help="players whose ranks are compared (1,000)"
    )
    parser.add_argument(
        "--round-trip-calls", type=int, default=1000, help="calls the round trips are counted on"
    )
    parser.add_argument(
        "--quiet-seconds",
        type=float,
        default=120.0,
        help="how long a phase waits at most for the other processes to be quiet (120; 0: not)",
    )
    parser.add_argument(
        "--attempts",
        type=int,
        default=3,
        help="runs of a phase at most while other processes disturb it (3)",
    )
    seed_and_results_file_add(parser, "shards-latest.json")
    options = parser.parse_args(argv)
    if options.players < TOP:
        parser.error(f"--players must be at least {TOP}")
    if options.processes < 1 or options.attempts < 1:
        parser.error("--processes and --attempts must be at least 1")
    return options


def measure(cluster: LocalRedisCluster, clients: Clients, options: argparse.Namespace) -> dict:
    players, seed = options.players, options.seed
    result: dict[str, Any] = {
        "benchmark": "shards",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "players": players,
        "id_bytes": ID_BYTES,
        "seed": seed,
        "engine": engine_of(cluster),
        "nodes": [
            {"node": i, "port": port, "pid": node.pid}
            for i, (port, node) in enumerate(zip(cluster.ports, cluster.processes, strict=True), 1)
        ],
        "cores": os.cpu_count(),
        "client_processes": clients.processes,
        "attempts": clients.attempts,
        "quiet_seconds": clients.quiet_seconds,
        "seasons": {layout.name: asdict(layout) for layout in LAYOUTS},
        "load": {},
        "placement": {},
        "operations": {},
    }
    for layout in LAYOUTS:
        print(f"[shards] loading {players:,} players on {layout.name}", flush=True)
        began = time.monotonic()
        loaded = store.rebuild_standings(
            layout.season_id,
            lambda: season_chunks(players, seed),
            worsening=False,
            shards=layout.shards,
        )
        seconds = time.monotonic() - began
        result["load"][layout.name] = {
            "players": loaded,
            "seconds": round(seconds, 2),
            "players_per_s": round(loaded / seconds),
        }
        result["placement"][layout.name] = placement(cluster, layout)
    print("[shards] comparing the answers of both layouts", flush=True)
    result["answers"] = answers_compare(
        players=players, sample=min(options.compare_players, players), seed=seed
    )
    for operation in OPERATIONS:
        figures: dict[str, Any] = {"layouts": {layout.name: {} for layout in LAYOUTS}}
        for layout in LAYOUTS:
            print(f"[shards] {operation} on {layout.name}: round trips, closed loop", flush=True)
            by_layout = figures["layouts"][layout.name]
            by_layout["round_trips"] = store_round_trips(
                cluster, operation, layout, players=players, calls=options.round_trip_calls
            )
            if operation == "rank":
                by_layout["round_trips_event_loop"] = event_loop_round_trips(
                    cluster, layout, players=players, calls=options.round_trip_calls
                )
            by_layout["closed"] = clients.phase(
                operation,
                layout,
                players=players,
                seed=seed,
                seconds=options.closed_seconds,
                rate=None,
            )
        if operation == "ingest":
            rate = options.ingest_rate / BATCH
        else:
            slower = min(
                figures["layouts"][layout.name]["closed"]["calls_per_s"] for layout in LAYOUTS
            )
            rate = max(1, round(options.rate_share * slower))
        figures["fixed_rate"] = rate
        for layout in LAYOUTS:
            print(f"[shards] {operation} on {layout.name}: {rate:g}/s open loop", flush=True)
            figures["layouts"][layout.name]["open"] = clients.phase(
                operation,
                layout,
                players=players,
                seed=seed,
                seconds=options.open_seconds,
                rate=rate,
            )
        result["operations"][operation] = figures
    return result


def other_cores(result: dict[str, Any]) -> dict[str, float]:
    """What the rest of the machine used during the timed phases kept, in cores, and how many
    phases it disturbed (above QUIET_CORES) or had to be run again for."""
    phases = [
        phase
        for figures in result["operations"].values()
        for by_layout in figures["layouts"].values()
        for phase in (by_layout["closed"], by_layout["open"])
    ]
    found = [phase["cpu_cores"]["other"] for phase in phases]
    return {
        "mean": round(sum(found) / len(found), 3),
        "max": round(max(found), 3),
        "phases": len(phases),
        "phases_disturbed": sum(other > QUIET_CORES for other in found),
        "phases_run_again": sum(phase["attempts"] > 1 for phase in phases),
    }


def main(argv: list[str] | None = None) -> int:
    options = options_parse(argv)
    stop_on_sigterm()
    machine: dict[str, Any] = {
        "python_probe_ms_start": python_probe_ms(),
        "load_average_start": [round(v, 2) for v in os.getloadavg()],
    }
    cluster = LocalRedisCluster()
    try:
        print(f"[shards] starting a Redis Cluster of 3 primaries on {cluster.ports}", flush=True)
        cluster.start()
        variables = {
            "DJANGO_SETTINGS_MODULE": SETTINGS_MODULE,
            "LEADERBOARD_REDIS_URL": cluster.url,
            "LEADERBOARD_REDIS_CLUSTER": "true",
            "LEADERBOARD_KEY_PREFIX": KEY_PREFIX,
            "DEBUG": "false",
            "LOG_LEVEL": "WARNING",
        }
        django_setup(variables, migrate=False)
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(
            options.processes,
            mp_context=context,
            initializer=client_start,
            initargs=(variables, context.Barrier(options.processes)),
        ) as pool:
            pids = {
                future.result(timeout=STARTUP_SECONDS)
                for future in [pool.submit(client_ready) for _ in range(options.processes)]
            }
            if len(pids) != options.processes:
                raise BenchError(f"{len(pids)} client processes started, not {options.processes}")
            nodes = {f"node {i}": node.pid for i, node in enumerate(cluster.processes, start=1)}
            clients = Clients(
                pool,
                options.processes,
                {**nodes, "clients": os.getpid()},
                quiet_seconds=options.quiet_seconds,
                attempts=options.attempts,
            )
            result = measure(cluster, clients, options)
    except BenchError as exc:
        print(f"[shards] ERROR: {exc}", file=sys.stderr, flush=True)
        return 2
    except (redis.RedisError, devservices.ServiceError) as exc:
        print(f"[shards] ERROR: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        return 2
    except KeyboardInterrupt:
        return 130
    finally:
        cluster.stop()
    machine.update(
        python_probe_ms_end=python_probe_ms(),
        load_average_end=[round(v, 2) for v in os.getloadavg()],
        other_cores=other_cores(result),
    )
    result["machine"] = machine
    options.output.parent.mkdir(parents=True, exist_ok=True)
    options.output.write_text(json.dumps(result, indent=2) + "\n")
    print(table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
