"""A real local Redis Cluster for the tests: three primaries on free loopback ports, nothing on
disk, started and stopped by the test run itself (every wait bounded)."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

import redis

from tests.fault.procs import ROOT, Process, free_port, wait_until


def redis_binaries() -> tuple[str, str]:
    """redis-server and redis-cli, installed the way `make test` installs Redis when missing."""
    if shutil.which("redis-server") is None or shutil.which("redis-cli") is None:
        spec = importlib.util.spec_from_file_location(
            "devservices", ROOT / "scripts" / "devservices.py"
        )
        assert spec is not None and spec.loader is not None
        devservices = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(devservices)
        devservices.apt_install("redis-server")
    return shutil.which("redis-server") or "redis-server", shutil.which("redis-cli") or "redis-cli"


class LocalRedisCluster:
    def __init__(self, primaries: int = 3, *, node_options: Sequence[str] = ()) -> None:
        self.directory = Path(tempfile.mkdtemp(prefix="lb-redis-cluster-"))
        self.ports = [free_port() for _ in range(primaries)]
        self.processes: list[Process] = []
        # More redis-server options for every node (cluster-node-timeout, say).
        self.node_options = list(node_options)

    @property
    def url(self) -> str:
        """A seed node's URL, as LEADERBOARD_REDIS_URL names it."""
        return f"redis://127.0.0.1:{self.ports[0]}/0"

    def node(self, port: int) -> redis.Redis:
        return redis.Redis(port=port, decode_responses=True, socket_timeout=5)

    def start(self, timeout: float = 30.0) -> LocalRedisCluster:
        server, cli = redis_binaries()
        for port in self.ports:
            self.processes.append(
                Process(
                    [
                        server,
                        "--port",
                        str(port),
                        "--bind",
                        "127.0.0.1",
                        # The bus port of its own: port + 10000 may lie past 65535.
                        "--cluster-port",
                        str(free_port()),
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
                ).start()
            )
        for port in self.ports:
            wait_until(lambda port=port: self._pings(port), timeout=timeout, what=f"node {port}")
        subprocess.run(
            [
                cli,
                "--cluster",
                "create",
                *(f"127.0.0.1:{port}" for port in self.ports),
                "--cluster-replicas",
                "0",
                "--cluster-yes",
            ],
            check=True,
            capture_output=True,
            timeout=timeout,
        )
        # Still `fail` for about a second after create returns.
        wait_until(self._ok, timeout=timeout, what="cluster_state:ok on every node")
        return self

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

    def _process(self, port: int) -> Process:
        return self.processes[self.ports.index(port)]

    def kill_node(self, port: int) -> None:
        """Kill one node as a crash would: its data is gone, its nodes.conf stays."""
        self._process(port).kill()

    def restart_empty(self, port: int, timeout: float = 30.0) -> None:
        """Start a killed node again, on its ports and with its nodes.conf: it rejoins holding
        its slots, but with no data (the nodes keep nothing on disk)."""
        killed = self._process(port)
        assert not killed.running(), f"node {port} is still running"
        restarted = Process(killed.args, log=killed.log.with_suffix(".restarted.log")).start()
        self.processes[self.ports.index(port)] = restarted
        wait_until(lambda: self._pings(port), timeout=timeout, what=f"node {port} restarted")

    def stop(self) -> None:
        for process in self.processes:
            process.stop(timeout=5)
        shutil.rmtree(self.directory, ignore_errors=True)
