"""Correcting a closed season's archive (after bans or voids in it), as this app's admin asks for
it: the ranking store's app, which keeps the archive, connects its preview and its correction
here when Django starts, so the admin can offer them without importing that app (as
seasons/previews.py does for the rewards' preview)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.core.exceptions import ImproperlyConfigured

from .models import Season


@dataclass(frozen=True, slots=True)
class _Corrections:
    preview: Callable[..., Any]
    correct: Callable[..., Any]


_connected: list[_Corrections] = []


def connect(*, preview: Callable[..., Any], correct: Callable[..., Any]) -> None:
    """Called once per process: `preview(season=, offset=, limit=)` says what a correction
    would change, writing nothing; `correct(season=, actor=, reason=)` makes it."""
    _connected[:] = [_Corrections(preview=preview, correct=correct)]


def _corrections() -> _Corrections:
    if not _connected:
        raise ImproperlyConfigured("No app corrects archives (the leaderboards app connects).")
    return _connected[0]


def season_archive_correction_preview(*, season: Season, offset: int, limit: int) -> Any:
    """What correcting the closed season's archive now would change (nothing is written)."""
    return _corrections().preview(season=season, offset=offset, limit=limit)


def season_archive_correct(
    *, season: Season, actor: AbstractBaseUser | None, reason: str = ""
) -> Any:
    """Correct the closed season's archive, audited as `actor`'s."""
    return _corrections().correct(season=season, actor=actor, reason=reason)
