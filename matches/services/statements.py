"""The write path's statements: insert the results, find the ones stored already, and merge
the new ones into the totals and the mirror's outbox, one statement each."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Any

import orjson
import psycopg
from django.db.backends.utils import CursorWrapper

from config.building_blocks.errors import Conflict
from seasons.models import Board, ScoreOperator
from seasons.scoring import MAX_POINTS, composite_sql

from .. import outbox
from .posted import (
    Contribution,
    Item,
    PlayerSeason,
    ResultKey,
    SeasonRef,
    StoredResult,
    item_details,
    item_prefix,
)

# How a new result merges into a player's total, per board rule. In ON CONFLICT DO UPDATE
# every expression sees the row as it was, and "excluded" is this request's contribution.
_MERGE_SQL = {
    "sum": """
        points = t.points + excluded.points,
        reached_at = GREATEST(t.reached_at, excluded.reached_at)""",
    "best_highest": """
        points = GREATEST(t.points, excluded.points),
        reached_at = CASE WHEN excluded.points > t.points THEN excluded.reached_at
                          WHEN excluded.points = t.points
                               THEN LEAST(t.reached_at, excluded.reached_at)
                          ELSE t.reached_at END""",
    "best_lowest": """
        points = LEAST(t.points, excluded.points),
        reached_at = CASE WHEN excluded.points < t.points THEN excluded.reached_at
                          WHEN excluded.points = t.points
                               THEN LEAST(t.reached_at, excluded.reached_at)
                          ELSE t.reached_at END""",
}

# Banned players' results are stored uncounted; a temporary ban counts until its end, to the
# request's clock, whether or not the unban task has lifted it yet. The bans lock taken in
# resolving.py makes the banned list current: this statement's snapshot is taken after it was
# granted. The banned players are found through a partial index of them alone, so the check
# costs no read of the players' table.
#
# Rows arrive as one JSON document, not as arrays: psycopg builds array parameters element by
# element in Python, which was most of a 100-result request's time in the web process.
_INSERT_RESULTS_SQL = """
WITH r AS (
    SELECT * FROM json_to_recordset(%(results)s::json)
        AS r(b bigint, s bigint, m text, p text, pts integer, e timestamptz)
), banned AS (
    SELECT coalesce(array_agg(player_id), '{}') AS ids FROM matches_player
    WHERE player_id IN (SELECT p FROM r) AND banned_at IS NOT NULL
      AND (banned_until IS NULL OR banned_until > %(now)s)
)
INSERT INTO matches_matchresult
    (board_id, season_id, match_id, player_id, points, ended_at, received_at, counted)
