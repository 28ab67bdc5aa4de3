"""PNG charts of a run (matplotlib, optional: without it the run writes no charts)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

TICKS = (50, 90, 99, 99.9)
SERVERS = {"reference": "bare ASGI", "cached": "top cache 1 s", "uncached": "top cache off"}


def _x(p: float) -> float:
    """Percentiles on a 'nines' axis: 50 -> 0.3, 90 -> 1, 99 -> 2, 99.9 -> 3."""
    return -math.log10(max(1e-6, 1 - p / 100))


def _curve(ax: Any, figures: dict[str, Any] | None, label: str, **style: Any) -> None:
    points = [(p, ms) for p, ms in (figures or {}).get("curve_ms", []) if ms > 0]
    if points:
        ax.plot([_x(p) for p, _ in points], [ms for _, ms in points], label=label, **style)


def _finish(ax: Any, title: str, legend: int = 7) -> None:
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=legend)


def charts_write(results: dict[str, Any], out: Path) -> list[Path]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    written, title = [], f"{results['players']:,} players, run {results['run']}"

    def save(fig: Any, suptitle: str | None, name: str) -> None:
        if suptitle:
            fig.suptitle(suptitle)
        fig.tight_layout()
        fig.savefig(out / name, dpi=110)
        plt.close(fig)
        written.append(out / name)

    http, ingest = results.get("http") or {}, results.get("ingest") or {}
    fig, (http_ax, rank_ax) = plt.subplots(1, 2, figsize=(13, 5))
    for server, endpoints in http.items():
        for name, figures in endpoints.items():
            style = {"linestyle": {"cached": "-", "uncached": "--"}.get(server, "-.")}
            _curve(http_ax, figures, f"{name} ({SERVERS[server]})", **style)
    for mode, figures in ingest.items():
        _curve(http_ax, figures.get("requests"), f"POST scores, {mode}", linestyle=":")
    rank = results.get("rank") or {}
    for figures, label in (
        (rank.get("zrevrank"), "raw ZREVRANK"),
        (rank.get("gateway_read_rank"), "gateway Lua read_rank"),
        (rank.get("postgres_count"), "PostgreSQL count(*) + 1"),
        ((http.get("cached") or {}).get("rank"), "rank via API"),
    ):
        _curve(rank_ax, figures, label)
    for ax, name in (
        (http_ax, "HTTP latency by percentile (wrk)"),
        (rank_ax, "What's my rank? one request at a time vs API under load"),
    ):
        ax.set_xticks([_x(p) for p in TICKS], [f"p{p:g}" for p in TICKS])
        ax.set(yscale="log", ylabel="latency (ms, log)")
        _finish(ax, name)
    save(fig, f"Latency distribution - {title}", "latency.png")

    if ingest:
        fig, (rate_ax, fresh_ax) = plt.subplots(2, 1, figsize=(11, 7), sharex=True)
        for mode, figures in ingest.items():
            series = figures.get("per_second") or []
            rate_ax.plot([s for s, _ in series], [n for _, n in series], label=mode, marker=".")
            samples = (figures.get("freshness") or {}).get("series") or []
            fresh_ax.scatter([t for t, _ in samples], [ms for _, ms in samples], s=6, label=mode,
                             alpha=0.6)  # fmt: skip
        rate_ax.axhline(6000, color="grey", linestyle="--", linewidth=1, label="target (batches)")
        rate_ax.set_ylabel("accepted results / s")
        _finish(rate_ax, "Accepted results per second (counted in PostgreSQL)", 8)
        fresh_ax.axhline(1000, color="grey", linestyle="--", linewidth=1, label="p99 target")
        fresh_ax.set(
            yscale="log", ylabel="freshness (ms, log)", xlabel="seconds since the load started"
        )
        _finish(fresh_ax, "Time from the 201 to the new total in Redis (probe)", 8)
        save(fig, f"Ingest - {title}", "ingest.png")

    bars = [(f"{name} ({SERVERS[server]})", f.get("requests_per_s", 0), f.get("ratio_to_ceiling"))
            for server, endpoints in http.items() for name, f in endpoints.items()]  # fmt: skip
    if bars:
        fig, ax = plt.subplots(figsize=(9, 0.45 * len(bars) + 1.5))
        ax.barh([b[0] for b in bars], [b[1] for b in bars], color="tab:blue")
        for index, (_, rps, ratio) in enumerate(bars):
            note = f" {rps:,.0f}" + (f" ({ratio * 100:.0f}% of ceiling)" if ratio else "")
            ax.text(rps, index, note, va="center", fontsize=8)
        ax.invert_yaxis()
        ax.set(xlabel="requests / s", title=f"Throughput against the ping ceiling - {title}")
        ax.margins(x=0.35)
        save(fig, None, "throughput.png")
    return written
