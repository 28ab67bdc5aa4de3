from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

T = TypeVar("T", bound="FriendsInRequest")


@_attrs_define
class FriendsInRequest:
    """Rejects fields it does not know, instead of silently dropping them.

    Attributes:
        friends (list[str]): The player's whole list of friends' ids, at most 1,000; it replaces the stored one. Friends
            who have not played yet are allowed.
    """

    friends: list[str]

    def to_dict(self) -> dict[str, Any]:
        friends = self.friends

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "friends": friends,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        friends = cast(list[str], d.pop("friends"))

        friends_in_request = cls(
            friends=friends,
        )

        return friends_in_request
