from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.season_status_enum import SeasonStatusEnum

T = TypeVar("T", bound="PlayerSeasonRowOut")


@_attrs_define
class PlayerSeasonRowOut:
    """
    Attributes:
        board (str):
        season (str):
        season_name (str):
        status (SeasonStatusEnum): * `scheduled` - Scheduled
            * `running` - Running
            * `closing` - Closing
            * `closed` - Closed
        ends_at (datetime.datetime):
        rank (int | None): The live rank, or the final one once closed; null off the board.
        final_rank (int | None): Null until closed.
        competition_rank (int | None):
        points (int):
        total_players (int | None):
        reward (None | str):
        corrected (bool): A closed season's standing that a correction of its archive changed after the close (a ban or
            a void above or of the player); false otherwise.
        closed_rank (int | None): On a corrected standing, the rank the close gave (null: not archived at the close);
            null otherwise.
    """

    board: str
    season: str
    season_name: str
    status: SeasonStatusEnum
    ends_at: datetime.datetime
    rank: int | None
    final_rank: int | None
    competition_rank: int | None
    points: int
    total_players: int | None
    reward: None | str
    corrected: bool
    closed_rank: int | None
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        board = self.board

        season = self.season

        season_name = self.season_name

        status = self.status.value

        ends_at = self.ends_at.isoformat()

        rank: int | None
        rank = self.rank

        final_rank: int | None
        final_rank = self.final_rank

        competition_rank: int | None
        competition_rank = self.competition_rank

        points = self.points

        total_players: int | None
        total_players = self.total_players

        reward: None | str
        reward = self.reward

        corrected = self.corrected

        closed_rank: int | None
        closed_rank = self.closed_rank

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "board": board,
                "season": season,
                "season_name": season_name,
                "status": status,
                "ends_at": ends_at,
                "rank": rank,
                "final_rank": final_rank,
                "competition_rank": competition_rank,
                "points": points,
                "total_players": total_players,
                "reward": reward,
                "corrected": corrected,
                "closed_rank": closed_rank,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        board = d.pop("board")

        season = d.pop("season")

        season_name = d.pop("season_name")

        status = SeasonStatusEnum(d.pop("status"))

        ends_at = datetime.datetime.fromisoformat(d.pop("ends_at"))

        def _parse_rank(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        rank = _parse_rank(d.pop("rank"))

        def _parse_final_rank(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        final_rank = _parse_final_rank(d.pop("final_rank"))

        def _parse_competition_rank(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        competition_rank = _parse_competition_rank(d.pop("competition_rank"))

        points = d.pop("points")

        def _parse_total_players(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        total_players = _parse_total_players(d.pop("total_players"))

        def _parse_reward(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        reward = _parse_reward(d.pop("reward"))

        corrected = d.pop("corrected")

        def _parse_closed_rank(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        closed_rank = _parse_closed_rank(d.pop("closed_rank"))

        player_season_row_out = cls(
            board=board,
            season=season,
            season_name=season_name,
            status=status,
            ends_at=ends_at,
            rank=rank,
            final_rank=final_rank,
            competition_rank=competition_rank,
            points=points,
            total_players=total_players,
            reward=reward,
            corrected=corrected,
            closed_rank=closed_rank,
        )

        player_season_row_out.additional_properties = d
        return player_season_row_out

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
