"""One benchmark run, phase by phase: load and rebuild, the rank baselines, the machine's
reference (a bare ASGI app) and the serving stacks side by side, the read endpoints on a server
with the one-second top cache (at saturation, then at fixed rates) and on one without, then
ingest with a Celery worker:
closed loop (wrk), then open loop (a fixed rate in batches, a search for the highest rate kept
up with, and single results).

Loading is fatal when it fails; a measuring phase that fails is recorded and the run goes on,
so one broken endpoint does not cost a ten-million-player load. Every process the run started
is stopped on the way out, and the report is written whatever happened.
"""

from __future__ import annotations

import os
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.utils import timezone

from leaderboards import store
from seasons.models import Season

from . import report
from .baseline import postgres_rank, redis_rank, sample_players
from .environment import BenchEnvironment
from .errors import BenchError
from .h2load import h2load_version
from .ingest import (
    IngestTarget,
    ingest_load,
    ingest_measure,
    mirror_wait,
    openloop_measure,
    sustained,
)
from .load import (
    bench_reset,
    game_server_key,
    redis_cleanup,
    season_load,
    season_memory,
    season_prepare,
    season_rebuild,
    season_reused,
)
from .machine import cpu_ticks, machine_facts, python_probe_ms
from .options import Options
from .pgstats import harness_connection, postmaster_pid, server_settings
from .processes import Processes, Started, server_start, web_start, worker_start
from .profiling import profile_finish, profile_start, py_spy
from .reads import endpoint_measure, endpoint_open_loop, read_load, reference_measure
from .stacks import stacks_measure
from .wrk import wrk_version

READS = {
    "cached": (("ping", "ping"), ("rank", "rank"), ("top100", "top"), ("around", "around")),
    "uncached": (("ping", "ping"), ("top100", "top"), ("around", "around")),
}
INGEST_MODES = (("single", 1), ("batch", 100))
OPEN_BATCH = 100
# Rates the search tries after the main open-loop phase: upwards from a rate that was kept up
# with, until one is not; downwards from one that was not, until one is.
SEARCH_UP = (8_000, 10_000, 12_000, 14_000, 16_000, 20_000, 24_000, 30_000)
SEARCH_DOWN = (4_000, 3_000, 2_000, 1_000, 500)
PROFILE_SECONDS = 10.0


def say(message: str) -> None:
    print(f"[bench] {message}", flush=True)


class Recorder:
    """Times each phase and records its failure instead of losing the whole run to it."""

    def __init__(self, results: dict[str, Any]) -> None:
        self.results = results
        results.setdefault("phases", {})
        results.setdefault("errors", [])

    @contextmanager
    def phase(self, name: str, *, fatal: bool = False) -> Iterator[None]:
        say(f"{name} ...")
        started = time.perf_counter()
        load_before = os.getloadavg()[0]
        try:
            yield
        except Exception as exc:
            self.results["errors"].append({"phase": name, "error": f"{type(exc).__name__}: {exc}"})
            say(f"{name} FAILED: {type(exc).__name__}: {exc}")
            traceback.print_exc()
            if fatal:
                raise
        finally:
            self.results["phases"][name] = {
                "seconds": round(time.perf_counter() - started, 2),
                "load_average_1m_before": round(load_before, 2),
                "load_average_1m_after": round(os.getloadavg()[0], 2),
            }


@dataclass(frozen=True)
class _Run:
    """What the phases of one run share: where they record, what they run with, the load
    generators, the processes they start and the season they measure."""

    recorder: Recorder
    results: dict[str, Any]
    options: Options
    env: BenchEnvironment
    wrk: str
    h2load: str
    processes: Processes
    log_dir: Path

    def phase(self, name: str, *, fatal: bool = False) -> AbstractContextManager[None]:
        return self.recorder.phase(name, fatal=fatal)

    def start(self, name: str, start: Callable[[], Started]) -> Started | None:
        """A server started in a phase of its own; None when it did not start (recorded)."""
        with self.phase(name):
            return start()
        return None


