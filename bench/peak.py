"""The peak at once (bench/README.md, "The peak at once"): on the run's season, results in
batches at the open-loop rate, a player page's mix of reads at a fixed rate and sockets following
players, all offered together; the read rate is searched for the highest at which every target
holds together: freshness p99 and push p99 under 1 s, read p99 under 50 ms, nothing lost."""

from __future__ import annotations

import asyncio
import itertools
import random
import time
import uuid
from collections import Counter
from collections.abc import Callable
from typing import Any

from scripts import processes
from scripts.processes import CeleryWorker, WebServer
from scripts.receiver import Receiver

from . import sockets
from .core import get, latency_summary, ms, n, say, search_ladder, table
from .environment import PUBLIC_RATE_NEVER_REACHED, Bench
from .ingest import SUSTAINED_FRESHNESS_P99_MS, SUSTAINED_SHARE, openloop_measure
from .loaders import h2load_open_loop
from .machine import Window
from .openloop import OfferedLoad

# A player page's reads, by share of the requests (rank and around-me for the player, the top
# 100 beside them, the HTML page itself now and then).
READ_MIX = (
    ("rank", 55, "/api/v1/leaderboard/players/{player}?board={board}&season={season}"),
    ("around", 25, "/api/v1/leaderboard/players/{player}/around?n=5&board={board}&season={season}"),
    ("top100", 15, "/api/v1/leaderboard/top?limit=100&board={board}&season={season}"),
    ("page", 5, "/players/{player}/"),
)
READ_P99_MS, PUSH_P99_MS, READ_GOAL = 50.0, 1000.0, 6000
SOCKET_KIB_GOAL = 24.0  # the web processes' memory per idle socket, at most
# Below this share of the offered reads answered, the server did not keep up.
READS_ANSWERED_SHARE = 0.99
UP, DOWN = (8_000, 10_000, 12_000, 16_000, 20_000), (4_000, 3_000, 2_000, 1_000, 500)
BATCH = 100
SOCKETS_OPEN_SECONDS = 300


def peak_phase(bench: Bench) -> None:
    """Its own web server (production settings, sockets per address unlimited: every socket
    comes from here), Celery worker and webhooks worker with two endpoints registered for every
    event, one of them down, the sockets open for every step of the search."""
    options, env, phase = bench.options, bench.env, bench.phases.phase
    results: dict[str, Any] = {}
    with phase("peak at once: servers"):
        # One address opens every socket and asks for every page: as for the API's reads, the
        # limits per address are on at a rate never reached. The receiver is on 127.0.0.1.
        variables, log = env.process_env() | {
            "LIVE_SOCKETS_PER_ADDRESS": "0", "THROTTLE_PAGES_RATE": PUBLIC_RATE_NEVER_REACHED,
            "WEBHOOK_ALLOW_PRIVATE_URLS": "1",
        }, bench.log_dir  # fmt: skip
        receiver = Receiver().start()
        bench.processes.callback(receiver.stop)
        sockets.webhooks_register(receiver, none=False)
        web = WebServer(env=variables, log=log / "web-peak.log", workers=options.web_workers)
        worker = CeleryWorker(env=variables, log=log / "celery-peak.log",
                              concurrency=options.worker_concurrency)  # fmt: skip
        hooks = CeleryWorker(env=variables, log=log / "webhooks-peak.log", queues="webhooks",
                             concurrency=1)  # fmt: skip
        for server in (worker, hooks, web):
            bench.processes.enter_context(server.start())
        bench.results["peak"] = results
    if "peak" not in bench.results:  # the servers did not start (the phase says why)
        return
    with phase("peak at once"), web, worker, hooks:
        cpu = {"web": web.pid, "worker": worker.pid, "webhooks": hooks.pid,
               **bench.database_part}  # fmt: skip
        try:
            asyncio.run(_search(bench, web, cpu, results))
        finally:
            results["webhooks"] = sockets.webhooks_figures(receiver)


