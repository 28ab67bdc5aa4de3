"""The corrected archive, built by the close's own rules in temporary tables beside the archive,
its differences from the archive, and the statements that write them into it."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from seasons.models import Season

from ..archive_rules import (
    MEMBERSHIPS_NOW,
    ArchiveTables,
    clans_rank,
    segments_rank,
    standings_rank,
)
from ..rewards import rewards_rule_apply
from .changes import ArchiveCorrection, ClanChange, Move, RewardChange

# The corrected archive is built in temporary tables of the transaction's session, with the
# columns the archive's rules read and write.
WORK_TABLES = ArchiveTables(
    standings="corrected_standing",
    segments="corrected_segment",
    clans="corrected_clan",
    rewards="corrected_reward",
)
_WORK_TABLES_CREATE = (
    "CREATE TEMP TABLE corrected_standing (season_id bigint, rank bigint,"
    " competition_rank bigint, player_id text PRIMARY KEY, points integer,"
    " reached_at timestamptz) ON COMMIT DROP",
    "CREATE TEMP TABLE corrected_segment (season_id bigint, segment text, rank bigint,"
    " competition_rank bigint, player_id text, PRIMARY KEY (segment, player_id)) ON COMMIT DROP",
    "CREATE TEMP TABLE corrected_clan (clan_id text PRIMARY KEY, rank bigint,"
    " competition_rank bigint, points bigint, members bigint, season_id bigint,"
    " reward_code text) ON COMMIT DROP",
    "CREATE TEMP TABLE corrected_reward (season_id bigint, player_id text, rank bigint,"
    " reward_code text, awarded_at timestamptz, segment text NOT NULL DEFAULT '',"
    " PRIMARY KEY (segment, player_id)) ON COMMIT DROP",
)

# The segments each player is ranked in: the ones archived with them, or, for a player the
# archive did not hold, the ones they have now.
_MEMBERSHIPS_KEPT = f"""
    SELECT player_id, segment FROM leaderboards_archivedsegmentstanding
    WHERE season_id = %(season)s
    UNION ALL
    SELECT m.player_id, m.segment FROM ({MEMBERSHIPS_NOW}) m
    WHERE NOT EXISTS (SELECT 1 FROM seasons_archivedstanding a
                      WHERE a.season_id = %(season)s AND a.player_id = m.player_id)
"""

# The differences, numbered in the order the preview and the events list them: the standings
# that change (a player removed from the archive first, at their old rank), the rewards (by
# segment, the whole board's first, and rank), the clans (by their old rank).
_DIFFERENCES = (
    """
    CREATE TEMP TABLE archive_move ON COMMIT DROP AS
    SELECT row_number() OVER (ORDER BY a.rank NULLS LAST, c.rank) AS n,
           coalesce(a.player_id, c.player_id) AS player_id, a.rank AS old_rank,
           c.rank AS new_rank, a.points AS old_points, c.points AS new_points, a.note,
           a.corrected_at AS old_corrected_at, a.closed_rank
    FROM (SELECT * FROM seasons_archivedstanding WHERE season_id = %(season)s) a
    FULL JOIN corrected_standing c ON c.player_id = a.player_id
    WHERE (a.rank, a.competition_rank, a.points, a.reached_at)
          IS DISTINCT FROM (c.rank, c.competition_rank, c.points, c.reached_at)
    """,
    """
    CREATE TEMP TABLE reward_change ON COMMIT DROP AS
    SELECT row_number() OVER (ORDER BY coalesce(o.segment, n.segment),
                              coalesce(o.rank, n.rank), coalesce(o.player_id, n.player_id)) AS n,
           coalesce(o.player_id, n.player_id) AS player_id,
           coalesce(o.segment, n.segment) AS segment, o.rank AS old_rank,
           o.reward_code AS old_code, o.awarded_at AS old_awarded_at, n.rank AS new_rank,
           n.reward_code AS new_code
    FROM (SELECT * FROM seasons_seasonreward WHERE season_id = %(season)s) o
    FULL JOIN corrected_reward n ON n.player_id = o.player_id AND n.segment = o.segment
    WHERE (o.rank, o.reward_code) IS DISTINCT FROM (n.rank, n.reward_code)
    """,
    """
    CREATE TEMP TABLE clan_change ON COMMIT DROP AS
    SELECT row_number() OVER (ORDER BY o.rank NULLS LAST, n.rank) AS n,
           coalesce(o.clan_id, n.clan_id) AS clan_id, o.rank AS old_rank, n.rank AS new_rank,
           o.points AS old_points, n.points AS new_points, o.members AS old_members,
           n.members AS new_members, o.reward_code AS old_code, n.reward_code AS new_code
    FROM (SELECT * FROM leaderboards_archivedclanstanding WHERE season_id = %(season)s) o
    FULL JOIN corrected_clan n ON n.clan_id = o.clan_id
    WHERE (o.rank, o.competition_rank, o.points, o.members, o.reward_code)
          IS DISTINCT FROM (n.rank, n.competition_rank, n.points, n.members, n.reward_code)
    """,
)
_SEGMENT_ROWS_CHANGED = """
    SELECT count(*) FROM
        (SELECT * FROM leaderboards_archivedsegmentstanding WHERE season_id = %(season)s) o
        FULL JOIN corrected_segment n ON n.segment = o.segment AND n.player_id = o.player_id
    WHERE (o.rank, o.competition_rank) IS DISTINCT FROM (n.rank, n.competition_rank)
