"""The bench's own corner of PostgreSQL and Redis (cluster, database, key prefix, broker database)
and the environment its processes run with: a run never touches the developer's data."""

from __future__ import annotations

import argparse
import atexit
import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse, urlunparse

import psycopg

from scripts import devservices
from scripts.devservices import DEFAULT_REDIS_URL
from scripts.processes import ROOT, free_port

from .core import RESULTS, BenchError, Phases, say

# The bench's Celery queue, in the bench's own broker database as well.
QUEUE = "bench"
# A public rate limit of a billion requests a second: the limit's work is done on every read,
# and it never refuses one ("num/period", as DRF parses it).
PUBLIC_RATE_NEVER_REACHED = "1000000000/s"
SUPERUSER = "postgres"
# The options of every program on the bench's own season (bench.run, bench.operations).
OPTIONS = (
    ("--players", 1_000_000, "season size N"),
    ("--tiny", False, "CI mode: a few seconds a phase, results in bench/results/tmp/tiny"),
    ("--database", "leaderboard_bench", "the bench's own database (its name contains 'bench')"),
    ("--database-url", None, "use this PostgreSQL server instead of the bench's own cluster"),
    ("--postgres-dir", ROOT / ".run" / "bench-pg", "where the bench's own cluster lives"),
    ("--key-prefix", "bench:lb:", "LEADERBOARD_KEY_PREFIX: every Redis key's"),
    ("--broker-db", 15, "Redis database number of the bench's broker"),
    ("--results-dir", RESULTS, "where results go", RESULTS / "tmp" / "tiny"),
    ("--reuse-season", False, "keep the season a previous run loaded, when it has as many players"),
)

# Seasons larger than this are loaded without match results, as with bench.run's --no-history:
# 100 million players' results would about fill this machine's disk (bench/README.md).
HISTORY_MAX_PLAYERS = 20_000_000


def settings_env(**variables: str) -> dict[str, str]:
    """The variables a bench process runs the app's settings with."""
    app = {"DJANGO_SETTINGS_MODULE": "config.settings.local", "DEBUG": "false"}
    return app | {"LOG_LEVEL": "WARNING"} | variables


def server_env(variables: dict[str, str]) -> dict[str, str]:
    """A server's environment: the harness's own with `variables`, the tree it imports first."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, **variables, "PYTHONPATH": path}


def connect(url: str, dbname: str | None = None, **kwargs: Any) -> psycopg.Connection[Any]:
    """`dbname` (by default `url`'s) on `url`'s server, patient with a busy cluster."""
    info = devservices.pg_conninfo(url, dbname or _database(url))
    return psycopg.connect(**{**info, "connect_timeout": 5}, **kwargs)


def with_database(url: str, database: str) -> str:
    return urlunparse(urlparse(url)._replace(path=f"/{database}"))


def _database(url: str) -> str:
    return unquote(urlparse(url).path.lstrip("/"))


@dataclass(frozen=True)
class BenchEnvironment:
    database_url: str
    redis_url: str
    broker_url: str
    key_prefix: str
    cluster: Path | None = None  # the data of the cluster the bench started, if it did

    @property
    def cache_prefix(self) -> str:
        """Django's cache keys, under the key prefix as every Redis key is (the settings')."""
        return f"{self.key_prefix}cache"

    @property
    def database(self) -> str:
        return _database(self.database_url)

    def process_env(self, *, top_cache_seconds: float = 1.0) -> dict[str, str]:
        """What the web server, the Celery worker and the harness itself run with."""
        return server_env(self.variables(top_cache_seconds=top_cache_seconds))

    def variables(self, *, top_cache_seconds: float = 1.0) -> dict[str, str]:
        """The public limit is on, as in production, at a rate the load never reaches; ingest
        posts everything with one key, so that limit is off (empty)."""
        return settings_env(
            DATABASE_URL=self.database_url, REDIS_URL=self.redis_url,
            CELERY_BROKER_URL=self.broker_url, LEADERBOARD_KEY_PREFIX=self.key_prefix,
            LEADERBOARD_TOP_CACHE_SECONDS=f"{top_cache_seconds:g}", CELERY_TASK_DEFAULT_QUEUE=QUEUE,
            THROTTLE_PUBLIC_RATE=PUBLIC_RATE_NEVER_REACHED, THROTTLE_GAME_SERVER_RATE="",
        )  # fmt: skip

    def connect(self, dbname: str | None = None) -> psycopg.Connection[Any]:
        """An autocommit connection to the bench's database (or `dbname` on its server)."""
        return connect(self.database_url, dbname, autocommit=True)


