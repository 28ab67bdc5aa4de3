"""'What's my rank?' without the API: raw ZREVRANK through redis-py on the season's key, the
gateway's Lua read the API runs, and the relational baseline, a count over a B-tree in PostgreSQL.

The bench talks to Redis directly here on purpose: it measures Redis itself, on the key the
gateway names (store.standings_key), as a floor under the API's figure.
"""

from __future__ import annotations

import random
import time
from typing import Any

import psycopg
import redis

from leaderboards import store
from seasons.models import Season

from .environment import BenchEnvironment
from .stats import latency_summary

INDEX = "bench_total_season_points"
RANK_SQL = "SELECT count(*) + 1 FROM matches_playertotal WHERE season_id = %s AND points > %s"


def sample_players(*, players: int, count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [f"p{rng.randrange(players)}" for _ in range(count)]


def _timed(calls: list[Any]) -> list[float]:
    samples = []
    for call in calls:
        started = time.perf_counter_ns()
        call()
        samples.append((time.perf_counter_ns() - started) / 1e6)
    return samples


def redis_rank(*, env: BenchEnvironment, season: Season, player_ids: list[str]) -> dict[str, Any]:
    """One client, one command at a time: each sample is a full round trip on loopback."""
    key = store.standings_key(season.pk)
    client = redis.Redis.from_url(env.redis_url, socket_timeout=5)
    warm = player_ids[: min(500, len(player_ids))]
    for player_id in warm:
        client.zrevrank(key, player_id)
    started = time.perf_counter()
    raw = _timed([lambda p=p: client.zrevrank(key, p) for p in player_ids])
    raw_seconds = time.perf_counter() - started
    missing = sum(client.zrevrank(key, p) is None for p in player_ids[:100])
    for player_id in warm:
        store.read_rank(season.pk, player_id)
    lua = _timed([lambda p=p: store.read_rank(season.pk, p) for p in player_ids])
    return {
        "zrevrank": {
            **latency_summary(raw),
            "ops_per_s_one_client": round(len(raw) / raw_seconds),
            "missing_of_first_100": missing,
        },
        "gateway_read_rank": {
            **latency_summary(lua),
            "what": "store.read_rank: the Lua script the rank endpoint runs (ZREVRANK, ZCARD, "
            "ZSCORE, ZCOUNT)",
        },
    }


def postgres_rank(
    *,
    env: BenchEnvironment,
    season: Season,
    player_ids: list[str],
    max_samples: int,
    max_seconds: float,
) -> dict[str, Any]:
    """count(*) + 1 over a B-tree on (season_id, points), built for this phase and dropped after."""
    with psycopg.connect(**env.conninfo(), autocommit=True) as conn:
        conn.execute("SET maintenance_work_mem = '512MB'")
        started = time.perf_counter()
        conn.execute(
            f"CREATE INDEX IF NOT EXISTS {INDEX} ON matches_playertotal (season_id, points)"
        )
        conn.execute("VACUUM (ANALYZE) matches_playertotal")
        index_seconds = time.perf_counter() - started
        try:
            wanted = player_ids[:max_samples]
            points = dict(
                conn.execute(
                    "SELECT player_id, points FROM matches_playertotal"
                    " WHERE season_id = %s AND player_id = ANY(%s)",
                    [season.pk, wanted],
                ).fetchall()
            )
            thresholds = [points[p] for p in wanted if p in points]
            plan = conn.execute(
                "EXPLAIN (FORMAT JSON) " + RANK_SQL, [season.pk, thresholds[0]]
            ).fetchone()[0][0]["Plan"]
            for threshold in thresholds[:5]:
                conn.execute(RANK_SQL, [season.pk, threshold], prepare=True)
            samples = []
            deadline = time.perf_counter() + max_seconds
            for threshold in thresholds:
                if samples and time.perf_counter() > deadline:
                    break
                began = time.perf_counter_ns()
                conn.execute(RANK_SQL, [season.pk, threshold], prepare=True).fetchone()
                samples.append((time.perf_counter_ns() - began) / 1e6)
        finally:
            conn.execute(f"DROP INDEX IF EXISTS {INDEX}")
    return {
        **latency_summary(samples),
        "query": RANK_SQL,
        "index": f"{INDEX} ON matches_playertotal (season_id, points)",
        "index_build_seconds": round(index_seconds, 2),
        "plan": _plan_nodes(plan),
    }


def _plan_nodes(plan: dict[str, Any]) -> str:
    nodes = []
    while plan:
        nodes.append(
            plan.get("Node Type", "?")
            + (f" ({plan['Index Name']})" if "Index Name" in plan else "")
        )
        children = plan.get("Plans") or []
        plan = children[0] if children else {}
    return " > ".join(nodes)
