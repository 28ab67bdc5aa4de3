"""Score bands against hash sharding on the benchmark's own season: one board split over N sorted
sets, either by score band (a player lives in the set of the band their total is in; bands of
equal width chosen up front, or of equal population chosen at half-season) or by a stable hash of
the player id. A simulation, no Redis: the season from empty, result by result as the benchmark
writes it, and where each scheme puts the players, the result writes and the reads, and how many
writes move a player from one set to another.

    python -m bench.score_bands [--players 1000000] [--results 3000000] [--bands 3]

Results go to bench/results/score-bands-latest.json, and Markdown tables to the standard output.
"""

from __future__ import annotations

import argparse
import heapq
import json
import math
import random
import sys
import time
import zlib
from abc import ABC, abstractmethod
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from itertools import islice
from statistics import NormalDist, median_low
from typing import Any

from .options import seed_and_results_file_add
from .scores import (
    CHUNK,
    INGEST_POINTS_MAX,
    INGEST_POINTS_MIN,
    LOADED_POINTS_MU,
    LOADED_POINTS_SIGMA,
    chunk_scores,
)

# The loaded results' times: seconds over the bench season's 30 days so far (bench/load.py).
SEASON_SECONDS = 30 * 24 * 3600
TOP = 100


def player_id(index: int) -> str:
    """The bench's player ids (bench/load.py)."""
    return f"p{index}"


def season_results(*, players: int, results: int, seed: int) -> Iterator[tuple[int, int]]:
    """The benchmark's season from empty, as (player, points), `results` of them: first each
    player's one loaded result (bench/load.py: log-normal points) in the order of the time it was
    reached, then the ingest load's (bench/openloop.py, bench/wrk/ingest.lua): a uniformly random
    player, INGEST_POINTS_MIN..INGEST_POINTS_MAX points, added to the total (the bench's board
    sums its results)."""
    loaded: list[int] = []
    reached: list[int] = []
    for start in range(0, players, CHUNK):
        points, elapsed = chunk_scores(seed, start, min(CHUNK, players - start), SEASON_SECONDS)
        loaded += points
        reached += elapsed
    for player in sorted(range(players), key=reached.__getitem__)[:results]:
        yield player, loaded[player]
    rng = random.Random(f"score-bands-{seed}")
    for _ in range(results - players):
        yield rng.randrange(players), rng.randint(INGEST_POINTS_MIN, INGEST_POINTS_MAX)


class Placement(ABC):
    """Where one scheme puts each player, and what the writes cost it: result writes per set, and
    the writes that moved a player to another set (a ZREM on one node and a ZADD on another).

    Reads are counted reading every player on the board once (the bench's read load asks for
    random players), and the season's top 100."""

    def __init__(self, sets: int) -> None:
        self.sets = sets
        self.writes = [0] * sets
        self.moves = 0

    @abstractmethod
    def set_of(self, player: int, total: int) -> int: ...

    @abstractmethod
    def rank_reads(self, per_set: list[int]) -> tuple[list[int], int]:
        """Rank reads' walks of a sorted set, per set, and the sets they ask in all."""

    @abstractmethod
    def top_reads(self, entries: list[int]) -> list[int]:
        """The top-100 read's commands per set, given how many of the top 100 each set holds."""

    def record(self, player: int, before: int, after: int) -> None:
        into = self.set_of(player, after)
        self.writes[into] += 1
        if before and self.set_of(player, before) != into:
            self.moves += 1

    def players(self, totals: list[int]) -> list[int]:
        counts = [0] * self.sets
        for player, total in enumerate(totals):
            if total:
                counts[self.set_of(player, total)] += 1
        return counts


class ScoreBands(Placement):
    """Set k holds the totals from lower_bounds[k - 1] (set 0 from nothing) up to the next bound."""

    def __init__(self, lower_bounds: list[int]) -> None:
        super().__init__(len(lower_bounds) + 1)
        self.lower_bounds = lower_bounds

    def set_of(self, player: int, total: int) -> int:
        return bisect_right(self.lower_bounds, total)

    def rank_reads(self, per_set: list[int]) -> tuple[list[int], int]:
        """ZREVRANK on the player's band, ZCARD on each better band (exact ranks; a counter of
        band sizes would be one more cross-node write per move)."""
        return list(per_set), sum(count * (self.sets - k) for k, count in enumerate(per_set))

    def top_reads(self, entries: list[int]) -> list[int]:
        """ZREVRANGE on each band holding one of the top 100."""
        return [1 if held else 0 for held in entries]