SELECT r.b, r.s, r.m, r.p, r.pts, r.e, %(now)s, r.p <> ALL(banned.ids)
FROM r, banned
ORDER BY r.b, r.m, r.p
ON CONFLICT (board_id, match_id, player_id) DO NOTHING
RETURNING board_id, match_id, player_id, counted
"""

# Upsert the totals, compute each new composite score from the row just written, and put them
# in the mirror's outbox as one row: one statement, so the mirror never reads the totals back.
#
# A player is created with their first total of a season: checking every result's player against
# the players' table cost a read of a random page of it per result, at ten million players most
# of PostgreSQL's time. Only the totals the upsert inserted offer their player to the players'
# table (a player starting a second season costs one more probe, answered "exists"); RETURNING
# tells them by their xmax: a freshly inserted row has none, a merged one the locking
# transaction's (were that ever not so, its player would only be offered again and skipped by
# DO NOTHING). The foreign key of the new totals is deferred to the commit, after the players.
_UPSERT_TOTALS_SQL = """
WITH contribution AS (
    SELECT * FROM json_to_recordset(%(contributions)s::json)
        AS c(season_id bigint, player_id text, points integer, reached_at timestamptz,
             starts_at timestamptz, lowest_first boolean)
), total AS (
    INSERT INTO matches_playertotal AS t (season_id, player_id, points, reached_at, updated_at)
    SELECT season_id, player_id, points, reached_at, %(now)s FROM contribution
    ORDER BY season_id, player_id
    ON CONFLICT (season_id, player_id) DO UPDATE SET {merge},
        updated_at = excluded.updated_at
    RETURNING t.season_id, t.player_id, t.points, t.reached_at, t.xmax = 0 AS created
), fresh AS (
    INSERT INTO matches_player
        (player_id, display_name, avatar_url, ban_reason, created_at, updated_at)
    SELECT DISTINCT player_id, '', '', '', %(now)s::timestamptz, %(now)s::timestamptz
    FROM total WHERE created
    ORDER BY player_id
    ON CONFLICT (player_id) DO NOTHING
), standing AS (
    SELECT total.season_id, total.player_id, {composite} AS composite, total.points
    FROM total JOIN contribution USING (season_id, player_id)
), pending AS (
    INSERT INTO matches_pendingstanding (standings, changed_at)
    SELECT jsonb_object_agg(season_id::text, players), %(now)s FROM (
        SELECT season_id, jsonb_agg(jsonb_build_array(player_id, composite)) AS players
        FROM standing GROUP BY season_id
    ) AS by_season
    HAVING count(*) > 0
    RETURNING id
)
SELECT pending.id, standing.season_id, standing.player_id, standing.composite, standing.points
FROM standing, pending
"""


def _prepared(cursor: CursorWrapper, sql: str, params: dict[str, object]) -> list[tuple[Any, ...]]:
    """Run one of the write path's statements as a prepared statement of the connection, and
    return its rows. Django binds parameters on the client, so PostgreSQL would parse and plan
    these statements again on every request: 1.2 ms of its CPU for the two of a request of 100
    results, about a sixth of what the request costs it. Bound on the server and prepared, they
    are planned once per connection. The statement runs in Django's transaction all the same
    (same connection), and its errors reach the caller as Django's; only Django's query logging
    does not see it."""
    with cursor.db.wrap_database_errors, psycopg.Cursor(cursor.cursor.connection) as prepared:
        prepared.execute(sql, params, prepare=True)
        return prepared.fetchall()


def _json(rows: list[dict[str, object]]) -> str:
    """Rows as one JSON document for json_to_recordset; orjson writes aware datetimes as
    RFC 3339, which PostgreSQL reads as timestamptz."""
    return orjson.dumps(rows).decode()


def rule_of(board: Board) -> str:
    if board.score_operator == ScoreOperator.SUM:
        return "sum"
    return "best_lowest" if board.lowest_first else "best_highest"


def _contribution(rule: str, items: list[Item]) -> tuple[int, datetime]:
    """What a request's new results for one player add to the total, and when it was reached."""
    if rule == "sum":
        return sum(i.result.points for i in items), max(i.ended_at for i in items)
    points = [i.result.points for i in items]
    best = min(points) if rule == "best_lowest" else max(points)
    return best, min(i.ended_at for i in items if i.result.points == best)


def results_insert(
    cursor: CursorWrapper, to_insert: list[tuple[ResultKey, Item]], now: datetime
) -> dict[ResultKey, bool]:
    """Insert the results not stored yet; returns each inserted one's key and whether it counts
    (not when its player is banned)."""
    if not to_insert:
        return {}
    rows = [
        {
            "b": key.board_id,
            "s": item.season.id,  # type: ignore[union-attr]
            "m": key.match_id,
            "p": key.player_id,
            "pts": item.result.points,
            "e": item.ended_at,
        }
        for key, item in to_insert
    ]
    stored = _prepared(cursor, _INSERT_RESULTS_SQL, {"now": now, "results": _json(rows)})
    return {
        ResultKey(board_id, match_id, player_id): counted
        for board_id, match_id, player_id, counted in stored
    }


def contributions_by_rule(
    to_insert: list[tuple[ResultKey, Item]], inserted: dict[ResultKey, bool], batch: bool
) -> dict[str, list[Contribution]]:
    """Each player's contribution from the counted results this request really inserted,
    grouped by the scoring rule that merges it into their total."""
    new_by_player: dict[PlayerSeason, list[Item]] = defaultdict(list)
    for key, item in to_insert:
        if inserted.get(key):
            new_by_player[PlayerSeason(item.season.id, key.player_id)].append(item)  # type: ignore[union-attr]
    by_rule: dict[str, list[Contribution]] = defaultdict(list)
    for player_season, player_items in sorted(new_by_player.items()):
        rule = rule_of(player_items[0].board)
        points, reached_at = _contribution(rule, player_items)
        if points > MAX_POINTS:
            raise Conflict(
                f"A player's season total may not pass {MAX_POINTS}.",
                code="total_limit_exceeded",
                details=item_details(player_items[-1].index, batch),
            )
        by_rule[rule].append(Contribution(player_season, points, reached_at, player_items[0]))
    return by_rule


