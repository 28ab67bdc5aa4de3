from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="ClanEntryOut")


@_attrs_define
class ClanEntryOut:
    """
    Attributes:
        rank (int):
        clan_id (str):
        name (str):
        points (int): The members' points summed, or the best member's (by the board's rule).
    """

    rank: int
    clan_id: str
    name: str
    points: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        rank = self.rank

        clan_id = self.clan_id

        name = self.name

        points = self.points

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "rank": rank,
                "clan_id": clan_id,
                "name": name,
                "points": points,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        rank = d.pop("rank")

        clan_id = d.pop("clan_id")

        name = d.pop("name")

        points = d.pop("points")

        clan_entry_out = cls(
            rank=rank,
            clan_id=clan_id,
            name=name,
            points=points,
        )

        clan_entry_out.additional_properties = d
        return clan_entry_out

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
