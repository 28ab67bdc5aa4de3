"""The foundation of every bench program: its options, its run (signals, errors, exit codes, the
results written), its phases (timed, a failure recorded), latency summaries and report formats."""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

import psycopg
import redis

from scripts.processes import ROOT, ServiceError, Timeout

RESULTS = ROOT / "bench" / "results"
Figures = dict[str, Any]  # what a measurement reports, by name
# The points of every latency curve in the results (wrk prints the same ones, see wrk/report.lua).
CURVE_PERCENTILES = (1, 5, 10, 20, 25, 30, 40, 50, 60, 70, 75, 80, 85, 90, 95, 97.5, 99, 99.5, 99.9)


class BenchError(Exception):
    """A condition the harness can explain to whoever runs it."""


def say(message: str, program: str = "bench") -> None:
    print(f"[{program}] {message}", flush=True)


def options_parse(prog: str, doc: str | None, options: Sequence[tuple[Any, ...]],
                  argv: list[str] | None) -> argparse.Namespace:  # fmt: skip
    """Options as (flag, default, help[, tiny default]): a False default makes a flag."""
    parser, tiny_defaults = argparse.ArgumentParser(prog=f"python -m {prog}", description=doc), {}
    for flag, default, help_text, *tiny in options:
        if default is False:
            parser.add_argument(flag, action="store_true", help=help_text)
        else:
            if tiny:
                tiny_defaults[flag.lstrip("-").replace("-", "_")] = (default, tiny[0])
            kind = type(default) if default is not None else str
            parser.add_argument(flag, type=kind, default=None if tiny else default, help=help_text)
    args = parser.parse_args(argv)
    for name, (full, small) in tiny_defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, small if getattr(args, "tiny", False) else full)
    args.error = parser.error
    return args


class Program:
    """`with Program(name) as run:` around a program's body: `run.code` is 2 after an explained
    error, 130 after Ctrl-C, SIGTERM or SIGHUP (unwound as Ctrl-C: every `finally` runs), else 0."""

    EXPLAINED = (BenchError, ServiceError, Timeout, redis.RedisError, psycopg.OperationalError)

    def __init__(self, name: str) -> None:
        self.name, self.code = name, 0

    def __enter__(self) -> Program:
        def stop(signum: int, frame: FrameType | None) -> None:
            raise KeyboardInterrupt(f"signal {signum}")

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGHUP, stop)
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, _: Any) -> bool:
        if isinstance(exc, self.EXPLAINED):
            print(f"[{self.name}] ERROR: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
            self.code = 2
        elif isinstance(exc, KeyboardInterrupt):
            self.code = 130
        return self.code != 0


def program_main(
    name: str, doc: str | None, options: Sequence[tuple[Any, ...]], argv: list[str] | None,
    check: Callable[[argparse.Namespace], str | None],
    measure: Callable[[Any, dict[str, Any]], None], report: Callable[[dict[str, Any]], str],
) -> int:  # fmt: skip
    """`python -m bench.<name>` with `options`, --seed and --output (`check` refuses them with a
    message); `measure(options, result)` fills the results, written to --output, then `report`."""
    latest = f"{name}-latest.json"
    seed = ("--seed", 1, "seed of the generated players")
    output = ("--output", RESULTS / latest, f"results file (bench/results/{latest})")
    parsed = options_parse(f"bench.{name}", doc, (*options, seed, output), argv)
    if problem := check(parsed):
        parsed.error(problem)
    when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    result: dict[str, Any] = {"benchmark": name, "when": when}
    with Program(name) as run:
        measure(parsed, result)
    if run.code:
        return run.code
    json_write(result, parsed.output)
    print(report(result))
    say(f"wrote {parsed.output}", name)
    return 0


def json_write(result: dict[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=2, default=str) + "\n")


class Phases:
    """Times each phase into `results` and records its failure instead of losing the whole run
    to it (unless `fatal`)."""

    def __init__(self, results: dict[str, Any]) -> None:
        self.results = results
        results.setdefault("phases", {})
        results.setdefault("errors", [])

    @contextmanager
    def phase(self, name: str, *, fatal: bool = False) -> Iterator[None]:
        say(f"{name} ...")
        started, load_before = time.perf_counter(), os.getloadavg()[0]
        try:
            yield
        except Exception as exc:
            self.results["errors"].append({"phase": name, "error": f"{type(exc).__name__}: {exc}"})
            say(f"{name} FAILED: {type(exc).__name__}: {exc}")
            traceback.print_exc()
            if fatal:
                raise
        finally:
            self.results["phases"][name] = {
                "seconds": round(time.perf_counter() - started, 2),
                "load_average_1m_before": round(load_before, 2),
                "load_average_1m_after": round(os.getloadavg()[0], 2),
            }


def percentile(ordered: Sequence[float], p: float) -> float:
    """Nearest-rank percentile of an ascending sequence (p in 0..100)."""
    if not ordered:
        return 0.0
    index = max(0, math.ceil(p / 100 * len(ordered)) - 1)
    return float(ordered[min(index, len(ordered) - 1)])


def search_ladder(start: float, upwards: bool, up: Sequence[float], down: Sequence[float],
                  steps: int) -> list[float]:  # fmt: skip
    """The rates a search tries after `start`: upwards the higher of `up`, downwards the lower of
    `down`, at most `steps` (0: all). It ends at the first rate whose verdict differs."""
    ladder = [rate for rate in up if rate > start] if upwards else [r for r in down if r < start]
    return ladder[: steps or None]


def latency_summary(samples_ms: Sequence[float], *, curve: bool = True) -> dict[str, Any]:
    """p50/p90/p99/p99.9/max/mean of samples in milliseconds, and the curve for the charts."""
    ordered = sorted(samples_ms)
    if not ordered:
        return {"samples": 0}
    summary: dict[str, Any] = {"samples": len(ordered)}
    for p in (50, 90, 99, 99.9):
        summary[f"p{p:g}_ms".replace(".", "")] = round(percentile(ordered, p), 4)
    summary.update(max_ms=round(ordered[-1], 4), mean_ms=round(sum(ordered) / len(ordered), 4))
    if curve:
        summary["curve_ms"] = [[p, round(percentile(ordered, p), 4)] for p in CURVE_PERCENTILES]
    return summary


def get(data: Any, *path: str) -> Any:
    """data[path[0]][path[1]]..., or None where a step is missing."""
    for key in path:
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    return data


def n(value: Any, digits: int = 0) -> str:
    if value is None:
        return "–"
    return f"{value:,.{digits}f}" if isinstance(value, int | float) else str(value)


def ms(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:.3f}" if value < 1 else f"{value:.1f}" if value < 100 else f"{value:,.0f}"


def pct(ratio: float | None) -> str:
    return "–" if ratio is None else f"{ratio * 100:,.0f}%"


def share(value: float | None) -> str:
    return "–" if value is None else f"{value:.2%}"


def table(header: str, align: str, rows: Sequence[Sequence[Any]]) -> list[str]:
    """A Markdown table: cells split by `|` in `header`, `l` or `r` a column in `align`."""
    cells = [cell.strip() for cell in header.split("|")]
    rule = "".join("---|" if a == "l" else "---:|" for a in align)
    lines = ["| " + " | ".join(cells) + " |", "|" + rule]
    return lines + ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
