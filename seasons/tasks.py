"""Celery entry points for the season lifecycle; each is idempotent and safe to run twice.

Closing runs on the long-jobs queue (config/settings/base.py routes it) and is acknowledged when
it starts, not when it ends: a close of 100 million players outlasts the broker's visibility
timeout, and redelivering it would start a second runner. A close lost with its worker is
resumed by the next close_due_seasons, a minute later, from the step it reached.
"""

from celery import shared_task

from . import closing, planning
from .locks import SeasonBusy
from .models import Season

# Longest a close may run before the worker stops it (it resumes on the next run).
CLOSE_TIME_LIMIT_SECONDS = 6 * 3600


@shared_task
def plan_seasons() -> int:
    return planning.seasons_plan_all()


@shared_task(acks_late=False, time_limit=CLOSE_TIME_LIMIT_SECONDS)
def close_due_seasons() -> list[int]:
    return closing.seasons_close_due()


@shared_task(acks_late=False, time_limit=CLOSE_TIME_LIMIT_SECONDS)
def close_season(season_id: int, force: bool = False) -> str:
    season = Season.objects.get(pk=season_id)
    try:
        return closing.season_close(season=season, force=force).state
    except SeasonBusy:
        return "busy"


@shared_task
def remove_expired_standings() -> int:
    return closing.closed_standings_remove_expired()
