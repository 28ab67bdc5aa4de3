"""Each Redis role on the URL of its own setting: the leaderboard data on LEADERBOARD_REDIS_URL,
the rate limits on CACHE_REDIS_URL (config/building_blocks/redis.py)."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlparse

import pytest
import redis
from django.conf import settings
from django.test import override_settings

from config.building_blocks import redis as redis_roles
from config.building_blocks.throttles import rate_limit_add
from leaderboards import store
from leaderboards.store import StandingWrite

# Two databases of the suite's Redis that nothing else here uses.
LEADERBOARD_DB, LIMITS_DB = 11, 12


def _url(db: int) -> str:
    parsed = urlparse(settings.REDIS_URL)
    return parsed._replace(path=f"/{db}").geturl()


@pytest.fixture
def separate_roles() -> Iterator[dict[int, redis.Redis]]:
    with override_settings(
        LEADERBOARD_REDIS_URL=_url(LEADERBOARD_DB), CACHE_REDIS_URL=_url(LIMITS_DB)
    ):
        redis_roles.connections_forget()
        databases = {
            db: redis.Redis.from_url(_url(db), decode_responses=True)
            for db in (LEADERBOARD_DB, LIMITS_DB)
        }
        try:
            yield databases
        finally:
            store.delete_prefixed_keys()
            databases[LIMITS_DB].delete(f"{settings.LEADERBOARD_KEY_PREFIX}rate:roles-test")
            redis_roles.connections_forget()
            for database in databases.values():
                database.close()


def test_each_role_writes_to_its_own_redis(separate_roles: dict[int, redis.Redis]):
    # when: a standing is mirrored and a rate-limit window counts two requests
    store.write_standings([StandingWrite(season_id=7, player_id="p1", composite=5)])
    assert rate_limit_add("roles-test", 2, ttl_seconds=10) == 2

    # then: the standing is in the leaderboard's database only, the count in the limits' only
    standings, rate = store.standings_key(7), f"{settings.LEADERBOARD_KEY_PREFIX}rate:roles-test"
    data, limits = separate_roles[LEADERBOARD_DB], separate_roles[LIMITS_DB]
    assert data.zrange(standings, 0, -1, withscores=True) == [("p1", 5.0)]
    assert limits.get(rate) == "2"
    assert limits.exists(standings) == 0
    assert data.exists(rate) == 0


def test_roles_on_one_url_share_one_connection():
    # given: the default settings, every role on REDIS_URL
    redis_roles.connections_forget()

    # then: the rate limits and the leaderboard data share a connection (one round trip for a
    # read and its rate-limit count on the event loop)
    assert redis_roles.rate_limits() is redis_roles.leaderboard()
