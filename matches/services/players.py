"""Players' profiles: a game server (or an operator) creates a player or changes their name
and avatar; the boards' profile directory files the new ones once the change commits."""

from __future__ import annotations

from django.db import transaction

from config.building_blocks.errors import Forbidden

from .. import outbox
from ..models import MatchResult, Player
from .memberships import UNCHANGED, memberships_check, memberships_write


def player_in_scope_check(player_id: str, allowed_boards: frozenset[str] | None) -> None:
    """`403 player_not_in_scope` unless a key of scope `allowed_boards` (None: every board) may
    write the player: one with a result on one of its boards, so one game's server cannot
    rename another game's players or rewrite their friends. Results are never deleted, so a
    player once in scope stays in it."""
    if allowed_boards is not None and not (
        MatchResult.objects.filter(player_id=player_id, board__slug__in=allowed_boards).exists()
    ):
        raise Forbidden(
            f"This game-server key may not change player '{player_id}': they have no result "
            "on its boards.",
            code="player_not_in_scope",
        )


def player_upsert(
    *,
    player_id: str,
    display_name: str | None = None,
    avatar_url: str | None = None,
    clan: object = UNCHANGED,
    segments: dict[str, str | None] | None = None,
    allowed_boards: frozenset[str] | None = None,
) -> tuple[Player, bool]:
    """Create a player's profile or change the fields given; returns it and whether it is new.

    `allowed_boards` is the posting key's scope (player_in_scope_check): a key limited to some
    boards writes a new player's profile after their first result. `clan` (None: leave it) and
    `segments` (a value of None: none in that dimension) are set as given (memberships.py)."""
    player_in_scope_check(player_id, allowed_boards)
    memberships_check(clan=clan, segments=segments, allowed_boards=allowed_boards)
    changes = {
        name: value
        for name, value in (("display_name", display_name), ("avatar_url", avatar_url))
        if value is not None
    }
    with transaction.atomic():
        player, created = Player.objects.select_for_update().get_or_create(
            player_id=player_id, defaults=changes
        )
        if changes and not created:
            for name, value in changes.items():
                setattr(player, name, value)
            player.profile_changes += 1  # the row is locked: no other change counts meanwhile
            player.save(update_fields=[*changes, "profile_changes", "updated_at"])
        memberships_write(player, clan=clan, segments=segments)
        transaction.on_commit(lambda: outbox.profiles_committed([player_id]))
    return player, created