def run(options: Options, env: BenchEnvironment, wrk: str, h2load: str) -> int:
    started = timezone.now()
    stamp = started.strftime("%Y%m%dT%H%M%SZ")
    log_dir = options.results_dir / "logs" / stamp
    results: dict[str, Any] = {
        "schema": 1,
        "run": stamp,
        "started_at": started.isoformat(),
        "players": options.players,
        "mode": "tiny" if options.tiny else "full",
        "config": report.config_facts(options, env),
        "machine": machine_facts(env, wrk=wrk_version(wrk)),
    }
    results["machine"]["h2load"] = h2load_version(h2load)
    results["machine"]["postgresql"].update(
        settings=server_settings(env),
        cluster=(
            f"the bench's own cluster in {env.cluster.data}"
            if env.cluster
            else "an existing server (--database-url)"
        ),
    )
    recorder = Recorder(results)
    ticks_at_start = cpu_ticks()
    code = 0
    try:
        with Processes(log_dir) as processes:
            _phases(_Run(recorder, results, options, env, wrk, h2load, processes, log_dir))
    except KeyboardInterrupt:
        results["interrupted"] = True
        say("interrupted: stopping every process the run started")
        code = 130
    except Exception:
        code = 1
    finally:
        with recorder.phase("cleanup"):
            if not options.keep_redis:
                store.delete_prefixed_keys()
            redis_cleanup(env)
        total, stolen = (now - then for now, then in zip(cpu_ticks(), ticks_at_start, strict=True))
        results["machine"]["steal_share"] = f"{stolen / max(total, 1):.1%}"
        results["machine"]["python_probe_ms_at_end"] = python_probe_ms()
        results["finished_at"] = timezone.now().isoformat()
        results["seconds"] = round((timezone.now() - started).total_seconds(), 1)
        written = report.report_write(results, options)
        for path in written:
            say(f"wrote {path}")
    if code == 0 and results["errors"]:
        code = 1
    return code


def _phases(run: _Run) -> None:
    results, options, env = run.results, run.options, run.env
    reused = None
    with run.phase("reset", fatal=True):
        reused = season_reused(env, players=options.players) if options.reuse_season else None
        if reused is None:
            bench_reset(env)
    with run.phase("season", fatal=True):
        season = reused or season_prepare(now=timezone.now())
        api_key = game_server_key()
        results["season"] = {
            "board": season.board.slug,
            "season": season.slug,
            "id": season.pk,
            "starts_at": season.starts_at.isoformat(),
            "ends_at": season.ends_at.isoformat(),
        }
    if reused is not None:
        results["load"] = {"reused": True, "players": options.players}
        say(f"reused the season of {options.players:,} players a previous run loaded")
    else:
        with run.phase("load", fatal=True):
            results["load"] = season_load(
                env=env, season=season, players=options.players, seed=options.seed
            )
            say(f"loaded {options.players:,} players: {results['load']['copy_seconds']} s of COPY")
    with run.phase("rebuild", fatal=True):
        results["rebuild"] = season_rebuild(season=season, players=options.players)
        say(f"rebuild: {results['rebuild']['players_per_s']:,} players/s")
    with run.phase("memory"):
        results["memory"] = season_memory(env=env, season=season)
        say(f"memory: {results['memory']['bytes_per_player']} bytes/player")
    if not options.writes_only:
        _rank_baselines(run, season)
    # PostgreSQL's processes are found through their postmaster, so another server on the
    # machine does not count as the bench's.
    postmaster = postmaster_pid(env)
    database_part = {"postgres": postmaster} if postmaster else {}

    results["http"] = {"reference": {}, "cached": {}, "uncached": {}}
    results["profiles"] = {}
    if not options.writes_only:
        _reference(run)
        with run.phase("serving stacks side by side"):
            results["stacks"] = stacks_measure(
                wrk=run.wrk, processes=run.processes, env=env.process_env(), options=options
            )
    servers = (("cached", 1.0), ("uncached", 0.0))
    for server_name, top_cache in servers[1:] if options.writes_only else servers:
        server = run.start(
            f"start web server ({server_name})",
            lambda server_name=server_name, top_cache=top_cache: web_start(
                run.processes,
                env.process_env(top_cache_seconds=top_cache),
                name=f"web-{server_name}",
                workers=options.web_workers,
            ),
        )
        if server is None:
            continue
        with run.processes.running(server):
            if not options.writes_only:
                _reads(run, server_name, server, season, {"web": server.pid, **database_part})
            if server_name == "uncached":
                _ingest(run, server, season, api_key, database_part)


