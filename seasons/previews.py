"""What closing a season would do, shown to the operator before it happens: the ranking store's
app computes it (from the live standings) and connects it here when Django starts, so this
app's admin can show it without importing that app (as seasons/jobs.py does for the jobs)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.exceptions import ImproperlyConfigured

from .models import Season

RewardsPreviewer = Callable[..., Any]

_previewers: list[RewardsPreviewer] = []


def connect(*, rewards: RewardsPreviewer) -> None:
    """Called once per process: `rewards(season=, offset=, limit=)` returns the preview."""
    _previewers[:] = [rewards]


def season_rewards_preview(*, season: Season, offset: int, limit: int) -> Any:
    """Who would get which reward if the season closed now (nothing is written)."""
    if not _previewers:
        raise ImproperlyConfigured("No app previews rewards (the leaderboards app connects).")
    return _previewers[0](season=season, offset=offset, limit=limit)
