"""The suite runs on the engine it is asked for (REDIS_ENGINE: `make test` on Redis, `make
test-valkey` on Valkey): every Redis role of the settings and every server the tests start
answer as that engine, so a misconfigured job cannot test one engine twice."""

from __future__ import annotations

from pathlib import Path

import redis
from django.conf import settings

from scripts.devservices import redis_engine, server_engine
from tests.fault.procs import RedisServer
from tests.redis_cluster import LocalRedisCluster


def _engine(client: redis.Redis) -> str:
    engine, _ = server_engine(client.info("server"))
    return engine


def test_every_redis_role_is_served_by_the_engine_under_test() -> None:
    # given: every Redis role's URL (a broker of another kind, RabbitMQ, is none of them)
    urls = {
        name: getattr(settings, name)
        for name in (
            "REDIS_URL",
            "LEADERBOARD_REDIS_URL",
            "CACHE_REDIS_URL",
            "CHANNEL_LAYER_REDIS_URL",
            "CELERY_BROKER_URL",
        )
        if getattr(settings, name).startswith(("redis://", "rediss://", "unix://"))
    }

    # when
    engines = {}
    for name, url in urls.items():
        with redis.Redis.from_url(url, socket_timeout=5) as client:
            engines[name] = _engine(client)

    # then
    assert "REDIS_URL" in engines
    assert engines == dict.fromkeys(urls, redis_engine())


def test_the_servers_the_tests_start_are_the_engine_under_test(
    tmp_path: Path, redis_cluster: LocalRedisCluster
) -> None:
    # given: a private server, as the fault and replica tests start them, and the cluster's nodes
    server = RedisServer(tmp_path)
    try:
        server.start()

        # when
        with server.client() as client:
            private = _engine(client)
    finally:
        server.stop()
    nodes = []
    for port in redis_cluster.ports:
        with redis_cluster.node(port) as node:
            nodes.append(_engine(node))

    # then
    assert private == redis_engine()
    assert nodes == [redis_engine()] * len(redis_cluster.ports)
