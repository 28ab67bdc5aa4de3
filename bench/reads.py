"""The reads: "What's my rank?" without the API (ZREVRANK, the gateway's Lua read, PostgreSQL's
count); the endpoints and the bare ASGI app under wrk; each endpoint open loop (h2load)."""

from __future__ import annotations

import functools
import json
import random
import time
import urllib.request
from collections.abc import Callable
from typing import Any

import redis

from leaderboards import store
from scripts.processes import WebServer

from .core import BenchError, Figures, latency_summary
from .environment import Bench
from .load import FRIEND_LISTS
from .loaders import WrkLoad, h2load_open_loop
from .machine import Window

# The offered rates of the open-loop runs, in percent of the rate wrk measured at saturation.
OPEN_READ_SHARES = (50, 70)
PATHS = {
    "ping": "/api/v1/ping",
    "rank": "/api/v1/leaderboard/players/{player}?board={board}&season={season}",
    "top": "/api/v1/leaderboard/top?limit=100&board={board}&season={season}",
    "around": "/api/v1/leaderboard/players/{player}/around?n=5&board={board}&season={season}",
    # A random one of the players load.friends_load gave 1,000 friends.
    "friends": "/api/v1/leaderboard/players/{player}/friends?board={board}&season={season}",
}
INDEX = "bench_total_season_points"
INDEX_ON = f"{INDEX} ON matches_playertotal (season_id, points)"
RANK_SQL = "SELECT count(*) + 1 FROM matches_playertotal WHERE season_id = %s AND points > %s"


def _timed(call: Callable[[Any], Any], args: list[Any], seconds: float = 0) -> list[float]:
    """Milliseconds of each `call(arg)`, one at a time (for `seconds` at most, if given)."""
    samples: list[float] = []
    deadline = time.perf_counter() + seconds
    for arg in args:
        if seconds and samples and time.perf_counter() > deadline:
            break
        started = time.perf_counter_ns()
        call(arg)
        samples.append((time.perf_counter_ns() - started) / 1e6)
    return samples


def rank_baselines(bench: Bench) -> dict[str, Any]:
    """ZREVRANK, the gateway's Lua read, PostgreSQL's count: one client's round trips, one call
    at a time, for the same players (bench/README.md, "What a run does", 4)."""
    options, season = bench.options, bench.season
    rng = random.Random(options.seed)
    player_ids = [f"p{rng.randrange(options.players)}" for _ in range(options.zrevrank_samples)]
    key = store.standings_key(season.pk)
    client = redis.Redis.from_url(bench.env.redis_url, socket_timeout=5)
    zrevrank = functools.partial(client.zrevrank, key)
    read_rank = functools.partial(store.read_rank, season.pk)
    _timed(zrevrank, player_ids[:500])
    started = time.perf_counter()
    raw = _timed(zrevrank, player_ids)
    raw_seconds = time.perf_counter() - started
    _timed(read_rank, player_ids[:500])
    lua = _timed(read_rank, player_ids)
    missing = sum(client.zrevrank(key, p) is None for p in player_ids[:100])
    return {
        "zrevrank": latency_summary(raw) | {
            "ops_per_s_one_client": round(len(raw) / raw_seconds), "missing_of_first_100": missing,
        },
        "gateway_read_rank": latency_summary(lua) | {
            "what": "store.read_rank: the Lua script the rank endpoint runs (ZREVRANK, ZCARD, "
            "ZSCORE, ZCOUNT)",
        },
        "postgres_count": postgres_rank(bench, player_ids[: options.pg_samples]),
    }  # fmt: skip


