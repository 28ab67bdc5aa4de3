"""Writes to boards and seasons."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from .models import Board, Season

DEFAULT_BOARD = "global"


def board_ensure(*, slug: str, name: str) -> Board:
    board, _ = Board.objects.get_or_create(slug=slug, defaults={"name": name})
    return board


def month_window(moment: datetime) -> tuple[datetime, datetime]:
    """The UTC calendar month that holds `moment`."""
    moment = moment.astimezone(UTC)
    start = moment.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    end = (start + timedelta(days=32)).replace(day=1)
    return start, end


def season_create(
    *,
    board: Board,
    slug: str,
    name: str,
    starts_at: datetime,
    ends_at: datetime,
    grace_period: timedelta | None = None,
) -> Season:
    season = Season(
        board=board,
        slug=slug,
        name=name,
        starts_at=starts_at,
        ends_at=ends_at,
        grace_period=(
            grace_period
            if grace_period is not None
            else timedelta(seconds=settings.DEFAULT_SEASON_GRACE_SECONDS)
        ),
    )
    season.full_clean()
    season.save()
    return season


def default_board_ensure(*, now: datetime | None = None) -> tuple[Board, Season]:
    """The `global` board with a season for the current calendar month (idempotent)."""
    now = now or timezone.now()
    start, end = month_window(now)
    with transaction.atomic():
        board = board_ensure(slug=DEFAULT_BOARD, name="Global")
        Board.objects.select_for_update().get(pk=board.pk)
        season = Season.objects.filter(board=board, starts_at__lte=now, ends_at__gt=now).first()
        if season is None:
            season = season_create(
                board=board,
                slug=f"m{start:%Y%m}",
                name=f"{start:%B %Y}",
                starts_at=start,
                ends_at=end,
            )
    return board, season
