from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.entry_out import EntryOut


T = TypeVar("T", bound="TopOut")


@_attrs_define
class TopOut:
    """
    Attributes:
        board (str):
        season (str):
        as_of (datetime.datetime):
        total_players (int):
        entries (list[EntryOut]):
        segment (str | Unset): Only in a read within a segment.
    """

    board: str
    season: str
    as_of: datetime.datetime
    total_players: int
    entries: list[EntryOut]
    segment: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        board = self.board

        season = self.season

        as_of = self.as_of.isoformat()

        total_players = self.total_players

        entries = []
        for entries_item_data in self.entries:
            entries_item = entries_item_data.to_dict()
            entries.append(entries_item)

        segment = self.segment

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "board": board,
                "season": season,
                "as_of": as_of,
                "total_players": total_players,
                "entries": entries,
            }
        )
        if segment is not UNSET:
            field_dict["segment"] = segment

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.entry_out import EntryOut  # noqa: PLC0415

        d = dict(src_dict)
        board = d.pop("board")

        season = d.pop("season")

        as_of = datetime.datetime.fromisoformat(d.pop("as_of"))

        total_players = d.pop("total_players")

        entries = []
        _entries = d.pop("entries")
        for entries_item_data in _entries:
            entries_item = EntryOut.from_dict(entries_item_data)

            entries.append(entries_item)

        segment = d.pop("segment", UNSET)

        top_out = cls(
            board=board,
            season=season,
            as_of=as_of,
            total_players=total_players,
            entries=entries,
            segment=segment,
        )

        top_out.additional_properties = d
        return top_out

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
