"""The rules that make a season's archive from its final standings, as SQL over the tables named:
the close applies them to the archive's own tables, a correction of a closed season
(archive_corrections.py) to its working copies, so both rank players, segments and clans by one
definition."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from seasons.models import ScoreOperator, Season
from seasons.scoring import elapsed_seconds_sql, ranked_points_sql


@dataclass(frozen=True, slots=True)
class ArchiveTables:
    """Where an archive is written: the close's tables, or a correction's copies of them (with
    the columns the rules below read and write)."""

    standings: str
    segments: str
    clans: str
    rewards: str

    def named(self, sql: str) -> str:
        return sql.format(**asdict(self))


ARCHIVE_TABLES = ArchiveTables(
    standings="seasons_archivedstanding",
    segments="leaderboards_archivedsegmentstanding",
    clans="leaderboards_archivedclanstanding",
    rewards="seasons_seasonreward",
)


def final_order_sql(*, season: Season, totals: str, starts_at: str) -> str:
    """The order of the final standings, as the season's sorted set holds them, for an ORDER BY:
    points (the board's way, higher first), then who reached them first (whole seconds, lower
    first), then the player_id that sorts last (byte order) first. `totals` names the rows (of
    totals or of the archive), `starts_at` the season start's parameter."""
    ranked_points = ranked_points_sql(
        points=f"{totals}.points", lowest_first="TRUE" if season.board.lowest_first else "FALSE"
    )
    elapsed = elapsed_seconds_sql(reached_at=f"{totals}.reached_at", starts_at=starts_at)
    return f'{ranked_points} DESC, {elapsed} ASC, {totals}.player_id COLLATE "C" DESC'


def better_points_sql(*, season: Season, totals: str) -> str:
    """The order that ranks() a competition rank: one more than the players with better points."""
    ranked_points = ranked_points_sql(
        points=f"{totals}.points", lowest_first="TRUE" if season.board.lowest_first else "FALSE"
    )
    return f"{ranked_points} DESC"


# A player off the board for a ban at `now` (a temporary ban over by then is not one), as the
# close repairs its season's banned players before its snapshot
# (player_refreshes.season_bans_repair).
BANNED_AT_NOW = "(p.banned_at IS NOT NULL AND (p.banned_until IS NULL OR p.banned_until > {now}))"


def standings_rank(cursor: Any, *, season: Season, tables: ArchiveTables, now: datetime) -> int:
    """The season's final standings from PostgreSQL's totals, as the close archives them from
    its sorted set (which holds the same totals, the players banned at `now` left out); returns
    how many players. The close's check (closing._out_of_order, each standing joined to its
    total) holds its snapshot to this order."""
    order = final_order_sql(season=season, totals="t", starts_at="%(starts_at)s")
    better = better_points_sql(season=season, totals="t")
    cursor.execute(
        tables.named(
            "INSERT INTO {standings}"
            " (season_id, rank, competition_rank, player_id, points, reached_at)"
            f" SELECT t.season_id, row_number() OVER (ORDER BY {order}),"
            f" rank() OVER (ORDER BY {better}), t.player_id, t.points, t.reached_at"
            " FROM matches_playertotal t JOIN matches_player p ON p.player_id = t.player_id"
            " WHERE t.season_id = %(season)s AND NOT " + BANNED_AT_NOW.format(now="%(now)s")
        ),
        {"season": season.pk, "starts_at": season.starts_at, "now": now},
    )
    return cursor.rowcount


# The segments each player is in at the close: their values of the board's dimensions, and their
# clan as the segment `clan:<id>` (a correction passes the ones archived with them instead).
MEMBERSHIPS_NOW = """
    SELECT player_id, dimension || ':' || value AS segment
    FROM matches_playersegment WHERE dimension = ANY(%(dimensions)s)
    UNION ALL
    SELECT player_id, 'clan:' || clan_id FROM matches_player WHERE clan_id IS NOT NULL
"""


def segments_rank(
    cursor: Any,
    *,
    season: Season,
    tables: ArchiveTables,
    memberships: str = MEMBERSHIPS_NOW,
    params: dict[str, Any] | None = None,
) -> int:
    """Each archived player's rank within each of their segments (`memberships`: player_id,
    segment), in the archive's order; returns how many rows it wrote."""
    # Ordinal ranks follow the archive's; a competition rank is one more than the members with
    # better points, which are the ones with a lower competition rank on the board.
    cursor.execute(
        tables.named(
            """
            INSERT INTO {segments} (season_id, segment, rank, competition_rank, player_id)
            SELECT a.season_id, s.segment,
                   row_number() OVER (PARTITION BY s.segment ORDER BY a.rank),
                   rank() OVER (PARTITION BY s.segment ORDER BY a.competition_rank),
                   a.player_id
            FROM {standings} a
            JOIN (%s) s ON s.player_id = a.player_id
            WHERE a.season_id = %%(season)s
            """
        )
        % memberships,
        {
            "season": season.pk,
            "dimensions": list(season.board.segment_dimensions),
            **(params or {}),
        },
    )
    return cursor.rowcount


# The clan board from the archive: by the sum of the members' points (signed, so a lowest-first
# board's smallest sum is first; equal sums in the live board's order, the clan id that sorts
# last first) or by each clan's best member (their archived rank orders the clans). A clan's
# members are the archived segment `clan:<id>`.
_CLAN_MEMBERS = """
    (SELECT player_id, substr(segment, 6) AS clan_id FROM {segments}
     WHERE season_id = %(season)s AND segment LIKE 'clan:%%')
"""
_CLANS_SUMMED = f"""
    SELECT clan_id, row_number() OVER (ORDER BY signed DESC, clan_id COLLATE "C" DESC),
           rank() OVER (ORDER BY signed DESC), points, members
    FROM (SELECT m.clan_id, sum(a.points) AS points, count(*) AS members,
                 CASE WHEN %(lowest_first)s THEN -sum(a.points) ELSE sum(a.points) END AS signed
          FROM {{standings}} a JOIN {_CLAN_MEMBERS} m ON m.player_id = a.player_id
          WHERE a.season_id = %(season)s GROUP BY m.clan_id) c
"""
_CLANS_BEST = f"""
    SELECT clan_id, row_number() OVER (ORDER BY best_rank), rank() OVER (ORDER BY best_base),
           points, members
    FROM (SELECT m.clan_id, min(a.rank) AS best_rank, min(a.competition_rank) AS best_base,
                 (array_agg(a.points ORDER BY a.rank))[1] AS points, count(*) AS members
          FROM {{standings}} a JOIN {_CLAN_MEMBERS} m ON m.player_id = a.player_id
          WHERE a.season_id = %(season)s GROUP BY m.clan_id) c
"""


def clans_rank(cursor: Any, *, season: Season, tables: ArchiveTables) -> int:
    """The season's final clan board, from its archived standings and clan segments (written
    first, by segments_rank); returns how many clans."""
    summed = season.board.score_operator == ScoreOperator.SUM
    cursor.execute(
        tables.named(
            "INSERT INTO {clans}"
            " (clan_id, rank, competition_rank, points, members, season_id, reward_code)"
            " SELECT *, %(season)s, '' FROM (" + (_CLANS_SUMMED if summed else _CLANS_BEST) + ") r"
        ),
        {"season": season.pk, "lowest_first": season.board.lowest_first},
    )
    return cursor.rowcount
