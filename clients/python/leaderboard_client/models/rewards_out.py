from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.reward_out import RewardOut


T = TypeVar("T", bound="RewardsOut")


@_attrs_define
class RewardsOut:
    """
    Attributes:
        board (str):
        season (str):
        rewards (list[RewardOut]):
        next_offset (int | None): The offset of the next page; null after the last one.
    """

    board: str
    season: str
    rewards: list[RewardOut]
    next_offset: int | None
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        board = self.board

        season = self.season

        rewards = []
        for rewards_item_data in self.rewards:
            rewards_item = rewards_item_data.to_dict()
            rewards.append(rewards_item)

        next_offset: int | None
        next_offset = self.next_offset

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "board": board,
                "season": season,
                "rewards": rewards,
                "next_offset": next_offset,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.reward_out import RewardOut  # noqa: PLC0415

        d = dict(src_dict)
        board = d.pop("board")

        season = d.pop("season")

        rewards = []
        _rewards = d.pop("rewards")
        for rewards_item_data in _rewards:
            rewards_item = RewardOut.from_dict(rewards_item_data)

            rewards.append(rewards_item)

        def _parse_next_offset(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        next_offset = _parse_next_offset(d.pop("next_offset"))

        rewards_out = cls(
            board=board,
            season=season,
            rewards=rewards,
            next_offset=next_offset,
        )

        rewards_out.additional_properties = d
        return rewards_out

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
