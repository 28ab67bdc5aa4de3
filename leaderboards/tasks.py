"""Celery entry points into the mirror and its repairs; each is idempotent, so redelivery and
retries are harmless."""

import logging

from celery import shared_task
from django.conf import settings
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from matches.outbox import StandingChange
from seasons import tasks as season_tasks
from seasons.locks import SeasonBusy

from . import reconciliation, services
from .coalescing import MirrorCoalescer

logger = logging.getLogger(__name__)

REBUILD_TIME_LIMIT_SECONDS = 3 * 3600
RECONCILE_TIME_LIMIT_SECONDS = 30 * 60


@shared_task(
    acks_late=True,
    autoretry_for=(RedisConnectionError, RedisTimeoutError),
    retry_backoff=True,
    retry_backoff_max=30,
    max_retries=5,
)
def mirror_standings(changes: list[list[object]]) -> int:
    # If every retry fails (Redis down for long), the outbox rows stay and the sweep mirrors them.
    return services.standings_mirror(
        changes=[StandingChange.from_message(change) for change in changes]
    )


def _publish(changes: list[StandingChange]) -> None:
    # argsrepr: otherwise Celery writes a repr of every standing into the message's headers.
    mirror_standings.apply_async(
        ([c.as_message() for c in changes],),
        retry=False,
        argsrepr=f"[{len(changes)} standings]",
    )


_coalescer = MirrorCoalescer(_publish, window=lambda: settings.MIRROR_COALESCE_SECONDS)


def queue_mirror(changes: list[StandingChange]) -> None:
    """Queue the mirror after a commit, carrying the committed standings themselves, coalesced
    with other requests' for a few milliseconds. The results are confirmed by then, so a broker
    outage must not fail the request: the sweep mirrors whatever was not queued."""
    _coalescer.add(changes)


@shared_task(acks_late=True)
def sweep_unmirrored() -> int:
    return services.totals_mirror_pending()


# The long jobs below run on their own queue (see CELERY_TASK_ROUTES), so they never hold up
# the mirror, and are acknowledged when they start: one that outlasts the broker's visibility
# timeout must not be delivered to a second worker while it still runs.
@shared_task(acks_late=False, time_limit=REBUILD_TIME_LIMIT_SECONDS)
def rebuild_season(season_id: int) -> int:
    from seasons.models import Season

    season = Season.objects.select_related("board").get(pk=season_id)
    try:
        return services.season_rebuild_standings(season=season)
    except SeasonBusy:
        logger.info("season %s is being closed or rebuilt already", season_id)
        return 0


@shared_task(acks_late=False, time_limit=RECONCILE_TIME_LIMIT_SECONDS)
def reconcile() -> int:
    return reconciliation.seasons_reconcile()


@shared_task(acks_late=True)
def refresh_player_standings(player_id: str) -> int:
    return services.player_standings_refresh(player_id=player_id)


def queue_player_refresh(player_id: str) -> None:
    refresh_player_standings.delay(player_id)


def queue_season_rebuild(season_id: int) -> None:
    rebuild_season.delay(season_id)


def queue_season_close(season_id: int, force: bool) -> None:
    season_tasks.close_season.delay(season_id, force=force)
