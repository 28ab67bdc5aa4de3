"""Reads of boards and seasons: which season a request means, and what clients may list."""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.db.models import QuerySet
from django.utils import timezone

from config.building_blocks.caching import RecentAnswers
from config.building_blocks.errors import NotFound

from .models import DEFAULT_BOARD, Board, Season, SeasonState

# The seasons read requests named lately, reused for LEADERBOARD_SEASON_CACHE_SECONDS. Only
# seasons that exist are kept (a lookup of an unknown one raises), so 1,024 is plenty.
season_lookups_cache: RecentAnswers[Season] = RecentAnswers(
    seconds=lambda: settings.LEADERBOARD_SEASON_CACHE_SECONDS, maxsize=lambda: 1024
)
# The open seasons of the boards players see, for the player pages; same reuse and lifetime.
open_seasons_cache: RecentAnswers[list[Season]] = RecentAnswers(
    seconds=lambda: settings.LEADERBOARD_SEASON_CACHE_SECONDS, maxsize=lambda: 1
)


def board_get(*, slug: str, include_hidden: bool = False) -> Board:
    """The board a request names. A hidden board is unknown to the public (the same 404 as a
    board that does not exist, so nothing tells that it does); operators' commands include it."""
    boards = Board.objects.all() if include_hidden else Board.objects.filter(hidden=False)
    board = boards.filter(slug=slug).first()
    if board is None:
        raise NotFound(f"Unknown board '{slug}'.", code="board_not_found")
    return board


def boards_list() -> QuerySet[Board]:
    """The boards players may see."""
    return Board.objects.filter(hidden=False).order_by("slug")


def seasons_list(*, board: Board) -> QuerySet[Season]:
    return Season.objects.filter(board=board).select_related("board").order_by("starts_at")


def season_current(*, board: Board, now: datetime | None = None) -> Season | None:
    """The season whose window holds `now`; between seasons, the one that ended last."""
    now = now or timezone.now()
    seasons = Season.objects.filter(board=board).select_related("board")
    running = seasons.filter(starts_at__lte=now, ends_at__gt=now).order_by("-starts_at").first()
    if running is not None:
        return running
    return seasons.filter(starts_at__lte=now).order_by("-ends_at").first()


def season_next(*, board: Board, now: datetime | None = None) -> Season | None:
    now = now or timezone.now()
    return (
        Season.objects.filter(board=board, starts_at__gt=now)
        .select_related("board")
        .order_by("starts_at")
        .first()
    )


def season_get(
    *, board_slug: str | None, season_slug: str | None, include_hidden: bool = False
) -> Season:
    """The season a request names, or the board's current one (uncached); a hidden board's
    only with `include_hidden` (operators' commands)."""
    board = board_get(slug=board_slug or DEFAULT_BOARD, include_hidden=include_hidden)
    if season_slug:
        season = (
            Season.objects.filter(board=board, slug=season_slug).select_related("board").first()
        )
        if season is None:
            raise NotFound(
                f"Board '{board.slug}' has no season '{season_slug}'.", code="season_not_found"
            )
        return season
    season = season_current(board=board)
    if season is None:
        raise NotFound(f"Board '{board.slug}' has no running season.", code="no_active_season")
    return season


def seasons_of_hidden_boards(*, season_ids: list[int]) -> list[int]:
    """Which of these seasons belong to a hidden board (the live ticker's check for sockets
    that missed the hide's notice)."""
    return list(
        Season.objects.filter(pk__in=season_ids, board__hidden=True).values_list("pk", flat=True)
    )


def season_for_read(*, board_slug: str | None, season_slug: str | None) -> Season:
    """season_get, cached briefly in the process: read endpoints resolve a season per request."""
    return season_lookups_cache.get_or_build(
        (board_slug or DEFAULT_BOARD, season_slug or None),
        lambda: season_get(board_slug=board_slug, season_slug=season_slug),
    )


def seasons_open_shown() -> list[Season]:
    """The open seasons of the boards players see, by board and start; cached briefly in the
    process, as season_for_read is (every player page asks)."""
    return open_seasons_cache.get_or_build(
        "open",
        lambda: list(
            Season.objects.filter(state=SeasonState.OPEN, board__hidden=False)
            .select_related("board")
            .order_by("board__slug", "starts_at")
        ),
    )