"""

# Applying the differences. Rows that change are deleted and written again (an UPDATE moving
# ranks would collide with the unique ranks midway); each standing written keeps the rank the
# close gave it and its note.
APPLY = (
    """
    DELETE FROM seasons_archivedstanding a USING archive_move m
    WHERE a.season_id = %(season)s AND a.player_id = m.player_id
    """,
    """
    INSERT INTO seasons_archivedstanding (season_id, rank, competition_rank, player_id, points,
        reached_at, note, corrected_at, closed_rank)
    SELECT %(season)s, c.rank, c.competition_rank, c.player_id, c.points, c.reached_at,
           coalesce(m.note, ''), %(now)s,
           CASE WHEN m.old_corrected_at IS NOT NULL THEN m.closed_rank ELSE m.old_rank END
    FROM corrected_standing c JOIN archive_move m ON m.player_id = c.player_id
    """,
    """
    DELETE FROM leaderboards_archivedsegmentstanding s
    WHERE s.season_id = %(season)s AND NOT EXISTS (
        SELECT 1 FROM corrected_segment c WHERE c.segment = s.segment
        AND c.player_id = s.player_id AND c.rank = s.rank
        AND c.competition_rank = s.competition_rank)
    """,
    """
    INSERT INTO leaderboards_archivedsegmentstanding
        (season_id, segment, rank, competition_rank, player_id)
    SELECT %(season)s, c.segment, c.rank, c.competition_rank, c.player_id
    FROM corrected_segment c WHERE NOT EXISTS (
        SELECT 1 FROM leaderboards_archivedsegmentstanding s
        WHERE s.season_id = %(season)s AND s.segment = c.segment AND s.player_id = c.player_id)
    """,
    """
    DELETE FROM leaderboards_archivedclanstanding o USING clan_change x
    WHERE o.season_id = %(season)s AND o.clan_id = x.clan_id
    """,
    """
    INSERT INTO leaderboards_archivedclanstanding
        (season_id, clan_id, rank, competition_rank, points, members, reward_code)
    SELECT %(season)s, c.clan_id, c.rank, c.competition_rank, c.points, c.members,
           c.reward_code
    FROM corrected_clan c JOIN clan_change x ON x.clan_id = c.clan_id
    """,
    """
    DELETE FROM seasons_seasonreward r USING reward_change x
    WHERE r.season_id = %(season)s AND r.player_id = x.player_id AND r.segment = x.segment
    """,
    # A reward that only follows its player's new rank keeps the time it was given.
    """
    INSERT INTO seasons_seasonreward (season_id, player_id, rank, reward_code, awarded_at, segment)
    SELECT %(season)s, x.player_id, x.new_rank, x.new_code,
           CASE WHEN x.old_code = x.new_code THEN x.old_awarded_at ELSE %(now)s END, x.segment
    FROM reward_change x WHERE x.new_code IS NOT NULL
    """,
)


def differences_build(cursor: Any, season: Season, now: datetime) -> int:
    """Build the corrected archive and its differences from the archive in the work tables;
    returns how many players the corrected archive holds."""
    for statement in _WORK_TABLES_CREATE:
        cursor.execute(statement)
    players = standings_rank(cursor, season=season, tables=WORK_TABLES, now=now)
    segments_rank(cursor, season=season, tables=WORK_TABLES, memberships=_MEMBERSHIPS_KEPT)
    clans_rank(cursor, season=season, tables=WORK_TABLES)
    rewards_rule_apply(cursor, season=season, tables=WORK_TABLES, players=players, now=now)
    for statement in _DIFFERENCES:
        cursor.execute(statement, {"season": season.pk})
    return players


def work_tables_drop(cursor: Any) -> None:
    """Dropped at once: the transaction may be a caller's that goes on (ON COMMIT DROP is for a
    transaction that ends with the correction)."""
    cursor.execute(
        "DROP TABLE corrected_standing, corrected_segment, corrected_clan, corrected_reward,"
        " archive_move, reward_change, clan_change"
    )


def moves_read(cursor: Any, *, after: int, limit: int) -> list[tuple[int, Move]]:
    cursor.execute(
        "SELECT n, player_id, old_rank, new_rank, old_points, new_points FROM archive_move"
        " WHERE n > %s ORDER BY n LIMIT %s",
        [after, limit],
    )
    return [(row[0], Move(*row[1:])) for row in cursor.fetchall()]


def reward_changes_read(cursor: Any, *, after: int, limit: int) -> list[tuple[int, RewardChange]]:
    cursor.execute(
        "SELECT n, player_id, segment, old_rank, old_code, new_rank, new_code FROM reward_change"
        " WHERE n > %s AND old_code IS DISTINCT FROM new_code ORDER BY n LIMIT %s",
        [after, limit],
    )
    return [(row[0], RewardChange(*row[1:])) for row in cursor.fetchall()]


def correction_read(
    cursor: Any, season: Season, players: int, *, offset: int, limit: int, listed: int
) -> ArchiveCorrection:
    """What the work tables say the correction changes: counts, the first `listed` reward and
    clan changes, and a page of moves from `offset`."""
    cursor.execute("SELECT count(*) FROM archive_move")
    (moved,) = cursor.fetchone()
    cursor.execute(_SEGMENT_ROWS_CHANGED, {"season": season.pk})
    (segment_rows,) = cursor.fetchone()
    cursor.execute("SELECT old_code, new_code FROM reward_change")
    rewards: dict[str, int] = {}
    for old_code, new_code in cursor.fetchall():
        kind = RewardChange("", "", None, old_code, None, new_code).kind
        rewards[kind] = rewards.get(kind, 0) + 1
    cursor.execute(
        "SELECT clan_id, old_rank, new_rank, old_points, new_points, old_members, new_members,"
        " old_code, new_code FROM clan_change ORDER BY n"
    )
    clan_changes = [ClanChange(*row) for row in cursor.fetchall()]
    page = moves_read(cursor, after=offset, limit=limit + 1)
    return ArchiveCorrection(
        season=season,
        players_before=season.archived_players or 0,
        players_after=players,
        moved=moved,
        segment_rows=segment_rows,
        rewards=rewards,
        reward_changes=[change for _, change in reward_changes_read(cursor, after=0, limit=listed)],
        clan_changes=clan_changes,
        moves=[move for _, move in page[:limit]],
        offset=offset,
        next_offset=offset + limit if len(page) > limit else None,
    )
