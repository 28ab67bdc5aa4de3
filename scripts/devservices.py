"""Find or start the PostgreSQL and Redis that DATABASE_URL and REDIS_URL point at.

Used by `make run` and `make test`: a server that answers is used as it is; otherwise, for a
local address, one is started from the installed binaries with its data under .run/ (installing
Debian's packages first when running as root), and the database is created if it is missing.
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import unquote, urlparse

import psycopg
import redis

ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT / ".run"
DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/leaderboard"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", ""}


def say(message: str) -> None:
    print(f"[services] {message}", flush=True)


def fail(message: str) -> None:
    print(f"[services] ERROR: {message}", file=sys.stderr, flush=True)
    sys.exit(1)


def apt_install(*packages: str) -> None:
    if os.geteuid() != 0:
        fail(f"missing binaries: install them with `sudo apt-get install {' '.join(packages)}`")
    say(f"installing {' '.join(packages)} with apt-get")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-q"], check=True, env=env)
    subprocess.run(
        ["apt-get", "install", "-y", "-q", "--no-install-recommends", *packages],
        check=True,
        env=env,
    )


def wait_for(check, what: str, seconds: float = 30.0) -> None:  # noqa: ANN001
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    fail(f"{what} did not come up within {seconds:.0f}s")


# --- Redis -------------------------------------------------------------------------------------


def redis_answers(url: str) -> bool:
    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=1, socket_timeout=1).ping())
    except redis.exceptions.RedisError:
        return False


def ensure_redis(url: str) -> None:
    if redis_answers(url):
        say(f"Redis answers at {url}")
        return
    parsed = urlparse(url)
    if parsed.hostname not in LOCAL_HOSTS:
        fail(f"Redis at {url} does not answer, and it is not a local address to start one on")
    server = shutil.which("redis-server") or "/usr/bin/redis-server"
    if not Path(server).exists():
        apt_install("redis-server")
        server = shutil.which("redis-server") or "/usr/bin/redis-server"
    data = RUN / "redis"
    data.mkdir(parents=True, exist_ok=True)
    port = str(parsed.port or 6379)
    say(f"starting redis-server on 127.0.0.1:{port} (data in {data})")
    subprocess.run(
        [
            server,
            "--port",
            port,
            "--bind",
            "127.0.0.1",
            "--dir",
            str(data),
            "--daemonize",
            "yes",
            "--pidfile",
            str(data / "redis.pid"),
            "--logfile",
            str(data / "redis.log"),
            "--appendonly",
            "yes",
            "--appendfsync",
            "everysec",
        ],
        check=True,
    )
    wait_for(lambda: redis_answers(url), "Redis")


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


def pg_bindir() -> Path | None:
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4])
    )
    return Path(found[-1]).parent if found else None


def as_postgres(args: list[str]) -> list[str]:
    # PostgreSQL's server binaries refuse to run as root.
    return ["runuser", "-u", "postgres", "--", *args] if os.geteuid() == 0 else args


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
        data = RUN / "pg" / "data"
        (RUN / "pg").mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            shutil.chown(RUN / "pg", "postgres", "postgres")
        if not (data / "PG_VERSION").exists():
            user = unquote(parsed.username or "postgres")
            say(f"initdb {data} (superuser {user}, trust auth on localhost)")
            subprocess.run(
                as_postgres(
                    [
                        str(bindir / "initdb"),
                        "-D",
                        str(data),
                        "-A",
                        "trust",
                        "-U",
                        user,
                        "-E",
                        "UTF8",
                    ]
                ),
                check=True,
                stdout=subprocess.DEVNULL,
            )
        port = str(parsed.port or 5432)
        say(f"starting PostgreSQL on 127.0.0.1:{port} (data in {data})")
        subprocess.run(
            as_postgres(
                [
                    str(bindir / "pg_ctl"),
                    "-D",
                    str(data),
                    "-l",
                    str(RUN / "pg" / "postgres.log"),
                    "-w",
                    "-o",
                    f"-p {port} -c listen_addresses=127.0.0.1 -k {RUN / 'pg'}",
                    "start",
                ]
            ),
            check=True,
        )
        wait_for(lambda: pg_answers(url), "PostgreSQL")
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
            f"\n  API:      {base}/api/v1/\n  API docs: {base}/api/v1/docs/\n"
            f"  Admin:    {base}/admin/  (create a login: .venv/bin/python manage.py "
            "createsuperuser)\n",
            flush=True,
        )
        return
    ensure_postgres(os.environ.get("DATABASE_URL", DEFAULT_DATABASE_URL))
    ensure_redis(os.environ.get("REDIS_URL", DEFAULT_REDIS_URL))


if __name__ == "__main__":
    main()
