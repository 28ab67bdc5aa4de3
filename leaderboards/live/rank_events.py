"""Rank events for the sockets following a player: `overtaken` (who came from below to above
them), `threshold` (they entered or left a board's top N) and `tier` (the reward they would get
if the season closed now changed).

Nothing is polled for them. The mirror's notices carry each standing it moved with its composite
before and after (notices.py); a followed player whose composite lies between the two was
passed by that player. Each tick marks the followed players passed, by binary searches of its
moves over the followed players' composites; the moves are kept (pass_log.py) and who passed a
player is looked up there only when that player is read, with the nearest of their passers. At
peak nearly every followed player is passed at every tick and only as many as the fan-out budget
can tell are read, so the cost follows the moves and the players told, not the passes. The
thresholds and tiers follow from the standing told before and the one told now.
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from seasons.models import Season
from seasons.reward_tiers import RewardTier, tier_edges, tier_for_rank

from ..store import Move
from .messages import encode
from .pass_log import MAX_KEPT_MOVES
from .reading import OrdinalStanding, RankRules, TickReading
from .season_sockets import SeasonSockets

# Players named in one `overtaken` message, the nearest first.
OVERTAKEN_BY = 5


def moves_note(sockets: SeasonSockets, moves: list[Move]) -> None:
    """Keep a notice's moves for the next tick: no more than the log keeps (the oldest are
    dropped; their passes then go untold, though the ranks they changed are still pushed)."""
    sockets.moves_pending.extend(moves)
    if len(sockets.moves_pending) > MAX_KEPT_MOVES:
        del sockets.moves_pending[:-MAX_KEPT_MOVES]


def passes_find(sockets: SeasonSockets) -> list[str]:
    """Log the moves since the last tick and mark the followed players they passed (kept until
    the player is told); returns the followed players passed at this tick.

    A move is the stretch its mover crossed, from (before, mover) to (after, mover): a followed
    player strictly inside it was passed. The followed players are in ranked order, so a move
    passes the ones between two binary searches, and who was passed at all is a running count
    over those ranges: O(moves x log followed + followed) in vectorised steps, however many
    players each move passes (at 10 million players a move of a few dozen points passes about
    200 of 5,000 followed players; a loop over each pass, or a sweep keeping each one's nearest
    passers, took a web process a third of a core at 6,000 results a second). Who passed a
    player is looked up only when they are about to be told (passers_fill)."""
    moves, sockets.moves_pending = sockets.moves_pending, []
    log = sockets.pass_log
    first = log.end
    befores, afters, movers = log.append(moves)
    # The moves the oldest pass not told yet may be among are kept; the others let go.
    log.trim(min(sockets.passed_since.values(), default=first))
    if not movers or not sockets.player_followers or not sockets.followed_in_order:
        return []
    keys, composites, players = sockets.followed_arrays()
    starts = _places(composites, players, befores, movers, after=True)
    ends = _places(composites, players, afters, movers, after=False)
    crossed = ends > starts
    counts = np.bincount(starts[crossed], minlength=len(keys) + 1)
    counts -= np.bincount(ends[crossed], minlength=len(keys) + 1)
    counts = np.cumsum(counts[:-1])
    # A followed player's own move passes no one's place of theirs: take it back out.
    told = sockets.standings_told
    if followed_movers := told.keys() & movers:
        for index, mover in enumerate(movers):
            if mover in followed_movers and (standing := told[mover]) is not None:
                place = bisect.bisect_left(keys, (standing[1], mover))
                if starts[index] <= place < ends[index]:
                    counts[place] -= 1
    passed: list[str] = players[counts > 0].tolist()
    # Marked as passed from this tick's first move on, unless passed (and not told) before.
    since = sockets.passed_since
    since.update(dict.fromkeys(set(passed).difference(since), first))
    return passed


def _places(
    composites: np.ndarray,
    players: np.ndarray,
    values: np.ndarray,
    movers: list[str],
    *,
    after: bool,
) -> np.ndarray:
    """Where each (value, mover) falls among the followed (composite, player) keys: the first key
    above it (`after`) or the first key not below it. Equal composites are ordered by player id,
    as Redis orders them."""
    low = np.searchsorted(composites, values, side="left")
    high = np.searchsorted(composites, values, side="right")
    find = bisect.bisect_right if after else bisect.bisect_left
    for index in np.flatnonzero(high > low).tolist():  # ties of composites: rare
        low[index] = find(players, movers[index], int(low[index]), int(high[index]))
    return low


def passers_fill(sockets: SeasonSockets, players: Iterable[str]) -> None:
    """Find who passed each of `players` (those with passes not told yet) since they were first
    passed: the nearest of them, kept in `passed_by` for the read and the messages."""
    log, since, told = sockets.pass_log, sockets.passed_since, sockets.standings_told
    for player_id in players:
        first = since.get(player_id)
        standing = told.get(player_id)
        if first is None or standing is None:
            continue
        nearest = log.passers(player_id, standing[1], first, 2 * OVERTAKEN_BY + 1)
        if nearest:
            sockets.passed_by[player_id] = nearest
        else:
            sockets.passed_by.pop(player_id, None)


def passes_forget(sockets: SeasonSockets, player_id: str) -> None:
    """The player was told of their passes (or is followed no more)."""
    sockets.passed_since.pop(player_id, None)
    sockets.passed_by.pop(player_id, None)


def passed_to_read(sockets: SeasonSockets, size: int) -> list[str]:
    """The followed players with passes not told yet that a tick reads: as many as the budget
    could tell (`size`), those told longest ago first, the order the budget tells them in. The
    others keep their passes for a later tick: at peak nearly every followed player is passed at
    every tick, and reading them all (thousands a tick) to tell a hundred was the ticker's
    largest cost."""
    told_at = sockets.player_told_at

    def turn(player: str) -> tuple[float, str]:
        # delivery.players_deliver's order: told longest ago first, ties by player id.
        return told_at.get(player, -math.inf), player

    return heapq.nsmallest(size, sockets.passed_since, key=turn)


def passers_to_read(sockets: SeasonSockets, players: Iterable[str]) -> list[str]:
    """The passers worth reading for each of `players` not told of their passes yet: the nearest
    above them (the lowest composites after the pass), a few more than a message names, since
    some may have been passed back since."""
    players = list(players)
    passers_fill(sockets, players)
    wanted: list[str] = []
    for player_id in players:
        if passers := sockets.passed_by.get(player_id):
            wanted.extend(sorted(passers, key=passers.__getitem__)[: 2 * OVERTAKEN_BY])
    return list(dict.fromkeys(wanted))


def rules_of(reading: TickReading, sockets: SeasonSockets) -> RankRules | None:
    if reading.rules is not None:
        sockets.rules = reading.rules
    return sockets.rules


def follower_start(sockets: SeasonSockets, player_id: str, reading: TickReading) -> None:
    """A newly followed player's tier as it stands: a later change of it is told."""
    rules = rules_of(reading, sockets)
    standing = reading.standings[player_id]
    if rules is not None:
        rank = None if standing is None else standing[0]
        sockets.tiers_told[player_id] = tier_for_rank(rules.tiers, rank, reading.total_players)


