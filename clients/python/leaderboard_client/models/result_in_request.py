from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="ResultInRequest")


@_attrs_define
class ResultInRequest:
    """One match result of one player.

    Attributes:
        player_id (str):
        points (int):
        match_id (str):
        board (str | Unset):
        season (str | Unset):
        ended_at (datetime.datetime | Unset): ISO 8601; a time without an offset is taken as UTC.
    """

    player_id: str
    points: int
    match_id: str
    board: str | Unset = UNSET
    season: str | Unset = UNSET
    ended_at: datetime.datetime | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        player_id = self.player_id

        points = self.points

        match_id = self.match_id

        board = self.board

        season = self.season

        ended_at: str | Unset = UNSET
        if not isinstance(self.ended_at, Unset):
            ended_at = self.ended_at.isoformat()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "player_id": player_id,
                "points": points,
                "match_id": match_id,
            }
        )
        if board is not UNSET:
            field_dict["board"] = board
        if season is not UNSET:
            field_dict["season"] = season
        if ended_at is not UNSET:
            field_dict["ended_at"] = ended_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        player_id = d.pop("player_id")

        points = d.pop("points")

        match_id = d.pop("match_id")

        board = d.pop("board", UNSET)

        season = d.pop("season", UNSET)

        _ended_at = d.pop("ended_at", UNSET)
        ended_at: datetime.datetime | Unset
        if isinstance(_ended_at, Unset):
            ended_at = UNSET
        else:
            ended_at = datetime.datetime.fromisoformat(_ended_at)

        result_in_request = cls(
            player_id=player_id,
            points=points,
            match_id=match_id,
            board=board,
            season=season,
            ended_at=ended_at,
        )

        return result_in_request
