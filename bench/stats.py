"""Percentiles and latency summaries of timed samples, as the harness reports them."""

from __future__ import annotations

import math
from collections.abc import Sequence

# The points of every latency curve in the results (wrk prints the same ones, see wrk/report.lua).
CURVE_PERCENTILES = (1, 5, 10, 20, 25, 30, 40, 50, 60, 70, 75, 80, 85, 90, 95, 97.5, 99, 99.5, 99.9)


def percentile(ordered: Sequence[float], p: float) -> float:
    """Nearest-rank percentile of an ascending sequence (p in 0..100)."""
    if not ordered:
        return 0.0
    index = max(0, math.ceil(p / 100 * len(ordered)) - 1)
    return float(ordered[min(index, len(ordered) - 1)])


def latency_summary(samples_ms: Sequence[float]) -> dict[str, object]:
    """p50/p90/p99/max/mean of samples in milliseconds, and the curve for the charts."""
    ordered = sorted(samples_ms)
    if not ordered:
        return {"samples": 0}
    return {
        "samples": len(ordered),
        "p50_ms": round(percentile(ordered, 50), 4),
        "p90_ms": round(percentile(ordered, 90), 4),
        "p99_ms": round(percentile(ordered, 99), 4),
        "max_ms": round(ordered[-1], 4),
        "mean_ms": round(sum(ordered) / len(ordered), 4),
        "curve_ms": [[p, round(percentile(ordered, p), 4)] for p in CURVE_PERCENTILES],
    }