def _reads(
    run: _Run, server_name: str, server: Started, season: Season, cpu_groups: dict[str, int]
) -> None:
    """Each read endpoint at saturation (wrk), then on the cached server at fixed rates
    (h2load); then a profile of one endpoint."""
    results, options = run.results["http"][server_name], run.options
    for name, kind in READS[server_name]:
        with run.phase(f"http {server_name} {name}"):
            figures = endpoint_measure(
                wrk=run.wrk,
                env=run.env,
                server=server,
                kind=kind,
                season=season,
                options=options,
                cpu_groups=cpu_groups,
            )
            results[name] = figures
            say(
                f"{name:>7} ({server_name}): {figures['requests_per_s']:>9,.0f} req/s, "
                f"p50 {figures['p50_ms']} ms, p99 {figures['p99_ms']} ms"
            )
        if server_name == "cached" and name in results:
            with run.phase(f"http {server_name} {name} at fixed rates"):
                figures = results[name]
                figures["open_loop"] = endpoint_open_loop(
                    h2load=run.h2load,
                    server=server,
                    kind=kind,
                    season=season,
                    options=options,
                    saturation_per_s=figures["requests_per_s"],
                    work_dir=run.log_dir / "h2load",
                    cpu_groups=cpu_groups,
                )
                for share, opened in figures["open_loop"].items():
                    say(
                        f"{name:>7} at {share}% ({opened['offered_per_s']:,.0f}/s offered, "
                        f"{opened['achieved_per_s']:,.0f}/s answered): p50 "
                        f"{opened.get('p50_ms')} ms, p99 {opened.get('p99_ms')} ms, p99.9 "
                        f"{opened.get('p999_ms')} ms"
                    )
    profiled = {"cached": ("rank", "rank"), "uncached": ("top100_uncached", "top")}
    label, kind = profiled[server_name]
    load = read_load(wrk=run.wrk, server=server, kind=kind, season=season, options=options)
    _profile(run, label, {"web": server.pid}, load.run)


def _reference(run: _Run) -> None:
    """The bare ASGI app under uvicorn with the web server's workers and flags, under the read
    endpoints' load: what any Python server can answer on this machine."""
    with run.phase("http reference: bare ASGI app"):
        started = server_start(
            run.processes,
            run.env.process_env(),
            name="bare-asgi",
            app="bench.apps.bare:application",
            workers=run.options.web_workers,
            ready_path="/",
        )
        with run.processes.running(started) as server:
            figures = reference_measure(
                wrk=run.wrk, server=server, options=run.options, cpu_groups={"web": server.pid}
            )
        run.results["http"]["reference"]["bare_asgi"] = figures
        say(f"bare ASGI app: {figures['requests_per_s']:,.0f} req/s, p99 {figures['p99_ms']} ms")


def _rank_baselines(run: _Run, season: Season) -> None:
    options, env = run.options, run.env
    player_ids = sample_players(
        players=options.players, count=options.zrevrank_samples, seed=options.seed
    )
    rank: dict[str, Any] = {}
    run.results["rank"] = rank
    with run.phase("rank: raw ZREVRANK"):
        rank.update(redis_rank(env=env, season=season, player_ids=player_ids))
        say(f"ZREVRANK p50 {rank['zrevrank']['p50_ms']} ms")
    with run.phase("rank: PostgreSQL count"):
        rank["postgres_count"] = postgres_rank(
            env=env,
            season=season,
            player_ids=player_ids,
            max_samples=options.pg_samples,
            max_seconds=options.pg_seconds,
        )
        say(f"PostgreSQL count p50 {rank['postgres_count']['p50_ms']} ms")


def _ingest(
    run: _Run, server: Started, season: Season, api_key: str, database_part: dict[str, int]
) -> None:
    options = run.options
    worker = run.start(
        "start Celery worker",
        lambda: worker_start(
            run.processes, run.env.process_env(), concurrency=options.worker_concurrency
        ),
    )
    if worker is None:
        return
    with run.processes.running(worker):
        results: dict[str, Any] = {}
        run.results["ingest"] = results
        profiled = {"web": server.pid, "worker": worker.pid}
        target = IngestTarget(
            env=run.env,
            server=server,
            api_key=api_key,
            season=season,
            options=options,
            cpu_groups={**profiled, **database_part},
        )
        for mode, batch in INGEST_MODES:
            with run.phase(f"ingest {mode}"):
                figures = ingest_measure(target, wrk=run.wrk, batch=batch)
                results[mode] = figures
                fresh = figures["freshness"]["freshness"]
                say(
                    f"ingest {mode}: {figures['accepted_results_per_s']:,.0f} results/s, "
                    f"freshness p50 {fresh.get('p50_ms')} ms p99 {fresh.get('p99_ms')} ms"
                )

        _open_loop(run, target)

        for mode, batch in INGEST_MODES:

            def load(seconds: float, batch: int = batch) -> Any:
                tag = f"profile{batch}-{int(time.time())}"
                return ingest_load(target, wrk=run.wrk, batch=batch, tag=tag).run(seconds)

            if _profile(run, f"ingest_{mode}", profiled, load):
                _wait_for_mirror(run.env, options.drain_seconds)


