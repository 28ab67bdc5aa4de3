"""Celery entry points for the seasons' own work: creating upcoming seasons from the boards'
schedules. (Closing a season is the leaderboards app's: leaderboards/tasks.py.)"""

from celery import shared_task

from . import planning


@shared_task
def plan_seasons() -> int:
    return planning.seasons_plan_all()
