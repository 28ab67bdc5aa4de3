"""Reads of the live leaderboard: top, a player's rank, around-me and friends' ranks.

Ranks come from the season's ZSET (ZREVRANK and friends), never from counting rows; names and
avatars come from the profile cache, one round trip for the whole page.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from functools import partial
from typing import Any, NamedTuple

from django.conf import settings
from django.core.cache import cache
from django.utils import timezone

from config.caching import RecentAnswers
from matches.models import Player, PlayerTotal
from seasons.models import Season, SeasonState, SeasonStatus
from seasons.scoring import points_of
from seasons.selectors import player_history

from . import archive, store

RANK_STYLES = ("ordinal", "competition")

# Answers of the hot reads each process reuses for LEADERBOARD_TOP_CACHE_SECONDS (at most a
# second): millions of readers of the same page cost one Redis read a second per process. Each
# holds at most LEADERBOARD_TOP_CACHE_ENTRIES answers, so a crawler of deep pages or of every
# player's around-me only turns the oldest out.
top_pages_cache: RecentAnswers[dict[str, Any]] = RecentAnswers(
    seconds=lambda: settings.LEADERBOARD_TOP_CACHE_SECONDS,
    maxsize=lambda: settings.LEADERBOARD_TOP_CACHE_ENTRIES,
)
around_answers_cache: RecentAnswers[dict[str, Any] | None] = RecentAnswers(
    seconds=lambda: settings.LEADERBOARD_TOP_CACHE_SECONDS,
    maxsize=lambda: settings.LEADERBOARD_TOP_CACHE_ENTRIES,
)


# The profile cache (shared by every process) holds [generation, display_name, avatar_url] per
# player. Forgetting a profile gives it a new generation instead of deleting the entry, and an
# entry counts only while its generation is the current one: a reader that read the old row
# before the change committed, and fills the cache after it was forgotten, writes an entry of
# the old generation that no one will use. (Deleting the entry alone lets such a reader put the
# old profile back for PROFILE_CACHE_SECONDS.) Generations outlive entries twice over, so one
# that expires cannot make an old entry current again.
def _profile_key(player_id: str) -> str:
    return f"profile:{player_id}"


def _profile_generation_key(player_id: str) -> str:
    return f"profile-generation:{player_id}"


def profiles_get(player_ids: Iterable[str]) -> dict[str, tuple[str, str]]:
    """(display_name, avatar_url) for each player: the cache, then one query for the misses."""
    ids = list(dict.fromkeys(player_ids))
    if not ids:
        return {}
    found = cache.get_many(
        [_profile_key(i) for i in ids] + [_profile_generation_key(i) for i in ids]
    )
    generations = {i: found.get(_profile_generation_key(i)) for i in ids}
    profiles: dict[str, tuple[str, str]] = {}
    for player_id in ids:
        entry = found.get(_profile_key(player_id))
        if isinstance(entry, list) and len(entry) == 3 and entry[0] == generations[player_id]:
            profiles[player_id] = (entry[1], entry[2])
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
        # Filed under the generation read before the query: if the profile was forgotten since,
        # these entries are already out of date and stay unused.
        cache.set_many(
            {_profile_key(i): [generations[i], *v] for i, v in loaded.items()},
            timeout=settings.PROFILE_CACHE_SECONDS,
        )
        profiles.update(loaded)
    return profiles


def profiles_forget(player_ids: Sequence[str]) -> None:
    """The players' cached profiles are out of date (called once a change has committed)."""
    cache.set_many(
        {_profile_generation_key(i): uuid.uuid4().hex for i in player_ids},
        timeout=2 * settings.PROFILE_CACHE_SECONDS,
    )


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

    return top_pages_cache.get_or_build((season.pk, offset, limit, rank_style), build)


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
    return around_answers_cache.get_or_build(
        (season.pk, player_id, n, rank_style),
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


def player_seasons(*, player_id: str, now: datetime | None = None) -> list[dict[str, Any]]:
    """Every season the player has a standing in: the ones not closed yet first (their live
    rank and points, newest first), then the closed ones with their final rank and reward.
    A player off the live board (banned, or a result still being mirrored) has no rank there."""
    now = now or timezone.now()
    totals = (
        PlayerTotal.objects.filter(player_id=player_id)
        .exclude(season__state=SeasonState.CLOSED)
        .select_related("season", "season__board")
        .order_by("-season__starts_at")
    )
    running = []
    for total in totals:
        season = total.season
        size, standing = store.read_rank(season.pk, player_id)
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
            }
        )
    closed = [
        {**row, "status": SeasonStatus.CLOSED, "rank": row["final_rank"]}
        for row in player_history(player_id=player_id)
    ]
    return running + closed
