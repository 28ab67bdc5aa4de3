"""What a tick tells the sockets of a season: from one reading, the players' own new standings
and the passes their followers can afford, the top to those whose top changed, the joiners'
snapshots and the new follows' first standings, each into the socket's outbox.

A player's own new score goes at once; what follows from other players' results is paid from
the season's fan-out budget (budget.py), those told longest ago first. Large broadcasts yield to
the event loop every FANOUT_BATCH messages, so the sockets served so far write meanwhile.
"""

from __future__ import annotations

import asyncio
import collections
import time

from . import messages, rank_events
from .messages import encode
from .outbox import Subscriber
from .reading import TickReading
from .season_sockets import SeasonSockets

# Messages queued between two chances for the sockets to write them, in a large broadcast.
FANOUT_BATCH = 500


async def top_deliver(sockets: SeasonSockets, reading: TickReading) -> None:
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
                    if sub.top_told != reading.top_of(k)
                ),
                key=lambda sub: sub.top_told_at,
            )
        )
    if not sockets.top_waiting:
        return
    # Each K's message, made once for all its sockets.
    bodies: dict[int, str] = {}
    now = time.monotonic()
    sent = 0
    budget = int(sockets.budget.available())
    while sockets.top_waiting and sent < budget:
        sub = sockets.top_waiting.popleft()
        if not sub.open or sub not in sockets.subscribers:
            continue
        if sub.top not in bodies:
            bodies[sub.top] = encode(messages.top_message(sockets.season, reading, sub.top))
        sub.push("top", bodies[sub.top])
        sub.top_told, sub.top_told_at = reading.top_of(sub.top), now
        sent += 1
        if sent % FANOUT_BATCH == 0:
            # Let the sockets served so far write (and other messages go) before more.
            await asyncio.sleep(0)
    sockets.budget.spend(sent)
    if sockets.top_waiting:
        sockets.changed = True


async def players_deliver(sockets: SeasonSockets, reading: TickReading) -> None:
    """A player's own new score goes at once; a rank that moved because of others is paid
    from the budget, the players told longest ago first."""
    pushed = 0
    standings_told, player_told_at = sockets.standings_told, sockets.player_told_at
    now = time.monotonic()
    passed: list[tuple[float, str]] = []
    for player_id, standing in reading.standings.items():
        # Tuples compare in C: the whole loop stays cheap at ten thousand players.
        if player_id not in standings_told:
            continue
        if standings_told[player_id] == standing:
            # Passed and passed back: nothing to tell, and no reason to read them again.
            rank_events.passes_forget(sockets, player_id)
            continue
        told = standings_told[player_id]
        # Only the rank moved: the composite (the player's own score) is the same.
        if told is not None and standing is not None and told[1] == standing[1]:
            passed.append((player_told_at.get(player_id, float("-inf")), player_id))
            continue
        pushed += await _push_standing(sockets, reading, player_id, now, pushed)
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
        spent += await _push_standing(sockets, reading, player_id, now, pushed + spent)
    sockets.budget.spend(spent)


async def _push_standing(
    sockets: SeasonSockets, reading: TickReading, player_id: str, now: float, pushed: int
) -> int:
    """Push a player's standing to their followers; returns how many messages that was."""
    standing = reading.standings[player_id]
    told = sockets.standing_tell(player_id, standing)
    sockets.player_told_at[player_id] = now
    body = encode(messages.player_message(sockets.season, player_id, standing, reading))
    # The rank events go after the standing they follow from (an outbox sends in order).
    pushes = [(f"player:{player_id}", body)]
    pushes += rank_events.events_of(sockets, reading, player_id, told, standing)
    count = 0
    for sub in list(sockets.player_followers.get(player_id, ())):
        for kind, message in pushes:
            sub.push(kind, message)
        # Each message counts against the budget: a passed player's `overtaken` costs the
        # process as much as their new rank does.
        count += len(pushes)
        if (pushed + count) % FANOUT_BATCH < len(pushes):
            await asyncio.sleep(0)
    return count


def snapshot_send(sockets: SeasonSockets, sub: Subscriber, reading: TickReading) -> None:
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
    sub.top_told, sub.top_told_at = reading.top_of(sub.top), time.monotonic()
    sockets.subscribers.add(sub)
    if sub.top > 0:
        sockets.top_followers.setdefault(sub.top, set()).add(sub)
    if sub.player_id is not None:
        _add_follower(sockets, sub, sub.player_id, reading)


def following_start(
    sockets: SeasonSockets, sub: Subscriber, player_id: str, reading: TickReading
) -> None:
    if not sub.open or sub not in sockets.subscribers or player_id not in sub.players:
        return
    _add_follower(sockets, sub, player_id, reading)
    sub.push(
        f"player:{player_id}",
        encode(
            messages.player_message(
                sockets.season, player_id, reading.standings[player_id], reading
            )
        ),
    )


def _add_follower(
    sockets: SeasonSockets, sub: Subscriber, player_id: str, reading: TickReading
) -> None:
    if player_id not in sockets.player_followers:
        sockets.pass_check_rotation.append(player_id)
    sockets.player_followers.setdefault(player_id, set()).add(sub)
    sockets.standing_tell(player_id, reading.standings[player_id])
    rank_events.follower_start(sockets, player_id, reading)
