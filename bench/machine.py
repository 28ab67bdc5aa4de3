"""The machine a result was measured on: its facts, its speed (a fixed Python loop), and where its
CPU went during a phase, by part (bench/README.md, "What a run does", 12)."""

from __future__ import annotations

import os
import platform
import resource
import subprocess
import time
from importlib import metadata
from typing import Any

import redis

from scripts.processes import ROOT, proc_stats

from .core import percentile
from .environment import BenchEnvironment, database_connections

PACKAGES = "Django djangorestframework redis hiredis psycopg celery uvicorn uvloop httptools"
# The settings a run records: what shapes the write path and what the bench's cluster tunes.
_SETTINGS = """server_version shared_buffers effective_cache_size work_mem
maintenance_work_mem wal_buffers wal_level wal_compression max_wal_size min_wal_size
checkpoint_timeout checkpoint_completion_target fsync synchronous_commit full_page_writes
shared_preload_libraries track_io_timing autovacuum_naptime autovacuum_vacuum_scale_factor
autovacuum_vacuum_insert_scale_factor autovacuum_analyze_scale_factor autovacuum_vacuum_cost_limit
max_connections random_page_cost effective_io_concurrency"""
RECORDED_SETTINGS = _SETTINGS.split()
# The Redis facts a run records, by the INFO field each is read from.
REDIS_FACTS = {
    "version": "redis_version", "allocator": "mem_allocator", "appendonly": "aof_enabled",
    "maxmemory": "maxmemory", "process_id": "process_id",
    # Valkey also answers redis_version (7.2.4, for clients), and names itself here.
    "server_name": "server_name", "valkey_version": "valkey_version",
}  # fmt: skip
_TICKS = os.sysconf("SC_CLK_TCK")
# Parts not led by a known process are found by their command name.
_NAMED_PARTS = {"redis-server": "redis", "valkey-server": "redis", "postgres": "postgres"}


def _line(path: str, prefix: str) -> str | None:
    """The rest of the first line of `path` that starts with `prefix`."""
    try:
        with open(path) as f:
            return next((ln[len(prefix) :].strip() for ln in f if ln.startswith(prefix)), None)
    except OSError:
        return None


def _git(*args: str) -> str:
    done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)
    return done.stdout.strip()


def _postgres_facts(env: BenchEnvironment) -> dict[str, Any]:
    """The recorded settings (those an older server lacks left out), those that shape the write
    path first, and what one durable commit costs on this disk."""
    names = ("server_version", "shared_buffers", "synchronous_commit", "fsync", "wal_level")
    with env.connect() as conn:
        query = "SELECT name, current_setting(name, true) FROM unnest(%s::text[]) AS name"
        rows = conn.execute(query, [RECORDED_SETTINGS]).fetchall()
        settings = {name: value for name, value in rows if value is not None}
        facts: dict[str, Any] = {name: settings.get(name) for name in names}
        conn.execute("CREATE TABLE IF NOT EXISTS bench_commit_probe (x int)")
        commits = []
        try:
            for _ in range(30):
                started = time.perf_counter()
                conn.execute("INSERT INTO bench_commit_probe VALUES (1)")
                commits.append((time.perf_counter() - started) * 1000)
        finally:
            conn.execute("DROP TABLE IF EXISTS bench_commit_probe")
    commits.sort()
    facts["one_row_commit_ms"] = {f"p{p}": round(percentile(commits, p), 3) for p in (50, 90)}
    return facts | {"settings": settings}


