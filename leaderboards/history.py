"""Reads of what closed seasons left behind: a player's final standing and reward in each, and
a closed season's rewards by rank (the player pages, `/players/{id}/seasons` and the rewards
endpoint). The standings themselves, read like a live board's, are in archive.py."""

from __future__ import annotations

from typing import Any

from config.building_blocks.errors import Conflict
from seasons.models import Season, SeasonState

from .models import ArchivedStanding, SeasonReward


def player_history(*, player_id: str) -> list[dict[str, Any]]:
    """A player's final standing in every closed season, newest first, with their reward."""
    standings = (
        ArchivedStanding.objects.filter(
            player_id=player_id, season__state=SeasonState.CLOSED, season__board__hidden=False
        )
        .select_related("season", "season__board")
        .order_by("-season__ends_at")
    )
    rewards = dict(
        SeasonReward.objects.filter(
            player_id=player_id, season__board__hidden=False, segment=""
        ).values_list("season_id", "reward_code")
    )
    return [
        {
            "board": standing.season.board.slug,
            "season": standing.season.slug,
            "season_name": standing.season.name,
            "ends_at": standing.season.ends_at,
            "final_rank": standing.rank,
            "competition_rank": standing.competition_rank,
            "points": standing.points,
            "total_players": standing.season.archived_players,
            "reward": rewards.get(standing.season_id),
            # Changed by a correction of the season's archive after its close, and the rank
            # the close gave (null: the close did not archive the player).
            "corrected": standing.corrected_at is not None,
            "closed_rank": standing.closed_rank,
        }
        for standing in standings
    ]


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
