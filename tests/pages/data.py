"""Boards, seasons and players for the page tests, with names a reader can tell apart."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from leaderboards.models import ArchivedStanding, SeasonReward
from matches.models import Player
from seasons.models import Board, Season, SeasonState
from tests.factories import BoardFactory, PlayerFactory, SeasonFactory

NAMES = [
    "Ada Lovelace",
    "Grace Hopper",
    "Alan Turing",
    "Katherine Johnson",
    "Linus Torvalds",
    "Margaret Hamilton",
    "Dennis Ritchie",
    "Barbara Liskov",
    "Ken Thompson",
    "Frances Allen",
    "Donald Knuth",
    "Radia Perlman",
    "Edsger Dijkstra",
    "Hedy Lamarr",
    "John von Neumann",
    # A long name: the tables must cut it, not scroll sideways on a phone.
    "Maximiliana Alexandra Featherstonehaugh-Cholmondeley of the Western Isles",
]


def player_id(n: int) -> str:
    return f"p{n:03d}"


def display_name(n: int) -> str:
    """Player n's display name (numbered once the list runs out)."""
    return NAMES[(n - 1) % len(NAMES)] + ("" if n <= len(NAMES) else f" {n}")


def players(count: int) -> list[Player]:
    """Players p001..p<count>, with display names."""
    return [
        PlayerFactory(player_id=player_id(n), display_name=display_name(n))
        for n in range(1, count + 1)
    ]


def global_board() -> Board:
    return BoardFactory(slug="global", name="Global")


def running_season(board: Board) -> Season:
    return SeasonFactory(board=board, slug="s12", name="Season 12")


def closed_season(
    board: Board, standings: list[tuple[str, int]], rewards: dict[str, str]
) -> Season:
    """A season that ended ten days ago, closed with these (player_id, points) standings."""
    ends_at = timezone.now().replace(microsecond=0) - timedelta(days=10)
    season = SeasonFactory(
        board=board,
        slug="s11",
        name="Season 11",
        starts_at=ends_at - timedelta(days=28),
        ends_at=ends_at,
        state=SeasonState.CLOSED,
        close_step="closed",
        closed_at=ends_at + timedelta(hours=1),
        archived_players=len(standings),
    )
    ArchivedStanding.objects.bulk_create(
        ArchivedStanding(
            season=season,
            rank=rank,
            competition_rank=rank,
            player_id=pid,
            points=points,
            reached_at=ends_at - timedelta(days=1),
        )
        for rank, (pid, points) in enumerate(standings, start=1)
    )
    ranks = {pid: rank for rank, (pid, _) in enumerate(standings, start=1)}
    SeasonReward.objects.bulk_create(
        SeasonReward(
            season=season,
            player_id=pid,
            rank=ranks[pid],
            reward_code=code,
            awarded_at=season.closed_at,
        )
        for pid, code in rewards.items()
    )
    return season


# The pages' Content-Security-Policy, its directives sorted (they come in no fixed order).
STRICT_POLICY = [
    "base-uri 'none'",
    "default-src 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "img-src 'self' https:",
    "object-src 'none'",
]
