from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.clan_entry_out import ClanEntryOut


T = TypeVar("T", bound="ClansTopOut")


@_attrs_define
class ClansTopOut:
    """
    Attributes:
        board (str):
        season (str):
        as_of (datetime.datetime):
        total_clans (int):
        entries (list[ClanEntryOut]):
    """

    board: str
    season: str
    as_of: datetime.datetime
    total_clans: int
    entries: list[ClanEntryOut]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        board = self.board

        season = self.season

        as_of = self.as_of.isoformat()

        total_clans = self.total_clans

        entries = []
        for entries_item_data in self.entries:
            entries_item = entries_item_data.to_dict()
            entries.append(entries_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "board": board,
                "season": season,
                "as_of": as_of,
                "total_clans": total_clans,
                "entries": entries,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.clan_entry_out import ClanEntryOut  # noqa: PLC0415

        d = dict(src_dict)
        board = d.pop("board")

        season = d.pop("season")

        as_of = datetime.datetime.fromisoformat(d.pop("as_of"))

        total_clans = d.pop("total_clans")

        entries = []
        _entries = d.pop("entries")
        for entries_item_data in _entries:
            entries_item = ClanEntryOut.from_dict(entries_item_data)

            entries.append(entries_item)

        clans_top_out = cls(
            board=board,
            season=season,
            as_of=as_of,
            total_clans=total_clans,
            entries=entries,
        )

        clans_top_out.additional_properties = d
        return clans_top_out

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
