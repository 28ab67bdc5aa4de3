from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

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
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        player_ids = self.player_ids

        board = self.board

        season = self.season

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
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

        ranks_in_request.additional_properties = d
        return ranks_in_request

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
