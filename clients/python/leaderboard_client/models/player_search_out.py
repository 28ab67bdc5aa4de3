from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.found_player_out import FoundPlayerOut


T = TypeVar("T", bound="PlayerSearchOut")


@_attrs_define
class PlayerSearchOut:
    """
    Attributes:
        query (str):
        board (str):
        season (str):
        players (list[FoundPlayerOut]):
        next_offset (int | None): The next page's offset; null after the last.
    """

    query: str
    board: str
    season: str
    players: list[FoundPlayerOut]
    next_offset: int | None
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        query = self.query

        board = self.board

        season = self.season

        players = []
        for players_item_data in self.players:
            players_item = players_item_data.to_dict()
            players.append(players_item)

        next_offset: int | None
        next_offset = self.next_offset

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "query": query,
                "board": board,
                "season": season,
                "players": players,
                "next_offset": next_offset,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.found_player_out import FoundPlayerOut  # noqa: PLC0415

        d = dict(src_dict)
        query = d.pop("query")

        board = d.pop("board")

        season = d.pop("season")

        players = []
        _players = d.pop("players")
        for players_item_data in _players:
            players_item = FoundPlayerOut.from_dict(players_item_data)

            players.append(players_item)

        def _parse_next_offset(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        next_offset = _parse_next_offset(d.pop("next_offset"))

        player_search_out = cls(
            query=query,
            board=board,
            season=season,
            players=players,
            next_offset=next_offset,
        )

        player_search_out.additional_properties = d
        return player_search_out

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
