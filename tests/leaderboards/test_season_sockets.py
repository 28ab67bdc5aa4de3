"""A season's sockets keep their followed players in ranked order as standings are told and
forgotten, so the passes of a tick are found without sorting them all (live/rank_events.py)."""

from __future__ import annotations

import random

import pytest

from leaderboards.live.rank_events import passers_fill, passes_find
from leaderboards.live.season_sockets import SeasonSockets
from seasons.models import Season

# Nothing here reads the database; the suite's own checks of every test need it.
pytestmark = pytest.mark.django_db


def test_the_followed_order_follows_every_tell_and_forget():
    sockets = SeasonSockets(season=Season())
    rng = random.Random(7)
    for _ in range(2_000):
        player_id = f"p{rng.randrange(50)}"
        if rng.random() < 0.2:
            sockets.standing_forget(player_id)
        else:
            standing = None if rng.random() < 0.1 else (rng.randrange(1, 9), rng.randrange(20))
            sockets.standing_tell(player_id, standing)
        expected = sorted(
            (standing[1], player)
            for player, standing in sockets.standings_told.items()
            if standing is not None
        )
        assert list(sockets.followed_in_order) == expected
        keys, composites, players = sockets.followed_arrays()
        assert keys == expected
        assert composites.tolist() == [composite for composite, _ in expected]
        assert players.tolist() == [player for _, player in expected]


def test_a_pass_is_found_from_the_kept_order():
    sockets = SeasonSockets(season=Season())
    for player_id, composite in (("low", 10), ("mid", 20), ("high", 30)):
        sockets.player_followers[player_id] = set()
        sockets.standing_tell(player_id, (1, composite))
    sockets.standing_tell("mid", (2, 25))  # told again: its old place is gone

    sockets.moves_pending = [("climber", 12, 28)]  # from above "low" to above "mid" (25)

    assert passes_find(sockets) == ["mid"]
    passers_fill(sockets, ["mid"])
    assert sockets.passed_by == {"mid": {"climber": 28}}
