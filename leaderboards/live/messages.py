"""The JSON a live socket is sent (docs/websocket.md), each kind built by one function here.

The messages carry the REST reads' shapes, so a client (static/pages/live.js) applies a pushed
top or rank exactly as it renders a REST answer: the entries are made by
selectors.standing_entries and a player's rank by selectors.standing_answer, the functions the
REST answers are built by; errors carry config.building_blocks.errors' error body.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder

from config.building_blocks.errors import DomainError, error_body
from seasons.models import Season
from seasons.selectors import season_next

from .. import selectors, store
from .reading import OrdinalStanding, TickReading


def encode(message: dict[str, Any]) -> str:
    return json.dumps(message, cls=DjangoJSONEncoder, separators=(",", ":"))


def error_message(exc: DomainError) -> dict[str, Any]:
    return {"type": "error", **error_body(exc.code, exc.message, exc.details)}


def _board_and_season(season: Season) -> dict[str, Any]:
    return {"board": season.board.slug, "season": season.slug}


def standing_fields(
    season: Season,
    player_id: str,
    standing: OrdinalStanding,
    total_players: int,
    segment: str | None = None,
) -> dict[str, Any]:
    """A player's rank as the REST rank answer gives it (ordinal ranks). Where REST answers 404
    (the player has no score yet) a socket keeps following them: rank, points and percentile
    are null, in the same fields."""
    if standing is None:
        return {
            "player_id": player_id,
            **_board_and_season(season),
            **({} if segment is None else {"segment": segment}),
            "rank": None,
            "points": None,
            "total_players": total_players,
            "percentile": None,
        }
    rank, composite = standing
    as_read = store.Standing(player_id, rank, composite, better_count=None)
    return selectors.standing_answer(season, player_id, total_players, as_read, "ordinal", segment)


def player_message(
    season: Season, player_id: str, standing: OrdinalStanding, reading: TickReading
) -> dict[str, Any]:
    fields = standing_fields(season, player_id, standing, reading.total_players, reading.segment)
    return {"type": "player", **fields}


def top_message(season: Season, reading: TickReading, k: int) -> dict[str, Any]:
    page = selectors.top_page(
        season,
        as_of=reading.as_of,
        total_players=reading.total_players,
        entries=reading.top[:k],
        segment=reading.segment,
    )
    return {"type": "top", **page}


def snapshot_message(
    season: Season, reading: TickReading, *, top: int, player_id: str | None, around: int
) -> dict[str, Any]:
    """The top K and, when the socket names a player, the REST around-me answer of them (its
    entries were made with the top's, in one profile lookup, so they are not made again)."""
    player = None
    if player_id is not None:
        player = {
            **standing_fields(
                season,
                player_id,
                reading.standings[player_id],
                reading.total_players,
                reading.segment,
            ),
            "entries": reading.around_windows.get((player_id, around), []),
        }
    page = selectors.top_page(
        season,
        as_of=reading.as_of,
        total_players=reading.total_players,
        entries=reading.top[:top],
        segment=reading.segment,
    )
    return {"type": "snapshot", **page, "player": player}


def season_closed_message(season: Season, next_slug: str | None) -> dict[str, Any]:
    return {"type": "season_closed", **_board_and_season(season), "next_season": next_slug}


def next_season_slug(season: Season) -> str | None:
    """The season a season_closed message points to: the board's next one, if planned."""
    following = season_next(board=season.board, now=season.ends_at - timedelta(microseconds=1))
    return None if following is None else following.slug