class HashShards(Placement):
    """Set crc32(player_id) mod N, whatever the score."""

    def __init__(self, players: int, sets: int) -> None:
        super().__init__(sets)
        self.shards = [zlib.crc32(player_id(i).encode()) % sets for i in range(players)]

    def set_of(self, player: int, total: int) -> int:
        return self.shards[player]

    def rank_reads(self, per_set: list[int]) -> tuple[list[int], int]:
        """ZCOUNT of the better scores on every shard, for every read."""
        reads = sum(per_set)
        return [reads] * self.sets, reads * self.sets

    def top_reads(self, entries: list[int]) -> list[int]:
        """Every shard's top 100, merged."""
        return [1] * self.sets


def expected_best_total(*, players: int, results: int) -> int:
    """What an operator setting bands up front expects the season's best total to be: the
    largest of N loaded results (the log-normal's 1 - 1/N quantile) plus an average player's
    ingest points."""
    z = NormalDist().inv_cdf(1 - 1 / players)
    loaded = math.exp(LOADED_POINTS_MU + LOADED_POINTS_SIGMA * z) + 1
    ingest = max(0, results - players) / players * (INGEST_POINTS_MIN + INGEST_POINTS_MAX) / 2
    return round(loaded + ingest)


def equal_width_bounds(*, best: int, bands: int) -> list[int]:
    return [round(best * k / bands) for k in range(1, bands)]


