from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.player_in_request_segments import PlayerInRequestSegments


T = TypeVar("T", bound="PlayerInRequest")


@_attrs_define
class PlayerInRequest:
    """Rejects fields it does not know, instead of silently dropping them.

    Attributes:
        display_name (str | Unset):
        avatar_url (str | Unset):
        clan (None | str | Unset): The player's clan (it must exist: PUT /api/v1/clans/{clan_id}); null leaves it.
        segments (PlayerInRequestSegments | Unset): Values by segment dimension, such as {"country": "DE"}: each value
            1-32 characters of A-Z, a-z, 0-9, '_', '.' or '-'; null removes the player's value in that dimension. Each
            dimension must be declared by a board (its segment dimensions).
    """

    display_name: str | Unset = UNSET
    avatar_url: str | Unset = UNSET
    clan: None | str | Unset = UNSET
    segments: PlayerInRequestSegments | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        display_name = self.display_name

        avatar_url: str | Unset
        if isinstance(self.avatar_url, Unset):
            avatar_url = UNSET
        else:
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
        field_dict.update({})
        if display_name is not UNSET:
            field_dict["display_name"] = display_name
        if avatar_url is not UNSET:
            field_dict["avatar_url"] = avatar_url
        if clan is not UNSET:
            field_dict["clan"] = clan
        if segments is not UNSET:
            field_dict["segments"] = segments

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.player_in_request_segments import PlayerInRequestSegments  # noqa: PLC0415

        d = dict(src_dict)
        display_name = d.pop("display_name", UNSET)

        def _parse_avatar_url(data: object) -> str | Unset:
            if isinstance(data, Unset):
                return data
            return cast(str | Unset, data)

        avatar_url = _parse_avatar_url(d.pop("avatar_url", UNSET))

        def _parse_clan(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        clan = _parse_clan(d.pop("clan", UNSET))

        _segments = d.pop("segments", UNSET)
        segments: PlayerInRequestSegments | Unset
        if isinstance(_segments, Unset):
            segments = UNSET
        else:
            segments = PlayerInRequestSegments.from_dict(_segments)

        player_in_request = cls(
            display_name=display_name,
            avatar_url=avatar_url,
            clan=clan,
            segments=segments,
        )

        player_in_request.additional_properties = d
        return player_in_request

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
