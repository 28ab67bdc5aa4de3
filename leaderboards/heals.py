"""Asking for the rebuild of a season whose standings Redis lost, at most once a while.

Whoever finds a season lost asks here: the mirror writing into it (services.py), a request or a
live tick reading it (the API views, the pages, live/reading.py; the selectors only raise). The
rebuild is a task, in the tasks module above all of them: it connects its queueing here when
Django starts (apps.py), as it connects the mirror to matches/outbox.py, so nothing below it
imports the tasks.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from . import store

logger = logging.getLogger(__name__)

# A season found lost is rebuilt once in this long, however many writes and reads find it so.
HEAL_CLAIM_SECONDS = 60

_queues: list[Callable[[int], None]] = []


def connect(*, queue: Callable[[int], None]) -> None:
    """Called once per process by the app's start: `queue(season_id)` queues the rebuild."""
    _queues[:] = [queue]


def season_heal_queue(*, season_id: int) -> None:
    """Queue the rebuild of a season whose standings Redis lost, unless one was asked for in
    the last HEAL_CLAIM_SECONDS (the mirror finds it so at every write, readers at every read).
    Nothing connected (Django not started): reconciliation's next run rebuilds it instead."""
    if not _queues:
        logger.warning("season %s lost its standings in Redis; no rebuild queue here", season_id)
        return
    if not store.heal_claim(season_id, seconds=HEAL_CLAIM_SECONDS):
        return
    logger.warning("season %s lost its standings in Redis; rebuilding them", season_id)
    _queues[0](season_id)


def season_heal_queue_for_read(*, season_id: int) -> None:
    """season_heal_queue for whoever serves a read that found the season lost: the read answers
    503 whatever happens here, so a failure to ask (its Redis away again) is only logged."""
    try:
        season_heal_queue(season_id=season_id)
    except Exception:
        logger.warning("could not ask for the rebuild of season %s", season_id, exc_info=True)
