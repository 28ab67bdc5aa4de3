"""Every server the harness starts (uvicorn or granian, a Celery worker, a private redis-server),
started one way: on a free port, in a process group of its own, with a bounded wait until it
serves; and every one of them stopped at the end, on error or on Ctrl-C."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType, TracebackType

from .errors import BenchError
from .options import ROOT

BIN = Path(sys.executable).parent
STARTUP_SECONDS = 60.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Started:
    name: str
    process: subprocess.Popen[bytes]
    log: Path
    url: str = ""

    @property
    def pid(self) -> int:
        return self.process.pid

    def log_text(self) -> str:
        try:
            return self.log.read_text(errors="replace")
        except OSError:
            return ""

    def log_tail(self, lines: int = 30) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])


# What a server must show before it counts as started: a name for the error, and the check.
Readiness = Sequence[tuple[str, Callable[[Started], bool]]]


@dataclass
class Processes:
    """Owns every child the run starts; `with Processes(...)` stops them all on the way out."""

    log_dir: Path
    started: list[Started] = field(default_factory=list)

    def __enter__(self) -> Processes:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop_all()

    def start(
        self,
        name: str,
        argv: list[str],
        env: dict[str, str],
        *,
        url: str = "",
        ready: Readiness = (),
        timeout: float = STARTUP_SECONDS,
    ) -> Started:
        """`argv` in a process group of its own, its output in `<name>.log`; returns once each
        check of `ready` has passed in turn, each within `timeout`. A server that exits first,
        or does not get there in time, raises BenchError with the tail of its log."""
        log = self.log_dir / f"{name}.log"
        with log.open("wb") as out:
            process = subprocess.Popen(  # noqa: S603 - argv is built here, never from input
                argv,
                cwd=ROOT,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                # Its own process group: uvicorn's and Celery's children go down with it.
                start_new_session=True,
            )
        started = Started(name, process, log, url)
        self.started.append(started)
        for what, check in ready:
            _wait_until(lambda check=check: check(started), started, what, timeout)
        return started

    @contextlib.contextmanager
    def running(self, started: Started) -> Iterator[Started]:
        """`started`, stopped when the block ends however it ends."""
        try:
            yield started
        finally:
            self.stop(started)

    def stop(self, started: Started, timeout: float = 15.0) -> None:
        process = started.process
        if process.poll() is None:
            _signal_group(process.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=timeout)
        # Whatever is left of the group (a worker child that outlived its parent) is killed.
        _signal_group(process.pid, signal.SIGKILL)
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            print(f"[bench] {started.name} (pid {process.pid}) did not exit", file=sys.stderr)
        if started in self.started:
            self.started.remove(started)

    def stop_all(self) -> None:
        for started in reversed(list(self.started)):
            self.stop(started)


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def _wait_until(check: Callable[[], bool], started: Started, what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if started.process.poll() is not None:
            raise BenchError(
                f"{started.name} exited (code {started.process.returncode}) before {what}:\n"
                f"{started.log_tail()}"
            )
        if check():
            return
        time.sleep(0.2)
    raise BenchError(f"{started.name}: no {what} within {timeout:.0f}s:\n{started.log_tail()}")


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:  # noqa: S310 - our loopback URL
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def server_available(server: str) -> bool:
    return (BIN / server).exists()


def server_start(
    processes: Processes,
    env: dict[str, str],
    *,
    name: str,
    app: str,
    workers: int,
    server: str = "uvicorn",
    interface: str = "asgi",
    ready_path: str = "/healthz",
) -> Started:
    """`app` served by uvicorn or granian with `workers` processes on a free port, without an
    access log; returns once `ready_path` answers and every worker process is up."""
    port = free_port()
    if server == "uvicorn":
        # uvicorn[standard] brings uvloop and httptools, which it picks by itself.
        argv = [str(BIN / "uvicorn"), app, "--workers", str(workers), "--no-access-log"]
    elif server == "granian":
        argv = [
            str(BIN / "granian"),
            "--interface",
            interface,
            "--workers",
            str(workers),
            "--loop",
            "uvloop",
            "--no-access-log",
            app,
        ]
    else:
        raise BenchError(f"unknown server {server}")
    argv += ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
    return processes.start(
        name,
        argv,
        env,
        url=f"http://127.0.0.1:{port}",
        ready=(
            (f"answer on {ready_path}", lambda started: _answers(f"{started.url}{ready_path}")),
            # Every worker process must be up, not only the first one that answered.
            ("all workers", lambda started: len(group_pids(started.pid)) >= workers + 1),
        ),
    )


def web_start(processes: Processes, env: dict[str, str], *, name: str, workers: int) -> Started:
    """The service as the Procfile runs it (uvicorn, `server.asgi:application`)."""
    return server_start(processes, env, name=name, app="server.asgi:application", workers=workers)


def worker_start(processes: Processes, env: dict[str, str], *, concurrency: int) -> Started:
    """A Celery worker as the Procfile runs it; returns once it says it is ready."""
    return processes.start(
        "celery-worker",
        [
            str(BIN / "celery"),
            "-A",
            "config",
            "worker",
            "--loglevel",
            "INFO",
            "--concurrency",
            str(concurrency),
            "--hostname",
            f"bench-{os.getpid()}@%h",
        ],
        env,
        ready=(("ready line in its log", lambda started: " ready." in started.log_text()),),
    )


def redis_start(
    processes: Processes, *, name: str, server: str = "redis-server", directory: Path | None = None
) -> Started:
    """A private redis-server (or `server`, a binary that speaks its protocol and takes its
    options, such as valkey-server) on a free port, without persistence, working in `directory`
    when given; returns once it answers."""
    import redis

    port = free_port()
    url = f"redis://127.0.0.1:{port}/0"

    def ping(started: Started) -> bool:
        try:
            return bool(redis.Redis.from_url(started.url, socket_timeout=1).ping())
        except redis.RedisError:
            return False

    return processes.start(
        name,
        [
            server,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            *(["--dir", str(directory)] if directory is not None else []),
        ],
        dict(os.environ),
        url=url,
        ready=(("an answer to PING", ping),),
    )


@dataclass(frozen=True)
class ProcStat:
    """A process as /proc/<pid>/stat shows it."""

    name: str
    state: str
    ppid: int
    pgrp: int
    ticks: int  # its own user and system time, plus that of the children it has reaped


def proc_stat(pid: int | str) -> ProcStat | None:
    """Process `pid` now, or None when it is gone (or not on this machine)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            text = stat.read()
    except OSError:
        return None
    name = text[text.index("(") + 1 : text.rindex(")")]
    fields = text[text.rindex(")") + 2 :].split()
    # Fields after the name: state ppid pgrp session tty tpgid flags minflt cminflt majflt
    # cmajflt utime stime cutime cstime ...
    ticks = sum(int(value) for value in fields[11:15])
    return ProcStat(name, fields[0], int(fields[1]), int(fields[2]), ticks)


def proc_stats() -> dict[int, ProcStat]:
    """Every live process, from /proc."""
    found = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and (process := proc_stat(entry.name)) is not None:
            found[int(entry.name)] = process
    return found


def group_pids(pgid: int) -> list[int]:
    """Live processes of a process group."""
    return [
        pid
        for pid, process in proc_stats().items()
        if process.pgrp == pgid and process.state != "Z"
    ]


def stop_on_sigterm() -> None:
    """SIGTERM and SIGHUP unwind like Ctrl-C, so every `finally` and `with` cleans up."""

    def handler(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGHUP, handler)
