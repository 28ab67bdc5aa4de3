"""The friends view: a player and their friends ranked among themselves, each with their exact
rank on the whole board, from one read of the season's standings (store.read_many).

The REST read and the live sockets (live/friends.py) make the same board from their reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from matches.selectors import player_friends
from seasons.models import Season
from seasons.scoring import points_of

from . import selectors, store
from .profiles import profiles_get


def friends_board(
    season: Season,
    player_id: str,
    members: Sequence[str],
    standings: Sequence[store.Standing | None],
    rank_style: str,
    profiles: dict[str, tuple[str, str]] | None = None,
) -> dict[str, Any]:
    """The view from each member's standing (`members` is the player, then their friends).

    Ranked in the board's order, which already holds its tie rule (whoever reached the points
    first is ahead); in competition style members with equal points share a rank."""
    ranked = sorted(
        (standing for standing in standings if standing is not None), key=lambda s: s.rank
    )
    if profiles is None:
        profiles = profiles_get(s.player_id for s in ranked)
    lowest_first = season.board.lowest_first
    entries: list[dict[str, Any]] = []
    for index, standing in enumerate(ranked):
        points = points_of(standing.composite, lowest_first=lowest_first)
        rank = index + 1
        if rank_style == "competition" and entries and entries[-1]["points"] == points:
            rank = entries[-1]["rank"]
        display_name, avatar_url = profiles.get(standing.player_id, ("", ""))
        entries.append(
            {
                "rank": rank,
                "global_rank": selectors.rank_in_style(standing, rank_style),
                "player_id": standing.player_id,
                "display_name": display_name or standing.player_id,
                "avatar_url": avatar_url,
                "points": points,
            }
        )
    return {
        "player_id": player_id,
        "board": season.board.slug,
        "season": season.slug,
        "entries": entries,
        "unranked": [
            member for member, standing in zip(members, standings, strict=True) if standing is None
        ],
    }


def player_friends_view(
    *, season: Season, player_id: str, rank_style: str = "ordinal"
) -> dict[str, Any] | None:
    """The player's friends view of `season`; None for a player never seen."""
    friends = player_friends(player_id)
    if friends is None:
        return None
    return members_view(season, player_id, [player_id, *friends], rank_style)


def members_view(
    season: Season, player_id: str, members: Sequence[str], rank_style: str = "ordinal"
) -> dict[str, Any]:
    """The view of `members` (the player, then their friends), read in one round trip (two
    at the largest lists: one script call ranks at most 1,000 players)."""
    total, standings = selectors.standings_source(season).read_many(
        members, competition=rank_style == "competition"
    )
    return {
        **friends_board(season, player_id, members, standings, rank_style),
        "total_players": total,
    }
