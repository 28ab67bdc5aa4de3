"""A live socket's outbox: the newest unsent message of each kind, written as the client reads.

A slow client costs a few messages of memory, never a queue; one that has not taken a message
for SEND_TIMEOUT_SECONDS is closed. What the socket follows is kept here too, for the ticker.
An idle socket holds one of these for as long as it is open, so it keeps only what it needs:
slots, no task while nothing is queued (docs/websocket.md, "What a socket costs").
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from config.building_blocks.errors import DomainError

from . import messages

logger = logging.getLogger(__name__)

# A socket whose client has not taken a message for this long is closed.
SEND_TIMEOUT_SECONDS = 10.0

# Close codes beyond 4000 + the REST status of the same error (4400, 4404, 4503).
CLOSE_SLOW_CLIENT = 4408
CLOSE_SEASON_CLOSED = 4410


class Subscriber:
    """One socket: what it follows, and an outbox with the newest unsent message of each kind.

    Messages are whole states (a top, a player's standing), so a newer one replaces an unsent
    older one of the same kind; `seq` is given when a message is sent, so it has no gaps.
    """

    __slots__ = (
        "_send",
        "seq",
        "season_id",
        "segment",
        "top",
        "around",
        "player_id",
        "players",
        "friends_of",
        "friends_members",
        "friends_told",
        "clans",
        "clans_told",
        "top_told",
        "top_told_at",
        "open",
        "on_drop",
        "_outbox",
        "_close_code",
        "_writer",
    )

    def __init__(self, send: Callable[[dict[str, Any]], Awaitable[None]]) -> None:
        # The socket's ASGI `send`: messages and the close go through it.
        self._send = send
        self.seq = 0
        self.season_id: int | None = None
        # The segment the socket reads within (None: the whole board).
        self.segment: str | None = None
        # The K of the top this socket follows (0: none), and how many ranks around its player.
        self.top = 0
        self.around = 0
        # The player named in the URL (the snapshot's), and every player it follows.
        self.player_id: str | None = None
        self.players: set[str] = set()
        # The player whose friends view this socket follows, the view's members (that player,
        # then their friends) and its order as last told: (player_id, points) from the top.
        self.friends_of: str | None = None
        self.friends_members: list[str] = []
        self.friends_told: list[tuple[str, int]] | None = None
        # The K of the clan board's top this socket follows (0: none), and that top as last
        # told: (clan_id, points, name) from the top.
        self.clans = 0
        self.clans_told: list[tuple[str, int, str]] | None = None
        # The top entries this socket was last given (shared by the sockets told the same
        # top), and when.
        self.top_told: list[dict[str, Any]] | None = None
        self.top_told_at = float("-inf")
        self.open = True
        # Called when the socket closes itself (its client stopped reading or went away).
        self.on_drop: Callable[[Subscriber], None] | None = None
        self._outbox: dict[str, str] = {}
        self._close_code: int | None = None
        self._writer: asyncio.Task[None] | None = None

    def push(self, kind: str, body: str, *, close_code: int | None = None) -> None:
        """Queue `body` (a JSON object) as the newest message of its kind; maybe close after."""
        if not self.open or self._close_code is not None:
            return
        self._outbox[kind] = body
        if close_code is not None:
            self._close_code = close_code
        if self._writer is None:
            self._writer = asyncio.get_running_loop().create_task(self._write())

    def error(self, exc: DomainError) -> None:
        self.push("error", messages.encode(messages.error_message(exc)))

    def reject(self, exc: DomainError) -> None:
        """Tell the client what was wrong, then close with 4000 + the REST status of the error."""
        self.push(
            "error",
            messages.encode(messages.error_message(exc)),
            close_code=4000 + exc.status_code,
        )

    def forget(self, kind: str) -> None:
        self._outbox.pop(kind, None)

    def stop(self) -> None:
        self.open = False
        self._outbox.clear()
        if self._writer is not None and self._writer is not asyncio.current_task():
            self._writer.cancel()

    async def _write(self) -> None:
        try:
            while self._outbox:
                kind = next(iter(self._outbox))
                body = self._outbox.pop(kind)
                self.seq += 1
                async with asyncio.timeout(SEND_TIMEOUT_SECONDS):
                    await self._send(
                        {"type": "websocket.send", "text": f'{{"seq":{self.seq},{body[1:]}'}
                    )
            # An emptied dict keeps the table it grew: an idle socket's outbox lets it go.
            self._outbox.clear()
            if self._close_code is not None:
                self.open = False
                async with asyncio.timeout(SEND_TIMEOUT_SECONDS):
                    await self._send({"type": "websocket.close", "code": self._close_code})
        except TimeoutError:
            logger.info("closing a live socket whose client stopped reading")
            self._drop()
            with contextlib.suppress(Exception):
                async with asyncio.timeout(1):
                    await self._send({"type": "websocket.close", "code": CLOSE_SLOW_CLIENT})
        except Exception:
            # The client went away while a message was on its way; the socket's endpoint
            # (consumers.py) unsubscribes it as well when it hears of the close.
            self._drop()
        finally:
            self._writer = None

    def _drop(self) -> None:
        self.stop()
        if self.on_drop is not None:
            self.on_drop(self)
