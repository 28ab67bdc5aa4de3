from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.entry_out import EntryOut


T = TypeVar("T", bound="ClanMembersOut")


@_attrs_define
class ClanMembersOut:
    """
    Attributes:
        total_players (int): The clan's members with a score.
        entries (list[EntryOut]): Ranked within the clan.
    """

    total_players: int
    entries: list[EntryOut]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        total_players = self.total_players

        entries = []
        for entries_item_data in self.entries:
            entries_item = entries_item_data.to_dict()
            entries.append(entries_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "total_players": total_players,
                "entries": entries,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.entry_out import EntryOut  # noqa: PLC0415

        d = dict(src_dict)
        total_players = d.pop("total_players")

        entries = []
        _entries = d.pop("entries")
        for entries_item_data in _entries:
            entries_item = EntryOut.from_dict(entries_item_data)

            entries.append(entries_item)

        clan_members_out = cls(
            total_players=total_players,
            entries=entries,
        )

        clan_members_out.additional_properties = d
        return clan_members_out

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
