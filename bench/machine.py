"""Facts about the machine and the software a result was measured on, kept with every result."""

from __future__ import annotations

import os
import platform
import subprocess
import time
from importlib import metadata
from typing import Any

import psycopg
import redis

from .environment import BenchEnvironment
from .options import ROOT
from .stats import percentile

PACKAGES = (
    "Django",
    "djangorestframework",
    "redis",
    "hiredis",
    "psycopg",
    "celery",
    "uvicorn",
    "uvloop",
    "httptools",
)


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def _cpu_model() -> str:
    for line in _read("/proc/cpuinfo").splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def _memory_gib() -> float:
    for line in _read("/proc/meminfo").splitlines():
        if line.startswith("MemTotal:"):
            return round(int(line.split()[1]) / 2**20, 1)
    return 0.0


def _os_name() -> str:
    for line in _read("/etc/os-release").splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.split("=", 1)[1].strip('"')
    return platform.platform()


def _package_versions() -> dict[str, str]:
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def _git() -> dict[str, Any]:
    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=10, check=False
        )
        return done.stdout.strip()

    try:
        return {"commit": git("rev-parse", "HEAD"), "dirty": bool(git("status", "--porcelain"))}
    except (OSError, subprocess.SubprocessError):
        return {"commit": "unknown", "dirty": None}


def _redis_facts(env: BenchEnvironment) -> dict[str, Any]:
    client = redis.Redis.from_url(env.redis_url, socket_timeout=5)
    info = client.info()
    return {
        "version": info.get("redis_version"),
        "allocator": info.get("mem_allocator"),
        "appendonly": info.get("aof_enabled"),
        "maxmemory": info.get("maxmemory"),
        "process_id": info.get("process_id"),
    }


def _postgres_facts(env: BenchEnvironment) -> dict[str, Any]:
    """Settings that shape the write path, and what one durable commit costs on this disk."""
    names = ("server_version", "shared_buffers", "synchronous_commit", "fsync", "wal_level")
    with psycopg.connect(**env.conninfo(), autocommit=True) as conn:
        facts: dict[str, Any] = {name: conn.execute(f"SHOW {name}").fetchone()[0] for name in names}
        conn.execute("CREATE TABLE IF NOT EXISTS bench_commit_probe (x int)")
        try:
            commits = []
            for _ in range(30):
                started = time.perf_counter()
                conn.execute("INSERT INTO bench_commit_probe VALUES (1)")
                commits.append((time.perf_counter() - started) * 1000)
        finally:
            conn.execute("DROP TABLE IF EXISTS bench_commit_probe")
    commits.sort()
    facts["one_row_commit_ms"] = {
        "p50": round(percentile(commits, 50), 3),
        "p90": round(percentile(commits, 90), 3),
    }
    return facts


def python_probe_ms() -> float:
    """The best of five runs of a fixed pure-Python loop: a shared or throttled machine shows
    here (and in every figure of the run) as a larger number than the same machine idle."""
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        sum(i * i for i in range(1_000_000))
        best = min(best, time.perf_counter() - started)
    return round(best * 1000, 1)


def cpu_times() -> list[int]:
    """The machine's CPU ticks so far, by kind: user nice system idle iowait irq softirq steal."""
    with open("/proc/stat") as stat:
        return [int(v) for v in stat.readline().split()[1:9]]


def cpu_ticks() -> tuple[int, int]:
    """The machine's CPU ticks so far: (all, stolen by the hypervisor)."""
    cpu = cpu_times()
    return sum(cpu), cpu[7]


def machine_facts(env: BenchEnvironment, *, wrk: str) -> dict[str, Any]:
    return {
        "python_probe_ms": python_probe_ms(),
        "cores": os.cpu_count(),
        "usable_cores": len(os.sched_getaffinity(0)),
        "cpu_model": _cpu_model(),
        "memory_gib": _memory_gib(),
        "os": _os_name(),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "packages": _package_versions(),
        "redis": _redis_facts(env),
        "postgresql": _postgres_facts(env),
        "wrk": wrk,
        "git": _git(),
        "load_average_at_start": [round(v, 2) for v in os.getloadavg()],
    }
