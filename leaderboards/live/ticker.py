"""Each web process's ticker: its one member of the season groups, turning "season N changed"
notices into the few messages its open sockets need.

At most once per TICK_SECONDS per season it reads the top K and the ranks of the players its
sockets follow in one Redis round trip (reading.py), compares them with what it told the sockets
last (season_sockets.py), and hands each socket only what changed, into its outbox (outbox.py).
A player's own new score goes at the next tick; what follows from other players' results is paid
from the fan-out budget (budget.py).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import time
import weakref
from typing import Any

from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from redis.exceptions import RedisError

from config.errors import DomainError, NotFound
from seasons.models import Season, SeasonState
from seasons.selectors import seasons_of_hidden_boards

from . import messages
from .messages import encode
from .notices import season_group
from .outbox import CLOSE_SEASON_CLOSED, Subscriber
from .reading import TickReading, read_for_tick_in_thread
from .season_sockets import SeasonSockets

logger = logging.getLogger(__name__)

# A season's standings are read at most this often while changes keep arriving.
TICK_SECONDS = 0.2
# Every season is read again this often even without a notice (notices are best effort), and
# the ticker renews its group memberships (the channel layer expires them).
REFRESH_SECONDS = 15.0
# Messages queued between two chances for the sockets to write them, in a large broadcast.
FANOUT_BATCH = 500
# Players one socket may follow, the one named in its URL included.
MAX_PLAYERS_PER_CONNECTION = 20


class Ticker:
    """The process's one member of the season groups (see the module docstring)."""

    def __init__(self) -> None:
        self._layer = get_channel_layer()
        self._channel: str | None = None
        self._seasons: dict[int, SeasonSockets] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._start_lock = asyncio.Lock()
        # Group adds and discards run one at a time, so a season watched again right after it
        # was dropped never ends up outside its group.
        self._membership_lock = asyncio.Lock()

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
        sub.on_drop = self.remove
        sockets = self._seasons.get(season.pk)
        if sockets is None:
            sockets = self._seasons[season.pk] = SeasonSockets(season=season)
            sockets.tick_loop = asyncio.get_running_loop().create_task(self._tick_loop(sockets))
        sockets.awaiting_snapshot.append(sub)
        sockets.wake.set()

    def follow(self, sub: Subscriber, player_id: str) -> None:
        sockets = self._seasons.get(sub.season_id) if sub.open else None
        if sockets is None or player_id in sub.players:
            return
        if len(sub.players) >= MAX_PLAYERS_PER_CONNECTION:
            raise DomainError(
                f"A connection may follow at most {MAX_PLAYERS_PER_CONNECTION} players.",
                code="too_many_subscriptions",
            )
        sub.players.add(player_id)
        sockets.new_follows.append((sub, player_id))
        sockets.wake.set()

    def unfollow(self, sub: Subscriber, player_id: str) -> None:
        sub.players.discard(player_id)
        sub.forget(f"player:{player_id}")
        if sub.player_id == player_id:
            sub.player_id = None
        sockets = self._seasons.get(sub.season_id)
        if sockets is not None:
            self._remove_follower(sockets, sub, player_id)

    def remove(self, sub: Subscriber) -> None:
        sub.stop()
        sockets = self._seasons.get(sub.season_id)
        if sockets is None:
            return
        for waiting in (sockets.awaiting_snapshot, sockets.snapshot_being_read):
            if sub in waiting:
                waiting.remove(sub)
        sockets.subscribers.discard(sub)
        top_followers = sockets.top_followers.get(sub.top)
        if top_followers is not None:
            top_followers.discard(sub)
            if not top_followers:
                del sockets.top_followers[sub.top]
        for player_id in sub.players:
            self._remove_follower(sockets, sub, player_id)
        if (
            not sockets.subscribers
            and not sockets.awaiting_snapshot
            and not sockets.snapshot_being_read
        ):
            self._stop_watching(sockets)

    def _remove_follower(self, sockets: SeasonSockets, sub: Subscriber, player_id: str) -> None:
        followers = sockets.player_followers.get(player_id)
        if followers is not None:
            followers.discard(sub)
            if not followers:
                del sockets.player_followers[player_id]
                sockets.standings_told.pop(player_id, None)
                sockets.player_told_at.pop(player_id, None)

    def _stop_watching(self, sockets: SeasonSockets) -> None:
        season_id = sockets.season.pk
        if self._seasons.get(season_id) is sockets:
            del self._seasons[season_id]
        if sockets.tick_loop is not None:
            sockets.tick_loop.cancel()
        self._tasks.append(asyncio.get_running_loop().create_task(self._leave_group(season_id)))

    async def _leave_group(self, season_id: int) -> None:
        try:
            async with self._membership_lock:
                if season_id not in self._seasons:
                    await self._layer.group_discard(season_group(season_id), self._channel)
        except Exception:
            logger.warning("live ticker could not leave season %s", season_id, exc_info=True)
        finally:
            self._tasks = [task for task in self._tasks if not task.done()]

    async def _join_group(self, season_id: int) -> None:
        async with self._membership_lock:
            await self._layer.group_add(season_group(season_id), self._channel)

    async def _listen(self) -> None:
        while True:
            try:
                notice = await self._layer.receive(self._channel)
            except Exception:
                logger.warning("live ticker lost the channel layer; retrying", exc_info=True)
                await asyncio.sleep(1)
                # Notices may have been lost meanwhile: read every season again.
                self._read_everything_again()
                continue
            sockets = self._seasons.get(notice.get("season_id"))
            if sockets is None:
                continue
            if notice.get("type") == "season.closed":
                self._close_season(sockets, notice.get("next_season"))
            elif notice.get("type") == "board.hidden":
                self._close_hidden(sockets)
            else:
                players = notice.get("players")
                if players is None:
                    sockets.every_player_named = True
                else:
                    sockets.players_named.update(
                        p for p in players if p in sockets.player_followers
                    )
                sockets.changed = True
                sockets.wake.set()

    async def _refresh(self) -> None:
        while True:
            await asyncio.sleep(REFRESH_SECONDS)
            await self._close_hidden_boards()
            self._read_everything_again()
            for season_id in list(self._seasons):
                try:
                    await self._join_group(season_id)
                except Exception:
                    logger.warning("live ticker could not renew season %s", season_id)

    def _read_everything_again(self) -> None:
        for sockets in self._seasons.values():
            sockets.every_player_named = True
            sockets.changed = True
            sockets.wake.set()

    def _close_season(self, sockets: SeasonSockets, next_slug: str | None) -> None:
        body = encode(messages.season_closed_message(sockets.season, next_slug))
        for sub in [
            *sockets.subscribers,
            *sockets.awaiting_snapshot,
            *sockets.snapshot_being_read,
        ]:
            sub.push("season_closed", body, close_code=CLOSE_SEASON_CLOSED)
        self._stop_watching(sockets)

    async def _close_hidden_boards(self) -> None:
        """Close the sockets of seasons whose board is hidden: those that missed the hide's
        notice (the channel layer down, or a socket that joined from a season looked up just
        before the hide, within LEADERBOARD_SEASON_CACHE_SECONDS)."""
        if not self._seasons:
            return
        try:
            hidden = await database_sync_to_async(seasons_of_hidden_boards)(
                season_ids=list(self._seasons)
            )
        except Exception:
            logger.warning("live ticker could not check for hidden boards", exc_info=True)
            return
        for season_id in hidden:
            sockets = self._seasons.get(season_id)
            if sockets is not None:
                self._close_hidden(sockets)

    def _close_hidden(self, sockets: SeasonSockets) -> None:
        """The board was hidden: each socket gets what a new subscription would, an unknown
        board's error, and is closed with 4404."""
        slug = sockets.season.board.slug
        for sub in [
            *sockets.subscribers,
            *sockets.awaiting_snapshot,
            *sockets.snapshot_being_read,
        ]:
            sub.reject(NotFound(f"Unknown board '{slug}'.", code="board_not_found"))
        self._stop_watching(sockets)

    async def _tick_loop(self, sockets: SeasonSockets) -> None:
        """The season's tick loop: joins at once, changes at most every TICK_SECONDS."""
        while True:
            try:
                await self._join_group(sockets.season.pk)
                break
            except Exception:
                logger.warning("live ticker could not join season %s", sockets.season.pk)
                await asyncio.sleep(1)
        while True:
            now = time.monotonic()
            due = sockets.last_changes_read_at + TICK_SECONDS
            if sockets.awaiting_snapshot or sockets.new_follows or (sockets.changed and now >= due):
                try:
                    await self._tick(sockets, read_changes=sockets.changed and now >= due)
                except RedisError as exc:
                    # Redis away, or the season's standings lost with it: no push until they
                    # are back (the REST reads answer 503 meanwhile).
                    logger.warning("live tick failed for season %s: %s", sockets.season.pk, exc)
                    sockets.changed = True
                    await asyncio.sleep(1)
                except Exception:
                    logger.exception("live tick failed for season %s", sockets.season.pk)
                    sockets.changed = True
                    await asyncio.sleep(1)
                continue
            sockets.wake.clear()
            if sockets.changed:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(due - now):
                        await sockets.wake.wait()
            else:
                await sockets.wake.wait()

    async def _tick(self, sockets: SeasonSockets, *, read_changes: bool) -> None:
        newcomers, sockets.awaiting_snapshot = sockets.awaiting_snapshot, []
        sockets.snapshot_being_read = newcomers
        try:
            await self._read_and_deliver(sockets, newcomers, read_changes=read_changes)
        finally:
            sockets.snapshot_being_read = []

    async def _read_and_deliver(
        self, sockets: SeasonSockets, newcomers: list[Subscriber], *, read_changes: bool
    ) -> None:
        """One read for the joiners' snapshots, the new follows' first standings and, when
        `read_changes`, what changed since the last such read; then the messages from it."""
        follows, sockets.new_follows = sockets.new_follows, []
        if read_changes:
            sockets.changed = False
            sockets.last_changes_read_at = time.monotonic()
        wanted = [sub.player_id for sub in newcomers if sub.player_id is not None]
        wanted += [player_id for _, player_id in follows]
        checked: list[str] = []
        if read_changes:
            # The players whose own score changed, and as many others as the budget could tell
            # they were passed: the read grows with the budget, not with the sockets.
            named, sockets.players_named = sockets.players_named, set()
            every_player, sockets.every_player_named = sockets.every_player_named, False
            if every_player:
                checked = list(sockets.player_followers)
            else:
                checked = [*named, *sockets.players_to_check(int(sockets.budget.available()))]
        player_ids = list(dict.fromkeys([*checked, *wanted]))
        tops = [*sockets.top_followers, *(sub.top for sub in newcomers)]
        top = max(tops, default=0) if (read_changes or newcomers) else 0
        arounds = list(
            dict.fromkeys(
                (sub.player_id, sub.around)
                for sub in newcomers
                if sub.player_id is not None and sub.around > 0
            )
        )
        try:
            reading = await read_for_tick_in_thread(
                sockets.season, top=top, player_ids=player_ids, arounds=arounds
            )
        except BaseException:
            sockets.awaiting_snapshot[:0] = [sub for sub in newcomers if sub.open]
            sockets.new_follows[:0] = follows
            raise
        # Players first: each of their messages concerns one socket, so a top that goes to
        # every socket of the process never holds them back.
        await self._deliver_players(sockets, reading)
        if top > 0:
            await self._deliver_top(sockets, reading)
        for sub in newcomers:
            self._send_snapshot(sockets, sub, reading)
        for sub, player_id in follows:
            self._start_following(sockets, sub, player_id, reading)

    async def _deliver_top(self, sockets: SeasonSockets, reading: TickReading) -> None:
        """Give the sockets whose top changed the new one, as far as the budget goes, those
        that waited longest first; the rest wait for the next tick."""
        if reading.top != sockets.latest_top:
            sockets.latest_top = reading.top
            sockets.top_waiting = collections.deque(
                sorted(
                    (
                        sub
                        for k, subs in sockets.top_followers.items()
                        for sub in subs
                        if sub.top_told != reading.top[:k]
                    ),
                    key=lambda sub: sub.top_told_at,
                )
            )
        if not sockets.top_waiting:
            return
        # Each K's entries and message, made once for all its sockets.
        tops: dict[int, tuple[list[dict[str, Any]], str]] = {}
        now = time.monotonic()
        sent = 0
        budget = int(sockets.budget.available())
        while sockets.top_waiting and sent < budget:
            sub = sockets.top_waiting.popleft()
            if not sub.open or sub not in sockets.subscribers:
                continue
            if sub.top not in tops:
                tops[sub.top] = (
                    reading.top[: sub.top],
                    encode(messages.top_message(sockets.season, reading, sub.top)),
                )
            entries, body = tops[sub.top]
            sub.push("top", body)
            sub.top_told, sub.top_told_at = entries, now
            sent += 1
            if sent % FANOUT_BATCH == 0:
                # Let the sockets served so far write (and other messages go) before more.
                await asyncio.sleep(0)
        sockets.budget.spend(sent)
        if sockets.top_waiting:
            sockets.changed = True

    async def _deliver_players(self, sockets: SeasonSockets, reading: TickReading) -> None:
        """A player's own new score goes at once; a rank that moved because of others is paid
        from the budget, the players told longest ago first."""
        pushed = 0
        standings_told, player_told_at = sockets.standings_told, sockets.player_told_at
        now = time.monotonic()
        passed: list[tuple[float, str]] = []
        for player_id, standing in reading.standings.items():
            # Tuples compare in C: the whole loop stays cheap at ten thousand players.
            if player_id not in standings_told or standings_told[player_id] == standing:
                continue
            told = standings_told[player_id]
            # Only the rank moved: the composite (the player's own score) is the same.
            if told is not None and standing is not None and told[1] == standing[1]:
                passed.append((player_told_at.get(player_id, float("-inf")), player_id))
                continue
            pushed += await self._push_standing(sockets, reading, player_id, now, pushed)
        if not passed:
            return
        passed.sort()
        budget = sockets.budget.available()
        capacity = sockets.budget.capacity()
        spent = 0
        for _, player_id in passed:
            followers = len(sockets.player_followers.get(player_id, ()))
            # The first player of a tick may overdraw a full enough budget (a player followed by
            # more sockets than a second's worth would wait forever otherwise).
            if spent + followers > budget and (spent > 0 or budget < min(followers, capacity)):
                sockets.changed = True
                break
            spent += await self._push_standing(sockets, reading, player_id, now, pushed + spent)
        sockets.budget.spend(spent)

    async def _push_standing(
        self, sockets: SeasonSockets, reading: TickReading, player_id: str, now: float, pushed: int
    ) -> int:
        """Push a player's standing to their followers; returns how many messages that was."""
        standing = reading.standings[player_id]
        sockets.standings_told[player_id] = standing
        sockets.player_told_at[player_id] = now
        body = encode(
            messages.player_message(sockets.season, player_id, standing, reading.total_players)
        )
        count = 0
        for sub in list(sockets.player_followers.get(player_id, ())):
            sub.push(f"player:{player_id}", body)
            count += 1
            if (pushed + count) % FANOUT_BATCH == 0:
                await asyncio.sleep(0)
        return count

    def _send_snapshot(self, sockets: SeasonSockets, sub: Subscriber, reading: TickReading) -> None:
        """Send the snapshot, then count the socket in for every later change."""
        if not sub.open:
            return
        sub.push(
            "snapshot",
            encode(
                messages.snapshot_message(
                    sockets.season,
                    reading,
                    top=sub.top,
                    player_id=sub.player_id,
                    around=sub.around,
                )
            ),
        )
        sub.top_told, sub.top_told_at = reading.top[: sub.top], time.monotonic()
        sockets.subscribers.add(sub)
        if sub.top > 0:
            sockets.top_followers.setdefault(sub.top, set()).add(sub)
        if sub.player_id is not None:
            self._add_follower(sockets, sub, sub.player_id, reading)

    def _start_following(
        self, sockets: SeasonSockets, sub: Subscriber, player_id: str, reading: TickReading
    ) -> None:
        if not sub.open or sub not in sockets.subscribers or player_id not in sub.players:
            return
        self._add_follower(sockets, sub, player_id, reading)
        sub.push(
            f"player:{player_id}",
            encode(
                messages.player_message(
                    sockets.season, player_id, reading.standings[player_id], reading.total_players
                )
            ),
        )

    def _add_follower(
        self, sockets: SeasonSockets, sub: Subscriber, player_id: str, reading: TickReading
    ) -> None:
        if player_id not in sockets.player_followers:
            sockets.pass_check_rotation.append(player_id)
        sockets.player_followers.setdefault(player_id, set()).add(sub)
        sockets.standings_told[player_id] = reading.standings[player_id]


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
        next_slug = await database_sync_to_async(messages.next_season_slug)(season)
        sub.push(
            "season_closed",
            encode(messages.season_closed_message(season, next_slug)),
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
