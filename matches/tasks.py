"""Celery entry points of the players' records."""

from celery import shared_task

from . import services


@shared_task
def unban_expired_players() -> int:
    """Lift the temporary bans that ended; idempotent (a lifted ban is not lifted twice)."""
    return len(services.players_unban_expired())
