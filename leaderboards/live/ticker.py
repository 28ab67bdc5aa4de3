"""Each web process's ticker: its one member of the season groups, turning "season N changed"
notices into the few messages its open sockets need.

At most once per TICK_SECONDS per season it reads the top K and the ranks of the players its
sockets follow in one Redis round trip (reading.py), compares them with what it told the sockets
last (season_sockets.py), and hands each socket only what changed, into its outbox (outbox.py;
what each socket is told: delivery.py). A player's own new score goes at the next tick; what
follows from other players' results is paid from the fan-out budget (budget.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import weakref
from typing import Any

from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from redis.exceptions import RedisError

from config.building_blocks.errors import DomainError, NotFound
from seasons.models import Season, SeasonState
from seasons.selectors import seasons_of_hidden_boards

from . import clan_board, delivery, friends, messages, rank_events
from .messages import encode
from .notices import season_group
from .outbox import CLOSE_SEASON_CLOSED, Subscriber
from .reading import read_for_tick_in_thread
from .season_sockets import SeasonSockets

logger = logging.getLogger(__name__)

# A season's standings are read at most this often while changes keep arriving.
TICK_SECONDS = 0.2
# Every season is read again this often even without a notice (notices are best effort), and
# the ticker renews its group memberships (the channel layer expires them).
REFRESH_SECONDS = 15.0
# Players one socket may follow, the one named in its URL included.
MAX_PLAYERS_PER_CONNECTION = 20


class Ticker:
    """The process's one member of the season groups (see the module docstring)."""

    def __init__(self) -> None:
        self._layer = get_channel_layer()
        self._channel: str | None = None
        # By season and segment (None: the whole board): each segment is a board of its own to
        # its sockets, read in its own tick; notices name the season, so they wake all of them.
        self._seasons: dict[tuple[int, str | None], SeasonSockets] = {}
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
        self,
        sub: Subscriber,
        *,
        season: Season,
        top: int,
        player_id: str | None,
        around: int,
        friends_of: str | None = None,
        friends_members: list[str] | None = None,
        segment: str | None = None,
        clans: int = 0,
    ) -> None:
        await self._start()
        sub.season_id, sub.top, sub.around, sub.player_id = season.pk, top, around, player_id
        sub.segment, sub.clans = segment, clans
        sub.friends_of, sub.friends_members = friends_of, list(friends_members or ())
        if player_id is not None:
            sub.players.add(player_id)
        sub.on_drop = self.remove
        sockets = self._seasons.get((season.pk, segment))
        if sockets is None:
            sockets = self._seasons[(season.pk, segment)] = SeasonSockets(
                season=season, segment=segment
            )
            sockets.tick_loop = asyncio.get_running_loop().create_task(self._tick_loop(sockets))
        sockets.awaiting_snapshot.append(sub)
        sockets.wake.set()

    def follow(self, sub: Subscriber, player_id: str) -> None:
        sockets = self._view_of(sub) if sub.open else None
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
        sockets = self._view_of(sub)
        if sockets is not None:
            self._remove_follower(sockets, sub, player_id)

    def remove(self, sub: Subscriber) -> None:
        sub.stop()
        sockets = self._view_of(sub)
        if sockets is None:
            return
        for waiting in (sockets.awaiting_snapshot, sockets.snapshot_being_read):
            if sub in waiting:
                waiting.remove(sub)
        sockets.subscribers.discard(sub)
        friends.unwatch(sockets, sub)
        clan_board.unwatch(sockets, sub)
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

    def _view_of(self, sub: Subscriber) -> SeasonSockets | None:
        if sub.season_id is None:
            return None
        return self._seasons.get((sub.season_id, sub.segment))

    def _views_of(self, season_id: object) -> list[SeasonSockets]:
        """The sockets of every segment (and of the whole board) of a season."""
        return [sockets for (season, _), sockets in self._seasons.items() if season == season_id]

    def _season_ids(self) -> list[int]:
        return sorted({season_id for season_id, _ in self._seasons})

    def _remove_follower(self, sockets: SeasonSockets, sub: Subscriber, player_id: str) -> None:
        followers = sockets.player_followers.get(player_id)
        if followers is not None:
            followers.discard(sub)
            if not followers:
                del sockets.player_followers[player_id]
                sockets.standing_forget(player_id)
                sockets.player_told_at.pop(player_id, None)
                rank_events.passes_forget(sockets, player_id)
                sockets.tiers_told.pop(player_id, None)

    def _stop_watching(self, sockets: SeasonSockets) -> None:
        season_id = sockets.season.pk
        if self._seasons.get((season_id, sockets.segment)) is sockets:
            del self._seasons[(season_id, sockets.segment)]
        if sockets.tick_loop is not None:
            sockets.tick_loop.cancel()
        self._tasks.append(asyncio.get_running_loop().create_task(self._leave_group(season_id)))

    async def _leave_group(self, season_id: int) -> None:
        try:
            async with self._membership_lock:
                if season_id not in self._season_ids():
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
            for sockets in self._views_of(notice.get("season_id")):
                self._notice_handle(sockets, notice)

    def _notice_handle(self, sockets: SeasonSockets, notice: dict[str, Any]) -> None:
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
                    p for p in players if p in sockets.player_followers or p in sockets.friend_views
                )
            if notice.get("moves") and sockets.player_followers:
                rank_events.moves_note(sockets, [tuple(move) for move in notice["moves"]])
            sockets.changed = True
            sockets.wake.set()

    async def _refresh(self) -> None:
        while True:
            await asyncio.sleep(REFRESH_SECONDS)
            await self._close_hidden_boards()
            self._read_everything_again()
            for season_id in self._season_ids():
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
                season_ids=self._season_ids()
            )
        except Exception:
            logger.warning("live ticker could not check for hidden boards", exc_info=True)
            return
        for season_id in hidden:
            for sockets in self._views_of(season_id):
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
        # A joining friends view's members, so a change right after its first view is seen.
        wanted += [member for sub in newcomers for member in sub.friends_members]
        checked: list[str] = []
        to_name: list[str] = []
        if read_changes:
            # The players whose own score changed, and as many others as the budget could tell
            # they were passed: the read grows with the budget, not with the sockets.
            named, sockets.players_named = sockets.players_named, set()
            every_player, sockets.every_player_named = sockets.every_player_named, False
            # Who the moves since the last tick passed; as many of the passed players as the
            # budget could tell are read, with the nearest of those who passed them.
            rank_events.passes_find(sockets)
            tellable = int(sockets.budget.available())
            passed = rank_events.passed_to_read(sockets, tellable)
            # Who passed them is read only for those the budget can tell of it: a passed
            # player's news is two messages, their rank and `overtaken`.
            to_name = [*named, *passed[: (tellable + 1) // 2]]
            if every_player:
                checked = [*sockets.player_followers, *sockets.friend_views]
            else:
                checked = [*named, *passed, *sockets.players_to_check(tellable)]
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
        rules_due = time.monotonic() >= sockets.rules_read_at + REFRESH_SECONDS
        try:
            reading = await read_for_tick_in_thread(
                sockets.season,
                top=top,
                player_ids=player_ids,
                arounds=arounds,
                segment=sockets.segment,
                named=rank_events.passers_to_read(sockets, to_name) if read_changes else None,
                rules=rules_due,
            )
        except BaseException:
            sockets.awaiting_snapshot[:0] = [sub for sub in newcomers if sub.open]
            sockets.new_follows[:0] = follows
            raise
        if rules_due:
            sockets.rules_read_at = time.monotonic()
        # Players first: each of their messages concerns one socket, so a top that goes to
        # every socket of the process never holds them back.
        await delivery.players_deliver(sockets, reading)
        if sockets.passed_since:
            # Passed players the budget could not read or tell yet: the next tick goes on with
            # them, notice or not.
            sockets.changed = True
        if top > 0:
            await delivery.top_deliver(sockets, reading)
        for sub in newcomers:
            delivery.snapshot_send(sockets, sub, reading)
        for sub, player_id in follows:
            delivery.following_start(sockets, sub, player_id, reading)
        joined = [sub for sub in newcomers if sub.friends_of is not None and sub.open]
        for sub in joined:
            friends.watch(sockets, sub)
        # The joiners' members were read too: their composites now are what later ones compare to.
        changed = friends.views_changed(sockets, reading)
        first = list(sockets.friends_unsent)
        await friends.views_deliver(sockets, first, first=True)
        await friends.views_deliver(sockets, [sub for sub in changed if sub not in first])
        await clan_board.board_deliver(sockets, newcomers, read_changes=read_changes)


_tickers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Ticker] = weakref.WeakKeyDictionary()


def ticker() -> Ticker:
    """This process's ticker (one per event loop: uvicorn runs one loop per process)."""
    loop = asyncio.get_running_loop()
    found = _tickers.get(loop)
    if found is None:
        found = _tickers[loop] = Ticker()
    return found


async def subscribe(
    sub: Subscriber,
    *,
    season: Season,
    top: int,
    player_id: str | None,
    around: int,
    friends_of: str | None = None,
    friends_members: list[str] | None = None,
    segment: str | None = None,
    clans: int = 0,
) -> None:
    """Start a socket's stream: a snapshot first, then changes (within `segment`, if given; the
    clan board's top `clans` too, if any). A closed season only says so."""
    if season.state == SeasonState.CLOSED:
        next_slug = await database_sync_to_async(messages.next_season_slug)(season)
        sub.push(
            "season_closed",
            encode(messages.season_closed_message(season, next_slug)),
            close_code=CLOSE_SEASON_CLOSED,
        )
        return
    await ticker().subscribe(
        sub,
        season=season,
        top=top,
        player_id=player_id,
        around=around,
        friends_of=friends_of,
        friends_members=friends_members,
        segment=segment,
        clans=clans,
    )


def follow(sub: Subscriber, player_id: str) -> None:
    ticker().follow(sub, player_id)


def unfollow(sub: Subscriber, player_id: str) -> None:
    ticker().unfollow(sub, player_id)


def unsubscribe(sub: Subscriber) -> None:
    ticker().remove(sub)
