"""Shared reads from a real replica of the leaderboard primary (LEADERBOARD_REDIS_REPLICA_URLS),
a player's own rank from the primary right after their result, and a replica that falls behind
or stops left for the primary with the same answers."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis

from config.building_blocks import redis as redis_roles
from leaderboards import read_your_writes, store
from tests.fault.procs import Process, RedisServer, engine_server, wait_until

pytestmark = pytest.mark.django_db

TOP = [("p1", 1), ("p3", 2), ("p2", 3), ("p4", 4)]


@dataclass
class Replicated:
    primary: RedisServer
    replica: RedisServer

    def replica_reads(self) -> int:
        """Script calls the replica has answered so far."""
        with self.replica.client() as r:
            return int(r.info("commandstats").get("cmdstat_evalsha", {}).get("calls", 0))


@pytest.fixture
def replicated(tmp_path: Path, settings) -> Iterator[Replicated]:  # noqa: ANN001
    primary = RedisServer(tmp_path, name="primary")
    replica = RedisServer(tmp_path, name="replica")
    try:
        primary.start()
        replica.process = Process(
            [
                *(engine_server(), "--port", str(replica.port), "--bind", "127.0.0.1"),
                *("--save", "", "--appendonly", "no", "--dir", str(tmp_path)),
                *("--replicaof", "127.0.0.1", str(primary.port)),
            ],
            log=tmp_path / "replica.log",
        ).start()
        wait_until(_linked(replica), timeout=20, what="the replica linked to its primary")
        settings.LEADERBOARD_REDIS_URL = primary.url()
        settings.LEADERBOARD_REDIS_REPLICA_URLS = [replica.url()]
        settings.LEADERBOARD_REPLICA_CHECK_SECONDS = 0.1
        redis_roles.connections_forget()
        read_your_writes.forget()
        yield Replicated(primary, replica)
    finally:
        redis_roles.connections_forget()
        read_your_writes.forget()
        replica.stop()
        primary.stop()


def _linked(replica: RedisServer):  # noqa: ANN202
    def linked() -> bool:
        try:
            with replica.client() as r:
                return r.info("replication").get("master_link_status") == "up"
        except redis.RedisError:
            return False

    return linked


def _top(client) -> list[tuple[str, int]]:  # noqa: ANN001
    body = client.get("/api/v1/leaderboard/top?limit=10").json()
    return [(e["player_id"], e["rank"]) for e in body["entries"]]


def _replica_answering(replicated: Replicated) -> bool:
    chosen = redis_roles.replicas()
    return chosen is not None and chosen.pick() is not None


def test_shared_reads_come_from_the_replica_and_a_fresh_writer_reads_the_primary(
    replicated, client, board
):
    # given: the board was posted through this process, and the replica is caught up
    wait_until(lambda: _replica_answering(replicated), timeout=10, what="the replica usable")
    before = replicated.replica_reads()

    # when: a top page and the ticker's batch read; then p1's own rank, just written here
    assert _top(client) == TOP
    batch = store.read_batch(board.pk, top=2, player_ids=["p4"], shared=True)
    after_shared = replicated.replica_reads()
    rank = client.get("/api/v1/leaderboard/players/p1").json()["rank"]

    # then: the shared reads were the replica's, the fresh writer's rank the primary's
    assert [s.player_id for s in batch.top] == ["p1", "p3"]
    assert batch.players == [(4, batch.players[0][1])]
    assert after_shared >= before + 2
    assert rank == 1
    assert replicated.replica_reads() == after_shared

    # and: once the window is over (another process's player), their rank is the replica's
    read_your_writes.forget()
    assert client.get("/api/v1/leaderboard/players/p2").json()["rank"] == 3
    assert replicated.replica_reads() > after_shared


def test_a_replica_that_stops_or_falls_behind_is_left_for_the_primary(
    replicated, client, board, post_scores
):
    wait_until(lambda: _replica_answering(replicated), timeout=10, what="the replica usable")
    assert _top(client) == TOP

    # when: the replica is cut off from its primary and a new result arrives
    with replicated.replica.client() as r:
        r.replicaof("NO", "ONE")
    response = post_scores(
        {
            "player_id": "p5",
            "points": 99,
            "match_id": "m-p5",
            "ended_at": board.starts_at.isoformat(),
        }
    )
    assert response.status_code == 201
    read_your_writes.forget()

    # then: within a check the reads are the primary's, with the new leader
    wait_until(
        lambda: not _replica_answering(replicated), timeout=10, what="the replica left alone"
    )
    assert _top(client)[0] == ("p5", 1)
    assert client.get("/api/v1/leaderboard/players/p4").json()["rank"] == 5

    # when: the replica stops altogether while reads go on (before a check has noticed)
    redis_roles.replicas().usable = (redis_roles.replicas().connections[0],)
    replicated.replica.kill()

    # then: every read still answers exactly, from the primary
    assert _top(client) == [("p5", 1), ("p1", 2), ("p3", 3), ("p2", 4), ("p4", 5)]
    around = client.get("/api/v1/leaderboard/players/p2/around?n=1").json()
    assert [(e["player_id"], e["rank"]) for e in around["entries"]] == [
        ("p3", 3),
        ("p2", 4),
        ("p4", 5),
    ]
    assert not _replica_answering(replicated)
