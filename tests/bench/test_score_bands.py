"""bench.score_bands at a small size: every scheme accounts for every player and write, hash
shards spread players and writes evenly and never move anyone, equal-width bands pile up as the
log-normal points say, and equal-population bands start even, put the whole top 100 on one set
and move players between sets. Full-size figures are judged from a real run (README), never here."""

from __future__ import annotations

import json
import math
from pathlib import Path
from statistics import NormalDist
from typing import Any

import pytest

from bench.score_bands import main, measure
from bench.scores import LOADED_POINTS_MU, LOADED_POINTS_SIGMA

PLAYERS = 20_000
RESULTS = 60_000
BANDS = 3
TOP = 100


@pytest.fixture(scope="module")
def measured() -> dict[str, Any]:
    return measure(players=PLAYERS, results=RESULTS, bands=BANDS, seed=1)


def _largest_share(counts: list[int]) -> float:
    return max(counts) / sum(counts)


def test_every_scheme_accounts_for_every_player_write_and_top_entry(
    measured: dict[str, Any],
) -> None:
    # given: a season of 20,000 players, all loaded before half-season (30,000 results)
    schemes = measured["schemes"]

    # then
    assert list(schemes) == ["equal_width", "equal_population", "hash"]
    for scheme in schemes.values():
        assert len(scheme["players_at_end"]) == BANDS
        assert sum(scheme["players_at_half"]) == PLAYERS
        assert sum(scheme["players_at_end"]) == PLAYERS
        assert sum(scheme["top_entries"]) == TOP
        for counts in (scheme["players_at_end"], scheme["writes"], scheme["rank_read_walks"]):
            assert math.isclose(sum(count / sum(counts) for count in counts), 1.0)
    assert sum(schemes["equal_width"]["writes"]) == RESULTS
    assert sum(schemes["hash"]["writes"]) == RESULTS
    assert sum(schemes["equal_population"]["writes"]) == RESULTS - RESULTS // 2


def test_hash_shards_hold_a_third_of_the_players_and_writes_each_and_move_nobody(
    measured: dict[str, Any],
) -> None:
    # given
    hashed = measured["schemes"]["hash"]

    # then
    assert abs(_largest_share(hashed["players_at_end"]) - 1 / BANDS) < 0.02
    assert abs(_largest_share(hashed["writes"]) - 1 / BANDS) < 0.02
    assert hashed["moves"] == 0
    assert hashed["rank_read_sets_asked"] == BANDS
    assert hashed["top_read_sets_asked"] == BANDS


def test_equal_width_bands_hold_the_share_the_log_normal_points_put_below_the_first_bound(
    measured: dict[str, Any],
) -> None:
    # given
    width = measured["schemes"]["equal_width"]
    first_bound = width["lower_bounds"][0]
    implied = NormalDist(LOADED_POINTS_MU, LOADED_POINTS_SIGMA).cdf(math.log(first_bound))

    # then: the lowest band holds nearly everyone (and takes nearly every write)
    assert implied > 0.99
    assert abs(width["players_at_end"][0] / PLAYERS - implied) < 0.002
    assert width["writes"][0] / RESULTS > 0.99
    assert _largest_share(width["players_at_end"]) > 2.5 / BANDS


def test_equal_population_bands_start_even_drift_and_move_players_between_sets(
    measured: dict[str, Any],
) -> None:
    # given
    population = measured["schemes"]["equal_population"]

    # then: even when cut, no longer even at the end
    for count in population["players_at_half"]:
        assert abs(count / PLAYERS - 1 / BANDS) < 0.01
    assert _largest_share(population["players_at_end"]) > 1 / BANDS + 0.05
    assert population["moves"] > 0
    assert population["moved_by_rebalance"] > 0
    assert population["top_entries"] == [0, 0, TOP]
    assert population["top_read_sets_asked"] == 1


def test_main_writes_the_results_file_and_prints_the_tables(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # given
    output = tmp_path / "score-bands.json"

    # when
    code = main(["--players", "2000", "--results", "6000", "--output", str(output)])

    # then
    assert code == 0
    result = json.loads(output.read_text())
    assert (result["players"], result["results"], result["bands"]) == (2000, 6000, 3)
    printed = capsys.readouterr().out
    assert "| Scheme | Set | Points |" in printed
    assert "| Hash shards, crc32(player_id) mod N | 2 | any |" in printed
