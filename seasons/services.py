"""Writes to seasons: season_create is where a new season is made, by the planner as by a
script, so every one passes the same checks."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings

from .models import Board, Season


def season_create(
    *,
    board: Board,
    slug: str,
    name: str,
    starts_at: datetime,
    ends_at: datetime,
    grace_period: timedelta | None = None,
) -> Season:
    """A new season of the board, checked by Season.clean (window, overlap) before it is saved."""
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
