"""The leaderboard tests' shared board, and the leaderboard data on a Redis Cluster."""

from collections.abc import Iterator
from datetime import timedelta

import pytest

from config.building_blocks import redis as redis_roles
from leaderboards import store
from tests.redis_cluster import LocalRedisCluster


def at(season, seconds: int) -> str:  # noqa: ANN001
    return (season.starts_at + timedelta(seconds=seconds)).isoformat()


@pytest.fixture
def board(post_scores, season):
    """p1 30, p2 20 (reached at 10 s), p3 20 (reached at 5 s), p4 10."""
    for player, points, seconds in (("p1", 30, 1), ("p2", 20, 10), ("p3", 20, 5), ("p4", 10, 2)):
        response = post_scores(
            {
                "player_id": player,
                "points": points,
                "match_id": f"m-{player}",
                "ended_at": at(season, seconds),
            }
        )
        assert response.status_code == 201
    return season


@pytest.fixture
def leaderboard_on_cluster(redis_cluster: LocalRedisCluster, settings) -> Iterator[None]:  # noqa: ANN001
    """The leaderboard data on the session's Redis Cluster for this test."""
    settings.LEADERBOARD_REDIS_URL = redis_cluster.url
    settings.LEADERBOARD_REDIS_CLUSTER = True
    redis_roles.connections_forget()
    yield
    store.delete_prefixed_keys()
    redis_roles.connections_forget()
