"""An open-loop load of match results: POSTs at a fixed rate from several senders, each on its
own schedule whether or not its earlier requests were answered, so a slow server cannot slow the
load down and hide its own latency (no coordinated omission); and the freshness probe, which
posts results for players the load never writes, on a schedule of its own too, and times each
until the public rank endpoint shows it. The ingest phases and bench/ws_push.py use them.

The client is a small keep-alive HTTP/1.1 client on asyncio with httptools (uvicorn's own C
parser) reading the answers: measured on the bench machine, httpx spent 1.4 to 2 ms of CPU a
request, which at 400 requests a second would take a third of a core from the servers it
measures; this one spends a tenth of that.
"""

from __future__ import annotations

import asyncio
import json
import random
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any, cast
from urllib.parse import quote, urlparse

import httptools

from .scores import INGEST_POINTS_MAX, INGEST_POINTS_MIN
from .stats import latency_summary, percentile

SCORES_PATH = "/api/v1/scores"
REQUEST_TIMEOUT_SECONDS = 10.0
# Unanswered requests a sender allows; a request due beyond that is not sent but counted, so an
# overloaded server shows as load it never received rather than as a client that slowed down.
MAX_IN_FLIGHT = 64
# A request sent this long after its slot counts as late: the harness, not the server, fell behind.
LATE_SECONDS = 0.05
# How long stop() waits for the answers still in flight before giving up on them.
STOP_WAIT_SECONDS = 15.0
START_TIMEOUT_SECONDS = 10.0
RANK_PATH = "/api/v1/leaderboard/players/{player_id}?board={board}&season={season}"
# The probe polls every 10 ms at first; an older result is polled every tenth of its age, so
# the figure stays within 10% while a backlog of seconds does not turn the probe's own polls
# into a second load on the server it measures.
POLL_SECONDS = 0.01
POLL_SHARE_OF_AGE = 0.1
# A probe result not visible this long after its 201 is counted lost.
LOST_AFTER_SECONDS = 30.0


class _Connection(asyncio.Protocol):
    """One keep-alive connection carrying one request at a time."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.answer: asyncio.Future[tuple[int, bytes]] | None = None
        self.body: list[bytes] = []
        self.reusable = False
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._fail(ConnectionError(f"unreadable answer: {exc}"))

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.reusable = False
        self._fail(exc or ConnectionError("connection closed before the answer"))

    # httptools calls these while it parses.
    def on_message_begin(self) -> None:
        self.body = []

    def on_body(self, body: bytes) -> None:
        self.body.append(body)

    def on_message_complete(self) -> None:
        self.reusable = self.parser.should_keep_alive()
        if self.answer is not None and not self.answer.done():
            self.answer.set_result((self.parser.get_status_code(), b"".join(self.body)))

    def _fail(self, exc: BaseException) -> None:
        if self.answer is not None and not self.answer.done():
            self.answer.set_exception(exc)

    async def exchange(self, request: bytes) -> tuple[int, bytes]:
        if self.transport is None or self.closed:
            raise ConnectionError("connection closed")
        self.answer = asyncio.get_running_loop().create_future()
        self.reusable = False
        self.transport.write(request)
        return await self.answer

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


class HttpClient:
    """Requests to one server over a pool of keep-alive connections (a new one whenever all are
    busy); every request has a deadline, and a connection that failed is closed, never reused."""

    def __init__(self, url: str, *, headers: dict[str, str], timeout: float) -> None:
        parsed = urlparse(url)
        self.host = parsed.hostname or "127.0.0.1"
        self.port = parsed.port or 80
        self.timeout = timeout
        self._headers = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        self._idle: list[_Connection] = []
        self._open: set[_Connection] = set()

    def _request(self, method: str, path: str, body: bytes) -> bytes:
        head = (
            f"{method} {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n{self._headers}"
            f"Content-Length: {len(body)}\r\n\r\n"
        )
        return head.encode() + body

    async def request(self, method: str, path: str, body: bytes = b"") -> tuple[int, bytes]:
        """(status, body) of the answer; raises TimeoutError or OSError."""
        async with asyncio.timeout(self.timeout):
            # The server closes connections idle for long (uvicorn: 5 s); those are dropped here.
            while self._idle and self._idle[-1].closed:
                self._open.discard(self._idle.pop())
            if self._idle:
                connection = self._idle.pop()
            else:
                _, connection = await asyncio.get_running_loop().create_connection(
                    _Connection, self.host, self.port
                )
                self._open.add(connection)
            try:
                answer = await connection.exchange(self._request(method, path, body))
            except BaseException:
                connection.close()
                self._open.discard(connection)
                raise
        if connection.reusable:
            self._idle.append(connection)
        else:
            connection.close()
            self._open.discard(connection)
        return answer

    def close(self) -> None:
        for connection in self._open:
            connection.close()
        self._open.clear()
        self._idle.clear()


@dataclass(frozen=True)
class OfferedLoad:
    url: str  # server base URL, e.g. "http://127.0.0.1:8123"
    api_key: str  # game-server key, sent as "Authorization: Api-Key <key>"
    board: str
    season: str
    rate: float  # results per second offered, in all
    batch: int  # results per request (1 = single result object, >1 = JSON array)
    players: int  # load players are "p0" .. f"p{players-1}"
    match_prefix: str  # every match id unique: f"{match_prefix}-{sender}-{n}"
    senders: int = 8

    @property
    def request_interval(self) -> float:
        """Seconds between two requests of one sender."""
        return self.senders * self.batch / self.rate


class _BackgroundLoop:
    """Runs `_main` in a thread of its own, on an asyncio loop of its own, until stop is asked;
    an exception there is raised again in the caller's thread."""

    def __init__(self, name: str, stop_seconds: float) -> None:
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._stop_seconds = stop_seconds
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._failure: BaseException | None = None
        self._figures: dict[str, Any] = {}

    async def _main(self, stopping: asyncio.Event) -> None:
        """Call self._ready.set() once running; return after `stopping` is set, with the figures
        in self._figures."""
        raise NotImplementedError

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def _begin(self) -> None:
        self._thread.start()
        if not self._ready.wait(START_TIMEOUT_SECONDS):
            raise RuntimeError(f"{self._thread.name} did not start")
        if self._failure is not None:
            raise RuntimeError(f"{self._thread.name} failed to start") from self._failure

    def stop(self) -> dict[str, Any]:
        """Stop, wait (bounded) for what is in flight (the sender's answers, the probe's results
        to show), and return the figures."""
        if self._loop is not None and self._stopping is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._stopping.set)
        self._thread.join(self._stop_seconds)
        if self._thread.is_alive():
            raise RuntimeError(f"{self._thread.name} did not stop")
        if self._failure is not None:
            raise RuntimeError(f"{self._thread.name} failed") from self._failure
        return self._figures

    def _run(self) -> None:
        try:
            asyncio.run(self._serve())
        except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
            self._failure = exc
            self._ready.set()

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopping = asyncio.Event()
        await self._main(self._stopping)


