"""A closed season's archive as this app's admin exports it (CSV, Parquet), without this app
importing the one that keeps the archive: the leaderboards app connects its exporters
(leaderboards/exports.py) here when Django starts, as it connects the jobs (seasons/jobs.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import IO

from django.core.exceptions import ImproperlyConfigured

from .models import Season


@dataclass(frozen=True, slots=True)
class _Exporters:
    csv: Callable[..., int]
    parquet: Callable[..., int]


_exporters: list[_Exporters] = []


def connect(*, csv: Callable[..., int], parquet: Callable[..., int]) -> None:
    """Called once per process: `csv(season=, out=)` and `parquet(season=, out=)` write the
    season's archived standings and return the rows written."""
    _exporters[:] = [_Exporters(csv=csv, parquet=parquet)]


def _connected() -> _Exporters:
    if not _exporters:
        raise ImproperlyConfigured("No app exports the archive (the leaderboards app connects).")
    return _exporters[0]


def standings_export_csv(*, season: Season, out: IO[str]) -> int:
    return _connected().csv(season=season, out=out)


def standings_export_parquet(*, season: Season, out: IO[bytes] | str) -> int:
    return _connected().parquet(season=season, out=out)
