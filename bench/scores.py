"""The benchmark's players' points and times, skewed like a game's: log-normal points (most
players a few hundred, a long tail of a few with tens of thousands and more) reached at seconds
spread over the season. One rule for every bench module that needs them (bench/load.py's season,
bench/engines.py's memory per engine, bench/shards.py's layouts); seeded per chunk, so the
same seed gives the same players.
"""

from __future__ import annotations

import random

# Players generated from one seed (bench/load.py copies them a chunk at a time): the same seed
# and chunk give the same players.
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


def chunk_scores(seed: int, start: int, count: int, span: int) -> tuple[list[int], list[int]]:
    """Points and seconds-since-season-start of players start .. start+count-1."""
    rng = random.Random(seed * 1_000_003 + start)
    points = [
        min(MAX_LOADED_POINTS, int(rng.lognormvariate(LOADED_POINTS_MU, LOADED_POINTS_SIGMA)) + 1)
        for _ in range(count)
    ]
    elapsed = [rng.randrange(span) for _ in range(count)]
    return points, elapsed
