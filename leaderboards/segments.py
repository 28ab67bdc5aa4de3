"""Players' segment values as the ranking store keeps them: one entry per player and board,
"<stamp>|country:DE|platform:pc" (the player's count of segment changes, then their value in each
of the board's dimensions that they have), read from PostgreSQL for the mirror, the refreshes,
the corrections, the rebuild and reconciliation (see "Segments" at store/scripts.py)."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from django.db import connection

from config.building_blocks.errors import InvalidInput
from config.building_blocks.segments import (
    DIMENSION_CHARACTERS,
    DIMENSION_RULE,
    SEGMENT_VALUE_CHARACTERS,
    SEGMENT_VALUE_RULE,
)

_SEGMENT = re.compile(rf"\A{DIMENSION_CHARACTERS}:{SEGMENT_VALUE_CHARACTERS}\Z")

# A player whose values never changed has none: no entry ("").
_ENTRIES = """
    SELECT p.player_id, p.segments_changes, s.dimension, s.value
    FROM matches_player p
    LEFT JOIN matches_playersegment s ON s.player_id = p.player_id AND s.dimension = ANY(%s)
    WHERE p.player_id = ANY(%s) AND p.segments_changes > 0
"""

# The same entry computed by PostgreSQL for a query over many players (the rebuild's), with the
# board's dimensions as its one parameter (named `%(dimensions)s`) and the players' table as `p`.
ENTRY_SQL = """
    CASE WHEN p.segments_changes = 0 THEN '' ELSE p.segments_changes::text || COALESCE((
        SELECT string_agg('|' || s.dimension || ':' || s.value, ''
                          ORDER BY array_position(%(dimensions)s::text[], s.dimension::text))
        FROM matches_playersegment s
        WHERE s.player_id = p.player_id AND s.dimension = ANY(%(dimensions)s)), '') END
"""


def entry(changes: int, values: dict[str, str], dimensions: Sequence[str]) -> str:
    if changes == 0:
        return ""
    return f"{changes}" + "".join(
        f"|{dimension}:{values[dimension]}" for dimension in dimensions if dimension in values
    )


def segment_entries(player_ids: Collection[str], dimensions: Sequence[str]) -> dict[str, str]:
    """Each of these players' entry on a board of these dimensions ("" for none), in one query."""
    if not dimensions or not player_ids:
        return {}
    changes: dict[str, int] = {}
    values: dict[str, dict[str, str]] = {}
    with connection.cursor() as cursor:
        cursor.execute(_ENTRIES, [list(dimensions), sorted(set(player_ids))])
        for player_id, count, dimension, value in cursor.fetchall():
            changes[player_id] = count
            if dimension is not None:
                values.setdefault(player_id, {})[dimension] = value
    return {p: entry(changes[p], values.get(p, {}), dimensions) for p in changes}


def segment_parse(raw: str | None, dimensions: Sequence[str]) -> str | None:
    """A read's `segment=dimension:value` as the store names it, checked against the board's
    dimensions: `400 invalid_segment` for one not of that form, `400 unknown_segment_dimension`
    for a dimension the board does not declare. None (or "") is the whole board."""
    if not raw:
        return None
    dimension, _, value = raw.partition(":")
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
