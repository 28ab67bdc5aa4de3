"""Fixtures of the clients' tests: the TypeScript package's tools, and a running service to use
the generated clients against.

`service` is this test process's own deployment, as a game server meets it: uvicorn serving
server.asgi against the test database pytest-django created, a Celery worker mirroring results
into the real Redis under this run's key prefix, and a private server of the engine under test
as their broker. A game-server key may post 10 results a minute, so a test can meet the rate
limit. It lives for the test session; every wait is bounded and every process is stopped, in its
own process group, when the session ends (tests/fault/procs.py).
"""

from __future__ import annotations

import fcntl
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.db import connection

from matches.models import GameServer
from scripts import clients
from scripts.processes import ServiceError
from tests.fault.procs import CeleryWorker, RedisServer, WebServer, django_env, wait_until
from tests.served_database import database_url, stack_sessions

# The name its processes' database sessions carry (tests/served_database.py).
STACK = "clients-service"

# The game-server rate the service runs with: low enough for a test to run out of it.
GAME_SERVER_RATE = "10/m"
STOP_SECONDS = 10


@pytest.fixture(scope="session")
def typescript_tools() -> Path:
    """clients/typescript/node_modules, installed from the lock file once per machine (the
    xdist workers wait for each other)."""
    lock_path = Path(tempfile.gettempdir()) / "leaderboard-clients-npm-ci.lock"
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            clients.typescript_install()
        except ServiceError as exc:
            pytest.fail(str(exc), pytrace=False)
    return clients.NODE_MODULES


@dataclass
class Service:
    url: str


@pytest.fixture(scope="session")
def service(django_db_setup: Any, django_db_blocker: Any) -> Iterator[Service]:
    with tempfile.TemporaryDirectory(prefix="clients-service-") as logs:
        broker = RedisServer(Path(logs), "broker")
        worker: CeleryWorker | None = None
        web: WebServer | None = None
        try:
            broker.start()
            env = django_env(
                database_url=database_url(STACK),
                redis_url=settings.REDIS_URL,
                broker_url=broker.url(),
                key_prefix=settings.LEADERBOARD_KEY_PREFIX,
                THROTTLE_GAME_SERVER_RATE=GAME_SERVER_RATE,
                THROTTLE_PUBLIC_RATE="",
                # Tests recreate the board and its season under the same slugs.
                LEADERBOARD_TOP_CACHE_SECONDS="0",
                LEADERBOARD_SEASON_CACHE_SECONDS="0",
            )
            worker = CeleryWorker(env=env, log=Path(logs) / "worker.log", concurrency=1).start()
            web = WebServer(env=env, log=Path(logs) / "web.log").start()
            yield Service(url=web.base_url)
        finally:
            for process in (web, worker, broker):
                if process is not None:
                    process.stop()
            # pytest-django drops the test database next, which PostgreSQL refuses while the
            # stopped processes' sessions are still ending.
            with django_db_blocker.unblock():
                wait_until(
                    lambda: stack_sessions(STACK) == 0,
                    timeout=STOP_SECONDS,
                    what="the service's database sessions ended",
                )
                connection.close()


@pytest.fixture
def game_server_key(service: Service, transactional_db: Any) -> str:
    """A key of this test's own, committed so that the service sees it."""
    _, key = GameServer.objects.create_key(name="clients tests")
    return key
