"""The phases of one `bench.run` (bench/README.md, "What a run does"): the report is written
whatever happened, and every process started is stopped on the way out."""

from __future__ import annotations

import argparse
import contextlib
import time
from typing import Any

from django.utils import timezone

from leaderboards import store
from scripts.processes import CeleryWorker, WebServer

from . import load, reads, report
from .core import Phases, say, search_ladder
from .environment import Bench, BenchEnvironment
from .ingest import ingest_load, ingest_measure, mirror_wait, openloop_measure, sustained
from .loaders import tool_version
from .machine import cpu_times, machine_facts, python_probe_ms
from .peak import peak_phase
from .pgstats import harness_connection, postmaster_pid
from .profiling import profile

READS = {
    "cached": ("ping", "rank", "top100", "around", "friends"),
    "uncached": ("ping", "top100", "around"),
}
KINDS = {"top100": "top"}  # the kind of request of an endpoint, where its name is not that
# Rates the search tries after the main open-loop phase: upwards from a rate that was kept up
# with, until one is not; downwards from one that was not, until one is.
SEARCH_UP = (8_000, 10_000, 12_000, 14_000, 16_000, 20_000, 24_000, 30_000)
SEARCH_DOWN = (4_000, 3_000, 2_000, 1_000, 500)
OPEN_BATCH = 100


def run(options: argparse.Namespace, env: BenchEnvironment, wrk: str, h2load: str) -> int:
    started = timezone.now()
    stamp = started.strftime("%Y%m%dT%H%M%SZ")
    config = {k: v for k, v in vars(options).items() if k != "error"}
    config["database_server"] = "the bench's own cluster" if env.cluster else "--database-url"
    config |= {"key_prefix": env.key_prefix, "cache_prefix": env.cache_prefix}
    config["broker_url"] = env.broker_url
    machine = machine_facts(env, wrk=tool_version(wrk, "-v"), h2load=tool_version(h2load))
    cluster = f"the bench's own cluster in {env.cluster}" if env.cluster else None
    machine["postgresql"]["cluster"] = cluster or "an existing server (--database-url)"
    mode = "tiny" if options.tiny else "full"
    results: dict[str, Any] = {"schema": 1, "run": stamp, "started_at": started.isoformat()}
    results.update(players=options.players, mode=mode, config=config, machine=machine)
    phases = Phases(results)
    ticks_at_start, code = cpu_times(), 0
    try:
        log_dir = options.results_dir / "logs" / stamp
        log_dir.mkdir(parents=True, exist_ok=True)
        # Every server a phase starts is stopped on the way out, on an error or Ctrl-C too.
        with contextlib.ExitStack() as processes:
            _phases(Bench(options, env, wrk, h2load, processes, log_dir, results, phases))
    except KeyboardInterrupt:
        results["interrupted"] = True
        say("interrupted: stopping every process the run started")
        code = 130
    except Exception:
        code = 1
    finally:
        with phases.phase("cleanup"):
            if not options.keep_redis:
                store.delete_prefixed_keys()
            load.redis_cleanup(env)
        ticks = cpu_times()
        total, stolen = sum(ticks) - sum(ticks_at_start), ticks[7] - ticks_at_start[7]
        results["machine"]["steal_share"] = f"{stolen / max(total, 1):.1%}"
        results["machine"]["python_probe_ms_at_end"] = python_probe_ms()
        results["finished_at"] = timezone.now().isoformat()
        results["seconds"] = round((timezone.now() - started).total_seconds(), 1)
        for path in report.report_write(results, options):
            say(f"wrote {path}")
    return code or (1 if results["errors"] else 0)


def _phases(bench: Bench) -> None:
    results, options, env, phase = bench.results, bench.options, bench.env, bench.phases.phase
    players, seed, segmented = options.players, options.seed, options.segments
    with phase("reset", fatal=True):
        reused = (
            load.season_reused(env, players=players, segments=segmented)
            if options.reuse_season
            else None
        )
        if reused is None:
            load.bench_reset(env)
    with phase("season", fatal=True):
        now = timezone.now()
        measured = bench.season = reused or load.season_prepare(now=now, segments=segmented)
        bench.api_key = load.game_server_key()
        results["season"] = {
            "board": measured.board.slug, "season": measured.slug, "id": measured.pk,
            "segment_dimensions": list(measured.board.segment_dimensions),
            "starts_at": measured.starts_at.isoformat(), "ends_at": measured.ends_at.isoformat(),
        }  # fmt: skip
    if reused is not None:
        results["load"] = {"reused": True, "players": players}
        say(f"reused the season of {players:,} players a previous run loaded")
    else:
        with phase("load", fatal=True):
            history = not options.no_history
            results["load"] = load.season_load(
                env=env, season=measured, players=players, seed=seed, history=history
            )
    with phase("friends lists", fatal=True):
        results["load"]["friends"] = load.friends_load(players=players, seed=seed)
    with phase("rebuild", fatal=True):
        results["rebuild"] = load.season_rebuild(season=measured, players=players)
    with phase("memory"):
        results["memory"] = load.season_memory(env=env, season=measured)
    with phase("profile directory", fatal=True):
        results["memory"]["profile_directory"] = load.profiles_fill(env=env, players=players)
    results |= {"http": {"reference": {}, "cached": {}, "uncached": {}}, "profiles": {}}
    postmaster = postmaster_pid(env)
    bench.database_part = {"postgres": postmaster} if postmaster else {}
    if not options.writes_only:
        with phase("rank baselines"):
            results["rank"] = reads.rank_baselines(bench)
        with phase("http reference: bare ASGI app"):
            bare = WebServer(
                env=env.process_env(), log=bench.log_dir / "bare-asgi.log",
                app="bench.apps.bare:application", workers=options.web_workers, ready_path="/",
            )  # fmt: skip
            with bench.processes.enter_context(bare.start()) as server:
                results["http"]["reference"]["bare_asgi"] = reads.reference_measure(bench, server)
    for name, top_cache in (("cached", 1.0), ("uncached", 0.0)):
        if name == "cached" and options.writes_only:
            continue
        server = None
        with phase(f"start web server ({name})"):
            web_env, log = env.process_env(top_cache_seconds=top_cache), f"web-{name}.log"
            web = WebServer(env=web_env, log=bench.log_dir / log, workers=options.web_workers)
            server = bench.processes.enter_context(web.start())
        if server is None:
            continue
        with server:
            if not options.writes_only:
                _reads(bench, name, server)
            if name == "uncached":
                _ingest(bench, server)
    if options.peak_sockets and not options.writes_only:
        peak_phase(bench)


