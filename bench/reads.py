"""Read endpoints under wrk at a fixed concurrency (the ping ceiling, rank, top 100, around-me,
and the bare ASGI app as the machine's reference), then at fixed shares of the rate just
measured, open loop, for their latency."""

from __future__ import annotations

import json
import random
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from seasons.models import Season

from .cpu import CpuMeter
from .environment import BenchEnvironment, database_connections
from .errors import BenchError
from .h2load import h2load_open_loop
from .load import profile_cache_clear
from .options import Options
from .processes import Started
from .wrk import wrk_run

# The offered rates of the open-loop runs, in percent of the rate wrk measured at saturation.
OPEN_READ_SHARES = (50, 70)

PATHS = {
    "ping": "/api/v1/ping",
    "rank": "/api/v1/leaderboard/players/{player}?board={board}&season={season}",
    "top": "/api/v1/leaderboard/top?limit=100&board={board}&season={season}",
    "around": "/api/v1/leaderboard/players/{player}/around?n=5&board={board}&season={season}",
}


def endpoint_check(server: Started, kind: str, season: Season) -> dict[str, Any]:
    """One request first: a wrong URL must fail loudly, not measure a fast 404."""
    path = PATHS[kind].format(player="p0", board=season.board.slug, season=season.slug)
    try:
        with urllib.request.urlopen(server.url + path, timeout=10) as response:  # noqa: S310
            body = json.loads(response.read())
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise BenchError(f"GET {path} failed: {exc}") from exc
    return body


def endpoint_measure(
    *,
    wrk: str,
    env: BenchEnvironment,
    server: Started,
    kind: str,
    season: Season,
    options: Options,
    cpu_groups: dict[str, int],
) -> dict[str, Any]:
    # Every endpoint starts from a cold profile cache, so the order of the runs (and which
    # server went first) does not decide how many names come from Redis instead of PostgreSQL.
    profile_cache_clear(env)
    endpoint_check(server, kind, season)
    args = [kind, str(options.players), season.board.slug, season.slug]
    common = {
        "wrk": wrk,
        "url": server.url,
        "script": "read.lua",
        "args": args,
        "connections": options.connections,
        "threads": options.threads,
    }
    if options.warmup_seconds > 0:
        wrk_run(**common, seconds=options.warmup_seconds)
    meter = CpuMeter(groups=cpu_groups).start()
    before = database_connections(env)
    result = wrk_run(**common, seconds=options.read_seconds)
    cpu = meter.stop()
    after = database_connections(env)
    return {
        "path": PATHS[kind],
        **result.as_dict(),
        "connections": options.connections,
        "threads": options.threads,
        "cpu_cores": cpu,
        "database_connections_after": after["open"],
        "database_sessions_opened": after["sessions"] - before["sessions"],
    }


def reference_measure(
    *, wrk: str, server: Started, options: Options, cpu_groups: dict[str, int]
) -> dict[str, Any]:
    """The bare ASGI app (bench/apps/bare.py) under the read endpoints' load: the machine's
    reference for any Python server with this worker count."""
    common = {
        "wrk": wrk,
        "url": server.url + "/",
        "script": "fixed.lua",
        "args": [],
        "connections": options.connections,
        "threads": options.threads,
    }
    if options.warmup_seconds > 0:
        wrk_run(**common, seconds=options.warmup_seconds)
    meter = CpuMeter(groups=cpu_groups).start()
    result = wrk_run(**common, seconds=options.read_seconds)
    return {
        "path": "/",
        "app": "bench.apps.bare:application",
        **result.as_dict(),
        "connections": options.connections,
        "threads": options.threads,
        "cpu_cores": meter.stop(),
    }


def endpoint_open_loop(
    *,
    h2load: str,
    server: Started,
    kind: str,
    season: Season,
    options: Options,
    saturation_per_s: float,
    work_dir: Path,
    cpu_groups: dict[str, int],
) -> dict[str, Any]:
    """The endpoint at each of OPEN_READ_SHARES of `saturation_per_s`, offered by h2load on a
    schedule; right after its saturation run, so its caches are as that run left them."""
    board, slug = season.board.slug, season.slug
    fixed = "{player}" not in PATHS[kind]

    def uris(rng: random.Random, count: int) -> list[str]:
        if fixed:
            return [server.url + PATHS[kind].format(board=board, season=slug)]
        path = PATHS[kind]
        return [
            server.url
            + path.format(player=f"p{rng.randrange(options.players)}", board=board, season=slug)
            for _ in range(count)
        ]

    runs: dict[str, Any] = {}
    for share in OPEN_READ_SHARES:
        meter = CpuMeter(groups=cpu_groups).start()
        figures = h2load_open_loop(
            h2load=h2load,
            uris=uris,
            rate=saturation_per_s * share / 100,
            connections=options.openread_connections,
            seconds=options.openread_seconds,
            work_dir=work_dir,
            label=f"{kind}-{share}",
            seed=options.seed,
        )
        cpu = meter.stop()
        runs[str(share)] = {"share_of_saturation": share / 100, **figures, "cpu_cores": cpu}
    return runs