def equal_population_bounds(totals: list[int], bands: int) -> list[int]:
    """Bounds that split the players on the board into bands of equal size (ties go up)."""
    ranked = sorted(total for total in totals if total)
    return [ranked[len(ranked) * k // bands] for k in range(1, bands)]


def _apply(results: Iterable[tuple[int, int]], totals: list[int], schemes: list[Placement]) -> None:
    for player, points in results:
        before = totals[player]
        totals[player] = after = before + points
        for scheme in schemes:
            scheme.record(player, before, after)


def _reads(scheme: Placement, totals: list[int], per_set: list[int]) -> dict[str, Any]:
    top = heapq.nlargest(TOP, (p for p, total in enumerate(totals) if total), totals.__getitem__)
    entries = [0] * scheme.sets
    for player in top:
        entries[scheme.set_of(player, totals[player])] += 1
    rank_walks, sets_asked = scheme.rank_reads(per_set)
    top_commands = scheme.top_reads(entries)
    return {
        "rank_read_walks": rank_walks,
        "rank_read_sets_asked": round(sets_asked / sum(per_set), 3),
        "top_read_commands": top_commands,
        "top_read_sets_asked": sum(top_commands),
        "top_entries": entries,
    }


def measure(*, players: int, results: int, bands: int, seed: int) -> dict[str, Any]:
    """The season played through every scheme at once. Equal-width bands and hash shards hold
    from the first result; equal-population bands are cut from the standings at half-season
    (the one rebalance) and count the second half's writes."""
    totals = [0] * players
    best = expected_best_total(players=players, results=results)
    width = ScoreBands(equal_width_bounds(best=best, bands=bands))
    hashed = HashShards(players, bands)
    timeline = season_results(players=players, results=results, seed=seed)

    _apply(islice(timeline, results // 2), totals, [width, hashed])
    population = ScoreBands(equal_population_bounds(totals, bands))
    at_half = {
        "equal_width": width.players(totals),
        "equal_population": population.players(totals),
        "hash": hashed.players(totals),
    }
    rebalanced = sum(
        1
        for player, total in enumerate(totals)
        if total and width.set_of(player, total) != population.set_of(player, total)
    )
    _apply(timeline, totals, [width, hashed, population])

    schemes: dict[str, Any] = {}
    for name, scheme, window in (
        ("equal_width", width, "whole season"),
        ("equal_population", population, "second half"),
        ("hash", hashed, "whole season"),
    ):
        at_end = scheme.players(totals)
        schemes[name] = {
            "lower_bounds": getattr(scheme, "lower_bounds", None),
            "writes_window": window,
            "players_at_half": at_half[name],
            "players_at_end": at_end,
            "writes": scheme.writes,
            "moves": scheme.moves,
            **_reads(scheme, totals, at_end),
        }
    schemes["equal_population"]["moved_by_rebalance"] = rebalanced
    return {
        "players": players,
        "results": results,
        "bands": bands,
        "seed": seed,
        "expected_best_total": best,
        "best_total": max(totals),
        "median_total": median_low(total for total in totals if total),
        "schemes": schemes,
    }


LABELS = {
    "equal_width": "Score bands, equal width set up front",
    "equal_population": "Score bands, equal population cut at half-season",
    "hash": "Hash shards, crc32(player_id) mod N",
}


def _percent(part: int, whole: int) -> str:
    """A share with the decimals it needs not to read as 0% or 100% when it is neither."""
    share = 100 * part / whole if whole else 0.0
    decimals = 1
    while decimals < 6 and 0 < share < 100 and round(share, decimals) in (0, 100):
        decimals += 1
    return f"{share:.{decimals}f}%"


def _points(scheme: dict[str, Any], index: int) -> str:
    bounds = scheme["lower_bounds"]
    if bounds is None:
        return "any"
    low = f"{bounds[index - 1]:,}" if index else "1"
    return f"{low}+" if index == len(bounds) else f"{low}-{bounds[index] - 1:,}"


def table(result: dict[str, Any]) -> str:
    players, results = result["players"], result["results"]
    lines = [
        f"Score bands and hash shards: {players:,} players, {results:,} results, "
        f"{result['bands']} sets (seed {result['seed']}); totals: median "
        f"{result['median_total']:,}, best {result['best_total']:,}, expected best up front "
        f"{result['expected_best_total']:,}",
        "",
        "| Scheme | Set | Points | Players at half | Players at end | Result writes "
        "| Rank-read walks | Top-100 commands |",
        "|---|---:|---|---:|---:|---:|---:|---:|",
    ]
    for name, scheme in result["schemes"].items():
        writes = sum(scheme["writes"])
        for k in range(result["bands"]):
            lines.append(
                f"| {LABELS[name]} | {k} | {_points(scheme, k)} "
                f"| {_percent(scheme['players_at_half'][k], sum(scheme['players_at_half']))} "
                f"| {scheme['players_at_end'][k]:,} "
                f"({_percent(scheme['players_at_end'][k], sum(scheme['players_at_end']))}) "
                f"| {_percent(scheme['writes'][k], writes)} "
                f"| {_percent(scheme['rank_read_walks'][k], sum(scheme['rank_read_walks']))} "
                f"| {_percent(scheme['top_read_commands'][k], sum(scheme['top_read_commands']))} |"
            )
    lines += [
        "",
        "| Scheme | Writes counted | Largest set's players | Largest set's writes "
        "| Writes that move a player to another set | Sets a rank read asks "
        "| Sets a top-100 read asks |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for name, scheme in result["schemes"].items():
        writes = sum(scheme["writes"])
        lines.append(
            f"| {LABELS[name]} | {scheme['writes_window']} ({writes:,}) "
            f"| {_percent(max(scheme['players_at_end']), sum(scheme['players_at_end']))} "
            f"| {_percent(max(scheme['writes']), writes)} "
            f"| {scheme['moves']:,} ({_percent(scheme['moves'], writes)}) "
            f"| {scheme['rank_read_sets_asked']} | {scheme['top_read_sets_asked']} |"
        )
    moved = result["schemes"]["equal_population"]["moved_by_rebalance"]
    lines += ["", f"The half-season rebalance itself moved {moved:,} players between sets."]
    return "\n".join(lines)


def options_parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.score_bands", description=__doc__)
    parser.add_argument("--players", type=int, default=1_000_000, help="players (1,000,000)")
    parser.add_argument(
        "--results", type=int, default=3_000_000, help="results in the season (3,000,000)"
    )
    parser.add_argument("--bands", type=int, default=3, help="sets: bands or shards (3)")
    seed_and_results_file_add(parser, "score-bands-latest.json")
    options = parser.parse_args(argv)
    if options.players < 2:
        parser.error("--players must be at least 2")
    if options.results < 2:
        parser.error("--results must be at least 2")
    if options.bands < 2:
        parser.error("--bands must be at least 2")
    return options


def main(argv: list[str] | None = None) -> int:
    options = options_parse(argv)
    print(
        f"[score_bands] {options.players:,} players, {options.results:,} results, "
        f"{options.bands} sets",
        flush=True,
    )
    started, cpu_started = time.monotonic(), time.process_time()
    measured = measure(
        players=options.players, results=options.results, bands=options.bands, seed=options.seed
    )
    result = {
        "benchmark": "score_bands",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        **measured,
        "seconds": round(time.monotonic() - started, 1),
        "cpu_seconds": round(time.process_time() - cpu_started, 1),
    }
    options.output.parent.mkdir(parents=True, exist_ok=True)
    options.output.write_text(json.dumps(result, indent=2) + "\n")
    print(table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
