"""The web processes' counts per minute (config/building_blocks/minute_counts.py): 4xx and 5xx
answers of Django (the event loop's own are counted in tests/leaderboards/test_fast_reads.py and
tests/matches/test_abuse.py), the process's open sockets, all in Redis after a flush."""

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

import pytest
import time_machine
from asgiref.sync import async_to_sync
from channels.layers import channel_layers
from channels.testing import WebsocketCommunicator
from django.test import override_settings

from config.building_blocks import redis as redis_roles
from config.building_blocks.minute_counts import (
    MinuteCounts,
    ProcessCounts,
    minutes_read,
    process_counts,
)
from server.asgi import application

pytestmark = pytest.mark.django_db

# Minutes no other test counts in (the counts are the process's, whoever made them; other
# tests take 2031-01-02 03:05 and 03:08).
DJANGO_MINUTE = datetime(2031, 1, 2, 3, 4, tzinfo=UTC)
SOCKETS_MINUTE = datetime(2031, 1, 2, 3, 6, tzinfo=UTC)
QUIET_MINUTE = datetime(2031, 1, 2, 3, 7, tzinfo=UTC)


@contextmanager
def leaderboard_redis_away() -> Iterator[None]:
    """The leaderboard's Redis refuses connections (a port bound but not listening)."""
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
        with override_settings(LEADERBOARD_REDIS_URL=f"redis://127.0.0.1:{port}/0"):
            redis_roles.connections_forget()
            try:
                yield
            finally:
                redis_roles.connections_forget()


def test_djangos_4xx_and_5xx_are_counted_in_their_minute(client, season):
    with time_machine.travel(DJANGO_MINUTE.replace(second=20), tick=False):
        answers = [
            client.get("/api/v1/leaderboard/top?board=nope").status_code,
            client.get("/api/v1/leaderboard/top?limit=many").status_code,
            client.post("/api/v1/scores", {}, content_type="application/json").status_code,
            client.get("/healthz").status_code,
        ]
        with leaderboard_redis_away():
            answers.append(client.get("/api/v1/leaderboard/top?board=global").status_code)
        process_counts().flush()

    assert answers == [404, 400, 401, 200, 503]
    assert minutes_read([DJANGO_MINUTE]) == [
        MinuteCounts(minute=DJANGO_MINUTE, responses_4xx=3, responses_5xx=1, sockets=0)
    ]


# The socket looks its season up on a thread of its own, which must see committed rows.
@pytest.mark.django_db(transaction=True)
def test_the_processs_open_sockets_are_its_field_of_the_minute(season):
    channel_layers.backends.clear()
    counts = process_counts()

    async def two_then_one() -> list[int]:
        opened = []
        sockets = [
            WebsocketCommunicator(
                application,
                "/ws/v1/leaderboard/global/",
                headers=[(b"origin", b"http://127.0.0.1")],
            )
            for _ in range(2)
        ]
        for communicator in sockets:
            connected, _ = await communicator.connect(timeout=5)
            assert connected
            await communicator.receive_json_from(timeout=5)
            opened.append(counts.open_sockets)
        await sockets[0].disconnect()
        opened.append(counts.open_sockets)
        with time_machine.travel(SOCKETS_MINUTE.replace(second=20), tick=False):
            counts.flush()
        await sockets[1].disconnect()
        opened.append(counts.open_sockets)
        return opened

    opened = async_to_sync(two_then_one)()

    assert opened == [1, 2, 1, 0]
    assert minutes_read([SOCKETS_MINUTE]) == [
        MinuteCounts(minute=SOCKETS_MINUTE, responses_4xx=0, responses_5xx=0, sockets=1)
    ]


def test_a_minute_no_process_reported_in_has_no_sockets_and_no_responses():
    assert minutes_read([QUIET_MINUTE]) == [
        MinuteCounts(minute=QUIET_MINUTE, responses_4xx=0, responses_5xx=0, sockets=None)
    ]


def test_a_process_that_keeps_its_counts_local_sends_none():
    def flushing_threads() -> int:
        return sum(thread.name == "minute-counts" for thread in threading.enumerate())

    counts = ProcessCounts()
    before = flushing_threads()

    counts.keep_local()
    counts.response(404)

    # no thread of its own to send them (a harness's test client is no web process)
    assert flushing_threads() == before
    other = ProcessCounts()
    other.response(404)
    assert flushing_threads() == before + 1
