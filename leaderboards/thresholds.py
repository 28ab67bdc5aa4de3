"""Telling game backends that a player entered or left a board's top N (the webhook event
`player.threshold`): which edges the mirror reports for a season, and the events of the
crossings its writes reported (leaderboards/store/scripts.py, MIRROR).

Only for boards some endpoint wants the event of: the mirror then asks its script for the
crossings, which costs a rank or two only for writes at or above the deepest edge. The edges
are the board's thresholds (the admin's "Rank events") and each whole-board range tier's last
rank; a percentage tier's edge moves with every new player, so it is told on sockets only.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from django.conf import settings

from config.building_blocks.caching import RecentAnswers
from seasons.models import RewardTier, Season
from webhooks.models import EventType
from webhooks.selectors import webhook_wanted
from webhooks.services import webhook_events_emit

from . import store


def thresholds_wanted(seasons: Iterable[Season]) -> dict[int, list[int]]:
    """The edges to report for each of `seasons` (loaded with their boards) that is on one set
    and whose board an endpoint wants threshold events of."""
    wanted = [
        season
        for season in seasons
        if season.shards == 1
        and webhook_wanted(event_type=EventType.PLAYER_THRESHOLD, board_id=season.board_id)
    ]
    if not wanted:
        return {}
    return {
        season.pk: sorted({*season.board.rank_thresholds, *_tier_edges(season.board_id)})
        for season in wanted
    }


# The mirror asks on every call: a board's tiers are read once per WEBHOOK_WANTED_CACHE_SECONDS,
# as its endpoints are (a tier edited in the admin is reported within that time, like a new one).
_tier_edges_read: RecentAnswers[tuple[int, ...]] = RecentAnswers(
    seconds=lambda: settings.WEBHOOK_WANTED_CACHE_SECONDS, maxsize=lambda: 10_000
)


def _tier_edges(board_id: int) -> tuple[int, ...]:
    """The last rank of each of the board's whole-board range tiers."""
    return _tier_edges_read.get_or_build(
        board_id,
        lambda: tuple(
            RewardTier.objects.filter(
                board_id=board_id, segment_dimension="", rank_to__isnull=False
            ).values_list("rank_to", flat=True)
        ),
    )


def crossings_announce(
    seasons: dict[int, Season], crossings: dict[int, Sequence[store.Crossing]]
) -> int:
    """One `player.threshold` event per crossing, in the caller's transaction; returns how
    many were written."""
    written = 0
    for season_id, crossed in crossings.items():
        season = seasons[season_id]
        written += webhook_events_emit(
            event_type=EventType.PLAYER_THRESHOLD,
            board=season.board,
            data_pages=(
                {
                    "board": season.board.slug,
                    "season": season.slug,
                    "player_id": crossing.player_id,
                    "top": crossing.top,
                    "entered": crossing.entered,
                    "rank": crossing.rank,
                }
                for crossing in crossed
            ),
        )
    return written