def totals_read(
    cursor: CursorWrapper, wanted: set[PlayerSeason], totals: dict[PlayerSeason, int]
) -> None:
    """Add to `totals` the wanted ones no upsert returned (players whose results were all
    duplicates or refused)."""
    missing = sorted(wanted - totals.keys())
    if not missing:
        return
    cursor.execute(
        """
        SELECT season_id, player_id, points FROM matches_playertotal
        WHERE (season_id, player_id) IN (
            SELECT * FROM unnest(%s::bigint[], %s::text[]))
        """,
        [[m.season_id for m in missing], [m.player_id for m in missing]],
    )
    for season_id, player_id, points in cursor.fetchall():
        totals[PlayerSeason(season_id, player_id)] = points


def stored_results(
    cursor: CursorWrapper,
    keys: list[ResultKey],
    first_of: dict[ResultKey, Item],
    batch: bool,
) -> dict[ResultKey, SeasonRef]:
    """For results not inserted: the stored result makes a duplicate when its points agree (in
    whatever season it was stored), a conflict otherwise; with none stored, the item's refusal
    stands. Returns each duplicate's season."""
    if not keys:
        return {}
    cursor.execute(
        """
        SELECT r.board_id, r.match_id, r.player_id, r.points, s.id, s.slug
        FROM matches_matchresult r JOIN seasons_season s ON s.id = r.season_id
        WHERE (r.board_id, r.match_id, r.player_id) IN (
            SELECT * FROM unnest(%s::bigint[], %s::text[], %s::text[]))
        """,
        [
            [k.board_id for k in keys],
            [k.match_id for k in keys],
            [k.player_id for k in keys],
        ],
    )
    found = {
        ResultKey(board_id, match_id, player_id): StoredResult(points, SeasonRef(id, slug))
        for board_id, match_id, player_id, points, id, slug in cursor.fetchall()
    }
    seasons: dict[ResultKey, SeasonRef] = {}
    for key in keys:
        item = first_of[key]
        if key not in found:
            if item.refusal is not None:
                raise item.refusal
            # ON CONFLICT skipped it, so a committed row exists and this statement sees it.
            raise RuntimeError(f"result {key} neither inserted nor stored")
        stored = found[key]
        if stored.points != item.result.points:
            raise Conflict(
                f"{item_prefix(item.index, batch)}Match '{item.result.match_id}' already has "
                f"a different result ({stored.points} points) for player "
                f"'{item.result.player_id}'.",
                code="conflict",
                details=item_details(item.index, batch),
            )
        seasons[key] = stored.season
    return seasons


def totals_upsert(
    cursor: CursorWrapper,
    rule: str,
    contributions: list[Contribution],
    now: datetime,
    totals: dict[PlayerSeason, int],
) -> list[outbox.StandingChange]:
    """Merge the contributions of one rule into the totals; records each new total in `totals`
    and returns the new standings for the mirror."""
    sql = _UPSERT_TOTALS_SQL.format(
        merge=_MERGE_SQL[rule],
        composite=composite_sql(
            points="total.points",
            reached_at="total.reached_at",
            starts_at="contribution.starts_at",
            lowest_first="contribution.lowest_first",
        ),
    )
    merged = _prepared(
        cursor,
        sql,
        {
            "now": now,
            "contributions": _json(
                [
                    {
                        "season_id": c.player_season.season_id,
                        "player_id": c.player_season.player_id,
                        "points": c.points,
                        "reached_at": c.reached_at,
                        "starts_at": c.first.season.starts_at,  # type: ignore[union-attr]
                        "lowest_first": c.first.board.lowest_first,
                    }
                    for c in contributions
                ]
            ),
        },
    )
    # Every standing carries its outbox row's id, the same for the whole statement.
    worsening_in: dict[int, bool] = {}
    for c in contributions:
        worsening_in.setdefault(c.player_season.season_id, c.first.board.standings_worsen)
    changes = []
    for pending_id, season_id, player_id, composite, points in merged:
        totals[PlayerSeason(season_id, player_id)] = points
        changes.append(
            outbox.StandingChange(
                pending_id, season_id, player_id, composite, worsening_in[season_id]
            )
        )
    return changes
