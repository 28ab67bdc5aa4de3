"""Every server a bench program starts (uvicorn, a Celery worker, a private Redis), started one
way (scripts/processes.py) and all stopped at the end, on an error or Ctrl-C too; what a private
Redis says of itself; and the processes of this machine as /proc shows them."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis

from scripts import devservices
from scripts.processes import Process, free_port, server_binary, wait_until

from .core import BenchError

BIN = Path(sys.executable).parent
STARTUP_SECONDS = 60.0
# A private Redis's client waits this long for one command (a pipelined fill, MEMORY USAGE).
COMMAND_TIMEOUT_SECONDS = 120


class Started(Process):
    def __init__(self, name: str, args: list[str], *, log: Path, env: dict[str, str], url: str):
        super().__init__(args, log=log, env=env)
        self.name, self.url = name, url


Ready = Sequence[tuple[str, Callable[[Started], bool]]]


class Processes:
    """Owns every child a run starts; `with Processes(...)` stops them all on the way out."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.started: list[Started] = []

    def __enter__(self) -> Processes:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        return self

    def __exit__(self, *exc: object) -> None:
        for started in reversed(self.started):
            started.stop(timeout=15)
        self.started.clear()

    def start(
        self, name: str, argv: list[str], env: dict[str, str], *, url: str = "", ready: Ready = ()
    ) -> Started:
        """`argv` with its output in `<name>.log`; returns once each check of `ready` has passed
        in turn. A server that exits first, or is not ready in time, raises BenchError."""
        log = self.log_dir / f"{name}.log"
        log.unlink(missing_ok=True)
        started = Started(name, argv, log=log, env=env, url=url).start()
        self.started.append(started)

        def ready_or_exited(check: Callable[[Started], bool], what: str) -> bool:
            if not started.running():
                raise BenchError(f"{name} exited before {what}:\n{started.output(30)}")
            return check(started)

        for what, check in ready:
            wait_until(
                lambda check=check, what=what: ready_or_exited(check, what),
                timeout=STARTUP_SECONDS,
                what=lambda what=what: f"{name}: {what}\n{started.output(30)}",
                interval=0.2,
            )
        return started

    @contextlib.contextmanager
    def running(self, started: Started) -> Iterator[Started]:
        """`started`, stopped when the block ends however it ends."""
        try:
            yield started
        finally:
            started.stop(timeout=15)
            self.started.remove(started)


def server_start(
    processes: Processes, env: dict[str, str], *, name: str, app: str, workers: int, ready: str
) -> Started:
    """`app` under uvicorn (uvloop and httptools, from uvicorn[standard]) with `workers`
    processes on a free port, no access log; returns once `ready` answers on every worker."""
    port = free_port()
    argv = [str(BIN / "uvicorn"), app, "--workers", str(workers), "--no-access-log"]
    argv += ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]

    def answers(started: Started) -> bool:
        try:
            with urllib.request.urlopen(started.url + ready, timeout=2) as answer:  # noqa: S310
                return bool(answer.status == 200)
        except (urllib.error.URLError, OSError):
            return False

    workers_up = ("all workers", lambda started: len(group_pids(started.pid)) >= workers + 1)
    checks = ((f"an answer on {ready}", answers), workers_up)
    return processes.start(name, argv, env, url=f"http://127.0.0.1:{port}", ready=checks)


def web_start(processes: Processes, env: dict[str, str], *, name: str, workers: int) -> Started:
    """The service as the Procfile runs it (uvicorn, `server.asgi:application`)."""
    app = "server.asgi:application"
    return server_start(processes, env, name=name, app=app, workers=workers, ready="/healthz")


def worker_start(processes: Processes, env: dict[str, str], *, concurrency: int) -> Started:
    """A Celery worker as the Procfile runs it; returns once it says it is ready."""
    argv = [str(BIN / "celery"), "-A", "config", "worker", "--loglevel", "INFO", "--concurrency"]
    argv += [str(concurrency), "--hostname", f"bench-{os.getpid()}@%h"]
    ready = (("its ready line", lambda started: " ready." in started.output(400)),)
    return processes.start("celery-worker", argv, env, ready=ready)


def redis_start(processes: Processes, *, name: str, server: str, directory: Path) -> Started:
    """A private server of a Redis engine on a free port, without persistence, in `directory`."""
    port = free_port()

    def ping(started: Started) -> bool:
        with contextlib.suppress(redis.RedisError):
            return bool(redis.Redis.from_url(started.url, socket_timeout=1).ping())
        return False

    argv = [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly"]
    argv += ["no", "--dir", str(directory)]
    url = f"redis://127.0.0.1:{port}/0"
    return processes.start(name, argv, dict(os.environ), url=url, ready=(("a PING", ping),))


@contextlib.contextmanager
def redis_private(engine: str) -> Iterator[tuple[Started, redis.Redis]]:
    """A private server of `engine` in a directory of its own, and a client to it; both gone
    when the block ends."""
    with (
        tempfile.TemporaryDirectory(prefix=f"bench-{engine}-") as work,
        Processes(Path(work) / "logs") as processes,
    ):
        server = server_binary(engine)
        started = redis_start(processes, name=engine, server=server, directory=Path(work))
        with redis.Redis.from_url(started.url, socket_timeout=COMMAND_TIMEOUT_SECONDS) as client:
            yield started, client


def redis_facts(client: redis.Redis) -> tuple[str, str, str]:
    """The engine a server is, its version and its allocator."""
    engine, version = devservices.server_engine(client.info("server"))
    return engine, version, str(client.info("memory")["mem_allocator"])


def set_memory(client: redis.Redis, key: str) -> tuple[int, int]:
    """A sorted set's players and its MEMORY USAGE (SAMPLES 0: every element)."""
    return int(client.zcard(key)), int(client.memory_usage(key, samples=0) or 0)


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
