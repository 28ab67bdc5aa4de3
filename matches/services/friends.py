"""Players' friends: a game server replaces a player's whole list; the friends view ranks it.

One-way: the list is the player's own, and a friend need not have played yet. The rules are
PostgreSQL's checks as well (matches/models.py::FriendList); here they are said clearly first.
"""

from __future__ import annotations

from django.db import transaction

from config.building_blocks.errors import InvalidInput

from ..models import FRIENDS_MAX, FriendList, Player
from .players import player_in_scope_check


def friends_limit_check(friend_ids: list[str]) -> list[str]:
    """The ids once each, in order; `400 too_many_friends` when that is over FRIENDS_MAX."""
    friends = list(dict.fromkeys(friend_ids))
    if len(friends) > FRIENDS_MAX:
        raise InvalidInput(
            f"A player has at most {FRIENDS_MAX:,} friends; got {len(friends):,}.",
            code="too_many_friends",
            details={"max_friends": FRIENDS_MAX, "friends": len(friends)},
        )
    return friends


def friends_replace(
    *, player_id: str, friend_ids: list[str], allowed_boards: frozenset[str] | None = None
) -> list[str]:
    """Store `friend_ids` as the player's whole list (the player is created when new);
    returns the list stored: in the order given, each id once."""
    friends = friends_limit_check(friend_ids)
    if player_id in friends:
        raise InvalidInput(
            "A player cannot be their own friend.",
            code="friend_is_self",
            details={"index": friend_ids.index(player_id)},
        )
    player_in_scope_check(player_id, allowed_boards)
    with transaction.atomic():
        player, _ = Player.objects.get_or_create(player_id=player_id)
        FriendList.objects.update_or_create(player=player, defaults={"friend_ids": friends})
    return friends
