"""The bench's own corner of PostgreSQL and Redis, and the environment its processes run with.

The harness and every server it starts read the same variables that config/settings/base.py
reads, pointed at a database (on a PostgreSQL cluster of the bench's own unless --database-url
names a server), key prefixes and a broker database of the bench's own, so a run never touches
the developer's `leaderboard` database or keys outside its prefix.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from urllib.parse import unquote, urlparse, urlunparse

import psycopg
from psycopg import sql

from scripts.devservices import pg_conninfo

from .errors import BenchError
from .options import ROOT, Options
from .postgres import BenchCluster, bench_cluster_start

SETTINGS_MODULE = "config.settings.local"
# The bench's Celery queue, in the bench's own broker database as well.
QUEUE = "bench"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
# A public rate limit of a billion requests a second: the limit's work is done on every read,
# and it never refuses one ("num/period", as DRF parses it).
PUBLIC_RATE_NEVER_REACHED = "1000000000/s"


@dataclass(frozen=True)
class BenchEnvironment:
    database_url: str
    redis_url: str
    broker_url: str
    key_prefix: str
    # The cluster the bench started, or None on a server named by --database-url.
    cluster: BenchCluster | None = None

    @property
    def cache_prefix(self) -> str:
        """Django's cache keys, under the key prefix as every Redis key is (the settings')."""
        return f"{self.key_prefix}cache"

    @property
    def database(self) -> str:
        return unquote(urlparse(self.database_url).path.lstrip("/"))

    def variables(self, *, top_cache_seconds: float = 1.0) -> dict[str, str]:
        """What the web server, the Celery worker and the harness itself run with."""
        return {
            "DJANGO_SETTINGS_MODULE": SETTINGS_MODULE,
            "DATABASE_URL": self.database_url,
            "REDIS_URL": self.redis_url,
            "CELERY_BROKER_URL": self.broker_url,
            "LEADERBOARD_KEY_PREFIX": self.key_prefix,
            "LEADERBOARD_TOP_CACHE_SECONDS": f"{top_cache_seconds:g}",
            "CELERY_TASK_DEFAULT_QUEUE": QUEUE,
            # The public limit is on, as in production, so the reads pay for it; all the load
            # comes from one address, so its rate is one the load never reaches (a 429 counts
            # as an error). Ingest's writes all come from one key: that limit is off (empty).
            "THROTTLE_PUBLIC_RATE": PUBLIC_RATE_NEVER_REACHED,
            "THROTTLE_GAME_SERVER_RATE": "",
            "DEBUG": "false",
            "LOG_LEVEL": "WARNING",
        }

    def process_env(self, *, top_cache_seconds: float = 1.0) -> dict[str, str]:
        """The environment of a server; they import the same tree as the harness."""
        return server_env(self.variables(top_cache_seconds=top_cache_seconds))

    def conninfo(self, dbname: str | None = None) -> dict[str, object]:
        return conninfo(self.database_url, dbname or self.database)


def server_env(variables: dict[str, str]) -> dict[str, str]:
    """The environment of a server the harness starts: the harness's own with `variables`, and
    the tree the harness imports first on its path."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, **variables, "PYTHONPATH": path}


def conninfo(url: str, dbname: str) -> dict[str, object]:
    """psycopg's arguments for database `dbname` on the server `url` names (devservices' own,
    with more patience for a cluster busy loading)."""
    return {**pg_conninfo(url, dbname), "connect_timeout": 5}


def _with_path(url: str, path: str) -> str:
    return urlunparse(urlparse(url)._replace(path=path))


def bench_environment(options: Options) -> BenchEnvironment:
    """Check the options' names, then start the bench's own PostgreSQL unless --database-url
    names a server to use instead."""
    redis_url = os.environ.get("REDIS_URL", DEFAULT_REDIS_URL)
    redis_db = int(urlparse(redis_url).path.lstrip("/") or 0)
    named_database = (
        unquote(urlparse(options.database_url).path.lstrip("/")) if options.database_url else ""
    )
    if "bench" not in options.database or options.database == named_database:
        raise BenchError(
            f"refusing database '{options.database}': the bench truncates its database, so its "
            "name must contain 'bench' and differ from --database-url's"
        )
    if "bench" not in options.key_prefix:
        raise BenchError(f"refusing --key-prefix '{options.key_prefix}': it must contain 'bench'")
    if options.broker_db == redis_db:
        raise BenchError(
            f"--broker-db {options.broker_db} is REDIS_URL's database: the bench's Celery queue "
            "would mix with the developer's"
        )
    if options.database_url:
        cluster, server_url = None, options.database_url
    else:
        cluster = bench_cluster_start(options.postgres_dir)
        server_url = cluster.url
    return BenchEnvironment(
        database_url=_with_path(server_url, f"/{options.database}"),
        redis_url=redis_url,
        broker_url=_with_path(redis_url, f"/{options.broker_db}"),
        key_prefix=options.key_prefix,
        cluster=cluster,
    )


def database_create(url: str, database: str) -> bool:
    """Create `database` on the server `url` names unless it exists; returns whether it did."""
    try:
        with psycopg.connect(**conninfo(url, "postgres"), autocommit=True) as conn:
            exists = conn.execute(
                "SELECT 1 FROM pg_database WHERE datname = %s", [database]
            ).fetchone()
            if not exists:
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))
    except psycopg.OperationalError as exc:
        raise BenchError(f"PostgreSQL does not answer: {exc}") from exc
    return not exists


def database_ensure(env: BenchEnvironment) -> bool:
    """Create the bench's database if it is missing (returns whether it was), with the
    pg_stat_statements extension where the server preloads it (the bench's own cluster does)."""
    created = database_create(env.database_url, env.database)
    try:
        with psycopg.connect(**env.conninfo(), autocommit=True) as conn:
            preloaded = conn.execute("SHOW shared_preload_libraries").fetchone()[0]
            if "pg_stat_statements" in {name.strip() for name in preloaded.split(",")}:
                # Without the privilege to create it, the run goes on without statement figures.
                with contextlib.suppress(psycopg.errors.InsufficientPrivilege):
                    conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
    except psycopg.OperationalError as exc:
        raise BenchError(f"PostgreSQL does not answer: {exc}") from exc
    return created


def django_setup(variables: dict[str, str], *, migrate: bool = True) -> None:
    """Point this process at the bench's database and keys (`variables`), start Django, apply
    migrations (unless `migrate` is off: a bench of the Redis side alone needs no database)."""
    os.environ.update(variables)
    import django
    from django.core.management import call_command

    django.setup()
    if migrate:
        call_command("migrate", interactive=False, verbosity=0)


def database_connections(env: BenchEnvironment) -> dict[str, int]:
    """Connections open to the bench's database now (a leak shows as a growing count), and
    sessions opened since the statistics were reset (a phase's difference is its churn)."""
    with psycopg.connect(**env.conninfo("postgres"), autocommit=True) as conn:
        open_now = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = %s", [env.database]
        ).fetchone()[0]
        sessions = conn.execute(
            "SELECT sessions FROM pg_stat_database WHERE datname = %s", [env.database]
        ).fetchone()
    return {"open": int(open_now), "sessions": int(sessions[0]) if sessions else 0}
