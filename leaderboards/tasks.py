"""Celery entry points into the mirror, its repairs and the closing of seasons; each is
idempotent, so redelivery and retries are harmless."""

import logging

import orjson
from celery import shared_task
from django.conf import settings
from django.contrib.auth import get_user_model
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from matches.outbox import StandingChange
from seasons.locks import SeasonBusy
from seasons.models import Season

from . import (
    archive_corrections,
    closing,
    operations,
    operator_jobs,
    player_refreshes,
    read_your_writes,
    reconciliation,
    services,
)
from .coalescing import MirrorCoalescer

logger = logging.getLogger(__name__)

REBUILD_TIME_LIMIT_SECONDS = 3 * 3600
# Longest a close may run before the worker stops it (it resumes on the next run).
CLOSE_TIME_LIMIT_SECONDS = 6 * 3600
RECONCILE_TIME_LIMIT_SECONDS = 30 * 60


@shared_task(
    acks_late=True,
    autoretry_for=(RedisConnectionError, RedisTimeoutError),
    retry_backoff=True,
    retry_backoff_max=30,
    max_retries=5,
)
def mirror_standings(changes: str | list[list[object]]) -> int:
    # The standings come as one JSON text (see _publish); a list is a message queued by an
    # earlier release, or by hand. If every retry fails (Redis down for long), the outbox rows
    # stay and the sweep mirrors them.
    rows = orjson.loads(changes) if isinstance(changes, str) else changes
    return services.standings_mirror(changes=[StandingChange.from_message(row) for row in rows])


def _publish(changes: list[StandingChange]) -> None:
    # One JSON text made by orjson, not a list Celery's json encodes and decodes again element
    # by element, in the web process that queues it and in the worker (a few per cent of each).
    # argsrepr: otherwise Celery writes a repr of every standing into the message's headers.
    mirror_standings.apply_async(
        (orjson.dumps([c.as_message() for c in changes]).decode(),),
        retry=False,
        argsrepr=f"[{len(changes)} standings]",
    )


_coalescer = MirrorCoalescer(_publish, window=lambda: settings.MIRROR_COALESCE_SECONDS)


def queue_mirror(changes: list[StandingChange]) -> None:
    """Queue the mirror after a commit, carrying the committed standings themselves, coalesced
    with other requests' for a few milliseconds. The results are confirmed by then, so a broker
    outage must not fail the request: the sweep mirrors whatever was not queued."""
    read_your_writes.standings_written((c.season_id, c.player_id) for c in changes)
    _coalescer.add(changes)


@shared_task(acks_late=True)
def sweep_unmirrored() -> int:
    return services.totals_mirror_pending()


# The long jobs below run on queues of their own (see CELERY_TASK_ROUTES), so they never hold
# up the mirror, and are acknowledged when they start: one that outlasts the broker's visibility
# timeout must not be delivered to a second worker while it still runs. An operator's rebuild
# and close carry a job id, so a message delivered twice runs once (operator_jobs.py).
@shared_task(acks_late=False, time_limit=REBUILD_TIME_LIMIT_SECONDS)
def rebuild_season(season_id: int, actor_id: int | None = None, job_id: str | None = None) -> int:
    season = Season.objects.select_related("board").get(pk=season_id)
    actor = get_user_model().objects.filter(pk=actor_id).first() if actor_id else None
    try:
        rebuilt = operator_jobs.season_job_run(
            season_id=season_id,
            kind="rebuild",
            job_id=job_id,
            run=lambda: services.season_rebuild_by_operator(season=season, actor=actor),
        )
    except SeasonBusy:
        logger.info("season %s is being closed or rebuilt already", season_id)
        return 0
    return rebuilt or 0


# On the rebuilds queue, with the operators' jobs: a lost season answers 503 until it is
# rebuilt, which must not wait behind a close of hours, and a Redis back empty queues one heal
# per season, which on the mirror's queue would take every mirror process (about 40 s each at
# 10 million players) and stop the mirror of every healthy board.
@shared_task(acks_late=False, time_limit=REBUILD_TIME_LIMIT_SECONDS)
def heal_season(season_id: int) -> int:
    try:
        return services.season_heal(season_id=season_id)
    except SeasonBusy:
        logger.info("season %s is being closed or rebuilt already", season_id)
        return 0


def queue_season_heal(season_id: int) -> None:
    """Queue a lost season's rebuild (heals.py asks, once a while). The broker away fails at
    once: reconciliation's next run rebuilds it instead."""
    try:
        heal_season.apply_async((season_id,), retry=False)
    except Exception:
        logger.warning("could not queue the rebuild of season %s", season_id, exc_info=True)


