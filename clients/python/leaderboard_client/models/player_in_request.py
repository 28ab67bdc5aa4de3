from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.player_in_request_segments import PlayerInRequestSegments


T = TypeVar("T", bound="PlayerInRequest")


@_attrs_define
class PlayerInRequest:
    """Rejects fields it does not know, instead of silently dropping them.

    Attributes:
        display_name (str | Unset):
        avatar_url (str | Unset): An https:// address of the player's picture; empty: none.
        clan (None | str | Unset): The player's clan (it must exist: PUT /api/v1/clans/{clan_id}); null leaves it.
        segments (PlayerInRequestSegments | Unset): Values by segment dimension, such as {"country": "DE"}: each value
            1-32 characters of A-Z, a-z, 0-9, '_', '.' or '-'; null removes the player's value in that dimension. Each
            dimension must be declared by a board (its segment dimensions).
    """

    display_name: str | Unset = UNSET
    avatar_url: str | Unset = UNSET
    clan: None | str | Unset = UNSET
    segments: PlayerInRequestSegments | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
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

        avatar_url = d.pop("avatar_url", UNSET)

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

        return player_in_request
