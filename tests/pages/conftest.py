"""Fixtures of the page tests: a real server stack for the browser, and the browser itself.

`site` is this test process's own deployment: uvicorn serving server.asgi against the test
database pytest-django created, a Celery worker mirroring results into the real Redis under this
run's key prefix, and a private server of the engine under test as their broker (so no other
worker on the machine ever takes these tasks). It lives for the test session; every wait is
bounded and every process is stopped, in its own process group, when the session ends.

`browser` is Debian's chromium driven by Playwright. Playwright never downloads a browser: the
package is installed with apt-get when missing and we are root, and the tests are skipped with
the command to run otherwise.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
import redis
from django.conf import settings
from django.db import connection, connections

from matches.models import GameServer
from scripts.processes import SERVING_OPTIONS, apt_install
from tests.fault import procs
from tests.fault.procs import free_port, wait_until
from tests.served_database import database_url, stack_sessions

from . import data

# The name its processes' database sessions carry (tests/served_database.py).
STACK = "pages-site"

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / ".venv" / "bin"
SCREENSHOTS = ROOT / "test-output" / "screenshots"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# Bounds for waits on processes and pages; none of them is a speed requirement.
START_SECONDS = 60
STOP_SECONDS = 10

T = TypeVar("T")

os.environ["PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD"] = "1"


class Process(procs.Process):
    """The fault tests' process (own group, log file, stop() always safe), named, logging
    under `logs`, with a bounded wait for readiness."""

    def __init__(self, name: str, args: list[str], *, env: dict[str, str], logs: Path) -> None:
        super().__init__(args, log=logs / f"{name}.log", env=env)
        self.name = name

    def stop(self) -> None:
        super().stop(timeout=STOP_SECONDS)

    def wait_for(self, check: Callable[[], Any], *, what: str) -> None:
        def ready() -> Any:
            if not self.running():
                raise AssertionError(f"{self.name} exited:\n{self.output()}")
            return check()

        try:
            wait_until(ready, timeout=START_SECONDS, what=what)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n--- {self.name} log ---\n{self.output()}") from None


@dataclass
class Site:
    """The running stack: `url` of the web server and a game-server client for its API."""

    logs: Path
    env: dict[str, str] = field(default_factory=dict)
    port: int = 0
    broker: Process | None = None
    web: Process | None = None
    worker: Process | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        broker_port = free_port()
        self.broker = Process(
            "broker",
            [procs.engine_server(), "--port", str(broker_port), "--bind", "127.0.0.1", "--save", ""]
            + ["--appendonly", "no", "--dir", str(self.logs)],
            env=dict(os.environ),
            logs=self.logs,
        ).start()
        broker = redis.Redis(port=broker_port, socket_connect_timeout=1)
        self.broker.wait_for(lambda: _pings(broker), what="the broker answering")
        inherited = {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}
        self.env = {
            **inherited,
            "DJANGO_SETTINGS_MODULE": "config.settings.local",
            "DATABASE_URL": database_url(STACK),
            "REDIS_URL": settings.REDIS_URL,
            "CELERY_BROKER_URL": f"redis://127.0.0.1:{broker_port}/0",
            "LEADERBOARD_KEY_PREFIX": settings.LEADERBOARD_KEY_PREFIX,
            # Tests recreate seasons under the same slugs: no process-local caches.
            "LEADERBOARD_TOP_CACHE_SECONDS": "0",
            "LEADERBOARD_SEASON_CACHE_SECONDS": "0",
            "THROTTLE_PUBLIC_RATE": "",
            "THROTTLE_PAGES_RATE": "",
            "THROTTLE_GAME_SERVER_RATE": "",
            "PYTHONUNBUFFERED": "1",
        }
        self.worker = Process(
            "worker",
            [str(BIN / "celery"), "-A", "config", "worker", "--pool", "solo"]
            # The default queue, the long jobs' and the operators' (closing a season from the
            # console).
            + ["-Q", f"celery,{settings.CELERY_LONG_JOBS_QUEUE},{settings.CELERY_REBUILDS_QUEUE}"]
            + ["-n", f"pages-{uuid.uuid4().hex[:8]}@%h", "--loglevel", "INFO"]
            + ["--without-heartbeat", "--without-gossip", "--without-mingle"],
            env=self.env,
            logs=self.logs,
        ).start()
        self.start_web(free_port())
        self.worker.wait_for(lambda: " ready." in self.worker.output(), what="the worker ready")

    def start_web(self, port: int) -> None:
        self.port = port
        self.web = Process(
            "web",
            [str(BIN / "uvicorn"), "server.asgi:application", "--host", "127.0.0.1"]
            + ["--port", str(port), "--no-access-log", *SERVING_OPTIONS],
            env=self.env,
            logs=self.logs,
        ).start()
        self.web.wait_for(self._answers, what="the web server answering")

    def stop_web(self) -> None:
        """Stop the web server alone (start_web brings it back)."""
        assert self.web is not None
        self.web.stop()

    def _answers(self) -> bool:
        try:
            return httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    def stop(self) -> None:
        for process in (self.web, self.worker, self.broker):
            if process is not None:
                process.stop()


def _pings(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.RedisError:
        return False


@pytest.fixture(scope="session")
def site(django_db_setup: Any, django_db_blocker: Any) -> Iterator[Site]:
    with tempfile.TemporaryDirectory(prefix="pages-site-") as logs:
        stack = Site(logs=Path(logs))
        try:
            stack.start()
            yield stack
        finally:
            stack.stop()
            # pytest-django drops the test database next, which PostgreSQL refuses while the
            # stopped processes' sessions are still ending.
            with django_db_blocker.unblock():
                wait_until(
                    lambda: stack_sessions(STACK) == 0,
                    timeout=STOP_SECONDS,
                    what="the site's database sessions ended",
                )
                connection.close()


@pytest.fixture
def game_server(site: Site, transactional_db: Any) -> Iterator[httpx.Client]:
    """The site's REST API, authenticated with a game-server key of this test."""
    _, key = GameServer.objects.create_key(name="page tests")
    with httpx.Client(
        base_url=site.url, headers={"Authorization": f"Api-Key {key}"}, timeout=10
    ) as api:
        yield api


