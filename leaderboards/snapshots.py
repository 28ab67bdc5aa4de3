"""Where a rebuild reads a season's standings: PostgreSQL computes every player's composite score
(and, for a board with segments or clans, their entry), best first, in chunks."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.db import connection, transaction

from matches.models import Clan, PlayerTotal
from seasons.models import Season, SeasonState
from seasons.scoring import composite_sql

from .models import ArchivedStanding
from .segments import ENTRY_SQL, clan_rule

REBUILD_CHUNK = 20000


# Where a rebuild reads a season's standings, best first: a live season's from its players'
# totals, banned players left out; a closed one's from its archive, final as it was given (a
# later void or ban changes the totals, never the standings the season closed with).
_FROM_TOTALS = """
    SELECT player_id, {composite}
    FROM matches_playertotal t
    WHERE season_id = %s AND NOT EXISTS (
        SELECT 1 FROM matches_player p
        WHERE p.player_id = t.player_id AND p.banned_at IS NOT NULL)
    ORDER BY 2 DESC
"""
# A live season of a board with segment dimensions: each row with the player's segment entry.
_FROM_TOTALS_SEGMENTED = """
    SELECT t.player_id, {composite}, {entry}
    FROM matches_playertotal t JOIN matches_player p ON p.player_id = t.player_id
    WHERE t.season_id = %(season)s AND p.banned_at IS NULL
    ORDER BY 2 DESC
"""
_FROM_ARCHIVE = """
    SELECT player_id, {composite}
    FROM seasons_archivedstanding
    WHERE season_id = %s
    ORDER BY rank
"""


def season_composites(
    season: Season, *, from_archive: bool = False
) -> Iterator[list[tuple[Any, ...]]]:
    """Every player's composite score in the season, computed by PostgreSQL, in chunks.

    The arithmetic is seasons.scoring's, rendered into SQL, so ten million rows never pass
    through Python objects one by one. Rows come best first: Redis inserts each new lowest
    score next to the skiplist's head, which made building a large board about twice as fast
    as inserting in table order (measured on 2 million players).
    """
    board = season.board
    segmented = rebuilt_segmented(season, from_archive)

    def composite(starts_at: str) -> str:
        return composite_sql(
            points="points",
            reached_at="reached_at",
            starts_at=starts_at,
            lowest_first="TRUE" if board.lowest_first else "FALSE",
        )

    # The expressions come from fixed constants; the values are parameters.
    if segmented:
        query = _FROM_TOTALS_SEGMENTED.format(composite=composite("%(starts_at)s"), entry=ENTRY_SQL)
        params: Any = {
            "starts_at": season.starts_at,
            "season": season.id,
            "dimensions": list(board.segment_dimensions),
            "clan_rule": clan_rule(board),
        }
    else:
        source = _FROM_ARCHIVE if from_archive else _FROM_TOTALS
        query = source.format(composite=composite("%s"))
        params = [season.starts_at, season.id]
    with transaction.atomic(), connection.chunked_cursor() as cursor:
        cursor.execute(query, params)
        while True:
            rows = cursor.fetchmany(REBUILD_CHUNK)
            if not rows:
                return
            yield rows


def rebuild_size(season: Season) -> int:
    """How many players a rebuild of the season writes, by the reads above: a closed season's
    archive, or a live season's totals but those of banned players."""
    if season.state == SeasonState.CLOSED:
        return ArchivedStanding.objects.filter(season=season).count()
    return PlayerTotal.objects.filter(season=season, player__banned_at__isnull=True).count()


def rebuilt_segmented(season: Season, from_archive: bool) -> bool:
    """Whether the season's rebuild builds segment sets: a live season of a board with segment
    dimensions, or of any board once a clan exists. A closed season's reads of segments and
    clans answer from its archive."""
    if from_archive:
        return False
    return bool(season.board.segment_dimensions) or Clan.objects.exists()
