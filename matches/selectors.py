"""Reads of players kept here: whether a player was ever seen, and their friends."""

from __future__ import annotations

from .models import Player


def player_friends(player_id: str) -> list[str] | None:
    """The player's friends as stored (empty when they have no list); None for a player never
    seen (no result, no profile, no list)."""
    row = (
        Player.objects.filter(player_id=player_id)
        .values_list("friend_list__friend_ids", flat=True)
        .first()
    )
    if row is None and not Player.objects.filter(player_id=player_id).exists():
        return None
    return list(row or [])
