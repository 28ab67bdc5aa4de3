"""Sockets following the season's clan board (`clans=K`): its top K clans when they join, and
again whenever that top changed (a member's score moved its clan, a clan entered or left it).

Every notice of the season may move a clan, so each tick that reads changes reads the clan
board's top once, for the largest K its sockets follow, in a thread beside the tick's own read;
each socket is told only when its own top K changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from asgiref.sync import sync_to_async

from seasons.models import Season

from .. import clans
from .messages import encode
from .outbox import Subscriber
from .reading import ticker_read
from .season_sockets import SeasonSockets

_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="live-clans")


def board_read(season: Season, limit: int) -> dict[str, Any]:
    with ticker_read(season):
        return clans.clans_top(season=season, limit=limit)


board_read_in_thread = sync_to_async(board_read, thread_sensitive=False, executor=_executor)


def watch(sockets: SeasonSockets, sub: Subscriber) -> None:
    if sub.clans > 0:
        sockets.clan_followers.add(sub)


def unwatch(sockets: SeasonSockets, sub: Subscriber) -> None:
    sockets.clan_followers.discard(sub)


async def board_deliver(
    sockets: SeasonSockets, newcomers: Sequence[Subscriber], *, read_changes: bool
) -> None:
    """Send the joiners their clan board, and the others theirs when it changed."""
    joining = [sub for sub in newcomers if sub.open and sub.clans > 0]
    for sub in joining:
        watch(sockets, sub)
    told = [sub for sub in sockets.clan_followers if sub.open]
    subs = told if read_changes else joining
    if not subs:
        return
    board = await board_read_in_thread(sockets.season, max(sub.clans for sub in subs))
    for sub in subs:
        entries = board["entries"][: sub.clans]
        order = [(e["clan_id"], e["points"], e["name"]) for e in entries]
        if order == sub.clans_told:
            continue
        sub.clans_told = order
        sub.push("clans", encode({"type": "clans", **board, "entries": entries}))
