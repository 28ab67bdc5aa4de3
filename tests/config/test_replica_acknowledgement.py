"""The mirror's WAIT for the leaderboard primary's replicas (config/building_blocks/redis.py
replicas_acknowledge): it asks only for the replicas in service, so a replica down costs the
writes nothing, and none in service means no WAIT at all."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis

from config.building_blocks import redis as redis_roles
from leaderboards import store
from leaderboards.store import StandingWrite
from tests.fault.procs import Process, RedisServer, engine_server, wait_until

WAIT_MS = 1000


@dataclass
class Replicated:
    primary: RedisServer
    replicas: list[RedisServer]


def _replica(tmp_path: Path, primary: RedisServer, name: str) -> RedisServer:
    replica = RedisServer(tmp_path, name=name)
    replica.process = Process(
        [
            *(engine_server(), "--port", str(replica.port), "--bind", "127.0.0.1"),
            *("--save", "", "--appendonly", "no", "--dir", str(tmp_path)),
            *("--replicaof", "127.0.0.1", str(primary.port)),
        ],
        log=tmp_path / f"{name}.log",
    ).start()
    return replica


def _online_replicas(primary: RedisServer) -> int:
    with primary.client() as r:
        info = r.info("replication")
    return sum(
        1
        for name, value in info.items()
        if name.startswith("slave") and isinstance(value, dict) and value["state"] == "online"
    )


@pytest.fixture
def replicated(tmp_path: Path, settings) -> Iterator[Replicated]:  # noqa: ANN001
    primary = RedisServer(tmp_path, name="primary")
    replicas: list[RedisServer] = []
    try:
        primary.start()
        replicas = [_replica(tmp_path, primary, f"replica{i}") for i in range(2)]
        wait_until(lambda: _online_replicas(primary) == 2, timeout=20, what="both replicas online")
        settings.LEADERBOARD_REDIS_URL = primary.url()
        settings.LEADERBOARD_REDIS_REPLICA_URLS = [replica.url() for replica in replicas]
        settings.LEADERBOARD_REPLICA_CHECK_SECONDS = 0.1
        settings.LEADERBOARD_REPLICA_WAIT_MS = WAIT_MS
        redis_roles.connections_forget()
        yield Replicated(primary, replicas)
    finally:
        redis_roles.connections_forget()
        for replica in replicas:
            replica.stop()
        primary.stop()


def _acknowledge_asks(count: int | None):  # noqa: ANN202
    expected = None if count is None else ("WAIT", count, WAIT_MS)
    return lambda: redis_roles.replicas_acknowledge() == expected


def test_the_mirror_waits_only_for_the_replicas_in_service(replicated: Replicated):
    # given: both replicas online, the mirror's WAIT asks for both
    assert redis_roles.replicas_acknowledge() == ("WAIT", 2, WAIT_MS)

    # when: one replica is killed
    replicated.replicas[0].kill()

    # then: within a check, the WAIT asks for the one left
    wait_until(_acknowledge_asks(1), timeout=5, what="a WAIT for the one replica in service")

    # when: the other one is killed too
    replicated.replicas[1].kill()

    # then: no WAIT at all, and ten mirror writes take nothing like ten WAIT timeouts
    wait_until(_acknowledge_asks(None), timeout=5, what="no WAIT without replicas in service")
    started = time.monotonic()
    written = sum(
        store.write_standings([StandingWrite(season_id=9, player_id=f"p{i}", composite=i + 1)])
        for i in range(10)
    )
    elapsed = time.monotonic() - started
    assert written == 10
    assert elapsed < 5 * WAIT_MS / 1000
    with replicated.primary.client() as r:
        assert r.zcard(store.standings_key(9)) == 10


def test_a_replica_back_in_service_is_waited_for_again(replicated: Replicated, tmp_path: Path):
    # given: one replica killed, so the WAIT asks for one
    replicated.replicas[0].kill()
    wait_until(_acknowledge_asks(1), timeout=5, what="a WAIT for the one replica in service")

    # when: a replica starts again and has synced
    replicated.replicas[0] = _replica(tmp_path, replicated.primary, "replica0-again")
    wait_until(
        lambda: _online_replicas(replicated.primary) == 2, timeout=20, what="the replica back"
    )

    # then: the WAIT asks for both again, and a write is acknowledged by both
    wait_until(_acknowledge_asks(2), timeout=5, what="a WAIT for both replicas again")
    assert store.write_standings([StandingWrite(season_id=9, player_id="p1", composite=5)]) == 1
    with redis.Redis.from_url(replicated.replicas[0].url(), decode_responses=True) as r:
        assert r.zscore(store.standings_key(9), "p1") == 5.0
