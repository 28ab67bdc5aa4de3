"""`python -m bench.run --players N [--tiny]` (what `make bench` runs): one benchmark run, phase
by phase (bench/README.md, "What a run does"). Loading is fatal when it fails; a measuring phase
that fails is recorded and the run goes on; the report is written whatever happened. Django
starts once the environment points at the bench's own database and keys."""

from __future__ import annotations

import sys

from scripts.processes import debian_tool

from .core import Program, options_parse, say
from .environment import HISTORY_MAX_PLAYERS, OPTIONS, bench_setup

# (flag, full-run default, help, tiny-run default)
RUN_OPTIONS = (
    *OPTIONS,
    ("--read-seconds", 20.0, "wrk time per read endpoint", 3.0),
    ("--warmup-seconds", 3.0, "unmeasured wrk time first", 1.0),
    ("--openread-seconds", 20.0, "time per read endpoint and rate, h2load at a fixed rate", 2.0),
    ("--openread-connections", 128, "connections the fixed-rate reads are spread over"),
    ("--ingest-seconds", 60.0, "time per closed-loop ingest mode", 5.0),
    ("--connections", 32, "wrk connections (reads)"),
    ("--threads", 2, "wrk threads"),
    ("--ingest-connections", 8, "wrk connections (POST)"),
    ("--web-workers", 2, "uvicorn --workers (Procfile)"),
    ("--worker-concurrency", 4, "celery --concurrency (Procfile)"),
    ("--probe-rate", 10.0, "freshness probes a second"),
    ("--open-rate", 6000.0, "results a second offered in batches of 100, open loop"),
    ("--open-seconds", 60.0, "time per open-loop phase", 6.0),
    ("--search-seconds", 30.0, "time per rate of the search", 3.0),
    ("--single-rate", 200.0, "single results a second, open loop"),
    ("--senders", 8, "open-loop senders"),
    ("--peak-sockets", 10_000, "the peak at once: sockets following players (0: no peak)", 50),
    ("--peak-read-rate", 6000.0, "the peak at once: the read rate tried first", 200.0),
    ("--peak-push-rate", 20.0, "the peak at once: probe results a second for followed players"),
    ("--peak-seconds", 30.0, "the peak at once: time per read rate", 3.0),
    ("--seed", 1, "seed of the generated season"),
    ("--no-charts", False, "skip the PNG charts"),
    ("--no-profile", False, "skip the py-spy profiles (when py-spy exists)"),
    ("--keep-redis", False, "leave the season's ZSET in Redis at the end"),
    ("--writes-only", False, "load the season, then measure only ingest (for the write path)"),
    ("--no-history", False, "load players and totals without their match results (at 100M)"),
    ("--segments", False, "2 segment dimensions; every player has values and a clan of 50"),
    ("--baseline", "", "also keep this run as baseline-NAME-<N>.json and .md, to compare with"),
)
# Set by --tiny alone: (tiny, full).
TINY_ONLY = {
    "search_steps": (1, 0),  # rates the search tries at most (0: every rate of its ladder)
    "zrevrank_samples": (2000, 20000), "pg_samples": (30, 300), "pg_seconds": (3, 30),
    "drain_seconds": (30, 180),
}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    options = options_parse("bench.run", __doc__, RUN_OPTIONS, argv)
    if options.players < 1000:
        options.error("--players must be at least 1000")
    for name, (tiny, full) in TINY_ONLY.items():
        setattr(options, name, tiny if options.tiny else full)
    if options.players > HISTORY_MAX_PLAYERS and not options.no_history:
        # Beyond this the results' table and keys would not fit the machine's disk beside the rest.
        options.no_history = True
        say(f"over {HISTORY_MAX_PLAYERS:,} players: the season is loaded without match results")
    # Players kept apart for the freshness probe (the load's writes never touch them).
    options.probe_players = max(10, min(1000, options.players // 10))
    options.profile = not options.no_profile and not options.tiny
    with Program("bench") as setup:
        wrk, h2load = debian_tool("wrk", "wrk"), debian_tool("h2load", "nghttp2-client")
        env = bench_setup(options)
    if setup.code:
        return setup.code
    from .phases import run

    return run(options, env, wrk, h2load)


if __name__ == "__main__":
    sys.exit(main())
