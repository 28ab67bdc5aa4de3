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
    tier_edges: dict[int, set[int]] = {}
    for board_id, last_rank in RewardTier.objects.filter(
        board_id__in={season.board_id for season in wanted},
        segment_dimension="",
        rank_to__isnull=False,
    ).values_list("board_id", "rank_to"):
        tier_edges.setdefault(board_id, set()).add(last_rank)
    return {
        season.pk: sorted({*season.board.rank_thresholds, *tier_edges.get(season.board_id, ())})
        for season in wanted
    }


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
