"""The benchmark's players' points and times, skewed like a game's: one rule for bench/load.py
(which draws them in PostgreSQL from these constants) and bench.segments (in Python, seeded per
chunk, so the same seed gives the same players)."""

from __future__ import annotations

import random
from collections.abc import Iterator

from seasons.scoring import composite_score

# A loaded player's one result: 1 + int(lognormal(mu, sigma)) points.
LOADED_POINTS_MU = 6.0
LOADED_POINTS_SIGMA = 1.5
# Loaded totals stay under 2^28 so ingest can add to them without passing 2^29 - 1.
MAX_LOADED_POINTS = 2**28
# Points of one result the ingest load posts to a uniformly random player (bench/openloop.py;
# bench/wrk/ingest.lua draws the same range in Lua).
INGEST_POINTS_MIN = 1
INGEST_POINTS_MAX = 100
# bench.segments' ids are the main bench's p<i> padded to 12 bytes, as long as a short game id,
# so a memory figure does not flatter the service by the shortness of its test ids.
ID_BYTES = 12
# Its players reached their standing at seconds spread over the bench season's 30 days so far.
SEASON_SECONDS = 30 * 24 * 3600


def standings(players: int, seed: int, chunk: int) -> Iterator[list[tuple[str, int]]]:
    """bench.segments' players with a highest-first board's composite scores, in chunks of
    `chunk` players, each seeded by its first player."""
    for start in range(0, players, chunk):
        rng, count = random.Random(seed * 1_000_003 + start), min(chunk, players - start)
        drawn = (rng.lognormvariate(LOADED_POINTS_MU, LOADED_POINTS_SIGMA) for _ in range(count))
        points = [min(MAX_LOADED_POINTS, int(value) + 1) for value in drawn]
        elapsed = [rng.randrange(SEASON_SECONDS) for _ in range(count)]
        ids = [f"p{index:0{ID_BYTES - 1}d}" for index in range(start, start + count)]
        yield [
            (player_id, composite_score(points=p, elapsed=e, lowest_first=False))
            for player_id, p, e in zip(ids, points, elapsed, strict=True)
        ]
