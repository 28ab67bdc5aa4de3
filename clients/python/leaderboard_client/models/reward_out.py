from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="RewardOut")


@_attrs_define
class RewardOut:
    """
    Attributes:
        player_id (str):
        rank (int): The final rank (within the segment, if any).
        reward_code (str):
        awarded_at (datetime.datetime):
        segment (str | Unset): The segment (`country:DE`) whose tier gave the reward; only on those, not on the whole
            board's.
    """

    player_id: str
    rank: int
    reward_code: str
    awarded_at: datetime.datetime
    segment: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        player_id = self.player_id

        rank = self.rank

        reward_code = self.reward_code

        awarded_at = self.awarded_at.isoformat()

        segment = self.segment

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "player_id": player_id,
                "rank": rank,
                "reward_code": reward_code,
                "awarded_at": awarded_at,
            }
        )
        if segment is not UNSET:
            field_dict["segment"] = segment

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        player_id = d.pop("player_id")

        rank = d.pop("rank")

        reward_code = d.pop("reward_code")

        awarded_at = datetime.datetime.fromisoformat(d.pop("awarded_at"))

        segment = d.pop("segment", UNSET)

        reward_out = cls(
            player_id=player_id,
            rank=rank,
            reward_code=reward_code,
            awarded_at=awarded_at,
            segment=segment,
        )

        reward_out.additional_properties = d
        return reward_out

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
