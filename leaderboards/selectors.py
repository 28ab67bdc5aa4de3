"""Reads of the leaderboard: a player's rank, around-me, friends' ranks and seasons, and the
entries and shapes every answer is made of (the top pages, shared between processes and kept
by HTTP caches, are top_answers.py's).

Ranks come from the season's ZSET (ZREVRANK and friends), never from counting rows; names and
avatars come from the profile directory (profiles.py), one round trip for the whole page. A
read that finds a season's standings lost raises SeasonStandingsLost; it never asks for their
rebuild itself.
"""

from __future__ import annotations

import functools
import logging
import math
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from functools import partial
from typing import Any, NamedTuple

from django.utils import timezone

from config.building_blocks.renderers import json_bytes
from matches.models import PlayerTotal
from seasons.models import Season, SeasonState, SeasonStatus
from seasons.scoring import points_of

from . import archive, read_your_writes, store
from .history import player_history
from .models import ArchivedSegmentStanding
from .profiles import profiles_get

logger = logging.getLogger(__name__)

RANK_STYLES = ("ordinal", "competition")


# Seasons whose standings were marked whole once (Season.standings_whole_since, which is set once
# and never cleared, so this process may keep knowing it), and when each season not yet marked
# was last looked up: a season is marked at its first mirror write, which this process's copy of
# the season row (cached for seconds) does not see.
_seasons_marked: set[int] = set()
_unmarked_looked_up: dict[int, float] = {}
UNMARKED_LOOKUP_SECONDS = 2.0


def standings_whole_known(season: Season) -> bool:
    """Whether the season's standings were marked whole once, as far as this process knows
    without a query (the event loop's reads: a season not known so goes to Django)."""
    if season.standings_whole_since is not None:
        _seasons_marked.add(season.pk)
        return True
    return season.pk in _seasons_marked


def standings_whole_required(season: Season) -> bool:
    """Whether reads of the season must find its standings whole: once they were marked so, a
    set without its marker was lost with its Redis, and a read answers 503 rather than from it
    (store.py, "Whole standings"). A season not marked yet is looked up again every
    UNMARKED_LOOKUP_SECONDS at most."""
    if standings_whole_known(season):
        return True
    now = time.monotonic()
    if now - _unmarked_looked_up.get(season.pk, -math.inf) < UNMARKED_LOOKUP_SECONDS:
        return False
    _unmarked_looked_up[season.pk] = now
    if Season.objects.filter(pk=season.pk, standings_whole_since__isnull=False).exists():
        _seasons_marked.add(season.pk)
        _unmarked_looked_up.pop(season.pk, None)
        return True
    return False


class SeasonStandingsLost(store.StandingsNotWhole):
    """A read found the season's standings lost with their Redis (answered 503 meanwhile). A
    read only raises: whoever serves the request asks for the rebuild (heals.py), since a
    season that stands still gets no mirror write to find it so."""

    def __init__(self, season_id: int, found: str) -> None:
        super().__init__(found)
        self.season_id = season_id


def season_lost_raised(read: Callable[..., Any], season_id: int) -> Callable[..., Any]:
    """`read`, which raises SeasonStandingsLost, naming the season, where the store's read finds
    its standings not whole."""

    @functools.wraps(read)
    def reading(*args: Any, **kwargs: Any) -> Any:
        try:
            return read(*args, **kwargs)
        except store.StandingsNotWhole as exc:
            raise SeasonStandingsLost(season_id, str(exc)) from exc

    return reading


class StandingsSource(NamedTuple):
    """Where a season's standings are read: its ZSET or its archive, with the same shapes."""

    read_page: Callable[..., tuple[int, list[store.Standing]]]
    read_rank: Callable[..., tuple[int, store.Standing | None]]
    read_around: Callable[..., tuple[int, store.Standing | None, list[store.Standing]]]
    read_many: Callable[..., tuple[int, list[store.Standing | None]]]


