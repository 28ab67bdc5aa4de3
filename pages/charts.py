"""The rank-over-time chart of a player's page, drawn as inline SVG on the server.

This module computes the geometry (coordinates in a fixed view box, axis ticks, a text summary)
from the shared chart pieces (config/building_blocks/charts.py); the template draws it. No chart
library: the page stays one round trip and works offline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from config.building_blocks.charts import Tick, round_ticks, thin

WIDTH = 640
HEIGHT = 260
# Rank labels sit just above their grid lines, dates below the plot: the margins leave room for
# them at the larger type used on phones (see site.css).
LEFT, RIGHT, TOP, BOTTOM = 8, 12, 34, 40
# The most samples drawn (not the score cap): a season has at most one sample per player every
# five minutes, and one point per pixel is enough.
MAX_PLOTTED_SAMPLES = WIDTH - LEFT - RIGHT


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


def rank_chart(
    *, samples: Sequence[tuple[datetime, int]], starts_at: datetime, now: datetime
) -> RankChart | None:
    """The chart of (time, rank) samples, oldest first, over starts_at..now; None when empty."""
    samples = thin(samples, MAX_PLOTTED_SAMPLES)
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
        y_ticks=[Tick(position=y_of(r), label=f"#{r:,}") for r in round_ticks(best, worst)],
        x_ticks=x_ticks,
        best_rank=best,
        worst_rank=worst,
        first=points[0],
        last=points[-1],
    )
