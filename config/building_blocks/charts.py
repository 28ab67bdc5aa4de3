"""Chart geometry for inline SVG drawn on the server: round axis ticks, samples thinned to the
pixels, and a line over time in a fixed view box, broken where a sample is missing.

The player page's rank chart (pages/charts.py) and the operator dashboard's charts
(leaderboards/dashboard.py) are both made of these, and their templates draw them. No chart
library: a page stays one round trip, works offline, and runs no script (nothing for a
Content-Security-Policy to allow).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TypeVar

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Tick:
    position: float
    label: str


def thin(samples: Sequence[T], limit: int) -> list[T]:
    """At most `limit` samples, evenly spread, always keeping the last one."""
    if len(samples) <= limit:
        return list(samples)
    step = len(samples) / limit
    kept = [samples[int(i * step)] for i in range(limit - 1)]
    return [*kept, samples[-1]]


def round_step(span: float, most: int) -> int:
    """The smallest whole step of 1, 2 or 5 times a power of ten that cuts `span` into at most
    `most` steps."""
    if span <= 0:
        return 1
    magnitude = 10 ** math.floor(math.log10(span))
    step = next(m * magnitude for m in (0.2, 0.5, 1, 2, 5, 10) if span / (m * magnitude) <= most)
    return max(1, int(step))


def round_ticks(low: int, high: int) -> list[int]:
    """Two to four round values spanning low..high (low and high themselves when fewer)."""
    if low == high:
        return [low]
    step = round_step(high - low, 3)
    first = math.ceil(low / step) * step
    ticks = list(range(first, high + 1, step))
    return sorted({low, *ticks, high}) if len(ticks) < 2 else ticks


@dataclass(frozen=True, slots=True)
class TimePoint:
    at: datetime
    value: float
    x: float
    y: float


@dataclass(frozen=True, slots=True)
class TimeChart:
    """A line of values over time from zero up: `lines` are SVG polylines' points, one per run
    of consecutive samples (a run of one is one point twice, drawn as a dot with round caps)."""

    width: int
    height: int
    plot_left: int
    plot_right: int
    plot_top: int
    plot_bottom: int
    points: list[TimePoint]
    lines: list[str]
    y_ticks: list[Tick]
    x_ticks: list[Tick]
    samples: int  # the buckets the chart spans, sampled or not
    latest: TimePoint | None
    highest: float | None


def time_chart(
    *,
    samples: Sequence[tuple[datetime, float | None]],
    tick_every: timedelta,
    tick_format: str,
    width: int = 320,
    height: int = 130,
) -> TimeChart:
    """The chart of (time, value or None) samples, oldest first and evenly spaced, from the
    first sample's time at the left to the last's at the right; the value axis starts at zero
    and ends at a round value at least the highest. A time that is a whole `tick_every` is
    labelled on the time axis (`tick_format`, strftime's)."""
    left, right, top, bottom = 6, 6, 18, 20
    plot_width, plot_height = width - left - right, height - top - bottom
    values = [value for _, value in samples if value is not None]
    highest = max(values) if values else None
    step = round_step(highest or 1, 3)
    ceiling = max(step, math.ceil((highest or 0) / step) * step)
    start = samples[0][0] if samples else datetime.min
    duration = (samples[-1][0] - start).total_seconds() if samples else 0.0

    def x_of(at: datetime) -> float:
        if duration <= 0:
            return float(left + plot_width)
        return round(left + plot_width * (at - start).total_seconds() / duration, 1)

    def y_of(value: float) -> float:
        return round(top + plot_height * (1 - value / ceiling), 1)

    points: list[TimePoint] = []
    runs: list[list[TimePoint]] = [[]]
    for at, value in samples:
        if value is None:
            if runs[-1]:
                runs.append([])
            continue
        point = TimePoint(at=at, value=value, x=x_of(at), y=y_of(value))
        points.append(point)
        runs[-1].append(point)
    lines = [
        " ".join(f"{p.x:g},{p.y:g}" for p in (run if len(run) > 1 else [*run, *run]))
        for run in runs
        if run
    ]
    every = tick_every.total_seconds()
    x_ticks = [
        Tick(position=x_of(at), label=at.strftime(tick_format))
        for at, _ in samples
        if at.timestamp() % every == 0
    ]
    return TimeChart(
        width=width,
        height=height,
        plot_left=left,
        plot_right=width - right,
        plot_top=top,
        plot_bottom=height - bottom,
        points=points,
        lines=lines,
        y_ticks=[Tick(position=y_of(v), label=f"{v:,}") for v in range(0, ceiling + 1, step)],
        x_ticks=x_ticks,
        samples=len(samples),
        latest=points[-1] if points else None,
        highest=highest,
    )