def _chromium() -> Path:
    """Debian's chromium, installed once per machine (serialised across xdist workers)."""
    if CHROMIUM.exists():
        return CHROMIUM
    if os.geteuid() != 0:
        pytest.skip(f"{CHROMIUM} is missing: run `sudo apt-get install chromium`")
    with open(Path(tempfile.gettempdir()) / "leaderboard-chromium-install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not CHROMIUM.exists():
            # Its recommended packages bring the fonts the pages are drawn with.
            apt_install("chromium", recommends=True)
    return CHROMIUM


@pytest.fixture(scope="session")
def chromium() -> Path:
    return _chromium()


@pytest.fixture
def browser(chromium: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A fresh headless Chromium for one test.

    Playwright's sync API keeps an event loop running in this thread while it is active, which
    Django takes for async code: the test's own database calls (plain sync code) are allowed for
    its duration, and the connection Django keeps for that "async" context is closed before
    Playwright stops, or it would outlive the test. Playwright is stopped after each test, so
    the rest of the suite runs as usual.
    """
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    playwright = sync_playwright().start()
    try:
        launched = playwright.chromium.launch(
            executable_path=str(chromium), args=CHROMIUM_ARGS, timeout=30_000
        )
        try:
            yield launched
        finally:
            launched.close()
    finally:
        connections.close_all()
        playwright.stop()


@pytest.fixture
def screenshot() -> Callable[[Any, str], Path]:
    """Save a page's screenshot as test-output/screenshots/<name>.png."""

    def take(page: Any, name: str, *, full_page: bool = True, still: bool = True) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        page.screenshot(
            path=str(path), full_page=full_page, animations="disabled" if still else "allow"
        )
        return path

    return take


@pytest.fixture
def board():
    return data.global_board()


@pytest.fixture
def season(board):
    return data.running_season(board)


@pytest.fixture
def scores(post_scores, season):
    def post(points: dict[str, int]) -> None:
        response = post_scores(
            [
                {"player_id": pid, "points": p, "match_id": f"m-{pid}-{p}"}
                for pid, p in points.items()
            ]
        )
        assert response.status_code == 200, response.json()

    return post
