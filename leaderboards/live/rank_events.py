"""Rank events for the sockets following a player: `overtaken` (who came from below to above
them), `threshold` (they entered or left a board's top N) and `tier` (the reward they would get
if the season closed now changed).

Nothing is polled for them. The mirror's notices carry each standing it moved with its composite
before and after (notices.py); a followed player whose composite lies between the two was
passed by that player, found with a binary search over the followed players' composites (so a
tick costs O(moves × log followed), not O(moves × followed)). Those players are read at the tick
(their standing changed, so they are told anyway), with the nearest of their passers; the
thresholds and tiers follow from the standing told before and the one told now.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable
from typing import Any

from sortedcontainers import SortedList

from seasons.models import Season
from seasons.reward_tiers import RewardTier, tier_edges, tier_for_rank

from ..store import Move
from .messages import encode
from .reading import OrdinalStanding, RankRules, TickReading
from .season_sockets import SeasonSockets

# Players named in one `overtaken` message, the nearest first.
OVERTAKEN_BY = 5
# Passers kept for a player not told yet, before the farthest are let go.
MAX_PASSERS_KEPT = 50
# Moves a season's sockets keep between two ticks; beyond them the oldest are dropped (their
# passes then go untold, though the ranks they changed are still pushed).
MAX_PENDING_MOVES = 50_000


def moves_note(sockets: SeasonSockets, moves: list[Move]) -> None:
    """Keep a notice's moves for the next tick."""
    sockets.moves_pending.extend(moves)
    if len(sockets.moves_pending) > MAX_PENDING_MOVES:
        del sockets.moves_pending[:-MAX_PENDING_MOVES]


# A move from no standing starts below every followed player.
_BOTTOM = (float("-inf"), "")


def passes_find(sockets: SeasonSockets) -> list[str]:
    """Turn the moves since the last tick into who passed each followed player (kept until the
    player is told); returns the followed players passed.

    A move is the stretch its mover crossed, from (before, mover) to (after, mover): a followed
    player strictly inside it was passed. One sweep up the followed players, keeping the moves
    begun below and not yet ended by where they end, gives each passed player their nearest
    passers at once. So a tick costs O((moves + followed players passed) x log moves), however
    many players each move passes: at 10 million players a move of a few dozen points passes
    about 200 of 5,000 followed players, and a loop over each pass (1.2 million a second at
    6,000 results a second) took a web process more than half a core."""
    moves, sockets.moves_pending = sockets.moves_pending, []
    followed = sockets.followed_in_order
    if not moves or not sockets.player_followers or not followed:
        return []
    stretches = sorted(
        (_BOTTOM if before is None else (before, mover), (after, mover))
        for mover, before, after in moves
        if before is None or before < after
    )
    begun = SortedList()  # (composite after, mover) of the moves begun below
    passed: list[str] = []
    next_move = changes = 0
    nearest, nearest_at = {}, -1  # the nearest begun moves, as of `changes` == nearest_at
    count, moved = len(followed), len(stretches)
    position = followed.bisect_right(stretches[0][0]) if stretches else count
    while position < count:
        # The followed players in order from `position`, until no begun move is left: then on
        # from the next move's start (a SortedList's iterator, not an index lookup a player).
        for key in followed.islice(position):
            while next_move < moved and stretches[next_move][0] < key:
                begun.add(stretches[next_move][1])
                next_move, changes = next_move + 1, changes + 1
            while begun and begun[0] <= key:
                begun.pop(0)  # ended at or below this player: below every later one too
                changes += 1
            if not begun:
                position = (
                    count if next_move == moved else followed.bisect_right(stretches[next_move][0])
                )
                break
            if nearest_at != changes:  # most players in a row share their nearest passers
                nearest, nearest_at = {}, changes
                for after, mover in begun.islice(0, 2 * OVERTAKEN_BY + 1):
                    nearest[mover] = max(after, nearest.get(mover, after))
            if _passers_note(sockets, key[1], nearest):
                passed.append(key[1])
        else:
            position = count
    return passed


def _passers_note(sockets: SeasonSockets, player_id: str, nearest: dict[str, int]) -> bool:
    """Keep `nearest` (passer -> composite after) as passers of `player_id`, but the player's
    own move; False when that is the only one."""
    passers = sockets.passed_by.get(player_id)
    if passers is None:
        passers = dict(nearest)
        passers.pop(player_id, None)
        if not passers:
            return False
        sockets.passed_by[player_id] = passers
        return True
    if nearest.keys() == {player_id}:
        return False
    for mover, after in nearest.items():
        if mover != player_id and passers.get(mover, after) <= after:
            passers[mover] = after
    if len(passers) > MAX_PASSERS_KEPT:
        # Only the nearest are ever named: keep those.
        kept = sorted(passers, key=passers.__getitem__)[: 2 * OVERTAKEN_BY]
        sockets.passed_by[player_id] = {m: passers[m] for m in kept}
    return True


def passed_to_read(sockets: SeasonSockets, size: int) -> list[str]:
    """The followed players with passes not told yet that a tick reads: as many as the budget
    could tell (`size`), those told longest ago first, the order the budget tells them in. The
    others keep their passes for a later tick: at peak nearly every followed player is passed at
    every tick, and reading them all (thousands a tick) to tell a hundred was the ticker's
    largest cost."""
    pending = sockets.passed_by
    if len(pending) <= size:
        return list(pending)
    told_at = sockets.player_told_at
    return heapq.nsmallest(size, pending, key=lambda player: told_at.get(player, -math.inf))


def passers_to_read(sockets: SeasonSockets, players: Iterable[str]) -> list[str]:
    """The passers worth reading for each of `players` not told of their passes yet: the nearest
    above them (the lowest composites after the pass), a few more than a message names, since
    some may have been passed back since."""
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
    passers = sockets.passed_by.pop(player_id, None)
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
