from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.season_status_enum import SeasonStatusEnum

T = TypeVar("T", bound="SeasonOut")


@_attrs_define
class SeasonOut:
    """
    Attributes:
        slug (str):
        name (str):
        board (str):
        starts_at (datetime.datetime):
        ends_at (datetime.datetime):
        grace_period (str): ISO 8601: P0DT01H00M00S is an hour.
        grace_period_seconds (int):
        accepts_results_until (datetime.datetime):
        status (SeasonStatusEnum): * `scheduled` - Scheduled
            * `running` - Running
            * `closing` - Closing
            * `closed` - Closed
    """

    slug: str
    name: str
    board: str
    starts_at: datetime.datetime
    ends_at: datetime.datetime
    grace_period: str
    grace_period_seconds: int
    accepts_results_until: datetime.datetime
    status: SeasonStatusEnum
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        slug = self.slug

        name = self.name

        board = self.board

        starts_at = self.starts_at.isoformat()

        ends_at = self.ends_at.isoformat()

        grace_period = self.grace_period

        grace_period_seconds = self.grace_period_seconds

        accepts_results_until = self.accepts_results_until.isoformat()

        status = self.status.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "slug": slug,
                "name": name,
                "board": board,
                "starts_at": starts_at,
                "ends_at": ends_at,
                "grace_period": grace_period,
                "grace_period_seconds": grace_period_seconds,
                "accepts_results_until": accepts_results_until,
                "status": status,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        slug = d.pop("slug")

        name = d.pop("name")

        board = d.pop("board")

        starts_at = datetime.datetime.fromisoformat(d.pop("starts_at"))

        ends_at = datetime.datetime.fromisoformat(d.pop("ends_at"))

        grace_period = d.pop("grace_period")

        grace_period_seconds = d.pop("grace_period_seconds")

        accepts_results_until = datetime.datetime.fromisoformat(d.pop("accepts_results_until"))

        status = SeasonStatusEnum(d.pop("status"))

        season_out = cls(
            slug=slug,
            name=name,
            board=board,
            starts_at=starts_at,
            ends_at=ends_at,
            grace_period=grace_period,
            grace_period_seconds=grace_period_seconds,
            accepts_results_until=accepts_results_until,
            status=status,
        )

        season_out.additional_properties = d
        return season_out

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
