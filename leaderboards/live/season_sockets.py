"""What a web process knows of one season's sockets: who follows what, what each was told last,
who is waiting for what, and which followed players to look at next for passes.
"""

from __future__ import annotations

import asyncio
import collections
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sortedcontainers import SortedList

from seasons.models import RewardTier, Season

from ..store import Move
from .budget import FanoutBudget
from .outbox import Subscriber
from .pass_log import PassLog
from .reading import OrdinalStanding, RankRules


@dataclass(eq=False)
class SeasonSockets:
    """One season's sockets in this process (those of one segment of it, with `segment`), and
    what they were told last."""

    season: Season
    segment: str | None = None
    # Sockets that had their snapshot and hear every later change.
    subscribers: set[Subscriber] = field(default_factory=set)
    # The sockets following the top K, by K; the sockets following each player.
    top_followers: dict[int, set[Subscriber]] = field(default_factory=dict)
    player_followers: dict[str, set[Subscriber]] = field(default_factory=dict)
    # Sockets that wait for their snapshot at the next tick, and those whose snapshot is
    # being read right now.
    awaiting_snapshot: list[Subscriber] = field(default_factory=list)
    snapshot_being_read: list[Subscriber] = field(default_factory=list)
    # Players sockets started following, waiting for their first standing at the next tick.
    new_follows: list[tuple[Subscriber, str]] = field(default_factory=list)
    # The newest top read (the sockets are brought to it as the budget allows).
    latest_top: list[dict[str, Any]] = field(default_factory=list)
    # Each followed player's standing as last told (written through standing_tell and
    # standing_forget, which keep `followed_in_order` with it).
    standings_told: dict[str, OrdinalStanding] = field(default_factory=dict)
    # The followed players with a standing, as (composite, player id) in ranked order from the
    # bottom: Redis breaks a tie of composites by member, the one sorting last first.
    followed_in_order: SortedList = field(default_factory=SortedList)
    # Bumped on each change of that order, so what is built from it is rebuilt only then.
    followed_order_changes: int = 0
    _followed_arrays: tuple[list[tuple[int, str]], np.ndarray, np.ndarray] = field(
        default=([], np.empty(0, dtype=np.int64), np.empty(0, dtype=object)), repr=False
    )
    _followed_arrays_at: int = 0
    # A notice came (or the refresh is due): read the standings again at the next tick.
    changed: bool = False
    last_changes_read_at: float = float("-inf")
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    tick_loop: asyncio.Task[None] | None = None
    # Sockets whose top is older than the current one, those who waited longest first.
    top_waiting: collections.deque[Subscriber] = field(default_factory=collections.deque)
    # When each followed player was last told of their standing.
    player_told_at: dict[str, float] = field(default_factory=dict)
    budget: FanoutBudget = field(default_factory=FanoutBudget)
    # Followed players the notices since the last tick named (their own score changed), and
    # whether a notice named no one (read every followed player).
    players_named: set[str] = field(default_factory=set)
    every_player_named: bool = False
    # The sockets following a friends view, by each member of it, and each member's composite
    # as last read (live/friends.py).
    friend_views: dict[str, set[Subscriber]] = field(default_factory=dict)
    friend_composites: dict[str, int | None] = field(default_factory=dict)
    # Friends-view sockets not sent their first view yet (a failed read leaves them here, and
    # the next tick tries again).
    friends_unsent: set[Subscriber] = field(default_factory=set)
    # The sockets following the clan board's top (live/clan_board.py).
    clan_followers: set[Subscriber] = field(default_factory=set)
    # Rank events (rank_events.py): the mirror's moves since the last tick; the moves kept for
    # the passes not told yet; the followed players passed and not told of it yet, each with the
    # number of the first move that may have passed them; who passed the players about to be
    # told (passer -> composite after the pass); the tier each followed player was told they
    # would get; the board's rules, and when they were read.
    moves_pending: list[Move] = field(default_factory=list)
    pass_log: PassLog = field(default_factory=PassLog)
    passed_since: dict[str, int] = field(default_factory=dict)
    passed_by: dict[str, dict[str, int]] = field(default_factory=dict)
    tiers_told: dict[str, RewardTier | None] = field(default_factory=dict)
    rules: RankRules | None = None
    rules_read_at: float = float("-inf")
    # Followed players in the order their ranks are looked at for passes, a round at a time.
    pass_check_rotation: collections.deque[str] = field(default_factory=collections.deque)

    def standing_tell(self, player_id: str, standing: OrdinalStanding) -> OrdinalStanding:
        """Note the standing a followed player was told; returns the one told before."""
        told = self.standings_told.get(player_id)
        self.standings_told[player_id] = standing
        if (None if told is None else told[1]) == (None if standing is None else standing[1]):
            return told  # only the rank moved (others passed): the order is the same
        if told is not None:
            self.followed_in_order.discard((told[1], player_id))
        if standing is not None:
            self.followed_in_order.add((standing[1], player_id))
        self.followed_order_changes += 1
        return told

    def followed_arrays(self) -> tuple[list[tuple[int, str]], np.ndarray, np.ndarray]:
        """The followed order as (composite, player id) keys, and as arrays of composites and of
        player ids: built again only when the order changed (at peak it rarely does: the
        players told are mostly passed, their own composites unchanged)."""
        if self._followed_arrays_at != self.followed_order_changes:
            keys = list(self.followed_in_order)
            composites = np.fromiter((key[0] for key in keys), dtype=np.int64, count=len(keys))
            players = np.array([key[1] for key in keys], dtype=object)
            self._followed_arrays = (keys, composites, players)
            self._followed_arrays_at = self.followed_order_changes
        return self._followed_arrays

    def standing_forget(self, player_id: str) -> None:
        """The player is followed no more."""
        told = self.standings_told.pop(player_id, None)
        if told is not None:
            self.followed_in_order.discard((told[1], player_id))
            self.followed_order_changes += 1

    def players_to_check(self, size: int) -> list[str]:
        """The next `size` followed players to look at for passes (all of them, when fewer)."""
        if size >= len(self.player_followers):
            return list(self.player_followers)
        rotation = self.pass_check_rotation
        if len(rotation) > 2 * len(self.player_followers):
            # Players unfollowed and followed again left stale places behind.
            rotation = self.pass_check_rotation = collections.deque(dict.fromkeys(rotation))
        chosen: list[str] = []
        for _ in range(len(rotation)):
            if len(chosen) >= size:
                break
            player_id = rotation.popleft()
            if player_id in self.player_followers:
                chosen.append(player_id)
                rotation.append(player_id)
        return chosen
