"""bench.shards at a small size: both layouts loaded on a cluster of its own, their answers
equal, every figure of both there and positive, and the cluster stopped afterwards. The figures
themselves are judged from a real run's output (README, bench/README.md), never asserted here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from scripts.processes import proc_stat

ROOT = Path(__file__).resolve().parents[2]
PLAYERS = 3_000


def test_shards_compares_one_shard_with_three_on_a_cluster_of_its_own(tmp_path: Path) -> None:
    # given
    output = tmp_path / "shards.json"

    # when
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.shards",
            "--players",
            str(PLAYERS),
            "--closed-seconds",
            "0.5",
            "--open-seconds",
            "0.5",
            "--compare-players",
            "300",
            "--round-trip-calls",
            "100",
            "--quiet-seconds",
            "0",
            "--attempts",
            "1",
            "--output",
            str(output),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )

    # then
    assert completed.returncode == 0, completed.stdout + completed.stderr
    result = json.loads(output.read_text())
    assert (result["players"], result["id_bytes"]) == (PLAYERS, 12)
    assert result["answers"] == {
        "board_size": PLAYERS,
        "players_compared": 300,
        "ranks_equal": True,
        "top100_equal": True,
    }
    layouts = ["1 shard", "3 shards"]
    assert sorted(result["placement"]["1 shard"]["players_by_node"]) == [0, 0, PLAYERS]
    spread = result["placement"]["3 shards"]["players_by_node"]
    assert sum(spread) == PLAYERS and min(spread) > 0
    for layout in layouts:
        assert result["load"][layout]["players"] == PLAYERS
        assert result["placement"][layout]["memory_usage_bytes_per_player"] > 0
    assert list(result["operations"]) == ["rank", "top100", "ingest"]
    for operation, figures in result["operations"].items():
        assert figures["fixed_rate"] > 0
        assert list(figures["layouts"]) == layouts
        for layout, phases in figures["layouts"].items():
            where = (operation, layout)
            assert phases["closed"]["calls_per_s"] > 0, where
            assert phases["open"]["calls"] > 0, where
            assert phases["open"]["offered_per_s"] == figures["fixed_rate"], where
            for percentile in ("p50_ms", "p99_ms", "p99_9_ms"):
                assert phases["open"][percentile] > 0, where
            assert phases["round_trips"]["round_trips"] >= 1, where
            assert phases["round_trips"]["node_requests"] >= 1, where
            if operation == "rank":
                assert phases["round_trips_event_loop"]["round_trips"] >= 1, where
    for node in result["nodes"]:
        assert proc_stat(node["pid"]) is None, f"node {node['node']} is still running"
    assert "| Rank (competition), closed loop: reads/s |" in completed.stdout
