"""The event loop's reads (redis.asyncio's RedisCluster) with the leaderboard data on a real Redis
Cluster: the same tests and the same answers as on one Redis."""

import pytest

from .test_fast_reads import *  # noqa: F403

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("leaderboard_on_cluster"),
]
