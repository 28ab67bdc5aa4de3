"""The benchmark's players' points and times, skewed like a game's: one rule for bench/load.py
(which draws them in PostgreSQL from these constants) and the side benchmarks (in Python, seeded
per chunk, so the same seed gives the same players)."""

from __future__ import annotations

import random
from collections.abc import Iterator

from seasons.scoring import composite_score

# The side benchmarks' players generated from one seed and chunk.
CHUNK = 50_000
# A loaded player's one result: 1 + int(lognormal(mu, sigma)) points.
LOADED_POINTS_MU = 6.0
LOADED_POINTS_SIGMA = 1.5
# Loaded totals stay under 2^28 so ingest can add to them without passing 2^29 - 1.
MAX_LOADED_POINTS = 2**28
# Points of one result the ingest load posts to a uniformly random player (bench/openloop.py;
# bench/wrk/ingest.lua draws the same range in Lua).
INGEST_POINTS_MIN = 1
INGEST_POINTS_MAX = 100
# The side benchmarks' ids are the main bench's p<i> padded to 12 bytes, as long as a short game
# id, so a memory figure does not flatter the service by the shortness of its test ids.
ID_BYTES = 12
# Their players reached their standing at seconds spread over the bench season's 30 days so far.
SEASON_SECONDS = 30 * 24 * 3600


def chunk_scores(seed: int, start: int, count: int, span: int) -> tuple[list[int], list[int]]:
    """Points and seconds-since-season-start of players start .. start+count-1."""
    rng = random.Random(seed * 1_000_003 + start)
    points = [
        min(MAX_LOADED_POINTS, int(rng.lognormvariate(LOADED_POINTS_MU, LOADED_POINTS_SIGMA)) + 1)
        for _ in range(count)
    ]
    return points, [rng.randrange(span) for _ in range(count)]


def player_id(index: int) -> str:
    return f"p{index:0{ID_BYTES - 1}d}"


def standings(players: int, seed: int, chunk: int = CHUNK) -> Iterator[list[tuple[str, int]]]:
    """The side benchmarks' players with a highest-first board's composite scores, in chunks of
    `chunk` players (each seeded by its first player)."""
    for start in range(0, players, chunk):
        points, elapsed = chunk_scores(seed, start, min(chunk, players - start), SEASON_SECONDS)
        yield [
            (player_id(start + i), composite_score(points=p, elapsed=e, lowest_first=False))
            for i, (p, e) in enumerate(zip(points, elapsed, strict=True))
        ]