def standings_source(season: Season) -> StandingsSource:
    """Live seasons read the ZSET; a closed one reads its key while the board keeps it whole
    (fast "last season" pages) and the archive once the key is gone, lost (a shard of it, even)
    or was never marked whole."""
    live = season.state != SeasonState.CLOSED or (
        season.standings_removed_at is None
        and store.standings_whole(season.pk, shards=season.shards)
    )
    if not live:
        return StandingsSource(
            *(partial(getattr(archive, name), season) for name in StandingsSource._fields)
        )
    # Pages may come from a replica; a player's own rank too, unless this process just
    # committed their result (read_your_writes).
    whole = standings_whole_required(season)
    reads = StandingsSource(
        read_page=partial(
            store.read_page, season.pk, shared=True, shards=season.shards, whole=whole
        ),
        read_rank=partial(_own_read, store.read_rank, season, whole),
        read_around=partial(_own_read, store.read_around, season, whole),
        read_many=partial(store.read_many, season.pk, shards=season.shards, whole=whole),
    )
    # Even a season never marked whole: a set found marked by another database is rebuilt.
    return StandingsSource(*(season_lost_raised(read, season.pk) for read in reads))


def _own_read(
    read: Callable[..., Any], season: Season, whole: bool, player_id: str, **options: Any
) -> Any:
    return read(
        season.pk,
        player_id,
        shared=read_your_writes.shared(season.pk, player_id),
        shards=season.shards,
        whole=whole,
        **options,
    )


def rank_in_style(standing: store.Standing, rank_style: str) -> int:
    return standing.better_count + 1 if rank_style == "competition" else standing.rank


def corrected_marks(season: Season, player_ids: Sequence[str]) -> set[str]:
    """The players whose standing in a closed season a correction of its archive changed (their
    rows say `"corrected": true`); none in a season not closed, whose reads ask nothing more."""
    if season.state != SeasonState.CLOSED or not player_ids:
        return set()
    return archive.corrected_among(season, player_ids)


def _marked(player_id: str, corrected: set[str]) -> dict[str, bool]:
    return {"corrected": True} if player_id in corrected else {}


def standing_entries(
    season: Season,
    standings: Sequence[store.Standing],
    rank_style: str,
    profiles: dict[str, tuple[str, str]] | None = None,
) -> list[dict[str, Any]]:
    """The entries of a page or a window; `profiles` when the caller has read them already."""
    if profiles is None:
        profiles = profiles_get(s.player_id for s in standings)
    lowest_first = season.board.lowest_first
    corrected = corrected_marks(season, [s.player_id for s in standings])
    entries = []
    for standing in standings:
        display_name, avatar_url = profiles.get(standing.player_id, ("", ""))
        entries.append(
            {
                "rank": rank_in_style(standing, rank_style),
                "player_id": standing.player_id,
                "display_name": display_name or standing.player_id,
                "avatar_url": avatar_url,
                "points": points_of(standing.composite, lowest_first=lowest_first),
                **_marked(standing.player_id, corrected),
            }
        )
    return entries


def top_page(
    season: Season,
    *,
    as_of: datetime,
    total_players: int,
    entries: list[dict[str, Any]],
    segment: str | None = None,
) -> dict[str, Any]:
    """A page of the top: the REST answer's fields, and the socket's `top` message's. Within a
    segment, `total_players` is the segment's, and the answer names it."""
    return {
        "board": season.board.slug,
        "season": season.slug,
        **_segment_named(segment),
        "as_of": as_of,
        "total_players": total_players,
        "entries": entries,
    }


def _segment_named(segment: str | None) -> dict[str, str]:
    """The `segment` field of an answer read within one (none for the whole board)."""
    return {} if segment is None else {"segment": segment}


def json_body(data: Any) -> str:
    """json_bytes as text (the shared answers are kept as text)."""
    return json_bytes(data).decode()


def percentile_of(rank: int, total: int) -> float:
    """Share of the board ranked at or below this player: rank 1 is 100.0."""
    return round(100.0 * (total - rank + 1) / total, 2) if total else 0.0


def standing_answer(
    season: Season,
    player_id: str,
    total: int,
    standing: store.Standing,
    rank_style: str,
    segment: str | None = None,
) -> dict[str, Any]:
    """A player's rank answer from what the store read (whichever server asked): within a
    segment, the rank, total and percentile are the segment's."""
    return {
        "player_id": player_id,
        "board": season.board.slug,
        "season": season.slug,
        **_segment_named(segment),
        "rank": rank_in_style(standing, rank_style),
        "points": points_of(standing.composite, lowest_first=season.board.lowest_first),
        "total_players": total,
        "percentile": percentile_of(standing.rank, total),
        **_marked(player_id, corrected_marks(season, [player_id])),
    }


def player_standing(
    *, season: Season, player_id: str, rank_style: str = "ordinal", segment: str | None = None
) -> dict[str, Any] | None:
    total, standing = standings_source(season).read_rank(
        player_id, competition=rank_style == "competition", segment=segment
    )
    if standing is None:
        return None
    return standing_answer(season, player_id, total, standing, rank_style, segment)


