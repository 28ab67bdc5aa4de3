"""Live leaderboard pushes: each web process's ticker turns "season N changed" notices into the
few messages its open sockets need.

Mirror workers publish a notice to the channel-layer group `season-<id>` after each ZSET write
(`standings_changed`). A web process's ticker is its one member of that group: at most once per
TICK_SECONDS per season it reads the top K and the ranks of every player its sockets follow in one
Redis round trip (store.read_batch), compares them with what it told the sockets last, and hands
each socket only what changed. A socket's outbox keeps the newest unsent message of each kind, so
a slow client costs a few messages of memory, never a queue, and one that stops reading for
SEND_TIMEOUT_SECONDS is closed. The protocol is documented in docs/websocket.md.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import json
import logging
import os
import threading
import time
import weakref
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from asgiref.sync import sync_to_async
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import close_old_connections
from django.utils import timezone

from config.errors import DomainError
from seasons.models import Season, SeasonState
from seasons.scoring import points_of
from seasons.selectors import season_next

from . import selectors, store

logger = logging.getLogger(__name__)

# A season's standings are read at most this often while changes keep arriving.
TICK_SECONDS = 0.2
# A followed player's own new score is pushed at the next tick. What merely follows from other
# players' results (the top changed, the player was passed) is paid from a budget of
# LIVE_FANOUT_PER_SECOND messages per season and process, a token bucket holding a second's
# worth, and goes first to the sockets that have waited longest: a few sockets hear every change
# at the next tick, thousands each in turn (5,000 sockets following the top of a board that
# changes all the time: each every 10 s at 500 a second), at a steady rate rather than in bursts.
# At peak nearly every rank moves on every tick; sending each change to every socket took the
# web processes' CPU from the results themselves.

# A notice names the players whose standings it carries, up to this many per season (more: it
# names none, and every followed player is read again).
NOTICE_PLAYERS = 2000
# Every season is read again this often even without a notice (notices are best effort), and
# the ticker renews its group memberships (the channel layer expires them).
REFRESH_SECONDS = 15.0
# A socket whose client has not taken a message for this long is closed.
SEND_TIMEOUT_SECONDS = 10.0
# Messages queued between two chances for the sockets to write them, in a large broadcast.
FANOUT_BATCH = 500
# How long the mirror waits for a notice to be handed to the channel layer.
PUBLISH_TIMEOUT_SECONDS = 2.0
# Players one socket may follow, the one named in its URL included.
MAX_PLAYERS_PER_CONNECTION = 20

# Close codes beyond 4000 + the REST status of the same error (4400, 4404, 4503).
CLOSE_SLOW_CLIENT = 4408
CLOSE_SEASON_CLOSED = 4410

# Reads run in a thread of their own, so a tick never waits behind request handlers.
_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="live-ticker")


def season_group(season_id: int) -> str:
    return f"season-{season_id}"


def _encode(payload: dict[str, Any]) -> str:
    return json.dumps(payload, cls=DjangoJSONEncoder, separators=(",", ":"))


def _error_payload(exc: DomainError) -> dict[str, Any]:
    return {
        "type": "error",
        "error": {"code": exc.code, "message": exc.message, "details": exc.details},
    }


class Subscriber:
    """One socket: what it follows, and an outbox with the newest unsent message of each kind.

    Messages are whole states (a top, a player's standing), so a newer one replaces an unsent
    older one of the same kind; `seq` is given when a message is sent, so it has no gaps.
    """

    def __init__(
        self,
        *,
        send: Callable[[str], Awaitable[None]],
        close: Callable[[int], Awaitable[None]],
    ) -> None:
        self._send = send
        self._close = close
        self.seq = 0
        self.season_id: int | None = None
        self.top = 0
        self.around = 0
        self.player_id: str | None = None
        self.players: set[str] = set()
        # The top entries this socket was last given, and when.
        self.top_told: list[dict[str, Any]] | None = None
        self.top_told_at = float("-inf")
        self.open = True
        self._outbox: dict[str, str] = {}
        self._close_code: int | None = None
        self._writer: asyncio.Task[None] | None = None
        self._on_drop: Callable[[Subscriber], None] | None = None

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
        self.push("error", _encode(_error_payload(exc)))

    def reject(self, exc: DomainError) -> None:
        """Tell the client what was wrong, then close with 4000 + the REST status of the error."""
        self.push("error", _encode(_error_payload(exc)), close_code=4000 + exc.status_code)

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
                    await self._send(f'{{"seq":{self.seq},{body[1:]}')
            if self._close_code is not None:
                self.open = False
                async with asyncio.timeout(SEND_TIMEOUT_SECONDS):
                    await self._close(self._close_code)
        except TimeoutError:
            logger.info("closing a live socket whose client stopped reading")
            self._drop()
            with contextlib.suppress(Exception):
                async with asyncio.timeout(1):
                    await self._close(CLOSE_SLOW_CLIENT)
        except Exception:
            # The client went away while a message was on its way; the consumer's disconnect
            # handler unsubscribes it as well.
            self._drop()
        finally:
            self._writer = None

    def _drop(self) -> None:
        self.stop()
        if self._on_drop is not None:
            self._on_drop(self)


@dataclass(frozen=True, slots=True)
class _Reading:
    as_of: datetime
    size: int
    top: list[dict[str, Any]]
    players: dict[str, tuple[int, int] | None]  # (ordinal rank, composite)
    arounds: dict[tuple[str, int], list[dict[str, Any]]]


def _read(
    season: Season, *, top: int, player_ids: list[str], arounds: list[tuple[str, int]]
) -> _Reading:
    batch = store.read_batch(season.pk, top=top, player_ids=player_ids, arounds=arounds)
    # One profile lookup for every row shown: the top and all the around-me windows.
    rows = [*batch.top, *itertools.chain.from_iterable(batch.arounds)]
    try:
        entries = selectors.standing_entries(season, rows, "ordinal")
    finally:
        # The ticker's thread serves no requests, so no request signal ever retires the
        # database connection a profile lookup opened: do it here.
        close_old_connections()
    windows: dict[tuple[str, int], list[dict[str, Any]]] = {}
    start = len(batch.top)
    for request, window in zip(arounds, batch.arounds, strict=True):
        windows[request] = entries[start : start + len(window)]
        start += len(window)
    return _Reading(
        as_of=timezone.now(),
        size=batch.size,
        top=entries[: len(batch.top)],
        players=dict(zip(player_ids, batch.players, strict=True)),
        arounds=windows,
    )


_read_in_thread = sync_to_async(_read, thread_sensitive=False, executor=_executor)


def next_season_slug(season: Season) -> str | None:
    following = season_next(board=season.board, now=season.ends_at - timedelta(microseconds=1))
    return None if following is None else following.slug


@dataclass(eq=False)
class _Watch:
    """One season's sockets in this process, and what they were told last."""

    season: Season
    subscribers: set[Subscriber] = field(default_factory=set)
    by_top: dict[int, set[Subscriber]] = field(default_factory=dict)
    by_player: dict[str, set[Subscriber]] = field(default_factory=dict)
    joining: list[Subscriber] = field(default_factory=list)
    # Joiners whose snapshot is being read right now.
    welcoming: list[Subscriber] = field(default_factory=list)
    follows: list[tuple[Subscriber, str]] = field(default_factory=list)
    top: list[dict[str, Any]] = field(default_factory=list)
    # (ordinal rank, composite) of each followed player as last told, None when unranked.
    standings: dict[str, tuple[int, int] | None] = field(default_factory=dict)
    dirty: bool = False
    last_full: float = float("-inf")
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None
    # Sockets whose top is older than the current one, those who waited longest first.
    top_waiting: collections.deque[Subscriber] = field(default_factory=collections.deque)
    # When each followed player was last told of their standing.
    told_at: dict[str, float] = field(default_factory=dict)
    # The budget of messages about other players' results (see LIVE_FANOUT_PER_SECOND).
    credit: float = 0.0
    credit_at: float = float("-inf")
    # Followed players the notices since the last tick named (their own score changed), and
    # whether a notice named no one (read every followed player).
    named: set[str] = field(default_factory=set)
    everyone: bool = False
    # Followed players in the order their ranks are looked at for passes, a round at a time.
    rotation: collections.deque[str] = field(default_factory=collections.deque)

    def next_round(self, size: int) -> list[str]:
        """The next `size` followed players to look at for passes (all of them, when fewer)."""
        if size >= len(self.by_player):
            return list(self.by_player)
        if len(self.rotation) > 2 * len(self.by_player):
            # Players unfollowed and followed again left stale places behind.
            self.rotation = collections.deque(dict.fromkeys(self.rotation))
        chosen: list[str] = []
        for _ in range(len(self.rotation)):
            if len(chosen) >= size:
                break
            player_id = self.rotation.popleft()
            if player_id in self.by_player:
                chosen.append(player_id)
                self.rotation.append(player_id)
        return chosen

    @staticmethod
    def budget_full() -> float:
        """What the budget holds at most: a second's worth, and at least one message."""
        return max(1.0, settings.LIVE_FANOUT_PER_SECOND)

    def allowance(self) -> float:
        """The budget's credit now, refilled for the time since it was last asked."""
        now = time.monotonic()
        refill = (now - self.credit_at) * settings.LIVE_FANOUT_PER_SECOND
        self.credit = min(self.budget_full(), self.credit + refill)
        self.credit_at = now
        return self.credit

    def _base(self) -> dict[str, Any]:
        return {"board": self.season.board.slug, "season": self.season.slug}

    def standing_payload(
        self, player_id: str, standing: tuple[int, int] | None, size: int
    ) -> dict[str, Any]:
        """The REST player-rank shape (ordinal ranks); rank and points are null when unranked."""
        rank = points = percentile = None
        if standing is not None:
            rank = standing[0]
            points = points_of(standing[1], lowest_first=self.season.board.lowest_first)
            percentile = selectors.percentile_of(rank, size)
        return {
            "player_id": player_id,
            **self._base(),
            "rank": rank,
            "points": points,
            "total_players": size,
            "percentile": percentile,
        }

    def top_payload(self, reading: _Reading, k: int) -> dict[str, Any]:
        return {
            "type": "top",
            **self._base(),
            "as_of": reading.as_of,
            "total_players": reading.size,
            "entries": reading.top[:k],
        }

    def snapshot_payload(self, reading: _Reading, sub: Subscriber) -> dict[str, Any]:
        player = None
        if sub.player_id is not None:
            player = {
                **self.standing_payload(
                    sub.player_id, reading.players[sub.player_id], reading.size
                ),
                "entries": reading.arounds.get((sub.player_id, sub.around), []),
            }
        return {
            "type": "snapshot",
            **self._base(),
            "as_of": reading.as_of,
            "total_players": reading.size,
            "entries": reading.top[: sub.top],
            "player": player,
        }


class Ticker:
    """The process's one member of the season groups (see the module docstring)."""

    def __init__(self) -> None:
        self._layer = get_channel_layer()
        self._channel: str | None = None
        self._watches: dict[int, _Watch] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._start_lock = asyncio.Lock()
        # Group adds and discards run one at a time, so a season watched again right after it
        # was dropped never ends up outside its group.
        self._membership = asyncio.Lock()

    async def _start(self) -> None:
        async with self._start_lock:
            if self._channel is None:
                self._channel = await self._layer.new_channel("live")
                loop = asyncio.get_running_loop()
                self._tasks = [loop.create_task(self._listen()), loop.create_task(self._refresh())]

    async def subscribe(
        self, sub: Subscriber, *, season: Season, top: int, player_id: str | None, around: int
    ) -> None:
        await self._start()
        sub.season_id, sub.top, sub.around, sub.player_id = season.pk, top, around, player_id
        if player_id is not None:
            sub.players.add(player_id)
        sub._on_drop = self.remove
        watch = self._watches.get(season.pk)
        if watch is None:
            watch = self._watches[season.pk] = _Watch(season=season)
            watch.task = asyncio.get_running_loop().create_task(self._run(watch))
        watch.joining.append(sub)
        watch.wake.set()

    def follow(self, sub: Subscriber, player_id: str) -> None:
        watch = self._watches.get(sub.season_id) if sub.open else None
        if watch is None or player_id in sub.players:
            return
        if len(sub.players) >= MAX_PLAYERS_PER_CONNECTION:
            raise DomainError(
                f"A connection may follow at most {MAX_PLAYERS_PER_CONNECTION} players.",
                code="too_many_subscriptions",
            )
        sub.players.add(player_id)
        watch.follows.append((sub, player_id))
        watch.wake.set()

    def unfollow(self, sub: Subscriber, player_id: str) -> None:
        sub.players.discard(player_id)
        sub.forget(f"player:{player_id}")
        if sub.player_id == player_id:
            sub.player_id = None
        watch = self._watches.get(sub.season_id)
        if watch is not None:
            self._unregister_player(watch, sub, player_id)

    def remove(self, sub: Subscriber) -> None:
        sub.stop()
        watch = self._watches.get(sub.season_id)
        if watch is None:
            return
        for waiting in (watch.joining, watch.welcoming):
            if sub in waiting:
                waiting.remove(sub)
        watch.subscribers.discard(sub)
        by_top = watch.by_top.get(sub.top)
        if by_top is not None:
            by_top.discard(sub)
            if not by_top:
                del watch.by_top[sub.top]
        for player_id in sub.players:
            self._unregister_player(watch, sub, player_id)
        if not watch.subscribers and not watch.joining and not watch.welcoming:
            self._forget(watch)

    def _unregister_player(self, watch: _Watch, sub: Subscriber, player_id: str) -> None:
        followers = watch.by_player.get(player_id)
        if followers is not None:
            followers.discard(sub)
            if not followers:
                del watch.by_player[player_id]
                watch.standings.pop(player_id, None)
                watch.told_at.pop(player_id, None)

    def _forget(self, watch: _Watch) -> None:
        season_id = watch.season.pk
        if self._watches.get(season_id) is watch:
            del self._watches[season_id]
        if watch.task is not None:
            watch.task.cancel()
        self._tasks.append(asyncio.get_running_loop().create_task(self._leave_group(season_id)))

    async def _leave_group(self, season_id: int) -> None:
        try:
            async with self._membership:
                if season_id not in self._watches:
                    await self._layer.group_discard(season_group(season_id), self._channel)
        except Exception:
            logger.warning("live ticker could not leave season %s", season_id, exc_info=True)
        finally:
            self._tasks = [task for task in self._tasks if not task.done()]

    async def _join_group(self, season_id: int) -> None:
        async with self._membership:
            await self._layer.group_add(season_group(season_id), self._channel)

    async def _listen(self) -> None:
        while True:
            try:
                message = await self._layer.receive(self._channel)
            except Exception:
                logger.warning("live ticker lost the channel layer; retrying", exc_info=True)
                await asyncio.sleep(1)
                # Notices may have been lost meanwhile: read every season again.
                self._mark_all_dirty()
                continue
            watch = self._watches.get(message.get("season_id"))
            if watch is None:
                continue
            if message.get("type") == "season.closed":
                self._close_season(watch, message.get("next_season"))
            else:
                players = message.get("players")
                if players is None:
                    watch.everyone = True
                else:
                    watch.named.update(p for p in players if p in watch.by_player)
                watch.dirty = True
                watch.wake.set()

    async def _refresh(self) -> None:
        while True:
            await asyncio.sleep(REFRESH_SECONDS)
            self._mark_all_dirty()
            for season_id in list(self._watches):
                try:
                    await self._join_group(season_id)
                except Exception:
                    logger.warning("live ticker could not renew season %s", season_id)

    def _mark_all_dirty(self) -> None:
        for watch in self._watches.values():
            watch.everyone = True
            watch.dirty = True
            watch.wake.set()

    def _close_season(self, watch: _Watch, next_slug: str | None) -> None:
        body = _encode({"type": "season_closed", **watch._base(), "next_season": next_slug})
        for sub in [*watch.subscribers, *watch.joining, *watch.welcoming]:
            sub.push("season_closed", body, close_code=CLOSE_SEASON_CLOSED)
        self._forget(watch)

    async def _run(self, watch: _Watch) -> None:
        """The season's tick loop: joins at once, changes at most every TICK_SECONDS."""
        while True:
            try:
                await self._join_group(watch.season.pk)
                break
            except Exception:
                logger.warning("live ticker could not join season %s", watch.season.pk)
                await asyncio.sleep(1)
        while True:
            now = time.monotonic()
            due = watch.last_full + TICK_SECONDS
            if watch.joining or watch.follows or (watch.dirty and now >= due):
                try:
                    await self._tick(watch, full=watch.dirty and now >= due)
                except Exception:
                    logger.exception("live tick failed for season %s", watch.season.pk)
                    watch.dirty = True
                    await asyncio.sleep(1)
                continue
            watch.wake.clear()
            if watch.dirty:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(due - now):
                        await watch.wake.wait()
            else:
                await watch.wake.wait()

    async def _tick(self, watch: _Watch, *, full: bool) -> None:
        joining, watch.joining = watch.joining, []
        watch.welcoming = joining
        try:
            await self._tick_for(watch, joining, full=full)
        finally:
            watch.welcoming = []

    async def _tick_for(self, watch: _Watch, joining: list[Subscriber], *, full: bool) -> None:
        follows, watch.follows = watch.follows, []
        if full:
            watch.dirty = False
            watch.last_full = time.monotonic()
        wanted = [sub.player_id for sub in joining if sub.player_id is not None]
        wanted += [player_id for _, player_id in follows]
        checked: list[str] = []
        if full:
            # The players whose own score changed, and as many others as the budget could tell
            # they were passed: the read grows with the budget, not with the sockets.
            named, watch.named = watch.named, set()
            everyone, watch.everyone = watch.everyone, False
            if everyone:
                checked = list(watch.by_player)
            else:
                checked = [*named, *watch.next_round(int(watch.allowance()))]
        player_ids = list(dict.fromkeys([*checked, *wanted]))
        tops = [*watch.by_top, *(sub.top for sub in joining)]
        top = max(tops, default=0) if (full or joining) else 0
        arounds = list(
            dict.fromkeys(
                (sub.player_id, sub.around)
                for sub in joining
                if sub.player_id is not None and sub.around > 0
            )
        )
        try:
            reading = await _read_in_thread(
                watch.season, top=top, player_ids=player_ids, arounds=arounds
            )
        except BaseException:
            watch.joining[:0] = [sub for sub in joining if sub.open]
            watch.follows[:0] = follows
            raise
        # Players first: each of their messages concerns one socket, so a top that goes to
        # every socket of the process never holds them back.
        await self._deliver_players(watch, reading)
        if top > 0:
            await self._deliver_top(watch, reading)
        for sub in joining:
            self._welcome(watch, sub, reading)
        for sub, player_id in follows:
            self._start_following(watch, sub, player_id, reading)

    async def _deliver_top(self, watch: _Watch, reading: _Reading) -> None:
        """Give the sockets whose top changed the new one, as far as the budget goes, those
        that waited longest first; the rest wait for the next tick."""
        if reading.top != watch.top:
            watch.top = reading.top
            watch.top_waiting = collections.deque(
                sorted(
                    (
                        sub
                        for k, subs in watch.by_top.items()
                        for sub in subs
                        if sub.top_told != reading.top[:k]
                    ),
                    key=lambda sub: sub.top_told_at,
                )
            )
        if not watch.top_waiting:
            return
        # Each K's entries and message, made once for all its sockets.
        tops: dict[int, tuple[list[dict[str, Any]], str]] = {}
        now = time.monotonic()
        sent = 0
        budget = int(watch.allowance())
        while watch.top_waiting and sent < budget:
            sub = watch.top_waiting.popleft()
            if not sub.open or sub not in watch.subscribers:
                continue
            if sub.top not in tops:
                tops[sub.top] = (
                    reading.top[: sub.top],
                    _encode(watch.top_payload(reading, sub.top)),
                )
            entries, body = tops[sub.top]
            sub.push("top", body)
            sub.top_told, sub.top_told_at = entries, now
            sent += 1
            if sent % FANOUT_BATCH == 0:
                # Let the sockets served so far write (and other messages go) before more.
                await asyncio.sleep(0)
        watch.credit -= sent
        if watch.top_waiting:
            watch.dirty = True

    async def _deliver_players(self, watch: _Watch, reading: _Reading) -> None:
        """A player's own new score goes at once; a rank that moved because of others is paid
        from the budget, the players told longest ago first."""
        pushed = 0
        standings, told_at = watch.standings, watch.told_at
        now = time.monotonic()
        passed: list[tuple[float, str]] = []
        for player_id, standing in reading.players.items():
            # Tuples compare in C: the whole loop stays cheap at ten thousand players.
            if player_id not in standings or standings[player_id] == standing:
                continue
            told = standings[player_id]
            # Only the rank moved: the composite (the player's own score) is the same.
            if told is not None and standing is not None and told[1] == standing[1]:
                passed.append((told_at.get(player_id, float("-inf")), player_id))
                continue
            pushed += await self._tell(watch, reading, player_id, now, pushed)
        if not passed:
            return
        passed.sort()
        budget = watch.allowance()
        full = watch.budget_full()
        spent = 0
        for _, player_id in passed:
            followers = len(watch.by_player.get(player_id, ()))
            # The first player of a tick may overdraw a full enough budget (a player followed by
            # more sockets than a second's worth would wait forever otherwise).
            if spent + followers > budget and (spent > 0 or budget < min(followers, full)):
                watch.dirty = True
                break
            spent += await self._tell(watch, reading, player_id, now, pushed + spent)
        watch.credit -= spent

    async def _tell(
        self, watch: _Watch, reading: _Reading, player_id: str, now: float, pushed: int
    ) -> int:
        """Push a player's standing to their followers; returns how many messages that was."""
        standing = reading.players[player_id]
        watch.standings[player_id] = standing
        watch.told_at[player_id] = now
        body = _encode(
            {"type": "player", **watch.standing_payload(player_id, standing, reading.size)}
        )
        count = 0
        for sub in list(watch.by_player.get(player_id, ())):
            sub.push(f"player:{player_id}", body)
            count += 1
            if (pushed + count) % FANOUT_BATCH == 0:
                await asyncio.sleep(0)
        return count

    def _welcome(self, watch: _Watch, sub: Subscriber, reading: _Reading) -> None:
        """Send the snapshot, then count the socket in for every later change."""
        if not sub.open:
            return
        sub.push("snapshot", _encode(watch.snapshot_payload(reading, sub)))
        sub.top_told, sub.top_told_at = reading.top[: sub.top], time.monotonic()
        watch.subscribers.add(sub)
        if sub.top > 0:
            watch.by_top.setdefault(sub.top, set()).add(sub)
        if sub.player_id is not None:
            self._register_player(watch, sub, sub.player_id, reading)

    def _start_following(
        self, watch: _Watch, sub: Subscriber, player_id: str, reading: _Reading
    ) -> None:
        if not sub.open or sub not in watch.subscribers or player_id not in sub.players:
            return
        self._register_player(watch, sub, player_id, reading)
        sub.push(
            f"player:{player_id}",
            _encode(
                {
                    "type": "player",
                    **watch.standing_payload(player_id, reading.players[player_id], reading.size),
                }
            ),
        )

    def _register_player(
        self, watch: _Watch, sub: Subscriber, player_id: str, reading: _Reading
    ) -> None:
        if player_id not in watch.by_player:
            watch.rotation.append(player_id)
        watch.by_player.setdefault(player_id, set()).add(sub)
        watch.standings[player_id] = reading.players[player_id]


_tickers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Ticker] = weakref.WeakKeyDictionary()