async def _settle(tasks: set[asyncio.Task[None]], timeout: float) -> int:
    """Wait up to `timeout` for `tasks`, then cancel the rest; returns how many were left."""
    if not tasks:
        return 0
    _, unfinished = await asyncio.wait(tasks, timeout=timeout)
    for task in unfinished:
        task.cancel()
    await asyncio.gather(*unfinished, return_exceptions=True)
    return len(unfinished)


def _game_server_headers(api_key: str) -> dict[str, str]:
    return {"Authorization": f"Api-Key {api_key}", "Content-Type": "application/json"}


class OpenLoopSender(_BackgroundLoop):
    """Sends `load` from a background thread with its own asyncio loop until stop()."""

    def __init__(self, load: OfferedLoad) -> None:
        if load.rate <= 0 or load.batch < 1 or load.senders < 1 or load.players < load.batch:
            raise ValueError(f"not a load that can be offered: {load}")
        super().__init__("open-loop-sender", STOP_WAIT_SECONDS + REQUEST_TIMEOUT_SECONDS)
        self.load = load
        self._offered = 0
        self._dropped = 0
        self._late = 0
        self._lags_ms: list[float] = []
        self._latencies_ms: list[float] = []
        # Each answer's latency by the second of the window it was sent in: stalls show there.
        self._by_second: defaultdict[int, list[float]] = defaultdict(list)
        self._origin = 0.0
        self._answers: Counter[str] = Counter()
        self._in_flight: set[asyncio.Task[None]] = set()

    def start(self) -> OpenLoopSender:
        self._begin()
        return self

    async def _main(self, stopping: asyncio.Event) -> None:
        load = self.load
        client = HttpClient(
            load.url, headers=_game_server_headers(load.api_key), timeout=REQUEST_TIMEOUT_SECONDS
        )
        try:
            started_wall = time.time()
            origin = self._origin = time.monotonic()
            senders = [
                asyncio.create_task(self._sender(client, index, origin))
                for index in range(load.senders)
            ]
            self._ready.set()
            await stopping.wait()
            seconds = time.monotonic() - origin
            for sender in senders:
                sender.cancel()
            await asyncio.gather(*senders, return_exceptions=True)
            unanswered = await _settle(self._in_flight, STOP_WAIT_SECONDS)
        finally:
            client.close()
        self._figures = self._summary(started_wall, seconds, unanswered)

    async def _sender(self, client: HttpClient, index: int, origin: float) -> None:
        load = self.load
        interval = load.request_interval
        rng = random.Random(f"{load.match_prefix}-{index}")
        mine: set[asyncio.Task[None]] = set()
        # Senders are spread over the interval, as independent game servers would be.
        due = origin + interval * index / load.senders
        sent = 0
        while True:
            delay = due - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            slot, due = due, due + interval
            self._offered += 1
            if len(mine) >= MAX_IN_FLIGHT:
                self._dropped += 1
                continue
            lag = time.monotonic() - slot
            self._lags_ms.append(lag * 1000)
            if lag > LATE_SECONDS:
                self._late += 1
            sent += 1
            body = self._body(rng, f"{load.match_prefix}-{index}-{sent}")
            task = asyncio.create_task(self._post(client, body))
            for tracked in (mine, self._in_flight):
                tracked.add(task)
                task.add_done_callback(tracked.discard)

    def _body(self, rng: random.Random, match_id: str) -> bytes:
        load = self.load
        items = [
            {
                "player_id": f"p{player}",
                "points": rng.randint(INGEST_POINTS_MIN, INGEST_POINTS_MAX),
                "match_id": match_id,
                "board": load.board,
                "season": load.season,
            }
            # Distinct players: one match cannot count a player twice.
            for player in rng.sample(range(load.players), load.batch)
        ]
        return json.dumps(items[0] if load.batch == 1 else items, separators=(",", ":")).encode()

    async def _post(self, client: HttpClient, body: bytes) -> None:
        sent = time.monotonic()
        try:
            status, _ = await client.request("POST", SCORES_PATH, body)
        except TimeoutError:
            self._answers["timeout"] += 1
            return
        except OSError as exc:
            self._answers[type(exc).__name__] += 1
            return
        latency_ms = (time.monotonic() - sent) * 1000
        self._latencies_ms.append(latency_ms)
        self._by_second[int(sent - self._origin)].append(latency_ms)
        self._answers[str(status)] += 1

    def _summary(self, started_wall: float, seconds: float, unanswered: int) -> dict[str, Any]:
        load = self.load
        sent = self._offered - self._dropped
        lag = latency_summary(self._lags_ms)
        lag.pop("curve_ms", None)
        return {
            "rate_results_per_s": load.rate,
            "batch": load.batch,
            "senders": load.senders,
            "started_at_epoch": round(started_wall, 3),
            "seconds": round(seconds, 3),
            "offered_requests": self._offered,
            "offered_results": self._offered * load.batch,
            "sent": sent,
            "sent_per_s": round(sent / seconds, 1) if seconds else 0.0,
            "sent_late": self._late,
            "late_after_ms": LATE_SECONDS * 1000,
            "not_sent_on_time": self._dropped,
            "max_in_flight_per_sender": MAX_IN_FLIGHT,
            "unanswered_at_stop": unanswered,
            "answers": dict(sorted(self._answers.items())),
            "send_lag": lag,
            "post_latency": latency_summary(self._latencies_ms),
            # [second of the window, answers, p50 ms, p99 ms, max ms] of the requests sent then.
            "post_latency_by_second": [
                [second, len(ordered), *(round(percentile(ordered, p), 1) for p in (50, 99, 100))]
                for second, samples in sorted(self._by_second.items())
                for ordered in [sorted(samples)]
            ],
        }


