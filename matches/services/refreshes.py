"""The refreshes a player's live boards owe after a change of what places them there: a ban, an
unban, a lifted temporary ban, new segment values. Kept in PendingPlayerRefresh until Redis holds
the change, and handed to the ranking store once it commits."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from .. import outbox
from ..models import PendingPlayerRefresh


def player_refresh_owe(player_id: str) -> None:
    """In the change's transaction: the player's live boards owe a refresh, kept in
    PendingPlayerRefresh until Redis holds it and handed to the ranking store once this commits.
    The upsert waits for a refresh that holds the row, so a change committed while one runs is
    never deleted with a row that refresh read before it."""
    PendingPlayerRefresh.objects.bulk_create(
        [PendingPlayerRefresh(player_id=player_id, requested_at=timezone.now())],
        update_conflicts=True,
        unique_fields=["player"],
        update_fields=["requested_at"],
    )
    transaction.on_commit(lambda: outbox.player_committed(player_id))
