from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="RanksInRequest")


@_attrs_define
class RanksInRequest:
    """Rejects fields it does not know, instead of silently dropping them.

    Attributes:
        player_ids (list[str]):
        board (str | Unset):
        season (str | Unset):
    """

    player_ids: list[str]
    board: str | Unset = UNSET
    season: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        player_ids = self.player_ids

        board = self.board

        season = self.season

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "player_ids": player_ids,
            }
        )
        if board is not UNSET:
            field_dict["board"] = board
        if season is not UNSET:
            field_dict["season"] = season

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        player_ids = cast(list[str], d.pop("player_ids"))

        board = d.pop("board", UNSET)

        season = d.pop("season", UNSET)

        ranks_in_request = cls(
            player_ids=player_ids,
            board=board,
            season=season,
        )

        return ranks_in_request
