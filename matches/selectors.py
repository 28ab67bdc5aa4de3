"""Reads of players kept here (whether a player was ever seen, their friends) and of the
mirror's outbox."""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

from django.db import connection

from .models import PendingStanding, Player, PlayerTotal


class Waiting(NamedTuple):
    count: int  # standings committed, not yet in Redis
    oldest: datetime  # when the oldest of them was committed


def standings_waiting_by_season() -> dict[int, Waiting]:
    """The mirror's outbox by season: how many standings wait, and since when."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            SELECT season.key::bigint, sum(jsonb_array_length(season.value)), min(p.changed_at)
            FROM {PendingStanding._meta.db_table} p, jsonb_each(p.standings) AS season
            GROUP BY 1
            """
        )
        return {season_id: Waiting(count, oldest) for season_id, count, oldest in cursor}


def seasons_played(*, player_id: str, season_ids: list[int]) -> set[int]:
    """Which of these seasons the player has a total in."""
    if not season_ids:
        return set()
    totals = PlayerTotal.objects.filter(player_id=player_id, season_id__in=season_ids)
    return set(totals.values_list("season_id", flat=True))


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
