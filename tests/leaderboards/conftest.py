"""The leaderboard tests' shared board, a season that ended (the close's tests), and the
leaderboard data on a Redis Cluster."""

from collections.abc import Iterator
from datetime import timedelta

import pytest
from django.utils import timezone

from config.building_blocks import redis as redis_roles
from leaderboards import store
from seasons.models import Season
from tests.factories import SeasonFactory, rewarded_board
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
def ended(post_scores):
    """A global season that ended an hour ago (grace 10 minutes) with 12 players: p00 has the
    most points; p05 and p06 tie on points, p06 reached them first."""
    now = timezone.now().replace(microsecond=0)
    board = rewarded_board("global")
    season = SeasonFactory(
        board=board,
        slug="past",
        starts_at=now - timedelta(days=7),
        ends_at=now - timedelta(hours=1),
        grace_period=timedelta(minutes=10),
    )
    body = []
    for i in range(12):
        points = 5 if i in (5, 6) else 100 - i
        ended_at = season.starts_at + timedelta(seconds=100 - i)
        body.append(
            {
                "player_id": f"p{i:02d}",
                "points": points,
                "match_id": "m",
                "season": "past",
                "ended_at": ended_at.isoformat(),
            }
        )
    with_season = Season.objects.filter(pk=season.pk)
    with_season.update(ends_at=now + timedelta(hours=1))  # open while the results arrive
    assert post_scores(body).status_code == 200
    with_season.update(ends_at=now - timedelta(hours=1))
    season.refresh_from_db()
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
