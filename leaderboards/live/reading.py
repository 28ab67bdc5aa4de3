"""The ticker's one Redis read per tick: the top, the followed players' ranks and the joiners'
around-me windows of a season (store.read_batch), with names and avatars, in a thread of its own.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from asgiref.sync import sync_to_async
from django.db import close_old_connections
from django.utils import timezone

from config.building_blocks.segments import CLAN_DIMENSION
from seasons.models import Board, RewardTier, Season

from .. import heals, selectors, store

# (1-based ordinal rank, composite) of a player; None when unranked. Tuples compare in C, so the
# ticker compares ten thousand of them with what it told last at little cost.
OrdinalStanding = tuple[int, int] | None

# Reads run in a thread of their own, so a tick never waits behind request handlers.
_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="live-ticker")


@dataclass(frozen=True, slots=True)
class TickReading:
    as_of: datetime
    total_players: int
    # The top's entries, in the REST shape (selectors.standing_entries).
    top: list[dict[str, Any]]
    standings: dict[str, OrdinalStanding]
    # The entries around each (player_id, n) asked.
    around_windows: dict[tuple[str, int], list[dict[str, Any]]]
    # The segment read within (None: the whole board).
    segment: str | None = None
    # The entries (REST shape) of the players read only to be named in a message (those who
    # overtook a followed player), by player.
    named: dict[str, dict[str, Any]] = field(default_factory=dict)
    # The board's rank events' rules when asked (they change seldom: read now and then).
    rules: RankRules | None = None
    # The top's first K entries by K, cut once for every socket told them (top_of).
    top_cuts: dict[int, list[dict[str, Any]]] = field(default_factory=dict)

    def top_of(self, k: int) -> list[dict[str, Any]]:
        """The top's first `k` entries: one list, whatever the number of sockets that keep it
        as what they were told."""
        entries = self.top_cuts.get(k)
        if entries is None:
            entries = self.top_cuts[k] = self.top[:k]
        return entries


@dataclass(frozen=True, slots=True)
class RankRules:
    """What a followed player's `threshold` and `tier` messages are told by: the board's top-N
    thresholds and the reward tiers of the socket's dimension ('' for the whole board)."""

    thresholds: tuple[int, ...]
    tiers: tuple[RewardTier, ...]


@contextlib.contextmanager
def ticker_read(season: Season) -> Iterator[None]:
    """Around a read the ticker makes for its sockets, in a thread of its own: a season found
    lost asks for its rebuild (the ticker serves these sockets, and a season that stands still
    gets no mirror write to find it so; nothing is pushed until it is done), and the thread's
    database connection is retired after (no request signal ever does it there)."""
    try:
        yield
    except (store.StandingsNotWhole, selectors.SeasonStandingsLost):
        heals.season_heal_queue_for_read(season_id=season.pk)
        raise
    finally:
        close_old_connections()


def read_for_tick(
    season: Season,
    *,
    top: int,
    player_ids: list[str],
    arounds: list[tuple[str, int]],
    segment: str | None = None,
    named: list[str] | None = None,
    rules: bool = False,
) -> TickReading:
    """The tick's read; `named` players are read for their entries only (after `player_ids`),
    and the board's rank rules when `rules`."""
    named = list(dict.fromkeys(named or ()))
    with ticker_read(season):
        batch = store.read_batch(
            season.pk,
            top=top,
            player_ids=[*player_ids, *named],
            arounds=arounds,
            shared=True,
            shards=season.shards,
            whole=selectors.standings_whole_required(season),
            segment=segment,
        )
        standings = dict(zip(player_ids, batch.players[: len(player_ids)], strict=True))
        named_rows = [
            store.Standing(player_id, standing[0], standing[1], better_count=None)
            for player_id, standing in zip(named, batch.players[len(player_ids) :], strict=True)
            if standing is not None
        ]
        # One profile lookup for every row shown: the top, the around-me windows and the named.
        rows = [*batch.top, *itertools.chain.from_iterable(batch.arounds), *named_rows]
        entries = selectors.standing_entries(season, rows, "ordinal")
        read_rules = rank_rules(season.board_id, segment) if rules else None
    windows: dict[tuple[str, int], list[dict[str, Any]]] = {}
    start = len(batch.top)
    for request, window in zip(arounds, batch.arounds, strict=True):
        windows[request] = entries[start : start + len(window)]
        start += len(window)
    return TickReading(
        as_of=timezone.now(),
        total_players=batch.size,
        top=entries[: len(batch.top)],
        standings=standings,
        around_windows=windows,
        segment=segment,
        named={entry["player_id"]: entry for entry in entries[start:]},
        rules=read_rules,
    )


def rank_rules(board_id: int, segment: str | None) -> RankRules:
    """The board's thresholds and the tiers a socket within `segment` is told of: the whole
    board's, or those of the segment's dimension (none within a clan: a clan tier ranks clans)."""
    dimension = "" if segment is None else segment.split(":", 1)[0]
    thresholds = Board.objects.filter(pk=board_id).values_list("rank_thresholds", flat=True)
    tiers = (
        ()
        if dimension == CLAN_DIMENSION
        else RewardTier.objects.filter(board_id=board_id, segment_dimension=dimension)
    )
    return RankRules(thresholds=tuple(next(iter(thresholds), ())), tiers=tuple(tiers))


read_for_tick_in_thread = sync_to_async(read_for_tick, thread_sensitive=False, executor=_executor)