def events_of(
    sockets: SeasonSockets,
    reading: TickReading,
    player_id: str,
    told: OrdinalStanding,
    standing: OrdinalStanding,
) -> list[tuple[str, str]]:
    """The rank events of a followed player whose standing went from `told` to `standing`, as
    (outbox kind, body) pairs; forgets the passes they tell."""
    season = sockets.season
    rank = None if standing is None else standing[0]
    found: list[tuple[str, str]] = []
    passers = sockets.passed_by.get(player_id)
    passes_forget(sockets, player_id)
    if passers and standing is not None:
        by = _overtaken_by(reading, passers, standing)
        if by:
            found.append(
                (
                    f"overtaken:{player_id}",
                    encode(_message("overtaken", season, reading, player_id, rank, by=by)),
                )
            )
    rules = rules_of(reading, sockets)
    if rules is None:
        return found
    told_rank = None if told is None else told[0]
    for top in sorted({*rules.thresholds, *tier_edges(rules.tiers, reading.total_players)}):
        was_in = told_rank is not None and told_rank <= top
        is_in = rank is not None and rank <= top
        if was_in != is_in:
            body = _message("threshold", season, reading, player_id, rank, top=top, entered=is_in)
            found.append((f"threshold:{player_id}:{top}", encode(body)))
    tier = tier_for_rank(rules.tiers, rank, reading.total_players)
    if player_id in sockets.tiers_told and sockets.tiers_told[player_id] != tier:
        previous = sockets.tiers_told[player_id]
        body = _message(
            "tier", season, reading, player_id, rank, tier=_tier(tier), previous=_tier(previous)
        )
        found.append((f"tier:{player_id}", encode(body)))
    sockets.tiers_told[player_id] = tier
    return found


def _overtaken_by(
    reading: TickReading, passers: dict[str, int], standing: tuple[int, int]
) -> list[dict[str, Any]]:
    """The passers still above the player, the nearest first, as a message names them."""
    above = [
        entry
        for mover in passers
        if (entry := reading.named.get(mover)) is not None and entry["rank"] < standing[0]
    ]
    above.sort(key=lambda entry: -entry["rank"])
    return [
        {key: entry[key] for key in ("player_id", "display_name", "rank", "points")}
        for entry in above[:OVERTAKEN_BY]
    ]


def _tier(tier: RewardTier | None) -> dict[str, Any] | None:
    if tier is None:
        return None
    return {
        "reward_code": tier.reward_code,
        "rank_from": tier.rank_from,
        "rank_to": tier.rank_to,
        "top_percent": None if tier.top_percent is None else float(tier.top_percent),
    }


def _message(
    kind: str,
    season: Season,
    reading: TickReading,
    player_id: str,
    rank: int | None,
    **fields: Any,
) -> dict[str, Any]:
    segment = {} if reading.segment is None else {"segment": reading.segment}
    return {
        "type": kind,
        "board": season.board.slug,
        "season": season.slug,
        **segment,
        "player_id": player_id,
        "rank": rank,
        **fields,
    }
