"""What only the web processes know, counted per minute in Redis for the operator dashboard's
charts: 4xx and 5xx responses, and the live sockets each process holds open.

Several web processes answer requests and hold sockets, so the counts must meet somewhere shared;
a row in PostgreSQL per request, or a Redis round trip per response, would tax the hot reads.
So each process counts in memory (an increment under a lock, no I/O on a request's path, the
event loop's fast reads included), and a thread of the process flushes every FLUSH_SECONDS in one
pipelined round trip: HINCRBY on the minute's responses hash, and the process's open sockets as
its own field of the minute's sockets hash (its latest count in that minute; the processes'
fields add up to the service's). Keys expire after KEEP_SECONDS: the dashboard's sampler
(leaderboards/operations.py) copies each settled minute into PostgreSQL well before.

A process that dies loses at most its last FLUSH_SECONDS of counts, and a flush that finds Redis
away loses its counts (logged): charts, never a request, pay for an outage. This module owns these
keys, on the rate limits' Redis (config/building_blocks/redis.py's `minute_counts`).
"""

from __future__ import annotations

import atexit
import collections
import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

import redis
from django.conf import settings
from django.http import HttpRequest, HttpResponseBase

from config.building_blocks.redis import minute_counts_redis

logger = logging.getLogger(__name__)

FLUSH_SECONDS = 5.0
# Long enough for the sampler to copy a minute after beat was away for an hour.
KEEP_SECONDS = 3 * 3600


def epoch_minute(at: datetime) -> int:
    return int(at.timestamp() // 60)


def _responses_key(minute: int) -> str:
    return f"{settings.LEADERBOARD_KEY_PREFIX}ops:responses:{minute}"


def _sockets_key(minute: int) -> str:
    return f"{settings.LEADERBOARD_KEY_PREFIX}ops:sockets:{minute}"


@dataclass(frozen=True, slots=True)
class MinuteCounts:
    minute: datetime
    responses_4xx: int
    responses_5xx: int
    sockets: int | None  # None: no web process reported in that minute


class ProcessCounts:
    """This process's counts not yet flushed, and its open sockets."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._responses: collections.Counter[tuple[int, str]] = collections.Counter()
        self._sockets = 0
        self._pid = 0
        self.process = ""

    def response(self, status: int) -> None:
        self._running()
        if status >= 400:
            kind = "5xx" if status >= 500 else "4xx"
            with self._lock:
                self._responses[(int(time.time() // 60), kind)] += 1

    def socket_opened(self) -> None:
        self._running()
        with self._lock:
            self._sockets += 1

    def socket_closed(self) -> None:
        with self._lock:
            self._sockets -= 1

    def keep_local(self) -> None:
        """Never send this process's counts: a harness that serves requests through Django's
        test client is no web process of the deployment (its entry would show on the operator's
        charts, and outlive it). Before its first request: no flushing thread starts."""
        with self._lock:
            self._pid = os.getpid()

    @property
    def open_sockets(self) -> int:
        return self._sockets

    def flush(self) -> None:
        """Send what was counted since the last flush, and the open sockets now."""
        with self._lock:
            responses, self._responses = self._responses, collections.Counter()
            sockets = self._sockets
        minute = int(time.time() // 60)
        commands: list[tuple[object, ...]] = []
        for (at, kind), count in sorted(responses.items()):
            commands += [
                ("HINCRBY", _responses_key(at), kind, count),
                ("EXPIRE", _responses_key(at), KEEP_SECONDS),
            ]
        commands += [
            ("HSET", _sockets_key(minute), self.process or _process_name(), sockets),
            ("EXPIRE", _sockets_key(minute), KEEP_SECONDS),
        ]
        try:
            minute_counts_redis().commands_run(commands)
        except redis.RedisError as exc:
            logger.warning(
                "could not flush the minute counts (%d responses lost): %s",
                sum(responses.values()),
                exc,
            )

    def _running(self) -> None:
        # A forked child inherits the object but not its thread.
        if self._pid != os.getpid():
            with self._lock:
                if self._pid == os.getpid():
                    return
                self._pid = os.getpid()
                self.process = _process_name()
                self._responses.clear()
            threading.Thread(target=self._run, name="minute-counts", daemon=True).start()
            atexit.register(self.flush)

    def _run(self) -> None:
        while True:
            time.sleep(FLUSH_SECONDS)
            try:
                self.flush()
            except Exception:  # the thread must go on flushing whatever one flush met
                logger.exception("flushing the minute counts failed")


def _process_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


_process_counts = ProcessCounts()


def process_counts() -> ProcessCounts:
    return _process_counts


def minutes_read(minutes: list[datetime]) -> list[MinuteCounts]:
    """What the web processes counted in each of `minutes` (UTC, whole minutes), in one round
    trip."""
    commands: list[tuple[object, ...]] = []
    for minute in minutes:
        commands += [
            ("HGETALL", _responses_key(epoch_minute(minute))),
            ("HGETALL", _sockets_key(epoch_minute(minute))),
        ]
    replies = minute_counts_redis().commands_run(commands) if commands else []
    counts = []
    for i, minute in enumerate(minutes):
        responses, sockets = replies[2 * i], replies[2 * i + 1]
        counts.append(
            MinuteCounts(
                minute=minute.astimezone(UTC),
                responses_4xx=int(responses.get("4xx", 0)),
                responses_5xx=int(responses.get("5xx", 0)),
                sockets=sum(int(v) for v in sockets.values()) if sockets else None,
            )
        )
    return counts


class ResponseCountsMiddleware:
    """Counts Django's 4xx and 5xx responses (outermost, so it sees what the inner middleware
    answered too). The event loop's own answers are counted where they are sent
    (leaderboards/fast_reads.py, config/building_blocks/request_body_limit.py)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.get_response(request)
        _process_counts.response(response.status_code)
        return response
