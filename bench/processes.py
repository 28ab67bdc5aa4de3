"""The processes a run starts (uvicorn, a Celery worker) on free ports, each in its own process
group, every wait bounded, and every one of them stopped at the end, on error or on Ctrl-C."""

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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType, TracebackType

from .errors import BenchError
from .options import ROOT

BIN = Path(sys.executable).parent


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

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


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

    def start(self, name: str, argv: list[str], env: dict[str, str]) -> Started:
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
        started = Started(name, process, log)
        self.started.append(started)
        return started

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


SERVERS = ("uvicorn", "granian")


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
    timeout: float = 60,
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
    started = processes.start(name, argv, env)
    started.url = f"http://127.0.0.1:{port}"
    _wait_until(
        lambda: _answers(f"{started.url}{ready_path}"), started, f"answer on {ready_path}", timeout
    )
    # Every worker process must be up, not only the first one that answered.
    _wait_until(
        lambda: len(group_pids(started.pid)) >= workers + 1, started, "all workers", timeout
    )
    return started


def web_start(
    processes: Processes, env: dict[str, str], *, name: str, workers: int, timeout: float = 60
) -> Started:
    """The service as the Procfile runs it (uvicorn, `server.asgi:application`)."""
    return server_start(
        processes, env, name=name, app="server.asgi:application", workers=workers, timeout=timeout
    )


def worker_start(
    processes: Processes, env: dict[str, str], *, concurrency: int, timeout: float = 60
) -> Started:
    """A Celery worker as the Procfile runs it; returns once it says it is ready."""
    started = processes.start(
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
    )

    def ready() -> bool:
        try:
            return " ready." in started.log.read_text(errors="replace")
        except OSError:
            return False

    _wait_until(ready, started, "ready line in its log", timeout)
    return started


def group_pids(pgid: int) -> list[int]:
    """Live processes of a process group (read from /proc)."""
    pids = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # After the command name: state, ppid, pgrp, ...
        if int(fields[2]) == pgid and fields[0] != "Z":
            pids.append(int(entry.name))
    return pids


def stop_on_sigterm() -> None:
    """SIGTERM and SIGHUP unwind like Ctrl-C, so every `finally` and `with` cleans up."""

    def handler(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGHUP, handler)
