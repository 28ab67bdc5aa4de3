from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.schedule_enum import ScheduleEnum
from ..models.score_operator_enum import ScoreOperatorEnum
from ..models.sort_order_enum import SortOrderEnum

if TYPE_CHECKING:
    from ..models.season_out import SeasonOut


T = TypeVar("T", bound="BoardOut")


@_attrs_define
class BoardOut:
    """
    Attributes:
        slug (str):
        name (str):
        score_operator (ScoreOperatorEnum): * `sum` - Sum of all results
            * `best` - Best single result
        sort_order (SortOrderEnum): * `highest_first` - Highest first
            * `lowest_first` - Lowest first (times)
        max_points_per_result (int | None): Results with more points are refused; null: no limit.
        schedule (ScheduleEnum): * `none` - No schedule (seasons created by hand)
            * `weekly` - Weekly (Mondays 00:00)
            * `monthly` - Monthly (the 1st, 00:00)
            * `quarterly` - Quarterly (Jan, Apr, Jul, Oct 1st, 00:00)
            * `cron` - Cron expression
        schedule_cron (str):
        schedule_timezone (str):
        current_season (None | SeasonOut):
        next_season (None | SeasonOut):
    """

    slug: str
    name: str
    score_operator: ScoreOperatorEnum
    sort_order: SortOrderEnum
    max_points_per_result: int | None
    schedule: ScheduleEnum
    schedule_cron: str
    schedule_timezone: str
    current_season: None | SeasonOut
    next_season: None | SeasonOut
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.season_out import SeasonOut  # noqa: PLC0415

        slug = self.slug

        name = self.name

        score_operator = self.score_operator.value

        sort_order = self.sort_order.value

        max_points_per_result: int | None
        max_points_per_result = self.max_points_per_result

        schedule = self.schedule.value

        schedule_cron = self.schedule_cron

        schedule_timezone = self.schedule_timezone

        current_season: dict[str, Any] | None
        if isinstance(self.current_season, SeasonOut):
            current_season = self.current_season.to_dict()
        else:
            current_season = self.current_season

        next_season: dict[str, Any] | None
        if isinstance(self.next_season, SeasonOut):
            next_season = self.next_season.to_dict()
        else:
            next_season = self.next_season

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "slug": slug,
                "name": name,
                "score_operator": score_operator,
                "sort_order": sort_order,
                "max_points_per_result": max_points_per_result,
                "schedule": schedule,
                "schedule_cron": schedule_cron,
                "schedule_timezone": schedule_timezone,
                "current_season": current_season,
                "next_season": next_season,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.season_out import SeasonOut  # noqa: PLC0415

        d = dict(src_dict)
        slug = d.pop("slug")

        name = d.pop("name")

        score_operator = ScoreOperatorEnum(d.pop("score_operator"))

        sort_order = SortOrderEnum(d.pop("sort_order"))

        def _parse_max_points_per_result(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        max_points_per_result = _parse_max_points_per_result(d.pop("max_points_per_result"))

        schedule = ScheduleEnum(d.pop("schedule"))

        schedule_cron = d.pop("schedule_cron")

        schedule_timezone = d.pop("schedule_timezone")

        def _parse_current_season(data: object) -> None | SeasonOut:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                current_season_type_1 = SeasonOut.from_dict(data)

                return current_season_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SeasonOut, data)

        current_season = _parse_current_season(d.pop("current_season"))

        def _parse_next_season(data: object) -> None | SeasonOut:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                next_season_type_1 = SeasonOut.from_dict(data)

                return next_season_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SeasonOut, data)

        next_season = _parse_next_season(d.pop("next_season"))

        board_out = cls(
            slug=slug,
            name=name,
            score_operator=score_operator,
            sort_order=sort_order,
            max_points_per_result=max_points_per_result,
            schedule=schedule,
            schedule_cron=schedule_cron,
            schedule_timezone=schedule_timezone,
            current_season=current_season,
            next_season=next_season,
        )

        board_out.additional_properties = d
        return board_out

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
