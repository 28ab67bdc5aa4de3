"""The long jobs on a season that the ranking store runs (rebuilding its board, closing it into
the archive), as this app's admin asks for them, without this app importing that one.

The leaderboards app connects its job queues here when Django starts (as it connects the
mirror to matches/outbox.py); the admin only says which season and what to do. A job is sent
once the caller's transaction commits, and asked for twice while it waits or runs (a double
click) it is queued once: the queues answer whether this request queued it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.core.exceptions import ImproperlyConfigured


@dataclass(frozen=True, slots=True)
class _Queues:
    rebuild: Callable[[int, int | None], bool]
    close: Callable[[int, bool], bool]


_queues: list[_Queues] = []


def connect(
    *, rebuild: Callable[[int, int | None], bool], close: Callable[[int, bool], bool]
) -> None:
    """Called once per process by the app that runs the jobs: `rebuild(season_id, actor_id)`
    and `close(season_id, force)` queue them."""
    _queues[:] = [_Queues(rebuild=rebuild, close=close)]


def _connected() -> _Queues:
    if not _queues:
        raise ImproperlyConfigured("No app runs the season jobs (the leaderboards app connects).")
    return _queues[0]


def season_rebuild_queue(season_id: int, *, actor_id: int | None = None) -> bool:
    """Queue a rebuild of the season's board, audited as `actor_id`'s; False if one is queued
    or running already."""
    return _connected().rebuild(season_id, actor_id)


def season_close_queue(season_id: int, *, force: bool) -> bool:
    """Queue closing the season (`force`: before its grace period is over); False if a close
    of it is queued or running already."""
    return _connected().close(season_id, force)