async def _search(bench: Bench, web: WebServer, cpu: dict[str, int], results: dict) -> None:
    options, season = bench.options, bench.season
    load_players = options.players - options.probe_players
    followers = min(options.peak_sockets, load_players // 2)
    sockets.open_files_allow(followers)
    # The sockets follow the last of the load's players, which the load then leaves alone.
    followed = [f"p{i}" for i in range(load_players - followers, load_players)]
    # Warm the web processes up (imports, the ticker, pools) before their memory is taken.
    warm = sockets.Listener()
    await warm.open(web.base_url, followed[:10], board=season.board.slug)
    await asyncio.sleep(1)
    await warm.close()
    await asyncio.sleep(1)
    rss_before, opening = processes.rss_kib(processes.group_pids(web.pid)), time.monotonic()
    listener = sockets.Listener()
    await listener.open(web.base_url, followed, board=season.board.slug)
    while listener.snapshots < followers and time.monotonic() - opening < SOCKETS_OPEN_SECONDS:
        await asyncio.sleep(0.1)
    opened_seconds = time.monotonic() - opening
    await asyncio.sleep(2)
    rss_after = processes.rss_kib(processes.group_pids(web.pid))
    rotation = itertools.cycle(random.Random(options.seed).sample(followed, len(followed)))
    results.update(
        sockets=followers, sockets_open_seconds=round(opened_seconds, 1),
        snapshots=listener.snapshots, write_rate=options.open_rate,
        push_probe_rate=options.peak_push_rate, seconds=options.peak_seconds,
        web_rss_before_mib=round(rss_before / 1024, 1),
        web_rss_with_sockets_mib=round(rss_after / 1024, 1),
        web_memory_per_socket_kib=round((rss_after - rss_before) / followers, 2),
        read_mix={name: share for name, share, _ in READ_MIX}, steps=[],
    )  # fmt: skip

    async def step(read_rate: float, *, writes: bool = True) -> dict[str, Any]:
        """One step, with the messages the sockets heard and the harness's loop lag meanwhile
        (the arrival times are taken on that loop, which shares the cores with the servers)."""
        heard, lag = Counter(listener.by_type), []
        lag_task = asyncio.create_task(sockets.loop_lag(lag))
        began, closed = time.monotonic(), listener.closed
        try:
            figures = await asyncio.to_thread(
                _step, bench, web, cpu, listener, rotation, followers=followers,
                read_rate=read_rate, writes=writes,
            )  # fmt: skip
        finally:
            lag_task.cancel()
        counts = dict(listener.by_type - heard)
        per_second = round(sum(counts.values()) / (time.monotonic() - began), 1)
        figures |= {"messages": {"by_type": counts, "per_second": per_second},
                    "sockets_closed_by_server": listener.closed - closed,
                    "harness_loop_lag": latency_summary(lag)}  # fmt: skip
        return figures

    try:
        # The pushes alone, then beside the writes alone (the webhooks registered all along),
        # then the read rate searched.
        say(f"peak: {followers} sockets, the push probe alone")
        results["idle"] = await step(0, writes=False)
        results["writes_alone"] = await step(0)
        start = options.peak_read_rate
        results["steps"].append(first := await step(start))
        upwards = first["met"]
        results["highest_read_rate_met"] = start if upwards else 0
        for rate in search_ladder(start, upwards, UP, DOWN, options.search_steps):
            results["steps"].append(figures := await step(rate))
            if figures["met"]:
                results["highest_read_rate_met"] = rate
            if figures["met"] != upwards:  # the first miss upwards, the first pass downwards
                break
    finally:
        results["sockets_closed_by_server"] = listener.closed
        await listener.close()


def _step(
    bench: Bench, web: WebServer, cpu: dict[str, int], listener: sockets.Listener,
    rotation: itertools.cycle[str], *, followers: int, read_rate: float, writes: bool,
) -> dict[str, Any]:  # fmt: skip
    """One rate of reads (0: none) beside the writes (unless not `writes`) and the push probe,
    then every ingest phase's checks."""
    options, season = bench.options, bench.season
    write_rate = options.open_rate if writes else 0
    say(f"peak: {read_rate:,.0f} reads/s, {write_rate:,.0f} results/s, {followers} sockets")
    reads: dict[str, Any] = {}
    with sockets.MirrorWatch(season.pk) as mirror:
        push = sockets.Probe(OfferedLoad(
            web.base_url, bench.api_key, season.board.slug, season.slug, options.peak_push_rate,
            1, followers, f"probe-push-{uuid.uuid4().hex[:8]}", senders=1,
        ), rotation, mirror).start()  # fmt: skip

        def during() -> None:
            try:
                if not read_rate:
                    time.sleep(options.peak_seconds)
                    return
                reads.update(h2load_open_loop(
                    h2load=bench.h2load, uris=_read_uris(bench, web.base_url), rate=read_rate,
                    connections=options.openread_connections, seconds=options.peak_seconds,
                    work_dir=bench.log_dir / "h2load", label=f"peak-{read_rate:g}",
                    seed=options.seed,
                ))  # fmt: skip
            finally:
                push.stop()

        # The sockets follow the last `followers` of the load's players: the writes leave them.
        if writes:
            written = openloop_measure(
                bench, web, cpu, rate=write_rate, batch=BATCH, seconds=options.peak_seconds,
                spare=followers, during=during,
            )  # fmt: skip
        else:
            with Window(cpu) as window:
                during()
            written = window.figures()
        time.sleep(sockets.LOST_AFTER_SECONDS + 1)  # until the last push is due
    pushes = push.pushes(listener)
    verdicts = {
        "push_p99": _under(get(pushes, "commit_to_push", "p99_ms"), PUSH_P99_MS),
        "nothing_lost": pushes["lost"] == 0,
    }
    if writes:
        verdicts |= {
            "writes_accepted": (written["accepted_share"] or 0.0) >= SUSTAINED_SHARE,
            "freshness": _under(get(written, "freshness_window", "p99_ms"),
                                SUSTAINED_FRESHNESS_P99_MS),
            "nothing_lost": verdicts["nothing_lost"] and written["freshness"]["lost"] == 0
            and written["consistency_after_drain"]["mismatched"] == 0,
        }  # fmt: skip
    if read_rate:
        verdicts |= {
            "reads_answered": reads["achieved_share"] >= READS_ANSWERED_SHARE
            and reads["non_2xx"] == reads["errors"] == 0,
            "read_p99": _under(reads.get("p99_ms"), READ_P99_MS),
        }
    return {
        "read_rate": read_rate, "write_rate": write_rate, "met": all(verdicts.values()),
        "verdicts": verdicts, "reads": reads, "writes": written, "pushes": pushes,
    }  # fmt: skip


def _under(value: float | None, limit: float) -> bool:
    return value is not None and value < limit


def _read_uris(bench: Bench, base: str) -> Callable[[random.Random, int], list[str]]:
    """One loader's URIs: the mix's kinds drawn by share, each for a random player of the season."""
    season, options = bench.season, bench.options
    board, slug = season.board.slug, season.slug
    weights = [share for _, share, _ in READ_MIX]

    def uris(rng: random.Random, count: int) -> list[str]:
        kinds = rng.choices(READ_MIX, weights=weights, k=count)
        return [
            base + path.format(player=f"p{rng.randrange(options.players)}", board=board,
                               season=slug)
            for _, _, path in kinds
        ]  # fmt: skip

    return uris


def peak_targets(results: dict[str, Any], target: Callable[..., dict[str, Any]]) -> list:
    peak = results.get("peak")
    if not peak:
        return []
    sockets_, writes = n(peak["sockets"]), f"{n(peak['write_rate'])} results/s"
    alone = peak.get("writes_alone") or {}
    name = f"Peak at once: highest read rate with everything met beside {writes}"
    return [
        target(f"{name} and {sockets_} sockets", peak.get("highest_read_rate_met"), READ_GOAL,
               "reads/s", higher=True),
        target(f"Push p99 at {sockets_} sockets beside {writes}", get(alone, "pushes",
               "commit_to_push", "p99_ms"), PUSH_P99_MS, "ms", higher=False),
        target(f"Freshness p99 at {writes} beside {sockets_} sockets and 2 webhook endpoints",
               get(alone, "writes", "freshness_window", "p99_ms"), SUSTAINED_FRESHNESS_P99_MS,
               "ms", higher=False),
        target("Web memory per idle socket", peak.get("web_memory_per_socket_kib"),
               SOCKET_KIB_GOAL, "KiB", higher=False),
    ]  # fmt: skip


def peak_section(results: dict[str, Any], h: str) -> list[str]:
    peak = results.get("peak")
    if not peak or not peak.get("steps"):
        return []
    rows = []
    steps = [("pushes alone", peak.get("idle")), ("writes, no reads", peak.get("writes_alone"))]
    for name, s in [*steps, *((n(s["read_rate"]), s) for s in peak["steps"])]:
        if not s:
            continue
        reads, writes, pushes = s["reads"], s["writes"], s["pushes"]
        missed = ", ".join(verdict for verdict, ok in s["verdicts"].items() if not ok)
        lost = pushes["lost"] + (get(writes, "freshness", "lost") or 0)
        rows.append((
            name, n(reads.get("achieved_per_s")), ms(reads.get("p99_ms")),
            ms(reads.get("p999_ms")), n(writes.get("accepted_results_per_s")),
            ms(get(writes, "freshness_window", "p99_ms")),
            ms(get(pushes, "commit_to_push", "p99_ms")), n(s["messages"]["per_second"]),
            str(lost), "**met**" if s["met"] else f"missed: {missed}",
        ))  # fmt: skip
    mix = ", ".join(f"{name} {share}%" for name, share in peak["read_mix"].items())
    intro = (
        f"{n(peak['write_rate'])} results/s in batches of {BATCH}, reads at a fixed rate "
        f"({mix}; h2load) and {n(peak['sockets'])} sockets following players (a push probe of "
        f"{n(peak['push_probe_rate'])} results/s for them), all at once, open loop, "
        f"{n(peak['seconds'])} s a rate, after the pushes alone and beside the writes alone. "
        f"Highest read rate with every target met: "
        f"**{n(peak.get('highest_read_rate_met'))} reads/s** (goal {n(READ_GOAL)}). Targets: "
        f"freshness and push p99 under 1 s, read p99 under {n(READ_P99_MS)} ms with "
        f"{READS_ANSWERED_SHARE:.0%} answered, every result accepted, nothing lost (lost: a "
        f"probe result never shown, or a push later than {n(sockets.LOST_AFTER_SECONDS)} s). "
        f"The web processes' memory grew by {peak.get('web_memory_per_socket_kib')} KiB a "
        f"socket (goal {SOCKET_KIB_GOAL}; {n(peak.get('sockets_open_seconds'))} s to open them)."
    )
    if hooks := peak.get("webhooks"):
        told = ", ".join(f"{k} {n(v)}" for k, v in sorted(hooks["events_by_type"].items()))
        fate = ", ".join(f"{k} {n(v)}" for k, v in sorted(hooks["deliveries"].items()))
        intro += (f" Webhooks all along: {hooks['endpoints']} endpoints for every event, one of "
                  f"them down; events {told or 'none'}; deliveries {fate or 'none'}.")  # fmt: skip
    header = ("Reads offered/s | answered/s | read p99 | p99.9 | results/s | freshness p99 | "
              "push p99 | messages/s | lost | verdict")  # fmt: skip
    return [f"{h}# The peak at once", "", intro, "", *table(header, "lrrrrrrrrl", rows), ""]
