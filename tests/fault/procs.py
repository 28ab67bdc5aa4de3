"""The real processes the fault tests start and break: Redis, PostgreSQL, the web server and
the Celery worker. Each runs in its own process group, every wait has a deadline, and stopping
is always safe to call again, so fixtures can clean up whatever state a test left behind."""

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

import httpx
import psycopg
import redis

from scripts.devservices import as_postgres, pg_bindir
from scripts.processes import Process, Timeout, engine_server, free_port, tail, wait_until

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
BIN = ROOT / ".venv" / "bin"
PYTHON = BIN / "python"
# The newest installed PostgreSQL, as scripts/devservices.py finds it for `make test`.
PG_BIN = pg_bindir() or Path("/usr/lib/postgresql/15/bin")


class RedisServer:
    """A private server of the engine under test that keeps nothing on disk, so a restart comes
    back empty; or, `persistent`, one that writes every command to its append-only file before
    answering (a broker configured to keep its queues), so a restart keeps everything. With
    `replica_of`, a replica of that server."""

    def __init__(
        self,
        directory: Path,
        name: str = "redis",
        *,
        persistent: bool = False,
        replica_of: RedisServer | None = None,
    ) -> None:
        self.directory = directory
        self.name = name
        self.port = free_port()
        self.process: Process | None = None
        self.starts = 0
        self.persistent = persistent
        self.replica_of = replica_of

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def client(self) -> redis.Redis:
        return redis.Redis(
            host="127.0.0.1",
            port=self.port,
            decode_responses=True,
            socket_timeout=5,
            socket_connect_timeout=2,
        )

    def start(self, timeout: float = 10.0) -> None:
        self.starts += 1
        data = self.directory
        keeping: list[str] = ["--appendonly", "no"]
        if self.persistent:
            data = self.directory / f"{self.name}-data"
            data.mkdir(exist_ok=True)
            keeping = ["--appendonly", "yes", "--appendfsync", "always"]
        if self.replica_of is not None:
            keeping += ["--replicaof", "127.0.0.1", str(self.replica_of.port)]
        # A replica stores what it receives in its RDB file: a file per server, and a primary
        # that sends its data without one, so a restarted primary still comes back empty.
        keeping += ["--dbfilename", f"{self.name}.rdb", "--repl-diskless-sync", "yes"]
        self.process = Process(
            [
                engine_server(),
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                *keeping,
                "--dir",
                str(data),
            ],
            log=self.directory / f"{self.name}-{self.starts}.log",
        ).start()
        wait_until(self.answers, timeout=timeout, what=f"{self.name} answering on {self.port}")

    def answers(self) -> bool:
        """Whether this server, not another one that took the port meanwhile, answers."""
        assert self.process is not None
        if not self.process.running():
            raise AssertionError(f"{self.name} exited:\n{self.process.output()}")
        try:
            with self.client() as r:
                return r.info("server")["process_id"] == self.process.pid
        except redis.RedisError:
            return False

    def kill(self) -> None:
        if self.process is not None:
            self.process.kill()

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()


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


class WebServer:
    """uvicorn serving the ASGI app, ready once /healthz answers."""

    def __init__(self, *, env: Mapping[str, str], log: Path) -> None:
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.process = Process(
            [
                str(BIN / "uvicorn"),
                "server.asgi:application",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--lifespan",
                "off",
                "--no-access-log",
            ],
            log=log,
            env=env,
        )

    def start(self, timeout: float = 30.0) -> WebServer:
        self.process.start()
        wait_until(self._ready, timeout=timeout, what=f"web server on {self.port} ready")
        return self

    def _ready(self) -> bool:
        if not self.process.running():
            raise AssertionError(f"the web server exited:\n{self.process.output()}")
        try:
            return httpx.get(f"{self.base_url}/healthz", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    def kill(self) -> None:
        self.process.kill()

    def stop(self) -> None:
        self.process.stop()


class CeleryWorker:
    """A Celery worker (prefork pool) on the private broker, ready once it logs so."""

    def __init__(
        self,
        *,
        env: Mapping[str, str],
        log: Path,
        queues: str | None = None,
        concurrency: int = 2,
    ) -> None:
        self.log = log
        self.name = f"fault-{uuid.uuid4().hex[:8]}@%h"
        self.process = Process(
            [
                str(BIN / "celery"),
                "-A",
                "config",
                "worker",
                "--concurrency",
                str(concurrency),
                "--loglevel",
                "INFO",
                "-n",
                self.name,
                # Nothing else shares this broker: skip the start-up handshake with other nodes.
                "--without-mingle",
                "--without-gossip",
                # The default queue unless told otherwise (the Procfile's `jobs` worker: "jobs").
                *(["--queues", queues] if queues else []),
            ],
            log=log,
            env=env,
        )

    def start(self, timeout: float = 40.0) -> CeleryWorker:
        self.process.start()
        wait_until(self._ready, timeout=timeout, what=f"Celery worker ready ({self.log})")
        return self

    def _ready(self) -> bool:
        if not self.process.running():
            raise AssertionError(f"the Celery worker exited:\n{self.process.output()}")
        return " ready." in self.log.read_text(errors="replace")

    def kill(self) -> None:
        self.process.kill()

    def stop(self) -> None:
        # A warm shutdown waits for a broker that may be down: give it little time.
        self.process.stop(timeout=2)

    def tasks(self) -> tuple[set[str], set[str]]:
        """Ids of the tasks this worker received and of those it finished (either way)."""
        received: set[str] = set()
        finished: set[str] = set()
        for line in self.log.read_text(errors="replace").splitlines():
            if "Task " not in line or "[" not in line:
                continue
            task_id = line.split("[", 2)[-1].split("]", 1)[0]
            if line.rstrip().endswith(" received"):
                received.add(task_id)
            elif " succeeded in " in line or " raised unexpected" in line or " retry:" in line:
                finished.add(task_id)
        return received, finished


class CeleryBeat:
    """Celery beat with the database scheduler, as the Procfile's `beat` runs it: the periodic
    tasks the deployment's database holds (leaderboards/schedules.py), at their intervals, started
    once the database answers and again whenever it exits (django-celery-beat's scheduler exits
    when PostgreSQL goes away while it reloads the schedule)."""

    def __init__(self, *, env: Mapping[str, str], log: Path) -> None:
        self.log = log
        self.process = Process(
            [
                "sh",
                "-c",
                f"while :; do {PYTHON} manage.py wait_for_database && {BIN / 'celery'} -A config"
                " beat --loglevel INFO --scheduler django_celery_beat.schedulers:DatabaseScheduler;"
                " sleep 1; done",
            ],
            log=log,
            env=env,
        )

    def start(self, timeout: float = 40.0) -> CeleryBeat:
        self.process.start()
        wait_until(self._ready, timeout=timeout, what=f"Celery beat started ({self.log})")
        return self

    def _ready(self) -> bool:
        if not self.process.running():
            raise AssertionError(f"Celery beat exited:\n{self.process.output()}")
        return "beat: Starting..." in self.log.read_text(errors="replace")

    def kill(self) -> None:
        self.process.kill()

    def stop(self) -> None:
        self.process.stop(timeout=2)
