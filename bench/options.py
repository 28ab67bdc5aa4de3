"""Command-line options of `python -m bench.run`, with the full and the tiny (CI) defaults."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
# The bench's own PostgreSQL cluster (its data is kept between runs).
POSTGRES_DIR = ROOT / ".run" / "bench-pg"
# Tiny runs only keep the harness working; their figures never replace a real run's.
TINY_RESULTS = RESULTS / "tmp" / "tiny"


@dataclass(frozen=True)
class Options:
    players: int
    tiny: bool
    read_seconds: float
    warmup_seconds: float
    openread_seconds: float
    openread_connections: int
    stacks_seconds: float
    ingest_seconds: float
    connections: int
    threads: int
    ingest_connections: int
    web_workers: int
    worker_concurrency: int
    probe_rate: float
    open_rate: float
    open_seconds: float
    search_seconds: float
    search_steps: int  # rates tried at most by the search (0: every rate of its ladder)
    single_rate: float
    senders: int
    zrevrank_samples: int
    pg_samples: int
    pg_seconds: float
    drain_seconds: float
    database: str
    database_url: str | None
    postgres_dir: Path
    key_prefix: str
    broker_db: int
    results_dir: Path
    seed: int
    charts: bool
    profile: bool
    keep_redis: bool
    writes_only: bool
    reuse_season: bool

    @property
    def probe_players(self) -> int:
        """Players kept apart for the freshness probe (wrk's writes never touch them)."""
        return max(10, min(1000, self.players // 10))


def seed_and_results_file_add(parser: argparse.ArgumentParser, results_file: str) -> None:
    """The --seed and --output options every side benchmark takes (bench.engines, bench.shards,
    bench.score_bands): its results land in bench/results/<results_file> unless told."""
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--output",
        type=Path,
        default=RESULTS / results_file,
        help=f"results file (bench/results/{results_file})",
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench.run",
        description="Load a season of N players, then measure reads, writes, memory and rebuild.",
    )
    parser.add_argument("--players", type=int, default=1_000_000, help="season size N")
    parser.add_argument(
        "--tiny", action="store_true", help="CI mode: a few seconds a phase, results in tmp/"
    )
    parser.add_argument("--read-seconds", type=float, help="wrk time per read endpoint")
    parser.add_argument("--warmup-seconds", type=float, help="unmeasured wrk time first")
    parser.add_argument(
        "--openread-seconds",
        type=float,
        help="time per read endpoint and rate at a fixed offered rate, h2load (20)",
    )
    parser.add_argument(
        "--openread-connections",
        type=int,
        default=128,
        help="connections the fixed-rate reads are spread over",
    )
    parser.add_argument(
        "--stacks-seconds", type=float, help="wrk time per serving stack side by side (5)"
    )
    parser.add_argument("--ingest-seconds", type=float, help="time per ingest mode")
    parser.add_argument("--connections", type=int, default=32, help="wrk connections (reads)")
    parser.add_argument("--threads", type=int, default=2, help="wrk threads")
    parser.add_argument("--ingest-connections", type=int, default=8, help="wrk connections (POST)")
    parser.add_argument("--web-workers", type=int, default=2, help="uvicorn --workers")
    parser.add_argument(
        "--worker-concurrency", type=int, default=4, help="celery --concurrency (Procfile)"
    )
    parser.add_argument("--probe-rate", type=float, default=10.0, help="freshness probes a second")
    parser.add_argument(
        "--open-rate",
        type=float,
        default=6000,
        help="results a second offered in batches of 100 by the open-loop phase",
    )
    parser.add_argument("--open-seconds", type=float, help="time per open-loop phase (60)")
    parser.add_argument("--search-seconds", type=float, help="time per rate of the search (30)")
    parser.add_argument(
        "--single-rate", type=float, default=200, help="single results a second, open loop"
    )
    parser.add_argument("--senders", type=int, default=8, help="open-loop senders")
    parser.add_argument("--database", default="leaderboard_bench", help="the bench's own database")
    parser.add_argument(
        "--database-url",
        help="use this PostgreSQL server (--database on it) instead of the bench's own cluster",
    )
    parser.add_argument(
        "--postgres-dir",
        type=Path,
        default=POSTGRES_DIR,
        help="where the bench's own cluster lives (default .run/bench-pg)",
    )
    parser.add_argument(
        "--key-prefix", default="bench:lb:", help="LEADERBOARD_KEY_PREFIX: every Redis key's"
    )
    parser.add_argument(
        "--broker-db", type=int, default=15, help="Redis database number of the bench's broker"
    )
    parser.add_argument("--results-dir", type=Path, help="default bench/results (tiny: tmp/tiny)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the generated season")
    parser.add_argument("--no-charts", action="store_true", help="skip the PNG charts")
    parser.add_argument(
        "--no-profile", action="store_true", help="skip the py-spy profiles (when py-spy exists)"
    )
    parser.add_argument(
        "--keep-redis", action="store_true", help="leave the season's ZSET in Redis at the end"
    )
    parser.add_argument(
        "--writes-only",
        action="store_true",
        help="load the season, then measure only ingest (for working on the write path)",
    )
    parser.add_argument(
        "--reuse-season",
        action="store_true",
        help="keep the season a previous run loaded, when it has as many players (no COPY)",
    )
    return parser


def options_parse(argv: list[str] | None = None) -> Options:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.players < 1000:
        parser.error("--players must be at least 1000")
    tiny = args.tiny

    def pick(value: float | None, full: float, small: float) -> float:
        return value if value is not None else (small if tiny else full)

    return Options(
        players=args.players,
        tiny=tiny,
        read_seconds=pick(args.read_seconds, 20, 3),
        warmup_seconds=pick(args.warmup_seconds, 3, 1),
        openread_seconds=pick(args.openread_seconds, 20, 2),
        openread_connections=args.openread_connections,
        stacks_seconds=pick(args.stacks_seconds, 5, 1),
        ingest_seconds=pick(args.ingest_seconds, 60, 5),
        connections=args.connections,
        threads=args.threads,
        ingest_connections=args.ingest_connections,
        web_workers=args.web_workers,
        worker_concurrency=args.worker_concurrency,
        probe_rate=args.probe_rate,
        open_rate=args.open_rate,
        open_seconds=pick(args.open_seconds, 60, 6),
        search_seconds=pick(args.search_seconds, 30, 3),
        search_steps=1 if tiny else 0,
        single_rate=args.single_rate,
        senders=args.senders,
        zrevrank_samples=2000 if tiny else 20000,
        pg_samples=30 if tiny else 300,
        pg_seconds=3 if tiny else 30,
        drain_seconds=30 if tiny else 180,
        database=args.database,
        database_url=args.database_url,
        postgres_dir=args.postgres_dir.resolve(),
        key_prefix=args.key_prefix,
        broker_db=args.broker_db,
        results_dir=args.results_dir or (TINY_RESULTS if tiny else RESULTS),
        seed=args.seed,
        charts=not args.no_charts,
        profile=not args.no_profile and not tiny,
        keep_redis=args.keep_redis,
        writes_only=args.writes_only,
        reuse_season=args.reuse_season,
    )
