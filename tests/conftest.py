"""Shared fixtures: a real PostgreSQL test database and a real Redis under this run's own prefix."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.core.cache import cache
from hypothesis import is_hypothesis_test
from rest_framework.test import APIClient

from config.building_blocks import health
from config.building_blocks.throttles import window_counts_clear
from leaderboards import fast_reads, store, top_answers
from leaderboards.identity import database_identity
from matches import services as match_services
from matches.models import GameServer
from matches.permissions import verified_keys_cache
from seasons import selectors as season_selectors
from seasons.models import Season

from .factories import BoardFactory, SeasonFactory
from .redis_cluster import LocalRedisCluster


@pytest.fixture(scope="session")
def _database_identity(django_db_setup: Any, django_db_blocker: Any) -> None:
    """The test database's identity, read once as a process's first use of the store reads it
    (leaderboards/identity.py), so tests that use Redis alone have it too."""
    with django_db_blocker.unblock():
        database_identity()


@pytest.fixture(autouse=True)
def _clean_redis(_database_identity: None) -> Iterator[None]:
    """Every test starts with no leaderboard keys and empty in-process caches."""
    top_answers.top_pages_cache.clear()
    window_counts_clear()
    fast_reads.seasons_forget()
    season_selectors.season_lookups_cache.clear()
    season_selectors.open_seasons_cache.clear()
    health.probe_answers.clear()
    match_services.board_lookups_cache.clear()
    verified_keys_cache.clear()
    yield
    store.delete_prefixed_keys()
    cache.delete_pattern("*")


@pytest.fixture(scope="session")
def redis_cluster() -> Iterator[LocalRedisCluster]:
    """A real Redis Cluster of three primaries, started on first use and stopped at the end."""
    cluster = LocalRedisCluster()
    try:
        yield cluster.start()
    finally:
        cluster.stop()


@pytest.fixture
def client() -> APIClient:
    return APIClient()


@pytest.fixture
def api_key(db: Any) -> str:
    _, key = GameServer.objects.create_key(name="test game server")
    return key


@pytest.fixture
def server(api_key: str) -> APIClient:
    """A client authenticated as a game server."""
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Api-Key {api_key}")
    return api


@pytest.fixture
def season(db: Any) -> Season:
    """The running season of the default `global` board."""
    return SeasonFactory(board=BoardFactory(slug="global", name="Global"), slug="s1")


@pytest.fixture
def post_scores(server: APIClient, django_capture_on_commit_callbacks: Any) -> Callable[[Any], Any]:
    """POST /api/v1/scores and run the on-commit mirror, as the Celery worker would."""

    def post(body: Any) -> Any:
        with django_capture_on_commit_callbacks(execute=True):
            return server.post("/api/v1/scores", body, format="json")

    return post


# The slow tiers, marked in one place so `make quick` can leave them out (`-m "not (...)"`) while
# `make test` runs them all. `fault` is set by each file of tests/fault/ itself. A server stack of
# their own (the pages' `site`, the clients' `service`) puts tests in the browser tier.
SLOW_TIER_FIXTURES = {
    "browser": "browser",
    "site": "browser",
    "service": "browser",
    "redis_cluster": "cluster",
}
FUZZ_FILES = {"tests/api/test_fuzz.py", "tests/seasons/test_admin_fuzz.py"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each test of a slow tier: a browser or a server stack, the benchmark's own
    tests, a Redis Cluster, and fuzzing (the schema and admin fuzzers, every property test)."""
    root = config.rootpath
    for item in items:
        path = item.path.relative_to(root).as_posix()
        tiers = {
            SLOW_TIER_FIXTURES[name]
            for name in getattr(item, "fixturenames", ())
            if name in SLOW_TIER_FIXTURES
        }
        if path.startswith("tests/bench/"):
            tiers.add("bench")
        if path in FUZZ_FILES or is_hypothesis_test(getattr(item, "obj", None)):
            tiers.add("fuzz")
        for tier in sorted(tiers):
            item.add_marker(tier)
