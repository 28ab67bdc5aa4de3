"""Reads of what closed seasons left behind: a player's final standing and reward in each, and
a closed season's rewards by rank (the player pages, `/players/{id}/seasons` and the rewards
endpoint). The standings themselves, read like a live board's, are in archive.py."""

from __future__ import annotations

from typing import Any

from django.db.models import OuterRef, QuerySet, Subquery

from config.building_blocks.errors import Conflict
from seasons.models import Season, SeasonState

from .models import ArchivedStanding, SeasonReward

# A past season's row as the player pages and `/players/{id}/seasons` show it: the archived
# standing's columns, the season's and board's, and the whole board's reward (not a segment's).
_HISTORY_COLUMNS = {
    "board": "season__board__slug",
    "season": "season__slug",
    "season_name": "season__name",
    "ends_at": "season__ends_at",
    "final_rank": "rank",
    "competition_rank": "competition_rank",
    "points": "points",
    "total_players": "season__archived_players",
    "reward": "reward",
    "corrected": "corrected_at",  # read as whether it is set
    "closed_rank": "closed_rank",
}


def _history_rows(player_id: str) -> QuerySet[ArchivedStanding, tuple[Any, ...]]:
    """The player's archived standings in every closed season of a shown board, newest first,
    as tuples of _HISTORY_COLUMNS: one query, through the archive's player key in each of its
    partitions."""
    reward = SeasonReward.objects.filter(
        season_id=OuterRef("season_id"), player_id=player_id, segment=""
    ).values("reward_code")
    return (
        ArchivedStanding.objects.filter(
            player_id=player_id, season__state=SeasonState.CLOSED, season__board__hidden=False
        )
        .annotate(reward=Subquery(reward))
        .order_by("-season__ends_at")
        .values_list(*_HISTORY_COLUMNS.values())
    )


def player_history(*, player_id: str) -> list[dict[str, Any]]:
    """A player's final standing in every closed season, newest first, with their reward: one
    query, read as tuples (a player page asks for it on every view)."""
    history = []
    for row in _history_rows(player_id):
        past = dict(zip(_HISTORY_COLUMNS, row, strict=True))
        # Changed by a correction of the season's archive after its close (closed_rank: the
        # rank the close gave; null: the close did not archive the player).
        past["corrected"] = past["corrected"] is not None
        history.append(past)
    return history


def season_rewards(
    *, season: Season, offset: int, limit: int, player_id: str | None = None
) -> dict[str, Any]:
    """A page of a closed season's rewards by rank (the `reward_unique_rank` index walks it):
    `rewards` and `next_offset`, the offset of the next page or None after the last."""
    if season.state != SeasonState.CLOSED:
        raise Conflict(
            f"Season '{season.slug}' is not closed yet; rewards are given when it closes.",
            code="season_not_closed",
        )
    # The whole board's rewards first, then each segment's, each by rank.
    rewards = SeasonReward.objects.filter(season=season).order_by("segment", "rank")
    if player_id:
        rewards = rewards.filter(player_id=player_id)
    # One row more than the page says whether another page follows, without counting them all.
    rows = list(
        rewards.values_list("player_id", "rank", "reward_code", "awarded_at", "segment")[
            offset : offset + limit + 1
        ]
    )
    return {
        "rewards": [
            {
                "player_id": p,
                "rank": rank,
                "reward_code": code,
                "awarded_at": awarded_at,
                **({"segment": segment} if segment else {}),
            }
            for p, rank, code, awarded_at, segment in rows[:limit]
        ],
        "next_offset": offset + limit if len(rows) > limit else None,
    }


def rewards_of(*, season: Season, player_ids: list[str], segment: str = "") -> dict[str, str]:
    """Each of these players' reward code in a closed season (of the whole board, or of one
    segment), by player; players without a reward are left out."""
    return dict(
        SeasonReward.objects.filter(
            season=season, player_id__in=player_ids, segment=segment
        ).values_list("player_id", "reward_code")
    )
