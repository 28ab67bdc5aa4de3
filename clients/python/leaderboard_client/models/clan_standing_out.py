from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.clan_entry_out import ClanEntryOut
    from ..models.clan_members_out import ClanMembersOut


T = TypeVar("T", bound="ClanStandingOut")


@_attrs_define
class ClanStandingOut:
    """
    Attributes:
        clan_id (str):
        name (str):
        board (str):
        season (str):
        rank (int):
        points (int):
        total_clans (int):
        percentile (float):
        entries (list[ClanEntryOut]): The clans around it, n each side.
        members (ClanMembersOut):
    """

    clan_id: str
    name: str
    board: str
    season: str
    rank: int
    points: int
    total_clans: int
    percentile: float
    entries: list[ClanEntryOut]
    members: ClanMembersOut
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        clan_id = self.clan_id

        name = self.name

        board = self.board

        season = self.season

        rank = self.rank

        points = self.points

        total_clans = self.total_clans

        percentile = self.percentile

        entries = []
        for entries_item_data in self.entries:
            entries_item = entries_item_data.to_dict()
            entries.append(entries_item)

        members = self.members.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "clan_id": clan_id,
                "name": name,
                "board": board,
                "season": season,
                "rank": rank,
                "points": points,
                "total_clans": total_clans,
                "percentile": percentile,
                "entries": entries,
                "members": members,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.clan_entry_out import ClanEntryOut  # noqa: PLC0415
        from ..models.clan_members_out import ClanMembersOut  # noqa: PLC0415

        d = dict(src_dict)
        clan_id = d.pop("clan_id")

        name = d.pop("name")

        board = d.pop("board")

        season = d.pop("season")

        rank = d.pop("rank")

        points = d.pop("points")

        total_clans = d.pop("total_clans")

        percentile = d.pop("percentile")

        entries = []
        _entries = d.pop("entries")
        for entries_item_data in _entries:
            entries_item = ClanEntryOut.from_dict(entries_item_data)

            entries.append(entries_item)

        members = ClanMembersOut.from_dict(d.pop("members"))

        clan_standing_out = cls(
            clan_id=clan_id,
            name=name,
            board=board,
            season=season,
            rank=rank,
            points=points,
            total_clans=total_clans,
            percentile=percentile,
            entries=entries,
            members=members,
        )

        clan_standing_out.additional_properties = d
        return clan_standing_out

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
