"""Read-your-writes with replicas: a player whose result this process committed reads their own
rank (and around-me) from the primary for LEADERBOARD_READ_YOUR_WRITES_SECONDS; everyone else's
shared reads may come from a replica. Without replicas it keeps nothing."""

from __future__ import annotations

import threading
from collections.abc import Iterable

from cachetools import TTLCache
from django.conf import settings

from config.building_blocks.redis import replicas_configured

# Players remembered at once: a process's results of a few seconds at the design's 6,000 a second.
_ENTRIES = 100_000
_lock = threading.Lock()
_written: TTLCache[tuple[int, str], bool] | None = None


def _recent() -> TTLCache[tuple[int, str], bool]:
    global _written
    if _written is None:
        _written = TTLCache(maxsize=_ENTRIES, ttl=settings.LEADERBOARD_READ_YOUR_WRITES_SECONDS)
    return _written


def standings_written(standings: Iterable[tuple[int, str]]) -> None:
    """Remember the (season_id, player_id) this process just committed."""
    if not replicas_configured():
        return
    with _lock:
        recent = _recent()
        for standing in standings:
            recent[standing] = True


def shared(season_id: int, player_id: str) -> bool:
    """Whether the player's own read may come from a replica."""
    if not replicas_configured():
        return False
    with _lock:
        return (season_id, player_id) not in _recent()


def forget() -> None:
    global _written
    with _lock:
        _written = None