class FreshnessProbe(_BackgroundLoop):
    """Posts single results for its own players at a fixed rate and, after each 201, polls the
    public rank endpoint until it shows the total the 201 returned: freshness is the time from
    the 201's arrival to the answer that shows it."""

    def __init__(
        self,
        *,
        url: str,
        api_key: str,
        board: str,
        season: str,
        player_ids: list[str],
        rate: float,
    ) -> None:
        super().__init__(
            "freshness-probe", LOST_AFTER_SECONDS + 2 * REQUEST_TIMEOUT_SECONDS + STOP_WAIT_SECONDS
        )
        self.url = url
        self.api_key = api_key
        self.board = board
        self.season = season
        self.player_ids = player_ids
        self.interval = 1.0 / rate
        self.origin = 0.0
        self.nonce = f"probe-{int(time.time() * 1000)}"
        self.pending: set[str] = set()
        # (t the POST was sent, freshness ms, POST ms): a result belongs to the part of the window
        # it was posted in, however late its 201 came.
        self.samples: list[tuple[float, float, float]] = []
        self.posted = 0
        self.failed = 0
        self.lost = 0
        self.skipped = 0
        self.polls = 0
        self.poll_errors = 0
        self._probes: set[asyncio.Task[None]] = set()

    def start(self, origin: float) -> FreshnessProbe:
        """`origin` (time.monotonic()) is the start of the measured window."""
        self.origin = origin
        self._begin()
        return self

    async def _main(self, stopping: asyncio.Event) -> None:
        writer = HttpClient(
            self.url, headers=_game_server_headers(self.api_key), timeout=REQUEST_TIMEOUT_SECONDS
        )
        reader = HttpClient(self.url, headers={}, timeout=REQUEST_TIMEOUT_SECONDS)
        try:
            rng = random.Random(self.nonce)
            schedule = asyncio.create_task(self._schedule(writer, reader, rng))
            self._ready.set()
            await stopping.wait()
            schedule.cancel()
            await asyncio.gather(schedule, return_exceptions=True)
            await _settle(self._probes, LOST_AFTER_SECONDS + REQUEST_TIMEOUT_SECONDS)
        finally:
            writer.close()
            reader.close()
        self.lost += len(self.pending)
        self._figures = self._summary()

    async def _schedule(self, writer: HttpClient, reader: HttpClient, rng: random.Random) -> None:
        due = time.monotonic()
        while True:
            delay = due - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            due += self.interval
            candidates = rng.sample(self.player_ids, min(20, len(self.player_ids)))
            player_id = next((p for p in candidates if p not in self.pending), None)
            if player_id is None:
                self.skipped += 1
                continue
            self.pending.add(player_id)
            task = asyncio.create_task(self._probe(writer, reader, rng, player_id))
            self._probes.add(task)
            task.add_done_callback(self._probes.discard)

    async def _probe(
        self, writer: HttpClient, reader: HttpClient, rng: random.Random, player_id: str
    ) -> None:
        self.posted += 1
        body = json.dumps(
            {
                "player_id": player_id,
                "points": rng.randint(INGEST_POINTS_MIN, INGEST_POINTS_MAX),
                "match_id": f"{self.nonce}-{self.posted}",
                "board": self.board,
                "season": self.season,
            }
        ).encode()
        sent = time.monotonic()
        try:
            status, answer = await writer.request("POST", SCORES_PATH, body)
        except (TimeoutError, OSError):
            status, answer = 0, b""
        answered = time.monotonic()
        total = _field(answer, "total_points") if status == 201 else None
        if total is None:
            self.failed += 1
            self.pending.discard(player_id)
            return
        path = RANK_PATH.format(
            player_id=player_id, board=quote(self.board), season=quote(self.season)
        )
        while True:
            self.polls += 1
            try:
                status, answer = await reader.request("GET", path)
            except (TimeoutError, OSError):
                status = 0
            seen = time.monotonic()
            points = _field(answer, "points") if status == 200 else None
            if points is not None and points >= total:
                self.samples.append(
                    (sent - self.origin, (seen - answered) * 1000, (answered - sent) * 1000)
                )
                break
            if points is None:
                self.poll_errors += 1
            age = seen - answered
            if age > LOST_AFTER_SECONDS:
                self.lost += 1
                break
            await asyncio.sleep(max(POLL_SECONDS, age * POLL_SHARE_OF_AGE))
        self.pending.discard(player_id)

    def _summary(self) -> dict[str, Any]:
        return {
            "posted": self.posted,
            "failed_posts": self.failed,
            "skipped_all_players_pending": self.skipped,
            "not_visible_within_s": LOST_AFTER_SECONDS,
            "lost": self.lost,
            "freshness": latency_summary([fresh for _, fresh, _ in self.samples]),
            "probe_post": latency_summary([post for _, _, post in self.samples]),
            "poll_interval_ms": POLL_SECONDS * 1000,
            "poll_share_of_age": POLL_SHARE_OF_AGE,
            "polls": self.polls,
            "poll_errors": self.poll_errors,
            "series": [[round(t, 3), round(fresh, 2)] for t, fresh, _ in self.samples],
        }


def _field(answer: bytes, name: str) -> int | None:
    """An integer field of a JSON answer, or None when the answer has none."""
    try:
        return int(json.loads(answer)[name])
    except (ValueError, KeyError, TypeError):
        return None


def freshness_between(series: list[list[float]], start: float, end: float) -> dict[str, Any]:
    """Freshness of the probe results posted between `start` and `end` seconds."""
    summary = latency_summary([fresh for t, fresh in series if start <= t < end])
    summary.pop("curve_ms", None)
    return summary
