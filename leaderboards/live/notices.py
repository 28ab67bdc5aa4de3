"""The notices mirror workers, the season close and hiding a board send every web process's
ticker: "season N changed" (naming the players whose standings were written), "season N closed"
and "season N's board was hidden".

This is the part of the live push that Celery workers run: sync code handing messages to the
channel-layer group `season-<id>` that each ticker is a member of.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from channels.layers import get_channel_layer

from ..store import Move

logger = logging.getLogger(__name__)

# A notice names the players whose standings it carries, up to this many per season (more: it
# names none, and every followed player is read again).
NOTICE_PLAYERS = 2000
# A notice carries the standings the write moved (for the rank events' `overtaken`) up to this
# many: a mirror call that coalesced several batches at peak still tells them all (about 45
# bytes each, to every web process).
NOTICE_MOVES = 10_000
# How long the mirror waits for a notice to be handed to the channel layer.
PUBLISH_TIMEOUT_SECONDS = 2.0


def season_group(season_id: int) -> str:
    return f"season-{season_id}"


def standings_changed(
    season_ids: Iterable[int],
    players: Mapping[int, Collection[str]] | None = None,
    *,
    moves: Mapping[int, Sequence[Move]] | None = None,
) -> None:
    """Tell every web process that these seasons' standings moved (the mirror calls this),
    naming the players whose own standings it wrote when `players` has them: a ticker reads
    those at once and the other followed players only as its budget allows. A season without
    named players (a rebuild, an unban) has every followed player read again. `moves` are the
    mirror's writes that changed a standing, with the composite before and after: a ticker
    finds in them whom each followed player was overtaken by.

    Best effort: a lost notice delays pushes until the next notice or the tickers' refresh, and
    never fails the mirror.
    """
    messages = []
    for season_id in sorted(set(season_ids)):
        notice: dict[str, Any] = {"type": "season.changed", "season_id": season_id}
        named = (players or {}).get(season_id)
        if named is not None and len(named) <= NOTICE_PLAYERS:
            notice["players"] = sorted(named)
        moved = (moves or {}).get(season_id)
        if moved and len(moved) <= NOTICE_MOVES:
            # Lists, not tuples: the channel layer's msgpack gives lists back either way.
            notice["moves"] = [list(move) for move in moved]
        messages.append((season_group(season_id), notice))
    try:
        _publish(messages)
    except Exception:
        logger.warning("live notice for seasons %s not sent", season_ids, exc_info=True)


def season_closed(season_id: int, next_slug: str | None) -> None:
    """Tell every subscriber of the season that it closed and which season comes next; their
    sockets are closed with 4410 after the message.

    Best effort, like standings_changed: the close has committed when this is called, so a
    channel layer that is down must not fail it. A socket that misses the notice keeps showing
    the final standings; on reconnecting it is told the season closed.
    """
    try:
        _publish(
            [
                (
                    season_group(season_id),
                    {"type": "season.closed", "season_id": season_id, "next_season": next_slug},
                )
            ]
        )
    except Exception:
        logger.warning("season_closed notice for season %s not sent", season_id, exc_info=True)


def board_hidden(season_ids: list[int]) -> None:
    """Tell every web process that these seasons' board was hidden: their sockets get the error
    a new subscription would (`board_not_found`) and are closed with 4404.

    Best effort, like season_closed: the hide has committed. A socket that misses the notice
    keeps the board until it reconnects, which the hidden board refuses.
    """
    try:
        _publish(
            [
                (season_group(season_id), {"type": "board.hidden", "season_id": season_id})
                for season_id in sorted(set(season_ids))
            ]
        )
    except Exception:
        logger.warning("board_hidden notice for seasons %s not sent", season_ids, exc_info=True)


class _Publisher:
    """Runs sync code's channel-layer sends on one event loop per process, so each notice
    reuses the layer's Redis connections. (async_to_sync would start a loop, a thread and a
    connection per call: about 3 ms a notice instead of 1 ms, on every mirror task.)"""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pid = 0

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            # A forked child (a Celery pool process) inherits the object but not the thread.
            if self._loop is None or self._pid != os.getpid():
                self._loop = asyncio.new_event_loop()
                self._pid = os.getpid()
                threading.Thread(
                    target=self._loop.run_forever, name="live-publisher", daemon=True
                ).start()
            return self._loop

    def send(self, messages: list[tuple[str, dict[str, Any]]]) -> None:
        future = asyncio.run_coroutine_threadsafe(_group_send_all(messages), self._running_loop())
        try:
            future.result(PUBLISH_TIMEOUT_SECONDS)
        except TimeoutError:
            future.cancel()
            raise


_publisher = _Publisher()


def _publish(messages: list[tuple[str, dict[str, Any]]]) -> None:
    if messages:
        _publisher.send(messages)


async def _group_send_all(messages: list[tuple[str, dict[str, Any]]]) -> None:
    layer = get_channel_layer()
    for group, message in messages:
        await layer.group_send(group, message)
