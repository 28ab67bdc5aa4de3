from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.result_status_enum import ResultStatusEnum

T = TypeVar("T", bound="ResultOut")


@_attrs_define
class ResultOut:
    """
    Attributes:
        status (ResultStatusEnum): * `accepted` - accepted
            * `duplicate` - duplicate
        match_id (str):
        player_id (str):
        board (str):
        season (str):
        points (int):
        total_points (int):
    """

    status: ResultStatusEnum
    match_id: str
    player_id: str
    board: str
    season: str
    points: int
    total_points: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        status = self.status.value

        match_id = self.match_id

        player_id = self.player_id

        board = self.board

        season = self.season

        points = self.points

        total_points = self.total_points

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "status": status,
                "match_id": match_id,
                "player_id": player_id,
                "board": board,
                "season": season,
                "points": points,
                "total_points": total_points,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        status = ResultStatusEnum(d.pop("status"))

        match_id = d.pop("match_id")

        player_id = d.pop("player_id")

        board = d.pop("board")

        season = d.pop("season")

        points = d.pop("points")

        total_points = d.pop("total_points")

        result_out = cls(
            status=status,
            match_id=match_id,
            player_id=player_id,
            board=board,
            season=season,
            points=points,
            total_points=total_points,
        )

        result_out.additional_properties = d
        return result_out

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
