"""Players' segment values and clan as the ranking store keeps them: one entry per player and
board, "<stamp>|country:DE|platform:pc" (the player's count of changes of values and clan, then
their value in each of the board's dimensions that they have), and for a clan member
"<stamp>;<clan rule>|...|clan:<id>", read from PostgreSQL for the mirror, the refreshes, the
corrections, the rebuild and reconciliation (see "Segments" at store/scripts.py)."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from django.db import connection

from config.building_blocks.errors import InvalidInput
from config.building_blocks.segments import (
    CLAN_DIMENSION,
    CLAN_ID_CHARACTERS,
    CLAN_ID_RULE,
    DIMENSION_CHARACTERS,
    DIMENSION_RULE,
    SEGMENT_VALUE_CHARACTERS,
    SEGMENT_VALUE_RULE,
)
from seasons.models import Board, ScoreOperator
from seasons.scoring import MAX_POINTS

_SEGMENT = re.compile(rf"\A{DIMENSION_CHARACTERS}:{SEGMENT_VALUE_CHARACTERS}\Z")
_CLAN_ID = re.compile(rf"\A{CLAN_ID_CHARACTERS}\Z")

# The segment of a clan's members (a board's dimension may not be named so).
CLAN_SEGMENT = CLAN_DIMENSION

# A player whose values and clan never changed has none: no entry ("").
_ENTRIES = """
    SELECT p.player_id, p.segments_changes, p.clan_id, s.dimension, s.value
    FROM matches_player p
    LEFT JOIN matches_playersegment s ON s.player_id = p.player_id AND s.dimension = ANY(%s)
    WHERE p.player_id = ANY(%s) AND p.segments_changes > 0
"""

# The same entry computed by PostgreSQL for a query over many players (the rebuild's), with the
# board's dimensions and clan rule as its parameters (`%(dimensions)s`, `%(clan_rule)s`) and the
# players' table as `p`.
ENTRY_SQL = """
    CASE WHEN p.segments_changes = 0 THEN '' ELSE p.segments_changes::text
        || CASE WHEN p.clan_id IS NULL THEN '' ELSE ';' || %(clan_rule)s END
        || COALESCE((
            SELECT string_agg('|' || s.dimension || ':' || s.value, ''
                              ORDER BY array_position(%(dimensions)s::text[], s.dimension::text))
            FROM matches_playersegment s
            WHERE s.player_id = p.player_id AND s.dimension = ANY(%(dimensions)s)), '')
        || CASE WHEN p.clan_id IS NULL THEN '' ELSE '|clan:' || p.clan_id END END
"""


def clan_rule(board: Board) -> str:
    """How the board ranks clans, as the store's scripts read it: "sum" (its members' points,
    those of a lowest-first board counted down from MAX_POINTS) or "best" (its best member)."""
    rule = "sum" if board.score_operator == ScoreOperator.SUM else "best"
    return f"{rule}.{MAX_POINTS if board.lowest_first else 0}"


def entry(changes: int, values: dict[str, str], board: Board, clan: str | None = None) -> str:
    if changes == 0:
        return ""
    dimensions = board.segment_dimensions
    return (
        f"{changes}"
        + ("" if clan is None else f";{clan_rule(board)}")
        + "".join(f"|{d}:{values[d]}" for d in dimensions if d in values)
        + ("" if clan is None else f"|{CLAN_SEGMENT}:{clan}")
    )


def segment_entries(player_ids: Collection[str], board: Board) -> dict[str, str]:
    """Each of these players' entry on this board ("" for none), in one query."""
    if not player_ids:
        return {}
    changes: dict[str, int] = {}
    clans: dict[str, str | None] = {}
    values: dict[str, dict[str, str]] = {}
    with connection.cursor() as cursor:
        cursor.execute(_ENTRIES, [list(board.segment_dimensions), sorted(set(player_ids))])
        for player_id, count, clan, dimension, value in cursor.fetchall():
            changes[player_id], clans[player_id] = count, clan
            if dimension is not None:
                values.setdefault(player_id, {})[dimension] = value
    return {p: entry(changes[p], values.get(p, {}), board, clans[p]) for p in changes}


def segment_entries_by_season(
    boards: dict[int, Board], player_ids: Collection[str]
) -> dict[int, dict[str, str]]:
    """The players' segment entries (values and clan) on each season's board, one query a
    board."""
    by_board = {board.pk: board for board in boards.values()}
    entries = {pk: segment_entries(player_ids, board) for pk, board in by_board.items()}
    return {season_id: entries[board.pk] for season_id, board in boards.items()}


def segment_parse(raw: str | None, dimensions: Sequence[str]) -> str | None:
    """A read's `segment=dimension:value` (or `clan:<clan id>`) as the store names it, checked
    against the board's dimensions: `400 invalid_segment` for one not of that form,
    `400 unknown_segment_dimension` for a dimension the board does not declare. None (or "") is
    the whole board."""
    if not raw:
        return None
    dimension, _, value = raw.partition(":")
    # Every board has its clans' members as segments too (`clan:<id>`): a clan's members ranked
    # among themselves, by the same reads.
    if dimension == CLAN_SEGMENT:
        if _CLAN_ID.match(value) is None:
            raise InvalidInput(
                f"'{raw}' is not a clan's segment: use segment=clan:<clan id> ({CLAN_ID_RULE}).",
                code="invalid_segment",
                details={"segment": raw},
            )
        return raw
    if _SEGMENT.match(raw) is None:
        raise InvalidInput(
            f"'{raw}' is not a segment: use segment=dimension:value, such as country:DE "
            f"(a dimension of {DIMENSION_RULE}; a value of {SEGMENT_VALUE_RULE}).",
            code="invalid_segment",
            details={"segment": raw},
        )
    if dimension not in dimensions:
        raise InvalidInput(
            f"This board has no segment dimension '{dimension}'.",
            code="unknown_segment_dimension",
            details={"unknown": [dimension], "declared": list(dimensions)},
        )
    return f"{dimension}:{value}"
