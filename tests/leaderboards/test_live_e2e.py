"""The push path end to end: two real uvicorn web processes and a real Celery worker share one
channel layer, and real WebSocket clients on both hear a result posted through the REST API.

The servers use this test's database (committed rows: a transactional test) and this run's
Redis prefixes, and their Celery broker is a private Redis, so no other run's worker takes
their tasks.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.conf import settings
from django.db import connection
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from scripts.processes import SERVING_OPTIONS
from tests.fault.procs import BIN, Process, RedisServer, free_port, wait_until

pytestmark = pytest.mark.django_db(transaction=True)

STARTUP_SECONDS = 60
# The promise: a result reaches subscribers within one second of its commit.
PUSH_SECONDS = 1.0


def server_env(broker_url: str) -> dict[str, str]:
    db = connection.settings_dict
    credentials = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.local",
        "DATABASE_URL": f"postgres://{credentials}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "REDIS_URL": settings.REDIS_URL,
        "CELERY_BROKER_URL": broker_url,
        "LEADERBOARD_KEY_PREFIX": settings.LEADERBOARD_KEY_PREFIX,
        "LOG_LEVEL": "INFO",
    }


@dataclass
class LiveStack:
    ports: list[int]
    key: str

    def post(self, web: int, player_id: str, points: int) -> float:
        """POST a result to web process `web`; returns when its commit was confirmed."""
        response = httpx.post(
            f"http://127.0.0.1:{self.ports[web]}/api/v1/scores",
            json={"player_id": player_id, "points": points, "match_id": uuid.uuid4().hex},
            headers={"Authorization": f"Api-Key {self.key}"},
            timeout=10,
        )
        assert response.status_code == 201, response.text
        return time.monotonic()

    def top(self, web: int) -> list[str]:
        response = httpx.get(
            f"http://127.0.0.1:{self.ports[web]}/api/v1/leaderboard/top?limit=10", timeout=10
        )
        return [entry["player_id"] for entry in response.json()["entries"]]

    def socket(self, web: int, query: str) -> ClientConnection:
        port = self.ports[web]
        return connect(
            f"ws://127.0.0.1:{port}/ws/v1/leaderboard/global/?{query}",
            origin=f"http://127.0.0.1:{port}",
            open_timeout=10,
        )


def healthy(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


@pytest.fixture
def live_stack(season: Any, api_key: str, tmp_path: Path) -> Iterator[LiveStack]:
    broker = RedisServer(tmp_path, name="broker")
    env = server_env(broker_url=broker.url())
    ports = [free_port(), free_port()]
    worker = Process(
        [
            str(BIN / "celery"),
            "-A",
            "config",
            "worker",
            "--pool",
            "solo",
            "--without-heartbeat",
            "--without-gossip",
            "--without-mingle",
            "--loglevel",
            "INFO",
        ],
        log=tmp_path / "worker.log",
        env=env,
    )
    webs = [
        Process(
            [
                str(BIN / "uvicorn"),
                "server.asgi:application",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--lifespan",
                "off",
                "--no-access-log",
                *SERVING_OPTIONS,
            ],
            log=tmp_path / f"web-{port}.log",
            env=env,
        )
        for port in ports
    ]
    processes = [worker, *webs]
    try:
        broker.start()
        for process in processes:
            process.start()
        wait_until(
            lambda: " ready." in worker.output(200),
            timeout=STARTUP_SECONDS,
            what=lambda: f"the Celery worker to be ready\n{worker.output()}",
        )
        for web, port in zip(webs, ports, strict=True):
            wait_until(
                lambda port=port: healthy(port),
                timeout=STARTUP_SECONDS,
                what=lambda web=web: f"web process to answer\n{web.output()}",
            )
        yield LiveStack(ports=ports, key=api_key)
    finally:
        for process in processes:
            process.stop()
        broker.stop()
        # Shown by pytest only when the test failed.
        for process in processes:
            print(f"--- {process.log.name}\n{process.output()}")


def receive(ws: ClientConnection, wanted: Callable[[dict[str, Any]], bool], seen: list[int]):
    """The next message that `wanted` accepts, and when it arrived; records every seq seen."""
    deadline = time.monotonic() + 10
    while True:
        message = json.loads(ws.recv(timeout=max(0.0, deadline - time.monotonic())))
        seen.append(message["seq"])
        if wanted(message):
            return message, time.monotonic()


def of_type(kind: str) -> Callable[[dict[str, Any]], bool]:
    return lambda message: message["type"] == kind


def test_a_result_reaches_subscribers_on_two_web_processes_within_a_second(live_stack):
    # given: p1 leads p2, mirrored by the worker
    live_stack.post(0, "p1", 300)
    live_stack.post(0, "p2", 200)
    wait_until(lambda: live_stack.top(0) == ["p1", "p2"], timeout=10, what="the mirror")
    seen_a: list[int] = []
    seen_b: list[int] = []
    with (
        live_stack.socket(0, "top=3&player_id=p2&n=1") as passed_one,
        live_stack.socket(1, "top=3&player_id=p1") as leader,
    ):
        snapshot_a, _ = receive(passed_one, of_type("snapshot"), seen_a)
        snapshot_b, _ = receive(leader, of_type("snapshot"), seen_b)

        # when: p3 passes p2, posted through the other web process
        committed = live_stack.post(1, "p3", 250)

        # then: both processes push, and p2 is told it was passed
        told, told_at = receive(passed_one, of_type("player"), seen_a)
        top_b, top_b_at = receive(leader, of_type("top"), seen_b)

    assert (snapshot_a["player"]["rank"], snapshot_b["player"]["rank"]) == (2, 1)
    assert [e["player_id"] for e in snapshot_a["player"]["entries"]] == ["p1", "p2"]
    assert told == {
        "seq": told["seq"],
        "type": "player",
        "player_id": "p2",
        "board": "global",
        "season": "s1",
        "rank": 3,
        "points": 200,
        "total_players": 3,
        "percentile": 33.33,
    }
    assert [e["player_id"] for e in top_b["entries"]] == ["p1", "p3", "p2"]
    assert told_at - committed <= PUSH_SECONDS
    assert top_b_at - committed <= PUSH_SECONDS
    assert seen_a == list(range(1, len(seen_a) + 1))
    assert seen_b == list(range(1, len(seen_b) + 1))


def test_a_player_hears_their_own_climb_and_a_bad_request_is_closed(live_stack):
    live_stack.post(0, "p1", 300)
    live_stack.post(0, "p2", 200)
    wait_until(lambda: live_stack.top(1) == ["p1", "p2"], timeout=10, what="the mirror")
    seen: list[int] = []
    with live_stack.socket(1, "top=0&player_id=p2") as climber:
        receive(climber, of_type("snapshot"), seen)

        committed = live_stack.post(0, "p2", 150)

        climbed, climbed_at = receive(climber, of_type("player"), seen)
    with live_stack.socket(0, "top=101") as refused:
        error = json.loads(refused.recv(timeout=10))
        with pytest.raises(ConnectionClosed) as closed:
            refused.recv(timeout=10)

    assert (climbed["rank"], climbed["points"]) == (1, 350)
    assert climbed_at - committed <= PUSH_SECONDS
    assert (error["type"], error["error"]["code"]) == ("error", "validation_error")
    assert closed.value.rcvd.code == 4400
