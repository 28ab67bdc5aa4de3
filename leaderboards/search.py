"""Finding players by name: a case-insensitive prefix of the display name (or the exact player
id), ranked by relevance and then by rank on a board's season.

The names come from one index range (`player_name_prefix`: the lowered names, LIKE 'abc%'), at
most CANDIDATES of them in the index's order, so a search costs the same at 100 million players
as at a thousand; their ranks come from one read of the season's standings. A prefix that more
than CANDIDATES names share is searched among the first CANDIDATES of them: typing more letters
narrows it.
"""

from __future__ import annotations

from typing import Any

from django.db.models.functions import Lower

from matches.models import Player
from seasons.models import Season
from seasons.scoring import points_of

from . import selectors

CANDIDATES = 200
# The longest query: a display name is at most 100 characters.
QUERY_MAX_LENGTH = 100

# Relevance, best first: the name said exactly, the id said exactly, a name that starts so.
_EXACT_NAME, _EXACT_ID, _PREFIX = 0, 1, 2


def _candidates(query: str) -> list[tuple[str, str, str]]:
    """(player_id, display_name, avatar_url) of the players the query may mean."""
    lowered = query.lower()
    named = list(
        Player.objects.annotate(lowered_name=Lower("display_name"))
        .filter(lowered_name__startswith=lowered)
        .exclude(display_name="")
        .order_by("lowered_name", "player_id")
        .values_list("player_id", "display_name", "avatar_url")[:CANDIDATES]
    )
    if not any(player_id == query for player_id, _, _ in named):
        named += Player.objects.filter(player_id=query).values_list(
            "player_id", "display_name", "avatar_url"
        )
    return named


def players_search(*, query: str, season: Season, offset: int, limit: int) -> dict[str, Any]:
    """A page of the players the query finds, with their rank and points in `season` (null
    for a player without a score there): exact names first, then an exact id, then names
    that start with the query; within each, the better ranked first, then by name."""
    found = _candidates(query)
    _, standings = selectors.standings_source(season).read_many(
        [player_id for player_id, _, _ in found], competition=False
    )
    lowest_first = season.board.lowest_first
    lowered = query.lower()
    rows = []
    for (player_id, name, avatar), standing in zip(found, standings, strict=True):
        if name.lower() == lowered:
            relevance = _EXACT_NAME
        elif player_id == query:
            relevance = _EXACT_ID
        else:
            relevance = _PREFIX
        rank = None if standing is None else standing.rank
        order = (relevance, rank is None, rank or 0, name.lower(), player_id)
        rows.append((order, player_id, name, avatar, standing))
    rows.sort(key=lambda row: row[0])
    page = rows[offset : offset + limit]
    return {
        "query": query,
        "board": season.board.slug,
        "season": season.slug,
        "players": [
            {
                "player_id": player_id,
                "display_name": name or player_id,
                "avatar_url": avatar,
                "rank": None if standing is None else standing.rank,
                "points": None
                if standing is None
                else points_of(standing.composite, lowest_first=lowest_first),
            }
            for _, player_id, name, avatar, standing in page
        ],
        "next_offset": offset + limit if len(rows) > offset + limit else None,
    }
