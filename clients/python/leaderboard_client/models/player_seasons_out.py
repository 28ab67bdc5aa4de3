from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.player_season_row_out import PlayerSeasonRowOut


T = TypeVar("T", bound="PlayerSeasonsOut")


@_attrs_define
class PlayerSeasonsOut:
    """
    Attributes:
        player_id (str):
        seasons (list[PlayerSeasonRowOut]):
    """

    player_id: str
    seasons: list[PlayerSeasonRowOut]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        player_id = self.player_id

        seasons = []
        for seasons_item_data in self.seasons:
            seasons_item = seasons_item_data.to_dict()
            seasons.append(seasons_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "player_id": player_id,
                "seasons": seasons,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.player_season_row_out import PlayerSeasonRowOut  # noqa: PLC0415

        d = dict(src_dict)
        player_id = d.pop("player_id")

        seasons = []
        _seasons = d.pop("seasons")
        for seasons_item_data in _seasons:
            seasons_item = PlayerSeasonRowOut.from_dict(seasons_item_data)

            seasons.append(seasons_item)

        player_seasons_out = cls(
            player_id=player_id,
            seasons=seasons,
        )

        player_seasons_out.additional_properties = d
        return player_seasons_out

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
