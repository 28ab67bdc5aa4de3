"""The invariant the fault tests hold the service to, read straight from PostgreSQL and Redis.

Every result the API confirmed is in PostgreSQL exactly once, every total is the sum of its
counted results (not the voided ones, nor those posted while banned), and every season's ZSET
holds exactly PostgreSQL's players, the banned ones left out, at their composite scores.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
import redis
from django.test import override_settings

from leaderboards import store
from seasons.scoring import composite_for

from .load import ResultKey


def standings_key(prefix: str, season_id: int, shards: int = 1, shard: int = 0) -> str:
    """The season's ZSET (one shard's) as the deployment under test names it (the gateway's own
    rule)."""
    with override_settings(LEADERBOARD_KEY_PREFIX=prefix):
        return store.standings_key(season_id, shards, shard)


def season_members(
    r: redis.Redis | redis.RedisCluster, prefix: str, season_id: int, shards: int
) -> dict[str, int]:
    """Every member of the season's ZSET (of all its shards) at its score."""
    return {
        member: int(score)
        for shard in range(shards)
        for member, score in r.zrange(
            standings_key(prefix, season_id, shards, shard), 0, -1, withscores=True
        )
    }


@dataclass(frozen=True, slots=True)
class SeasonRow:
    id: int
    slug: str
    starts_at: datetime
    score_operator: str
    lowest_first: bool
    shards: int
    closed: bool


def seasons(conn: psycopg.Connection) -> list[SeasonRow]:
    rows = conn.execute(
        """
        SELECT s.id, s.slug, s.starts_at, b.score_operator, b.sort_order = 'lowest_first',
            s.shards, s.state = 'closed'
        FROM seasons_season s JOIN seasons_board b ON b.id = s.board_id ORDER BY s.id
        """
    ).fetchall()
    return [SeasonRow(*row) for row in rows]


def expected_standings(
    conn: psycopg.Connection, *, live_only: bool = False
) -> dict[int, dict[str, int]]:
    """Each season's players and composite scores, computed from PostgreSQL's totals, without
    the banned players (only the seasons not closed, `live_only`: a closed one's set is its
    archive's source, no longer the live board)."""
    by_id = {season.id: season for season in seasons(conn) if not (live_only and season.closed)}
    expected: dict[int, dict[str, int]] = {season_id: {} for season_id in by_id}
    for season_id, player_id, points, reached_at in conn.execute(
        """
        SELECT t.season_id, t.player_id, t.points, t.reached_at
        FROM matches_playertotal t JOIN matches_player p ON p.player_id = t.player_id
        WHERE p.banned_at IS NULL
        """
    ):
        season = by_id.get(season_id)
        if season is None:
            continue
        expected[season_id][player_id] = composite_for(
            points=points,
            reached_at=reached_at,
            season_starts_at=season.starts_at,
            lowest_first=season.lowest_first,
        )
    return expected


def _sample(items: Any, n: int = 5) -> list[Any]:
    return sorted(items)[:n]


def standings_problems(
    conn: psycopg.Connection,
    r: redis.Redis | redis.RedisCluster,
    prefix: str,
    *,
    live_only: bool = False,
) -> list[str]:
    """How each season's ZSET differs from PostgreSQL (nothing when they agree exactly)."""
    problems: list[str] = []
    shards = {season.id: season.shards for season in seasons(conn)}
    for season_id, want in expected_standings(conn, live_only=live_only).items():
        key = standings_key(prefix, season_id)
        have = season_members(r, prefix, season_id, shards[season_id])
        missing = want.keys() - have.keys()
        extra = have.keys() - want.keys()
        wrong = {p for p in want.keys() & have.keys() if want[p] != have[p]}
        if missing or extra or wrong:
            problems.append(
                f"{key}: {len(have)} members for {len(want)} players in PostgreSQL; "
                f"{len(missing)} missing {_sample(missing)}, {len(extra)} extra {_sample(extra)}, "
                f"{len(wrong)} wrong "
                f"{[(p, have[p], want[p]) for p in _sample(wrong)]} (player, ZSET, expected)"
            )
    return problems


def unmirrored(conn: psycopg.Connection) -> int:
    """Standings committed that the mirror has not written yet (its outbox)."""
    row = conn.execute(
        "SELECT count(*) FROM matches_pendingstanding p, jsonb_each(p.standings) AS season,"
        " jsonb_array_elements(season.value)"
    ).fetchone()
    assert row is not None
    return int(row[0])


def results_problems(
    conn: psycopg.Connection,
    *,
    confirmed: Mapping[ResultKey, int],
    sent: Mapping[tuple[str, str], int],
) -> list[str]:
    """Confirmed results missing or counted twice, results never sent, and wrong totals."""
    problems: list[str] = []
    stored: Counter[ResultKey] = Counter()
    points: dict[ResultKey, int] = {}
    for slug, match_id, player_id, result_points in conn.execute(
        """
        SELECT s.slug, r.match_id, r.player_id, r.points
        FROM matches_matchresult r JOIN seasons_season s ON s.id = r.season_id
        """
    ):
        stored[(slug, match_id, player_id)] += 1
        points[(slug, match_id, player_id)] = result_points

    twice = [key for key, n in stored.items() if n > 1]
    if twice:
        problems.append(f"{len(twice)} results stored more than once: {_sample(twice)}")
    lost = [key for key in confirmed if key not in stored]
    if lost:
        problems.append(f"{len(lost)} confirmed results are not in PostgreSQL: {_sample(lost)}")
    changed = [key for key in confirmed if key in points and points[key] != confirmed[key]]
    if changed:
        problems.append(f"{len(changed)} confirmed results stored with other points: {changed[:5]}")
    unknown = [key for key in stored if sent.get((key[1], key[2])) != points[key]]
    if unknown:
        problems.append(f"{len(unknown)} stored results were never sent: {_sample(unknown)}")

    for operator in {season.score_operator for season in seasons(conn)}:
        assert operator == "sum", f"the checks know sum boards only, not {operator!r}"
    mismatched = conn.execute(
        """
        SELECT coalesce(t.season_id, r.season_id), coalesce(t.player_id, r.player_id),
               t.points, r.points, t.reached_at, r.reached_at
        FROM matches_playertotal t
        FULL JOIN (
            SELECT season_id, player_id, sum(points) AS points, max(ended_at) AS reached_at
            FROM matches_matchresult WHERE counted GROUP BY season_id, player_id
        ) r ON r.season_id = t.season_id AND r.player_id = t.player_id
        WHERE t.points IS DISTINCT FROM r.points OR t.reached_at IS DISTINCT FROM r.reached_at
        ORDER BY 1, 2
        """
    ).fetchall()
    if mismatched:
        problems.append(
            f"{len(mismatched)} totals differ from the sum of their counted results "
            f"(season, player, total, sum, reached_at, latest ended_at): {mismatched[:5]}"
        )
    return problems


def assert_invariant(
    conn: psycopg.Connection,
    r: redis.Redis | redis.RedisCluster,
    prefix: str,
    *,
    confirmed: Mapping[ResultKey, int],
    sent: Mapping[tuple[str, str], int],
) -> None:
    problems = results_problems(conn, confirmed=confirmed, sent=sent) + standings_problems(
        conn, r, prefix
    )
    assert not problems, "the invariant does not hold:\n" + "\n".join(problems)
