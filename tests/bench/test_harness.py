"""The benchmark harness in its tiny mode: it runs end to end, in its own database and Redis
prefix, and writes every section with sane figures. Speed is never asserted here: it is judged
from a real run's output (bench/README.md)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import psycopg
import pytest
import redis
from psycopg import sql

ROOT = Path(__file__).resolve().parents[2]
PLAYERS = 3000
RUN_TIMEOUT_SECONDS = 900

pytestmark = pytest.mark.skipif(
    shutil.which("wrk") is None and os.geteuid() != 0,
    reason="wrk is missing and only root can install it: sudo apt-get install wrk",
)


def _postgres(dbname: str) -> psycopg.Connection:
    url = urlparse(os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/leaderboard"))
    return psycopg.connect(
        host=url.hostname or "127.0.0.1",
        port=url.port or 5432,
        user=url.username or "postgres",
        password=url.password,
        dbname=dbname,
        autocommit=True,
        connect_timeout=5,
    )


@pytest.fixture
def bench_database() -> Iterator[str]:
    """A database of this test's own, dropped afterwards (the harness creates it)."""
    name = f"leaderboard_bench_ci{os.environ.get('TEST_DB_SUFFIX', '')}"
    yield name
    with _postgres("postgres") as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


def _run_tiny(*, results_dir: Path, database: str, prefix: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.run",
            "--players",
            str(PLAYERS),
            "--tiny",
            "--results-dir",
            str(results_dir),
            "--database",
            database,
            "--key-prefix",
            f"{prefix}lb:",
            "--cache-prefix",
            f"{prefix}cache",
            "--broker-db",
            "14",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_SECONDS,
        check=False,
    )


def _sane_latency(figures: dict) -> None:
    assert figures["samples"] > 0
    assert 0 < figures["p50_ms"] <= figures["p99_ms"] <= figures["max_ms"]


def _sane_http(figures: dict) -> None:
    assert figures["requests"] > 0
    assert figures["requests_per_s"] > 0
    assert 0 < figures["p50_ms"] <= figures["p99_ms"]
    assert figures["ratio_to_ceiling"] > 0
    assert figures["cpu_cores"]["web"] > 0


def _check_sections(results: dict) -> None:
    assert results["players"] == PLAYERS
    assert results["machine"]["cores"] > 0
    assert results["machine"]["postgresql"]["server_version"]
    assert results["machine"]["redis"]["version"]

    load = results["load"]
    assert (load["players"], load["results"], load["totals"]) == (PLAYERS, PLAYERS, PLAYERS)
    assert load["totals_equal_results"] is True
    assert results["rebuild"]["players"] == results["rebuild"]["zcard"] == PLAYERS
    assert results["rebuild"]["players_per_s"] > 0
    assert results["memory"]["zcard"] == PLAYERS
    assert results["memory"]["bytes_per_player"] > 0
    assert results["memory"]["projected_gib"] > 0

    rank = results["rank"]
    for path in ("zrevrank", "gateway_read_rank", "postgres_count"):
        _sane_latency(rank[path])
    assert rank["zrevrank"]["missing_of_first_100"] == 0
    assert rank["zrevrank_vs_postgres"]["p50"] > 0

    assert set(results["http"]["cached"]) == {"ping", "rank", "top100", "around"}
    assert set(results["http"]["uncached"]) == {"ping", "top100", "around"}
    for endpoints in results["http"].values():
        for figures in endpoints.values():
            _sane_http(figures)

    for mode in ("single", "batch"):
        ingest = results["ingest"][mode]
        assert ingest["accepted_results"] > 0
        assert ingest["accepted_results_per_s"] > 0
        assert ingest["per_second"]
        _sane_latency(ingest["freshness"]["freshness"])
        assert ingest["consistency_after_drain"]["checked"] > 0
        assert ingest["consistency_after_drain"]["mismatched"] == 0

    assert len(results["targets"]) == 7
    assert {t["status"] for t in results["targets"]} <= {"PASS", "MISS"}


# One run checked from every side: the tiny harness takes about a minute, so it runs once (and
# on one xdist worker only), not once per assertion.
def test_tiny_run_writes_every_section_and_cleans_up(tmp_path, bench_database):
    prefix = f"benchtest:{uuid.uuid4().hex[:8]}:"

    run = _run_tiny(results_dir=tmp_path, database=bench_database, prefix=prefix)

    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    results = json.loads((tmp_path / "latest.json").read_text())
    assert results["errors"] == []
    _check_sections(results)
    summary = (tmp_path / "latest.md").read_text()
    assert "## Targets" in summary
    assert "## What's my rank?" in summary
    if importlib.util.find_spec("matplotlib") is not None:
        assert {"latency.png", "ingest.png", "throughput.png"} <= set(results["charts"])
        assert all((tmp_path / name).stat().st_size > 0 for name in results["charts"])
    client = redis.Redis.from_url(os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
    assert list(client.scan_iter(match=f"{prefix}*", count=1000)) == []