def _open_loop(run: _Run, target: IngestTarget) -> None:
    """A fixed rate in batches of 100, the search for the highest rate kept up with, and single
    results at a fixed rate; each phase drains the mirror before the next one starts."""
    options = run.options

    def measure(rate: float, batch: int, seconds: float) -> dict[str, Any]:
        figures = openloop_measure(target, rate=rate, batch=batch, seconds=seconds)
        fresh = figures["freshness_window"]
        say(
            f"open loop {rate:,.0f} results/s, {batch} a request: "
            f"{figures['accepted_share']:.2%} accepted, "
            f"freshness p99 {fresh.get('p99_ms')} ms (first {figures['edge_seconds']:g} s "
            f"{figures['freshness_first'].get('p99_ms')}, last "
            f"{figures['freshness_last'].get('p99_ms')})"
        )
        return figures

    opened: dict[str, Any] = {}
    run.results["open_loop"] = opened
    with run.phase(f"open loop: {options.open_rate:,.0f}/s in batches of {OPEN_BATCH}"):
        opened["batch"] = measure(options.open_rate, OPEN_BATCH, options.open_seconds)
    if "batch" in opened:
        _rate_search(run, opened, measure)
    with run.phase(f"open loop: {options.single_rate:,.0f} single results/s"):
        opened["single"] = measure(options.single_rate, 1, options.open_seconds)


def _rate_search(
    run: _Run,
    opened: dict[str, Any],
    measure: Callable[[float, int, float], dict[str, Any]],
) -> None:
    """The highest rate in batches of 100 whose freshness p99 stays under 1 s (see
    `ingest.sustained`), from the rates of a short ladder, each for `search_seconds`."""
    options = run.options
    upwards = sustained(opened["batch"])
    ladder = [
        rate
        for rate in (SEARCH_UP if upwards else SEARCH_DOWN)
        if (rate > options.open_rate if upwards else rate < options.open_rate)
    ]
    if options.search_steps:
        ladder = ladder[: options.search_steps]
    search: dict[str, Any] = {
        "direction": "up" if upwards else "down",
        "seconds": options.search_seconds,
        "highest_sustained_rate": options.open_rate if upwards else 0,
        "steps": [],
    }
    opened["search"] = search
    for rate in ladder:
        figures = None
        with run.phase(f"rate search: {rate:,.0f}/s"):
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


def _wait_for_mirror(env: BenchEnvironment, seconds: float) -> None:
    """Let the mirror catch up after unmeasured load, so the next phase starts level."""
    with harness_connection(env) as conn:
        mirror_wait(env=env, conn=conn, seconds=seconds)


def _profile(run: _Run, label: str, pids: dict[str, int], load: Callable[[float], Any]) -> bool:
    """Profile `pids` while `load` repeats a phase; returns whether it ran."""
    options, profiles = run.options, run.results["profiles"]
    if not options.profile:
        return False
    if py_spy() is None:
        profiles["unavailable"] = "py-spy is not installed: pip install -e '.[bench]'"
        return False
    seconds = min(PROFILE_SECONDS, options.read_seconds)
    with run.phase(f"profile {label}"):
        running = {}
        try:
            for part, pid in pids.items():
                out = run.log_dir / f"profile-{label}-{part}.txt"
                running[part] = (profile_start(pid=pid, seconds=seconds, output=out), out)
            load(seconds + 2)
            profiles[label] = {
                part: profile_finish(process, out, timeout=seconds + 30)
                for part, (process, out) in running.items()
            }
        except (BenchError, OSError) as exc:
            # A profile explains the figures; it is not one of them, so its failure is noted only.
            profiles[label] = {"error": str(exc)}
            for process, _ in running.values():
                if process.poll() is None:
                    process.kill()
                    process.wait(timeout=10)
    return True