def cluster_start(home: Path) -> tuple[str, Path]:
    """The bench's own PostgreSQL cluster in `home` (initdb'd if new) on a free port, stopped
    when this process exits short of a SIGKILL: its URL and data."""
    if (bindir := devservices.pg_bindir()) is None:
        raise BenchError(
            "PostgreSQL's binaries are missing: `make setup` installs them (as root), or "
            "`sudo apt-get install postgresql`; or point --database-url at a running server"
        )
    memory = devservices.machine_memory_bytes()
    settings = devservices.postgres_settings(memory_bytes=memory, bindir=bindir)
    data = devservices.pg_cluster_init(home, bindir=bindir, user=SUPERUSER)
    if devservices.pg_cluster_running(data, bindir=bindir):
        # Left behind by a run that was killed: restart it with this run's settings.
        devservices.pg_cluster_stop(data, bindir=bindir)
    port = free_port()
    devservices.pg_cluster_start(data, bindir=bindir, port=port, settings=settings)
    atexit.register(devservices.pg_cluster_stop, data, bindir=bindir)
    say(f"PostgreSQL of the bench's own on 127.0.0.1:{port} (data in {data})")
    return f"postgres://{SUPERUSER}@127.0.0.1:{port}/postgres", data


def django_setup(variables: dict[str, str]) -> None:
    """Start Django in this process on `variables`, its database migrated."""
    os.environ.update(variables)
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", interactive=False, verbosity=0)


def bench_setup(options: argparse.Namespace) -> BenchEnvironment:
    """Check the options' names; the bench's own PostgreSQL (or --database-url's), its database,
    with pg_stat_statements where preloaded, and Django on it."""
    redis_url = os.environ.get("REDIS_URL", DEFAULT_REDIS_URL)
    named = _database(options.database_url) if options.database_url else ""
    if "bench" not in options.database or options.database == named:
        raise BenchError(
            f"refusing database '{options.database}': the bench truncates its database, so its "
            "name must contain 'bench' and differ from --database-url's"
        )
    if "bench" not in options.key_prefix:
        raise BenchError(f"refusing --key-prefix '{options.key_prefix}': it must contain 'bench'")
    if options.broker_db == int(_database(redis_url) or 0):
        raise BenchError(f"--broker-db {options.broker_db} is REDIS_URL's database")
    server_url, cluster = options.database_url, None
    if not server_url:
        server_url, cluster = cluster_start(options.postgres_dir.resolve())
    env = BenchEnvironment(
        database_url=with_database(server_url, options.database), redis_url=redis_url,
        broker_url=with_database(redis_url, str(options.broker_db)),
        key_prefix=options.key_prefix, cluster=cluster,
    )  # fmt: skip
    devservices.ensure_database(env.database_url)
    with env.connect() as conn:
        preloaded = conn.execute("SHOW shared_preload_libraries").fetchone()[0]
        # Without the privilege to create it, the run goes on without statement figures.
        if "pg_stat_statements" in preloaded:
            with contextlib.suppress(psycopg.errors.InsufficientPrivilege):
                conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
    django_setup(env.variables())
    return env


def database_connections(env: BenchEnvironment) -> dict[str, Any]:
    """Connections open to the bench's database now (a leak grows it), and sessions opened since
    the statistics were reset (a phase's difference is its churn)."""
    with env.connect("postgres") as conn:
        activity = "SELECT count(*) FROM pg_stat_activity WHERE datname = %s"
        open_now = conn.execute(activity, [env.database]).fetchone()[0]
        stats = "SELECT sessions FROM pg_stat_database WHERE datname = %s"
        sessions = conn.execute(stats, [env.database]).fetchone()
    return {"open": int(open_now), "sessions": int(sessions[0]) if sessions else 0}


@dataclass
class Bench:
    """What the phases of one `bench.run` share."""

    options: argparse.Namespace
    env: BenchEnvironment
    wrk: str
    h2load: str
    processes: contextlib.ExitStack
    log_dir: Path
    results: dict[str, Any]
    phases: Phases
    season: Any = None  # the Season measured (Django's models load after the setup)
    api_key: str = ""
    # PostgreSQL's processes, found through their postmaster (not another server's).
    database_part: dict[str, int] = field(default_factory=dict)
