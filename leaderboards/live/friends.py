"""Sockets following a player's friends view (`friends_of=`): the view when they join, again
whenever a member's own score changed, and "X passed you" when a friend moved from below the
player to above.

The ticker reads the members' standings with the followed players' (a notice names whose score
changed); a view some member of which changed is read again whole, in the ticker's thread (its
global ranks fresh), once per player followed, however many sockets follow it.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from asgiref.sync import sync_to_async

from seasons.models import Season

from .. import friends
from .messages import encode
from .outbox import Subscriber
from .reading import TickReading, ticker_read
from .season_sockets import SeasonSockets

# The views' reads run beside the tick's own, never behind request handlers.
_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="live-friends")


def views_read(season: Season, views: dict[str, list[str]]) -> dict[str, dict[str, Any]]:
    """Each followed player's view of `season`, by player (`views`: player -> members)."""
    with ticker_read(season):
        return {
            player_id: friends.members_view(season, player_id, members)
            for player_id, members in views.items()
        }


views_read_in_thread = sync_to_async(views_read, thread_sensitive=False, executor=_executor)


def watch(sockets: SeasonSockets, sub: Subscriber) -> None:
    """Count the socket's view in: its members' score changes now wake it."""
    for member in sub.friends_members:
        sockets.friend_views.setdefault(member, set()).add(sub)
    sockets.friends_unsent.add(sub)


def unwatch(sockets: SeasonSockets, sub: Subscriber) -> None:
    sockets.friends_unsent.discard(sub)
    for member in sub.friends_members:
        subs = sockets.friend_views.get(member)
        if subs is not None:
            subs.discard(sub)
            if not subs:
                del sockets.friend_views[member]
                sockets.friend_composites.pop(member, None)


def views_changed(sockets: SeasonSockets, reading: TickReading) -> set[Subscriber]:
    """The sockets whose view a member's own new score changed in this reading."""
    changed: set[Subscriber] = set()
    for member, subs in sockets.friend_views.items():
        if member not in reading.standings:
            continue
        standing = reading.standings[member]
        composite = None if standing is None else standing[1]
        if sockets.friend_composites.get(member, composite) != composite:
            changed.update(subs)
        sockets.friend_composites[member] = composite
    return changed


async def views_deliver(
    sockets: SeasonSockets, subs: Sequence[Subscriber], *, first: bool = False
) -> None:
    """Read the views of `subs` again and send each socket its view if it changed (always when
    `first`), with a `friend_passed` message per friend who passed its player."""
    subs = [sub for sub in subs if sub.open and sub.friends_of is not None]
    wanted = {sub.friends_of: sub.friends_members for sub in subs if sub.friends_of}
    if not wanted:
        return
    views = await views_read_in_thread(sockets.season, wanted)
    for sub in subs:
        view = views[sub.friends_of]
        order = [(entry["player_id"], entry["points"]) for entry in view["entries"]]
        if not first and order == sub.friends_told:
            continue
        if sub.friends_told is not None:
            for passed in passes(sub.friends_of, sub.friends_told, view):
                sub.push(f"friend_passed:{passed['friend']['player_id']}", encode(passed))
        sub.friends_told = order
        sub.push("friends", encode({"type": "friends", **view}))
        sockets.friends_unsent.discard(sub)


def passes(
    player_id: str, told: list[tuple[str, int]], view: dict[str, Any]
) -> list[dict[str, Any]]:
    """A `friend_passed` message for each friend above the player now who was below them (or
    had no score) when last told; none unless the player had a score then and has now."""
    entries = view["entries"]
    mine = next((e for e in entries if e["player_id"] == player_id), None)
    told_order = [member for member, _ in told]
    if mine is None or player_id not in told_order:
        return []
    was_below = set(told_order[told_order.index(player_id) + 1 :])
    out = []
    for entry in entries:
        if entry is mine:
            break
        friend = entry["player_id"]
        # Below the player, or with no score then: either way they came past.
        if friend in was_below or friend not in told_order:
            out.append(
                {
                    "type": "friend_passed",
                    "board": view["board"],
                    "season": view["season"],
                    "player_id": player_id,
                    "rank": mine["rank"],
                    "global_rank": mine["global_rank"],
                    "friend": entry,
                }
            )
    return out
