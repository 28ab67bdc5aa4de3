"""The real processes the fault tests start and break: Redis, the web server and the Celery
worker (scripts/processes.py starts them, as it does for the benchmark), PostgreSQL and Celery
beat. Each runs in its own process group, every wait has a deadline, and stopping is always safe
to call again, so fixtures can clean up whatever state a test left behind."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Mapping
from pathlib import Path

import psycopg

from scripts.devservices import as_postgres, pg_bindir
from scripts.processes import (
    BIN,
    CeleryWorker,
    Process,
    RedisServer,
    Server,
    Timeout,
    WebServer,
    engine_server,
    free_port,
    tail,
    wait_until,
)

__all__ = [
    "CeleryBeat",
    "CeleryWorker",
    "PostgresCluster",
    "Process",
    "RabbitVhost",
    "RedisServer",
    "Timeout",
    "WebServer",
    "django_env",
    "engine_server",
    "free_port",
    "manage",
    "rabbitmq_answers",
    "tail",
    "wait_until",
]

ROOT = Path(__file__).resolve().parents[2]
PYTHON = BIN / "python"
# The newest installed PostgreSQL, as scripts/devservices.py finds it for `make test`.
PG_BIN = pg_bindir() or Path("/usr/lib/postgresql/15/bin")


class RabbitVhost:
    """A virtual host of its own on the local RabbitMQ (rabbitmqctl, as root), so queues of runs
    side by side never meet; deleted with everything in it."""

    def __init__(self, host: str = "127.0.0.1", port: int = 5672) -> None:
        self.name = f"lb-test-{uuid.uuid4().hex[:8]}"
        self.host = host
        self.port = port

    def url(self) -> str:
        return f"amqp://guest:guest@{self.host}:{self.port}/{self.name}"

    def _ctl(self, *args: str) -> None:
        subprocess.run(
            ["rabbitmqctl", "-q", *args], check=True, capture_output=True, text=True, timeout=60
        )

    def create(self) -> RabbitVhost:
        self._ctl("add_vhost", self.name)
        self._ctl("set_permissions", "-p", self.name, "guest", ".*", ".*", ".*")
        return self

    def delete(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError, subprocess.TimeoutExpired):
            self._ctl("delete_vhost", self.name)


def rabbitmq_answers(host: str = "127.0.0.1", port: int = 5672) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return shutil.which("rabbitmqctl") is not None
    except OSError:
        return False


class PostgresCluster:
    """A private PostgreSQL cluster (initdb) in a temporary folder the postgres user owns."""

    def __init__(self) -> None:
        # Not under pytest's tmp_path: its parents are private to root, and the server runs
        # as postgres. A short path also keeps the socket path under its length limit.
        self.directory = Path(tempfile.mkdtemp(prefix="lb-fault-pg-"))
        self.data = self.directory / "data"
        self.log = self.directory / "postgres.log"
        self.port = free_port()
        if os.geteuid() == 0:
            shutil.chown(self.directory, "postgres", "postgres")

    def _run(self, args: list[str], timeout: float) -> None:
        done = subprocess.run(
            as_postgres(args),
            cwd=self.directory,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if done.returncode != 0:
            raise AssertionError(
                f"{' '.join(args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}\n"
                f"{tail(self.log)}"
            )

    def init(self) -> None:
        self._run(
            [
                str(PG_BIN / "initdb"),
                "-D",
                str(self.data),
                "-A",
                "trust",
                "-U",
                "postgres",
                "-E",
                "UTF8",
                "--no-sync",
                "--no-instructions",
            ],
            timeout=60,
        )

    def start(self) -> None:
        # fsync off only matters when the machine itself crashes; commits stay synchronous,
        # so a killed or restarted server keeps every transaction it confirmed. Connections
        # are plenty: under ASGI each request opens its own, and idle ones linger a while.
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.directory} "
            "-c fsync=off -c full_page_writes=off -c max_connections=300"
        )
        self._run(
            [
                str(PG_BIN / "pg_ctl"),
                "-D",
                str(self.data),
                "-l",
                str(self.log),
                "-w",
                "-t",
                "30",
                "-o",
                options,
                "start",
            ],
            timeout=40,
        )

    def stop(self, mode: str = "fast") -> None:
        self._run(
            [str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "-t", "30", "stop"],
            timeout=40,
        )

    def running(self) -> bool:
        return (self.data / "postmaster.pid").exists()

    def destroy(self) -> None:
        """Stop the server however it can be stopped, and remove its folder."""
        if self.running():
            try:
                self.stop(mode="immediate")
            except (AssertionError, subprocess.TimeoutExpired):
                pid_file = self.data / "postmaster.pid"
                if pid_file.exists():
                    with contextlib.suppress(ProcessLookupError, ValueError):
                        os.kill(int(pid_file.read_text().split()[0]), signal.SIGKILL)
        shutil.rmtree(self.directory, ignore_errors=True)

    def url(self, dbname: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{dbname}"

    def connect(self, dbname: str = "postgres") -> psycopg.Connection:
        return psycopg.connect(
            host="127.0.0.1",
            port=self.port,
            user="postgres",
            dbname=dbname,
            autocommit=True,
            connect_timeout=5,
        )

    def create_database(self, name: str, *, template: str | None = None) -> None:
        statement = psycopg.sql.SQL("CREATE DATABASE {}").format(psycopg.sql.Identifier(name))
        if template is not None:
            statement += psycopg.sql.SQL(" TEMPLATE {}").format(psycopg.sql.Identifier(template))
        with self.connect() as conn:
            conn.execute(statement)


def django_env(
    *, database_url: str, redis_url: str, broker_url: str, key_prefix: str, **extra: str
) -> dict[str, str]:
    """The environment of a web server, worker or management command on the private servers."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("PYTEST_", "DJANGO_", "CELERY_", "COV_"))
    }
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings.local",
        DATABASE_URL=database_url,
        REDIS_URL=redis_url,
        CELERY_BROKER_URL=broker_url,
        LEADERBOARD_KEY_PREFIX=key_prefix,
        PYTHONUNBUFFERED="1",
        **extra,
    )
    return env


def manage(*args: str, env: Mapping[str, str], timeout: float = 90.0) -> str:
    """Run `manage.py` with `env`; return its stdout, or fail with everything it printed."""
    try:
        done = subprocess.run(
            [str(PYTHON), "manage.py", *args],
            cwd=ROOT,
            env=dict(env),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise Timeout(f"manage.py {' '.join(args)}: not done within {timeout:.0f} s") from exc
    if done.returncode != 0:
        raise AssertionError(
            f"manage.py {' '.join(args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
        )
    return done.stdout


class CeleryBeat(Server):
    """Celery beat with the database scheduler, as the Procfile's `beat` runs it: the periodic
    tasks the deployment's database holds (leaderboards/schedules.py), at their intervals, started
    once the database answers and again whenever it exits (django-celery-beat's scheduler exits
    when PostgreSQL goes away while it reloads the schedule)."""

    name = "Celery beat"
    stop_seconds = 2.0

    def __init__(self, *, env: Mapping[str, str], log: Path) -> None:
        self.log = log
        loop = (
            f"while :; do {PYTHON} manage.py wait_for_database && {BIN / 'celery'} -A config"
            " beat --loglevel INFO --scheduler django_celery_beat.schedulers:DatabaseScheduler;"
            " sleep 1; done"
        )
        super().__init__(["sh", "-c", loop], log=log, env=env)

    def ready(self) -> bool:
        return "beat: Starting..." in self.log.read_text(errors="replace")
