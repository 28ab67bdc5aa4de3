"""bench.segments at a small size: the mirror's script fills a board without dimensions and one
with two side by side, every value gets its set, and the figures are sane. Costs are judged
from a real run's output (bench/README.md), never asserted here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MEMBERS = 5_000


def test_segments_measure_the_write_and_the_memory_with_and_without_dimensions(
    tmp_path: Path,
) -> None:
    output = tmp_path / "segments.json"

    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.segments",
            "--members",
            str(MEMBERS),
            "--output",
            str(output),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert completed.returncode == 0, completed.stdout + completed.stderr
    result = json.loads(output.read_text())
    assert result["members"] == MEMBERS
    plain, segmented = result["plain"], result["segmented"]
    assert (plain["dimensions"], plain["segment_sets"]) == (0, 0)
    # Every country, every platform and every clan (of 50 players each) holds players.
    assert (segmented["dimensions"], segmented["segment_sets"]) == (2, 50 + 4 + MEMBERS // 50)
    assert (plain["clans"], segmented["clans"]) == (0, MEMBERS // 50)
    for figures in (plain, segmented):
        assert figures["redis_cpu_us_first_write"] > 0
        assert figures["redis_cpu_us_later_write"] > 0
    assert segmented["used_memory_growth_per_player"] > plain["used_memory_growth_per_player"] > 0
    assert result["bytes_per_player_per_dimension"] > 0
    assert "| 2 dimensions and a clan |" in completed.stdout