def python_probe_ms() -> float:
    """The best of five runs of a fixed pure-Python loop: larger on a shared or throttled
    machine than on the same machine idle."""
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        sum(i * i for i in range(1_000_000))
        best = min(best, time.perf_counter() - started)
    return round(best * 1000, 1)


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def machine_facts(env: BenchEnvironment, **tools: str) -> dict[str, Any]:
    info = redis.Redis.from_url(env.redis_url, socket_timeout=5).info()
    memory = _line("/proc/meminfo", "MemTotal:")
    return {
        "python_probe_ms": python_probe_ms(), "cores": os.cpu_count(),
        "usable_cores": len(os.sched_getaffinity(0)),
        "cpu_model": (_line("/proc/cpuinfo", "model name") or ": unknown").lstrip(": "),
        "memory_gib": round(int(memory.split()[0]) / 2**20, 1) if memory else 0.0,
        "os": (_line("/etc/os-release", "PRETTY_NAME=") or platform.platform()).strip('"'),
        "kernel": platform.release(), "python": platform.python_version(),
        "packages": {name: _version(name) for name in PACKAGES.split()},
        "redis": {fact: info.get(field) for fact, field in REDIS_FACTS.items()},
        "postgresql": _postgres_facts(env), **tools,
        "git": {"commit": _git("rev-parse", "HEAD"), "dirty": bool(_git("status", "--porcelain"))},
        "load_average_at_start": [round(v, 2) for v in os.getloadavg()],
    }  # fmt: skip


def cpu_times() -> list[int]:
    """The machine's CPU ticks so far, by kind: user nice system idle iowait irq softirq steal."""
    with open("/proc/stat") as stat:
        return [int(v) for v in stat.readline().split()[1:9]]


def _busy_ticks() -> int:
    cpu = cpu_times()
    return sum(cpu[:3]) + sum(cpu[5:8])  # everything but idle and iowait


def _own_seconds(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


class Window:
    """`with Window(...)` around a load, or start() and load_stopped() where more follows the
    load in the same phase: the CPU of each part over exactly that window and, given the bench's
    environment, the database's connections after it and sessions opened meanwhile."""

    def __init__(self, cpu_groups: dict[str, int], env: BenchEnvironment | None = None) -> None:
        self.groups, self.env = cpu_groups, env  # part name -> pid of its leader
        self.cpu: dict[str, float] = {}
        self.connections: dict[str, int] = {}

    def _part_ticks(self) -> dict[str, int]:
        """Ticks of each part (its leader, process group and children) and of their reaped
        children (cutime and cstime: processes that exit within a phase vanish from /proc)."""
        leaders = {pid: name for name, pid in self.groups.items()}
        named = {command: part for command, part in _NAMED_PARTS.items() if part not in self.groups}
        totals = dict.fromkeys([*self.groups, *_NAMED_PARTS.values()], 0)
        for pid, p in proc_stats().items():
            leader = leaders.get(pid) or leaders.get(p.pgrp) or leaders.get(p.ppid)
            part = leader or named.get(p.name)
            if part is not None and pid != os.getpid():
                totals[part] += p.ticks
        return totals

    def start(self) -> Window:
        if self.env is not None:
            self.sessions_before = database_connections(self.env)["sessions"]
        self.started, self.parts, self.busy = time.monotonic(), self._part_ticks(), _busy_ticks()
        self.own = _own_seconds(resource.RUSAGE_SELF)
        self.children = _own_seconds(resource.RUSAGE_CHILDREN)
        return self

    def load_stopped(self) -> None:
        seconds = max(time.monotonic() - self.started, 1e-6)
        # A part can only lose time if one of its processes was reaped by an outsider.
        used = {k: max(0, v - self.parts.get(k, 0)) / _TICKS for k, v in self._part_ticks().items()}
        # wrk (and py-spy) are waited-for children of the harness: their rusage says it exactly.
        used["wrk"] = _own_seconds(resource.RUSAGE_CHILDREN) - self.children
        used["harness"] = _own_seconds(resource.RUSAGE_SELF) - self.own
        busy = (_busy_ticks() - self.busy) / _TICKS / seconds
        cores = {name: value / seconds for name, value in used.items()}
        cores |= {"other": max(0.0, busy - sum(cores.values())), "machine_busy": busy}
        self.cpu = {name: round(value, 3) for name, value in cores.items()}
        if self.env is not None:
            self.connections = database_connections(self.env)

    def __enter__(self) -> Window:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        if exc_type is None and not self.cpu:
            self.load_stopped()

    def figures(self) -> dict[str, Any]:
        figures: dict[str, Any] = {"cpu_cores": self.cpu}
        if self.env is not None:
            figures["database_connections_after"] = self.connections["open"]
            opened = self.connections["sessions"] - self.sessions_before
            figures["database_sessions_opened"] = opened
        return figures
