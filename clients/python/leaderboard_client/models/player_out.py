from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.player_out_segments import PlayerOutSegments


T = TypeVar("T", bound="PlayerOut")


@_attrs_define
class PlayerOut:
    """
    Attributes:
        player_id (str):
        display_name (str):
        avatar_url (str):
        clan (None | str | Unset): Present once the player was given a clan.
        segments (PlayerOutSegments | Unset): Present once the player was given segment values.
    """

    player_id: str
    display_name: str
    avatar_url: str
    clan: None | str | Unset = UNSET
    segments: PlayerOutSegments | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        player_id = self.player_id

        display_name = self.display_name

        avatar_url = self.avatar_url

        clan: None | str | Unset
        if isinstance(self.clan, Unset):
            clan = UNSET
        else:
            clan = self.clan

        segments: dict[str, Any] | Unset = UNSET
        if not isinstance(self.segments, Unset):
            segments = self.segments.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "player_id": player_id,
                "display_name": display_name,
                "avatar_url": avatar_url,
            }
        )
        if clan is not UNSET:
            field_dict["clan"] = clan
        if segments is not UNSET:
            field_dict["segments"] = segments

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.player_out_segments import PlayerOutSegments  # noqa: PLC0415

        d = dict(src_dict)
        player_id = d.pop("player_id")

        display_name = d.pop("display_name")

        avatar_url = d.pop("avatar_url")

        def _parse_clan(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        clan = _parse_clan(d.pop("clan", UNSET))

        _segments = d.pop("segments", UNSET)
        segments: PlayerOutSegments | Unset
        if isinstance(_segments, Unset):
            segments = UNSET
        else:
            segments = PlayerOutSegments.from_dict(_segments)

        player_out = cls(
            player_id=player_id,
            display_name=display_name,
            avatar_url=avatar_url,
            clan=clan,
            segments=segments,
        )

        player_out.additional_properties = d
        return player_out

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
