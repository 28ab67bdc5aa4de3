"""Celery entry points for the season lifecycle; each is idempotent and safe to run twice."""

from celery import shared_task

from . import closing, planning
from .models import Season


@shared_task
def plan_seasons() -> int:
    return planning.seasons_plan_all()


@shared_task(acks_late=True)
def close_due_seasons() -> list[int]:
    return closing.seasons_close_due()


@shared_task(acks_late=True)
def close_season(season_id: int, force: bool = False) -> str:
    season = Season.objects.get(pk=season_id)
    return closing.season_close(season=season, force=force).state


@shared_task
def remove_expired_standings() -> int:
    return closing.closed_standings_remove_expired()
