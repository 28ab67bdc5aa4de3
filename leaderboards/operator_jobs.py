"""An operator's job on a season (a rebuild, a close now) is queued once and runs once.

Each job gets an id when asked for, carried in its message. Asking again while a job of that
kind waits or runs for the season (a double click) queues nothing; a delivery of a message
whose job already ran (the broker delivers a message again once it was held past its
visibility timeout) does nothing, so the job's effects and its audit row happen once. The
claims are Redis keys of the season (store/claims.py).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from typing import TypeVar

from django.db import transaction

from . import store

logger = logging.getLogger(__name__)

T = TypeVar("T")

# How long a queued job keeps others of its kind from being queued if it never ends (its
# message lost with the broker): an operator may ask again after this long.
JOB_QUEUED_SECONDS = 15 * 60
# How long a job's run is remembered against a second delivery of its message.
JOB_RUN_SECONDS = 24 * 3600


def season_job_queue(*, season_id: int, kind: str, send: Callable[[str], None]) -> bool:
    """Queue a job of `kind` on the season: `send(job_id)` publishes its message once the
    current transaction commits. False, sending nothing, while one of its kind waits or runs."""
    job_id = uuid.uuid4().hex
    if not store.season_job_queue_claim(season_id, kind, job_id, seconds=JOB_QUEUED_SECONDS):
        logger.info("a %s of season %s is queued already", kind, season_id)
        return False

    def publish() -> None:
        try:
            send(job_id)
        except Exception:
            # Not queued (the broker is away): the operator may ask again at once.
            store.season_job_done(season_id, kind, job_id)
            raise

    transaction.on_commit(publish)
    return True


def season_job_run(
    *, season_id: int, kind: str, job_id: str | None, run: Callable[[], T]
) -> T | None:
    """Run a delivered job unless a delivery of it ran already (then None). A message without
    a job id (queued by an earlier release) runs as it is."""
    if job_id is None:
        return run()
    if not store.season_job_run_claim(season_id, job_id, seconds=JOB_RUN_SECONDS):
        logger.info("the %s %s of season %s ran already", kind, job_id, season_id)
        return None
    try:
        return run()
    finally:
        store.season_job_done(season_id, kind, job_id)
