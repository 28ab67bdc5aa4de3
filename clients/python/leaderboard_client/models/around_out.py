from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.entry_out import EntryOut


T = TypeVar("T", bound="AroundOut")


@_attrs_define
class AroundOut:
    """
    Attributes:
        player_id (str):
        board (str):
        season (str):
        rank (int):
        points (int):
        total_players (int):
        percentile (float):
        entries (list[EntryOut]):
        segment (str | Unset): Only in a read within a segment.
        corrected (bool | Unset): Only on a closed season's rows that a correction of its archive changed (after a ban
            or a void): true.
    """

    player_id: str
    board: str
    season: str
    rank: int
    points: int
    total_players: int
    percentile: float
    entries: list[EntryOut]
    segment: str | Unset = UNSET
    corrected: bool | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        player_id = self.player_id

        board = self.board

        season = self.season

        rank = self.rank

        points = self.points

        total_players = self.total_players

        percentile = self.percentile

        entries = []
        for entries_item_data in self.entries:
            entries_item = entries_item_data.to_dict()
            entries.append(entries_item)

        segment = self.segment

        corrected = self.corrected

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "player_id": player_id,
                "board": board,
                "season": season,
                "rank": rank,
                "points": points,
                "total_players": total_players,
                "percentile": percentile,
                "entries": entries,
            }
        )
        if segment is not UNSET:
            field_dict["segment"] = segment
        if corrected is not UNSET:
            field_dict["corrected"] = corrected

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.entry_out import EntryOut  # noqa: PLC0415

        d = dict(src_dict)
        player_id = d.pop("player_id")

        board = d.pop("board")

        season = d.pop("season")

        rank = d.pop("rank")

        points = d.pop("points")

        total_players = d.pop("total_players")

        percentile = d.pop("percentile")

        entries = []
        _entries = d.pop("entries")
        for entries_item_data in _entries:
            entries_item = EntryOut.from_dict(entries_item_data)

            entries.append(entries_item)

        segment = d.pop("segment", UNSET)

        corrected = d.pop("corrected", UNSET)

        around_out = cls(
            player_id=player_id,
            board=board,
            season=season,
            rank=rank,
            points=points,
            total_players=total_players,
            percentile=percentile,
            entries=entries,
            segment=segment,
            corrected=corrected,
        )

        around_out.additional_properties = d
        return around_out

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
