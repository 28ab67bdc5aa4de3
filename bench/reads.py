"""Read endpoints under wrk at a fixed concurrency: the ping ceiling, rank, top 100, around-me."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from seasons.models import Season

from .cpu import CpuMeter
from .environment import BenchEnvironment, database_connections
from .errors import BenchError
from .load import profile_cache_clear
from .options import Options
from .processes import Started
from .wrk import wrk_run

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
