from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="EntryOut")


@_attrs_define
class EntryOut:
    """
    Attributes:
        rank (int):
        player_id (str):
        display_name (str):
        avatar_url (str):
        points (int):
        corrected (bool | Unset): Only on a closed season's rows that a correction of its archive changed (after a ban
            or a void): true.
    """

    rank: int
    player_id: str
    display_name: str
    avatar_url: str
    points: int
    corrected: bool | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        rank = self.rank

        player_id = self.player_id

        display_name = self.display_name

        avatar_url = self.avatar_url

        points = self.points

        corrected = self.corrected

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "rank": rank,
                "player_id": player_id,
                "display_name": display_name,
                "avatar_url": avatar_url,
                "points": points,
            }
        )
        if corrected is not UNSET:
            field_dict["corrected"] = corrected

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        rank = d.pop("rank")

        player_id = d.pop("player_id")

        display_name = d.pop("display_name")

        avatar_url = d.pop("avatar_url")

        points = d.pop("points")

        corrected = d.pop("corrected", UNSET)

        entry_out = cls(
            rank=rank,
            player_id=player_id,
            display_name=display_name,
            avatar_url=avatar_url,
            points=points,
            corrected=corrected,
        )

        entry_out.additional_properties = d
        return entry_out

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
