"""Reads of the live leaderboard: top, a player's rank, around-me and friends' ranks.

Ranks come from the season's ZSET (ZREVRANK and friends), never from counting rows; names and
avatars come from the profile cache, one round trip for the whole page.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import Any, NamedTuple

from django.conf import settings
from django.core.cache import cache
from django.utils import timezone

from matches.models import Player
from seasons.models import Season, SeasonState
from seasons.scoring import points_of

from . import archive, store

RANK_STYLES = ("ordinal", "competition")

_top_cache: dict[tuple[Any, ...], tuple[float, dict[str, Any]]] = {}


def _profile_key(player_id: str) -> str:
    return f"profile:{player_id}"


def profiles_get(player_ids: Iterable[str]) -> dict[str, tuple[str, str]]:
    """(display_name, avatar_url) for each player: the cache, then one query for the misses."""
    ids = list(dict.fromkeys(player_ids))
    if not ids:
        return {}
    found = cache.get_many([_profile_key(i) for i in ids])
    profiles = {i: tuple(found[_profile_key(i)]) for i in ids if _profile_key(i) in found}
    missing = [i for i in ids if i not in profiles]
    if missing:
        loaded = {
            player_id: (display_name, avatar_url)
            for player_id, display_name, avatar_url in Player.objects.filter(
                player_id__in=missing
            ).values_list("player_id", "display_name", "avatar_url")
        }
        for player_id in missing:
            loaded.setdefault(player_id, ("", ""))
        cache.set_many(
            {_profile_key(i): list(v) for i, v in loaded.items()},
            timeout=settings.PROFILE_CACHE_SECONDS,
        )
        profiles.update(loaded)
    return profiles  # type: ignore[return-value]


def profiles_forget(player_ids: Sequence[str]) -> None:
    cache.delete_many([_profile_key(i) for i in player_ids])


class StandingsSource(NamedTuple):
    """Where a season's standings are read: its ZSET or its archive, with the same shapes."""

    read_page: Callable[..., tuple[int, list[store.Standing]]]
    read_rank: Callable[[str], tuple[int, store.Standing | None]]
    read_around: Callable[..., tuple[int, store.Standing | None, list[store.Standing]]]
    read_many: Callable[[Sequence[str]], tuple[int, list[store.Standing | None]]]


def standings_source(season: Season) -> StandingsSource:
    """Live seasons read the ZSET; a closed one reads its key while the board keeps it (fast
    "last season" pages) and the archive once the key is gone or lost."""
    live = season.state != SeasonState.CLOSED or (
        season.standings_removed_at is None and store.standings_exist(season.pk)
    )
    # The gateway takes the season's id, the archive the season itself; otherwise they match.
    reader, key = (store, season.pk) if live else (archive, season)
    return StandingsSource(
        *(partial(getattr(reader, name), key) for name in StandingsSource._fields)
    )


def _rank(standing: store.Standing, rank_style: str) -> int:
    return standing.better_count + 1 if rank_style == "competition" else standing.rank


def standing_entries(
    season: Season, standings: Sequence[store.Standing], rank_style: str
) -> list[dict[str, Any]]:
    profiles = profiles_get(s.player_id for s in standings)
    lowest_first = season.board.lowest_first
    entries = []
    for standing in standings:
        display_name, avatar_url = profiles.get(standing.player_id, ("", ""))
        entries.append(
            {
                "rank": _rank(standing, rank_style),
                "player_id": standing.player_id,
                "display_name": display_name or standing.player_id,
                "avatar_url": avatar_url,
                "points": points_of(standing.composite, lowest_first=lowest_first),
            }
        )
    return entries


def _reused(key: tuple[Any, ...], build: Callable[[], Any]) -> Any:
    """An answer the process may reuse for LEADERBOARD_TOP_CACHE_SECONDS (at most a second):
    millions of readers of the same page cost one Redis read a second per process."""
    ttl = settings.LEADERBOARD_TOP_CACHE_SECONDS
    if ttl <= 0:
        return build()
    now = time.monotonic()
    cached = _top_cache.get(key)
    if cached is not None and now - cached[0] < ttl:
        return cached[1]
    answer = build()
    if len(_top_cache) > 10000:
        _top_cache.clear()
    _top_cache[key] = (now, answer)
    return answer


def leaderboard_top(
    *, season: Season, offset: int = 0, limit: int = 10, rank_style: str = "ordinal"
) -> dict[str, Any]:
    """Ranks offset+1 .. offset+limit; the answer may be reused for up to a second."""

    def build() -> dict[str, Any]:
        total, standings = standings_source(season).read_page(offset=offset, limit=limit)
        return {
            "board": season.board.slug,
            "season": season.slug,
            "as_of": timezone.now(),
            "total_players": total,
            "entries": standing_entries(season, standings, rank_style),
        }

    return _reused(("top", season.pk, offset, limit, rank_style), build)


def percentile_of(rank: int, total: int) -> float:
    """Share of the board ranked at or below this player: rank 1 is 100.0."""
    return round(100.0 * (total - rank + 1) / total, 2) if total else 0.0


def player_standing(
    *, season: Season, player_id: str, rank_style: str = "ordinal"
) -> dict[str, Any] | None:
    total, standing = standings_source(season).read_rank(player_id)
    if standing is None:
        return None
    rank = _rank(standing, rank_style)
    return {
        "player_id": player_id,
        "board": season.board.slug,
        "season": season.slug,
        "rank": rank,
        "points": points_of(standing.composite, lowest_first=season.board.lowest_first),
        "total_players": total,
        "percentile": percentile_of(standing.rank, total),
    }


def player_around(
    *, season: Season, player_id: str, n: int = 5, rank_style: str = "ordinal"
) -> dict[str, Any] | None:
    """The ranks around a player; like top, the answer may be reused for up to a second."""
    return _reused(
        ("around", season.pk, player_id, n, rank_style),
        lambda: _around(season=season, player_id=player_id, n=n, rank_style=rank_style),
    )


def _around(*, season: Season, player_id: str, n: int, rank_style: str) -> dict[str, Any] | None:
    total, me, standings = standings_source(season).read_around(player_id, n=n)
    if me is None:
        return None
    return {
        "player_id": player_id,
        "board": season.board.slug,
        "season": season.slug,
        "rank": _rank(me, rank_style),
        "points": points_of(me.composite, lowest_first=season.board.lowest_first),
        "total_players": total,
        "percentile": percentile_of(me.rank, total),
        "entries": standing_entries(season, standings, rank_style),
    }


def players_ranks(
    *, season: Season, player_ids: Sequence[str], rank_style: str = "ordinal"
) -> dict[str, Any]:
    """Rank and points of each player (null when they have no score), in one round trip."""
    total, standings = standings_source(season).read_many(player_ids)
    profiles = profiles_get(player_ids)
    lowest_first = season.board.lowest_first
    entries = []
    for player_id, standing in zip(player_ids, standings, strict=True):
        display_name, avatar_url = profiles.get(player_id, ("", ""))
        entries.append(
            {
                "rank": None if standing is None else _rank(standing, rank_style),
                "player_id": player_id,
                "display_name": display_name or player_id,
                "avatar_url": avatar_url,
                "points": (
                    None
                    if standing is None
                    else points_of(standing.composite, lowest_first=lowest_first)
                ),
            }
        )
    return {
        "board": season.board.slug,
        "season": season.slug,
        "total_players": total,
        "entries": entries,
    }