@shared_task(acks_late=False, time_limit=RECONCILE_TIME_LIMIT_SECONDS)
def reconcile() -> int:
    return reconciliation.seasons_reconcile()


# Closing: a close of 100 million players outlasts the broker's visibility timeout, and
# redelivering it would start a second runner; a close lost with its worker is resumed by the
# next close_due_seasons, a minute later, from the step it reached.
@shared_task(acks_late=False, time_limit=CLOSE_TIME_LIMIT_SECONDS)
def close_due_seasons() -> list[int]:
    return closing.seasons_close_due()


# An operator's close now, on the rebuilds queue: behind no periodic job.
@shared_task(acks_late=False, time_limit=CLOSE_TIME_LIMIT_SECONDS)
def close_season(season_id: int, force: bool = False, job_id: str | None = None) -> str:
    season = Season.objects.get(pk=season_id)
    try:
        closed = operator_jobs.season_job_run(
            season_id=season_id,
            kind="close",
            job_id=job_id,
            run=lambda: closing.season_close(season=season, force=force),
        )
    except SeasonBusy:
        return "busy"
    return "ran already" if closed is None else closed.state


@shared_task(acks_late=True)
def sample_operations() -> int:
    return operations.operations_sample()


@shared_task
def remove_expired_standings() -> int:
    return closing.closed_standings_remove_expired()


# The closing tasks under the names they had up to 0.1.0, from when they lived in the seasons
# app, accepted for one release: messages queued before the upgrade, and periodic tasks stored
# under them until the data migration renames them, run the same code. Remove in 0.3.0.
@shared_task(
    name="seasons.tasks.close_due_seasons", acks_late=False, time_limit=CLOSE_TIME_LIMIT_SECONDS
)
def close_due_seasons_by_old_name() -> list[int]:
    return close_due_seasons()


@shared_task(
    name="seasons.tasks.close_season", acks_late=False, time_limit=CLOSE_TIME_LIMIT_SECONDS
)
def close_season_by_old_name(season_id: int, force: bool = False, job_id: str | None = None) -> str:
    return close_season(season_id, force=force, job_id=job_id)


@shared_task(name="seasons.tasks.remove_expired_standings")
def remove_expired_standings_by_old_name() -> int:
    return remove_expired_standings()


@shared_task(acks_late=True)
def refresh_player_standings(player_id: str) -> int:
    return player_refreshes.player_standings_refresh(player_id=player_id)


def queue_player_refresh(player_id: str) -> None:
    refresh_player_standings.delay(player_id)


@shared_task(acks_late=True)
def correct_standing(season_id: int, player_id: str) -> bool:
    return player_refreshes.player_standing_correct(season_id=season_id, player_id=player_id)


def queue_standing_correction(season_id: int, player_id: str) -> None:
    correct_standing.delay(season_id, player_id)


def queue_season_rebuild(season_id: int, actor_id: int | None) -> bool:
    return operator_jobs.season_job_queue(
        season_id=season_id,
        kind="rebuild",
        send=lambda job_id: rebuild_season.delay(season_id, actor_id=actor_id, job_id=job_id),
    )


def queue_season_close(season_id: int, force: bool) -> bool:
    return operator_jobs.season_job_queue(
        season_id=season_id,
        kind="close",
        send=lambda job_id: close_season.delay(season_id, force=force, job_id=job_id),
    )


# Bans' refreshes go through their outbox (matches.models.PendingPlayerRefresh): the task sent
# on commit applies one at once, and the sweep, every few seconds, whatever it left.
@shared_task(acks_late=True)
def apply_player_refresh(player_id: str) -> bool:
    return player_refreshes.player_refresh_owed_apply(player_id=player_id)


def queue_owed_player_refresh(player_id: str) -> None:
    """After a ban change committed; the broker away fails at once (the sweep applies it)."""
    apply_player_refresh.apply_async((player_id,), retry=False)


@shared_task(acks_late=True)
def sweep_player_refreshes() -> int:
    return player_refreshes.players_refresh_owed()


# Idempotent (a season corrected already changes nothing), so a redelivery is harmless.
@shared_task(acks_late=True)
def correct_archives_after_ban(player_id: str) -> list[int]:
    return archive_corrections.archives_correct_after_ban(player_id=player_id)


def queue_archive_corrections_after_ban(player_id: str) -> None:
    """After a ban committed: a task only when a closed season of a board that corrects on a ban
    archives the player. The broker away fails at once: an operator corrects from the admin."""
    if archive_corrections.seasons_corrected_on_ban(player_id=player_id).exists():
        correct_archives_after_ban.apply_async((player_id,), retry=False)
