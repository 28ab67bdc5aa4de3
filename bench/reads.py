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

from .environment import BenchEnvironment
from .errors import BenchError
from .h2load import h2load_open_loop
from .load import profile_cache_clear
from .options import Options
from .processes import Started
from .window import Window, wrk_timed
from .wrk import WrkLoad

# The offered rates of the open-loop runs, in percent of the rate wrk measured at saturation.
OPEN_READ_SHARES = (50, 70)

PATHS = {
    "ping": "/api/v1/ping",
    "rank": "/api/v1/leaderboard/players/{player}?board={board}&season={season}",
    "top": "/api/v1/leaderboard/top?limit=100&board={board}&season={season}",
    "around": "/api/v1/leaderboard/players/{player}/around?n=5&board={board}&season={season}",
}


def endpoint_check(server: Started, kind: str, season: Season) -> None:
    """One request first: a wrong URL must fail loudly, not measure a fast 404."""
    path = PATHS[kind].format(player="p0", board=season.board.slug, season=season.slug)
    try:
        with urllib.request.urlopen(server.url + path, timeout=10) as response:  # noqa: S310
            json.loads(response.read())
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise BenchError(f"GET {path} failed: {exc}") from exc


def read_load(*, wrk: str, server: Started, kind: str, season: Season, options: Options) -> WrkLoad:
    """wrk asking for the endpoint (bench/wrk/read.lua, random players) on the read connections."""
    return WrkLoad(
        wrk=wrk,
        url=server.url,
        script="read.lua",
        args=[kind, str(options.players), season.board.slug, season.slug],
        connections=options.connections,
        threads=options.threads,
    )


def fixed_load(*, wrk: str, url: str, options: Options) -> WrkLoad:
    """wrk asking for one URL (bench/wrk/fixed.lua) on the read connections."""
    return WrkLoad(
        wrk=wrk,
        url=url,
        script="fixed.lua",
        args=[],
        connections=options.connections,
        threads=options.threads,
    )


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
    result, window = wrk_timed(
        read_load(wrk=wrk, server=server, kind=kind, season=season, options=options),
        seconds=options.read_seconds,
        warmup_seconds=options.warmup_seconds,
        cpu_groups=cpu_groups,
        env=env,
    )
    return {
        "path": PATHS[kind],
        **result.as_dict(),
        "connections": options.connections,
        "threads": options.threads,
        **window,
    }


def reference_measure(
    *, wrk: str, server: Started, options: Options, cpu_groups: dict[str, int]
) -> dict[str, Any]:
    """The bare ASGI app (bench/apps/bare.py) under the read endpoints' load: the machine's
    reference for any Python server with this worker count."""
    result, window = wrk_timed(
        fixed_load(wrk=wrk, url=server.url + "/", options=options),
        seconds=options.read_seconds,
        warmup_seconds=options.warmup_seconds,
        cpu_groups=cpu_groups,
    )
    return {
        "path": "/",
        "app": "bench.apps.bare:application",
        **result.as_dict(),
        "connections": options.connections,
        "threads": options.threads,
        **window,
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
        with Window(cpu_groups=cpu_groups) as window:
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
        runs[str(share)] = {"share_of_saturation": share / 100, **figures, **window.figures()}
    return runs
