from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.friend_entry_out import FriendEntryOut


T = TypeVar("T", bound="FriendsViewOut")


@_attrs_define
class FriendsViewOut:
    """
    Attributes:
        player_id (str):
        board (str):
        season (str):
        total_players (int):
        entries (list[FriendEntryOut]):
        unranked (list[str]): The player and friends with no score on the board (or banned from it).
    """

    player_id: str
    board: str
    season: str
    total_players: int
    entries: list[FriendEntryOut]
    unranked: list[str]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        player_id = self.player_id

        board = self.board

        season = self.season

        total_players = self.total_players

        entries = []
        for entries_item_data in self.entries:
            entries_item = entries_item_data.to_dict()
            entries.append(entries_item)

        unranked = self.unranked

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "player_id": player_id,
                "board": board,
                "season": season,
                "total_players": total_players,
                "entries": entries,
                "unranked": unranked,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.friend_entry_out import FriendEntryOut  # noqa: PLC0415

        d = dict(src_dict)
        player_id = d.pop("player_id")

        board = d.pop("board")

        season = d.pop("season")

        total_players = d.pop("total_players")

        entries = []
        _entries = d.pop("entries")
        for entries_item_data in _entries:
            entries_item = FriendEntryOut.from_dict(entries_item_data)

            entries.append(entries_item)

        unranked = cast(list[str], d.pop("unranked"))

        friends_view_out = cls(
            player_id=player_id,
            board=board,
            season=season,
            total_players=total_players,
            entries=entries,
            unranked=unranked,
        )

        friends_view_out.additional_properties = d
        return friends_view_out

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