def postgres_rank(bench: Bench, player_ids: list[str]) -> dict[str, Any]:
    """count(*) + 1 over a B-tree on (season_id, points), built (and vacuumed, so the count is
    index-only) for this phase and dropped after, so it never slows ingest."""
    sid = bench.season.pk
    with bench.env.connect() as conn:
        conn.execute("SET maintenance_work_mem = '512MB'")
        started = time.perf_counter()
        conn.execute(f"CREATE INDEX IF NOT EXISTS {INDEX_ON}")
        conn.execute("VACUUM (ANALYZE) matches_playertotal")
        index_seconds = time.perf_counter() - started
        try:
            query = "SELECT player_id, points FROM matches_playertotal WHERE season_id = %s"
            found = conn.execute(query + " AND player_id = ANY(%s)", [sid, player_ids])
            points = dict(found.fetchall())
            thresholds = [points[p] for p in player_ids if p in points]
            plan = conn.execute("EXPLAIN (FORMAT JSON) " + RANK_SQL, [sid, thresholds[0]])
            plan = plan.fetchone()[0][0]["Plan"]

            def rank(threshold: int) -> Any:
                return conn.execute(RANK_SQL, [sid, threshold], prepare=True)

            _timed(rank, thresholds[:5])
            samples = _timed(rank, thresholds, seconds=bench.options.pg_seconds)
        finally:
            conn.execute(f"DROP INDEX IF EXISTS {INDEX}")
    nodes = []
    while plan:
        index = f" ({plan['Index Name']})" if "Index Name" in plan else ""
        nodes.append(plan.get("Node Type", "?") + index)
        plan = (plan.get("Plans") or [{}])[0]
    return latency_summary(samples) | {
        "query": RANK_SQL, "index": INDEX_ON, "index_build_seconds": round(index_seconds, 2),
        "plan": " > ".join(nodes),
    }  # fmt: skip


def _path(kind: str, bench: Bench, player: str = "p0") -> str:
    season = bench.season
    return PATHS[kind].format(player=player, board=season.board.slug, season=season.slug)


def read_load(bench: Bench, server: WebServer, kind: str) -> WrkLoad:
    """wrk asking for the endpoint (bench/wrk/read.lua, random players) on the read connections."""
    options, season = bench.options, bench.season
    args = [kind, str(options.players), season.board.slug, season.slug]
    connections, threads = options.connections, options.threads
    return WrkLoad(bench.wrk, server.base_url, "read.lua", args, connections, threads)


def endpoint_measure(bench: Bench, server: WebServer, kind: str, cpu: dict[str, int]) -> Figures:
    """An endpoint at saturation (the names from the profile directory, filled after the load);
    a wrong URL fails loudly first, not as a fast 404."""
    try:
        with urllib.request.urlopen(server.base_url + _path(kind, bench), timeout=10) as answer:  # noqa: S310
            json.loads(answer.read())
    except (OSError, ValueError) as exc:
        raise BenchError(f"GET {_path(kind, bench)} failed: {exc}") from exc
    options, load = bench.options, read_load(bench, server, kind)
    figures = load.timed(options.read_seconds, options.warmup_seconds, cpu, bench.env)
    return {"path": PATHS[kind], **figures}


def reference_measure(bench: Bench, server: WebServer) -> dict[str, Any]:
    """The bare ASGI app (bench/apps/bare.py) under the read endpoints' load."""
    options, url = bench.options, f"{server.base_url}/"
    load = WrkLoad(bench.wrk, url, "fixed.lua", [], options.connections, options.threads)
    figures = load.timed(options.read_seconds, options.warmup_seconds, {"web": server.pid})
    return {"path": "/", "app": "bench.apps.bare:application", **figures}


def endpoint_open_loop(bench: Bench, server: WebServer, kind: str, saturation_per_s: float,
                       cpu: dict[str, int]) -> Figures:  # fmt: skip
    """The endpoint at each of OPEN_READ_SHARES of `saturation_per_s`, offered by h2load on a
    schedule; right after its saturation run, so its caches are as that run left them."""
    options = bench.options

    def uris(rng: random.Random, count: int) -> list[str]:
        if "{player}" not in PATHS[kind]:
            return [server.base_url + _path(kind, bench)]
        among = min(FRIEND_LISTS, options.players) if kind == "friends" else options.players
        players = (f"p{rng.randrange(among)}" for _ in range(count))
        return [server.base_url + _path(kind, bench, player) for player in players]

    runs: dict[str, Any] = {}
    for share in OPEN_READ_SHARES:
        with Window(cpu) as window:
            figures = h2load_open_loop(
                h2load=bench.h2load, uris=uris, rate=saturation_per_s * share / 100,
                connections=options.openread_connections, seconds=options.openread_seconds,
                work_dir=bench.log_dir / "h2load", label=f"{kind}-{share}", seed=options.seed,
            )  # fmt: skip
        runs[str(share)] = {"share_of_saturation": share / 100, **figures, **window.figures()}
    return runs
