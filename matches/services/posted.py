"""A request's results as the write path carries them: what a game server posted, each item's
board and season, the keys that name a result and a total, and what the caller gets back."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import NamedTuple

from config.building_blocks.errors import Conflict
from seasons.models import Board, Season


@dataclass(frozen=True, slots=True)
class PostedResult:
    """A result as a game server posted it, checked field by field (matches.api)."""

    player_id: str
    points: int
    match_id: str
    board: str | None = None
    season: str | None = None
    ended_at: datetime | None = None


@dataclass(slots=True)
class ResultOutcome:
    status: str  # "accepted" or "duplicate"
    match_id: str
    player_id: str
    board: str
    season: str
    points: int
    total_points: int
    ended_at: datetime


class ResultKey(NamedTuple):
    """What makes a result unique: a match counts once per board and player."""

    board_id: int
    match_id: str
    player_id: str


class PlayerSeason(NamedTuple):
    """Whose total: a player's in one season."""

    season_id: int
    player_id: str


class SeasonRef(NamedTuple):
    id: int
    slug: str


class StoredResult(NamedTuple):
    """A result already in the table, found for a request's result that was not inserted."""

    points: int
    season: SeasonRef


class Contribution(NamedTuple):
    """What one request's new results add to one player's season total."""

    player_season: PlayerSeason
    points: int
    reached_at: datetime
    # The first of those results: its season and board give the total's scoring rules.
    first: Item


@dataclass(slots=True)
class Item:
    index: int
    result: PostedResult
    board: Board
    # None when no season takes the result now; `refusal` says why, and stands unless the
    # result turns out to be stored already (a retry is a duplicate whatever the clock says).
    season: Season | None
    ended_at: datetime
    refusal: Conflict | None = None
    key: ResultKey = field(init=False)

    def __post_init__(self) -> None:
        self.key = ResultKey(self.board.id, self.result.match_id, self.result.player_id)


def item_details(index: int, batch: bool) -> dict[str, int] | None:
    """An error's details that name the batch item it is about (none for a single result)."""
    return {"index": index} if batch else None


def item_prefix(index: int, batch: bool) -> str:
    """The start of an error's message that names the batch item it is about."""
    return f"Item {index}: " if batch else ""
