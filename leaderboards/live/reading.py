"""The ticker's one Redis read per tick: the top, the followed players' ranks and the joiners'
around-me windows of a season (store.read_batch), with names and avatars, in a thread of its own.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from asgiref.sync import sync_to_async
from django.db import close_old_connections
from django.utils import timezone

from seasons.models import Season

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
) -> TickReading:
    with ticker_read(season):
        batch = store.read_batch(
            season.pk,
            top=top,
            player_ids=player_ids,
            arounds=arounds,
            shared=True,
            shards=season.shards,
            whole=selectors.standings_whole_required(season),
            segment=segment,
        )
        # One profile lookup for every row shown: the top and all the around-me windows.
        rows = [*batch.top, *itertools.chain.from_iterable(batch.arounds)]
        entries = selectors.standing_entries(season, rows, "ordinal")
    windows: dict[tuple[str, int], list[dict[str, Any]]] = {}
    start = len(batch.top)
    for request, window in zip(arounds, batch.arounds, strict=True):
        windows[request] = entries[start : start + len(window)]
        start += len(window)
    return TickReading(
        as_of=timezone.now(),
        total_players=batch.size,
        top=entries[: len(batch.top)],
        standings=dict(zip(player_ids, batch.players, strict=True)),
        around_windows=windows,
        segment=segment,
    )


read_for_tick_in_thread = sync_to_async(read_for_tick, thread_sensitive=False, executor=_executor)
