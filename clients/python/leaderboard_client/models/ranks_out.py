from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.rank_entry_out import RankEntryOut


T = TypeVar("T", bound="RanksOut")


@_attrs_define
class RanksOut:
    """
    Attributes:
        board (str):
        season (str):
        total_players (int):
        entries (list[RankEntryOut]):
        segment (str | Unset): Only in a read within a segment.
    """

    board: str
    season: str
    total_players: int
    entries: list[RankEntryOut]
    segment: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        board = self.board

        season = self.season

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
                "total_players": total_players,
                "entries": entries,
            }
        )
        if segment is not UNSET:
            field_dict["segment"] = segment

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.rank_entry_out import RankEntryOut  # noqa: PLC0415

        d = dict(src_dict)
        board = d.pop("board")

        season = d.pop("season")

        total_players = d.pop("total_players")

        entries = []
        _entries = d.pop("entries")
        for entries_item_data in _entries:
            entries_item = RankEntryOut.from_dict(entries_item_data)

            entries.append(entries_item)

        segment = d.pop("segment", UNSET)

        ranks_out = cls(
            board=board,
            season=season,
            total_players=total_players,
            entries=entries,
            segment=segment,
        )

        ranks_out.additional_properties = d
        return ranks_out

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