def ticker() -> Ticker:
    """This process's ticker (one per event loop: uvicorn runs one loop per process)."""
    loop = asyncio.get_running_loop()
    found = _tickers.get(loop)
    if found is None:
        found = _tickers[loop] = Ticker()
    return found


async def subscribe(
    sub: Subscriber, *, season: Season, top: int, player_id: str | None, around: int
) -> None:
    """Start a socket's stream: a snapshot first, then changes. A closed season only says so."""
    if season.state == SeasonState.CLOSED:
        next_slug = await database_sync_to_async(next_season_slug)(season)
        sub.push(
            "season_closed",
            _encode(
                {
                    "type": "season_closed",
                    "board": season.board.slug,
                    "season": season.slug,
                    "next_season": next_slug,
                }
            ),
            close_code=CLOSE_SEASON_CLOSED,
        )
        return
    await ticker().subscribe(sub, season=season, top=top, player_id=player_id, around=around)


def follow(sub: Subscriber, player_id: str) -> None:
    ticker().follow(sub, player_id)


def unfollow(sub: Subscriber, player_id: str) -> None:
    ticker().unfollow(sub, player_id)


def unsubscribe(sub: Subscriber) -> None:
    ticker().remove(sub)


def standings_changed(
    season_ids: Iterable[int], players: Mapping[int, Collection[str]] | None = None
) -> None:
    """Tell every web process that these seasons' standings moved (the mirror calls this),
    naming the players whose own standings it wrote when `players` has them: a ticker reads
    those at once and the other followed players only as its budget allows. A season without
    named players (a rebuild, an unban) has every followed player read again.

    Best effort: a lost notice delays pushes until the next notice or the tickers' refresh, and
    never fails the mirror.
    """
    messages = []
    for season_id in sorted(set(season_ids)):
        notice: dict[str, Any] = {"type": "season.changed", "season_id": season_id}
        named = (players or {}).get(season_id)
        if named is not None and len(named) <= NOTICE_PLAYERS:
            notice["players"] = sorted(named)
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