def around_answer(
    season: Season,
    player_id: str,
    total: int,
    me: store.Standing,
    standings: Sequence[store.Standing],
    rank_style: str,
    profiles: dict[str, tuple[str, str]] | None = None,
    segment: str | None = None,
) -> dict[str, Any]:
    """A player's around-me answer from what the store read (whichever server asked)."""
    return {
        **standing_answer(season, player_id, total, me, rank_style, segment),
        "entries": standing_entries(season, standings, rank_style, profiles),
    }


def player_around(
    *,
    season: Season,
    player_id: str,
    n: int = 5,
    rank_style: str = "ordinal",
    segment: str | None = None,
) -> dict[str, Any] | None:
    """The ranks around a player. Not cached: each player has their own window, so an answer
    kept for a second was almost never asked for again."""
    total, me, standings = standings_source(season).read_around(
        player_id, n=n, competition=rank_style == "competition", segment=segment
    )
    if me is None:
        return None
    return around_answer(season, player_id, total, me, standings, rank_style, segment=segment)


def players_ranks(
    *,
    season: Season,
    player_ids: Sequence[str],
    rank_style: str = "ordinal",
    segment: str | None = None,
) -> dict[str, Any]:
    """Rank and points of each player (null when they have no score, or not in the segment), in
    one round trip."""
    total, standings = standings_source(season).read_many(
        player_ids, competition=rank_style == "competition", segment=segment
    )
    profiles = profiles_get(player_ids)
    lowest_first = season.board.lowest_first
    corrected = corrected_marks(season, list(player_ids))
    entries = []
    for player_id, standing in zip(player_ids, standings, strict=True):
        display_name, avatar_url = profiles.get(player_id, ("", ""))
        entries.append(
            {
                "rank": None if standing is None else rank_in_style(standing, rank_style),
                "player_id": player_id,
                "display_name": display_name or player_id,
                "avatar_url": avatar_url,
                "points": (
                    None
                    if standing is None
                    else points_of(standing.composite, lowest_first=lowest_first)
                ),
                **_marked(player_id, corrected),
            }
        )
    return {
        "board": season.board.slug,
        "season": season.slug,
        **_segment_named(segment),
        "total_players": total,
        "entries": entries,
    }


def season_segments(season: Season) -> list[str]:
    """The segments of the season that hold players ("country:DE"), for a picker: its live sets'
    while it runs (or its key is kept), its archive's once closed."""
    if not season.board.segment_dimensions:
        return []
    if season.state == SeasonState.CLOSED:
        return sorted(
            ArchivedSegmentStanding.objects.filter(season=season)
            .values_list("segment", flat=True)
            .distinct()
        )
    return store.segment_names(season.pk, shards=season.shards)


def player_banned_in(*, season: Season, player_id: str) -> bool:
    """Whether the player is off the season's live board for a ban (asked when they have no
    rank, to say so instead of "no score")."""
    return store.player_banned_in(season.pk, player_id, shards=season.shards)


def player_seasons(*, player_id: str, now: datetime | None = None) -> list[dict[str, Any]]:
    """Every season the player has a standing in: the ones not closed yet first (their live
    rank and points, newest first), then the closed ones with their final rank and reward.
    A player off the live board (banned, or a result still being mirrored) has no rank there."""
    now = now or timezone.now()
    totals = (
        PlayerTotal.objects.filter(player_id=player_id, season__board__hidden=False)
        .exclude(season__state=SeasonState.CLOSED)
        .select_related("season", "season__board")
        .order_by("-season__starts_at")
    )
    running = []
    for total in totals:
        season = total.season
        size, standing = season_lost_raised(store.read_rank, season.pk)(
            season.pk,
            player_id,
            shards=season.shards,
            whole=standings_whole_required(season),
        )
        running.append(
            {
                "board": season.board.slug,
                "season": season.slug,
                "season_name": season.name,
                "status": season.status_at(now),
                "ends_at": season.ends_at,
                "rank": None if standing is None else standing.rank,
                "final_rank": None,
                "competition_rank": None if standing is None else standing.better_count + 1,
                "points": total.points,
                "total_players": size,
                "reward": None,
                "corrected": False,
                "closed_rank": None,
            }
        )
    closed = [
        {**row, "status": SeasonStatus.CLOSED, "rank": row["final_rank"]}
        for row in player_history(player_id=player_id)
    ]
    return running + closed
