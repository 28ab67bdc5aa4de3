"""The rank-over-time chart of a player's page, drawn as inline SVG on the server.

This module computes the geometry (coordinates in a fixed view box, axis ticks, a text summary);
the template draws it. No chart library: the page stays one round trip and works offline.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

WIDTH = 640
HEIGHT = 260
# Rank labels sit just above their grid lines, dates below the plot: the margins leave room for
# them at the larger type used on phones (see site.css).
LEFT, RIGHT, TOP, BOTTOM = 8, 12, 34, 40
# The most samples drawn (not the score cap): a season has at most one sample per player every
# five minutes, and one point per pixel is enough.
MAX_PLOTTED_SAMPLES = WIDTH - LEFT - RIGHT


@dataclass(frozen=True, slots=True)
class Tick:
    position: float
    label: str


@dataclass(frozen=True, slots=True)
class RankPoint:
    at: datetime
    rank: int
    x: float
    y: float


@dataclass(frozen=True, slots=True)
class RankChart:
    width: int
    height: int
    plot_left: int
    plot_right: int
    plot_top: int
    plot_bottom: int
    points: list[RankPoint]
    polyline: str
    y_ticks: list[Tick]
    x_ticks: list[Tick]
    best_rank: int
    worst_rank: int
    first: RankPoint
    last: RankPoint


def _thin(samples: Sequence[tuple[datetime, int]], limit: int) -> list[tuple[datetime, int]]:
    """At most `limit` samples, evenly spread in time, always keeping the last one."""
    if len(samples) <= limit:
        return list(samples)
    step = len(samples) / limit
    kept = [samples[int(i * step)] for i in range(limit - 1)]
    return [*kept, samples[-1]]


def _rank_ticks(best: int, worst: int) -> list[int]:
    """Two to four round ranks spanning best..worst."""
    if best == worst:
        return [best]
    span = worst - best
    magnitude = 10 ** math.floor(math.log10(span))
    step = next(m * magnitude for m in (0.2, 0.5, 1, 2, 5, 10) if span / (m * magnitude) <= 3)
    step = max(1, int(step))
    first = math.ceil(best / step) * step
    ticks = list(range(first, worst + 1, step))
    return sorted({best, *ticks, worst}) if len(ticks) < 2 else ticks


def rank_chart(
    *, samples: Sequence[tuple[datetime, int]], starts_at: datetime, now: datetime
) -> RankChart | None:
    """The chart of (time, rank) samples, oldest first, over starts_at..now; None when empty."""
    samples = _thin(samples, MAX_PLOTTED_SAMPLES)
    if not samples:
        return None
    ranks = [rank for _, rank in samples]
    best, worst = min(ranks), max(ranks)
    start = min(starts_at, samples[0][0])
    end = max(now, samples[-1][0])
    duration = max((end - start).total_seconds(), 1.0)
    plot_width = WIDTH - LEFT - RIGHT
    plot_height = HEIGHT - TOP - BOTTOM

    def x_of(at: datetime) -> float:
        return round(LEFT + plot_width * (at - start).total_seconds() / duration, 1)

    def y_of(rank: int) -> float:
        # Rank 1 is best, so the best rank seen is drawn at the top.
        if best == worst:
            return round(TOP + plot_height / 2, 1)
        return round(TOP + plot_height * (rank - best) / (worst - best), 1)

    points = [RankPoint(at=at, rank=rank, x=x_of(at), y=y_of(rank)) for at, rank in samples]
    x_ticks = [Tick(position=x_of(start), label=f"{start:%b} {start.day}")]
    if (end - start).days >= 1:
        x_ticks.append(Tick(position=x_of(end), label=f"{end:%b} {end.day}"))
    return RankChart(
        width=WIDTH,
        height=HEIGHT,
        plot_left=LEFT,
        plot_right=WIDTH - RIGHT,
        plot_top=TOP,
        plot_bottom=HEIGHT - BOTTOM,
        points=points,
        polyline=" ".join(f"{p.x},{p.y}" for p in points),
        y_ticks=[Tick(position=y_of(r), label=f"#{r:,}") for r in _rank_ticks(best, worst)],
        x_ticks=x_ticks,
        best_rank=best,
        worst_rank=worst,
        first=points[0],
        last=points[-1],
    )
