"""Writes to boards and seasons."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings

from .models import DEFAULT_BOARD, Board, ScheduleKind, Season


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
    """The default board on a monthly schedule, with its running season (idempotent)."""
    from .planning import board_seasons_plan

    board, _ = Board.objects.get_or_create(
        slug=DEFAULT_BOARD, defaults={"name": "Global", "schedule": ScheduleKind.MONTHLY}
    )
    if board.schedule == ScheduleKind.NONE:
        Board.objects.filter(pk=board.pk).update(schedule=ScheduleKind.MONTHLY)
        board.refresh_from_db()
    current, _ = board_seasons_plan(board=board, now=now)
    return board, current