def _reads(bench: Bench, server_name: str, server: WebServer) -> None:
    """Each read endpoint at saturation, on the cached server at fixed rates too; one profile."""
    results, cpu = bench.results["http"][server_name], {"web": server.pid, **bench.database_part}
    for name in READS[server_name]:
        kind = KINDS.get(name, name)
        with bench.phases.phase(f"http {server_name} {name}"):
            figures = results[name] = reads.endpoint_measure(bench, server, kind, cpu)
            say(f"{name} ({server_name}): {figures['requests_per_s']:,.0f} req/s")
        if server_name == "cached" and name in results:
            with bench.phases.phase(f"http {server_name} {name} at fixed rates"):
                saturation = results[name]["requests_per_s"]
                open_loop = reads.endpoint_open_loop(bench, server, kind, saturation, cpu)
                results[name]["open_loop"] = open_loop
    label, kind = {"cached": ("rank", "rank"), "uncached": ("top100_uncached", "top")}[server_name]
    profile(bench, label, {"web": server.pid}, reads.read_load(bench, server, kind).run)


def _ingest(bench: Bench, server: WebServer) -> None:
    options, worker = bench.options, None
    with bench.phases.phase("start Celery worker"):
        log = bench.log_dir / "celery-worker.log"
        concurrency, env = options.worker_concurrency, bench.env.process_env()
        worker = CeleryWorker(env=env, log=log, concurrency=concurrency).start()
        bench.processes.enter_context(worker)
    if worker is None:
        return
    with worker:
        results = bench.results["ingest"] = {}
        profiled = {"web": server.pid, "worker": worker.pid}
        cpu = {**profiled, **bench.database_part}
        for mode, batch in (("single", 1), ("batch", 100)):
            with bench.phases.phase(f"ingest {mode}"):
                figures = results[mode] = ingest_measure(bench, server, cpu, batch=batch)
                say(f"ingest {mode}: {figures['accepted_results_per_s']:,.0f} results/s")
        _open_loop(bench, server, cpu)
        for mode, batch in (("single", 1), ("batch", 100)):
            tag = f"profile{batch}-{int(time.time())}"
            repeat = ingest_load(bench, server, batch=batch, tag=tag).run
            if profile(bench, f"ingest_{mode}", profiled, repeat):
                # The mirror catches up after unmeasured load, so the next phase starts level.
                with harness_connection(bench.env) as conn:
                    mirror_wait(bench.env, conn, options.drain_seconds)


def _open_loop(bench: Bench, server: WebServer, cpu: dict[str, int]) -> None:
    """The open-loop phases (bench/README.md, "What a run does", 8 to 10), each drained after."""
    options, opened = bench.options, bench.results.setdefault("open_loop", {})

    def measure(rate: float, batch: int, seconds: float) -> dict[str, Any]:
        f = openloop_measure(bench, server, cpu, rate=rate, batch=batch, seconds=seconds)
        say(f"open loop {rate:,.0f}/s: freshness p99 {f['freshness_window'].get('p99_ms')} ms")
        return f

    with bench.phases.phase(f"open loop: {options.open_rate:,.0f}/s in batches of {OPEN_BATCH}"):
        opened["batch"] = measure(options.open_rate, OPEN_BATCH, options.open_seconds)
    if "batch" in opened:
        upwards = sustained(opened["batch"])
        steps = options.search_steps
        search = opened["search"] = {
            "direction": "up" if upwards else "down", "seconds": options.search_seconds,
            "highest_sustained_rate": options.open_rate if upwards else 0, "steps": [],
        }  # fmt: skip
        for rate in search_ladder(options.open_rate, upwards, SEARCH_UP, SEARCH_DOWN, steps):
            figures = None
            with bench.phases.phase(f"rate search: {rate:,.0f}/s"):
                figures = measure(rate, OPEN_BATCH, options.search_seconds)
            if figures is None:
                break
            kept_up = sustained(figures)
            search["steps"].append({"sustained": kept_up, **figures})
            if kept_up:
                search["highest_sustained_rate"] = rate
            # Upwards the first rate not kept up with ends the search; downwards the first kept up.
            if kept_up != upwards:
                break
    with bench.phases.phase(f"open loop: {options.single_rate:,.0f} single results/s"):
        opened["single"] = measure(options.single_rate, 1, options.open_seconds)
