"""An open-loop load of match results: POSTs at a fixed rate from several senders, each on its
own schedule whether or not its earlier requests were answered, so a slow server cannot slow the
load down and hide its own latency (no coordinated omission); and the freshness probe, which
posts results for players the load never writes and times each until the public rank endpoint
shows it. The ingest phases and bench/ws_push.py use them.

Their client is a small keep-alive HTTP/1.1 client on asyncio with httptools (uvicorn's C parser)
reading the answers: httpx spent 1.4 to 2 ms of CPU a request here, ten times as much.
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

from .core import latency_summary, percentile
from .scores import INGEST_POINTS_MAX, INGEST_POINTS_MIN

SCORES_PATH = "/api/v1/scores"
RANK_PATH = "/api/v1/leaderboard/players/{player_id}?board={board}&season={season}"
REQUEST_TIMEOUT_SECONDS = 10.0
# Unanswered requests a sender allows; a request due beyond that is not sent but counted, so an
# overloaded server shows as load it never received rather than as a client that slowed down.
MAX_IN_FLIGHT = 64
# A request sent this long after its slot counts as late: the harness, not the server, fell behind.
LATE_SECONDS = 0.05
# How long stop() waits for the answers still in flight before giving up on them.
STOP_WAIT_SECONDS = 15.0
# The probe polls every 10 ms at first, then every tenth of a result's age: within 10%, and a
# backlog of seconds does not turn its polls into a second load on the server it measures.
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
        self.reusable = self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._fail(ConnectionError(f"unreadable answer: {exc}"))

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed, self.reusable = True, False
        self._fail(exc or ConnectionError("connection closed before the answer"))

    def on_message_begin(self) -> None:  # httptools calls the on_* while it parses
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


class HttpClient:
    """Requests to one server over a pool of keep-alive connections (a new one whenever all are
    busy); every request has a deadline, and a connection that failed is closed, never reused."""

    def __init__(self, url: str, *, api_key: str = "") -> None:
        parsed = urlparse(url)
        self.host, self.port = parsed.hostname or "127.0.0.1", parsed.port or 80
        self.head = f"Host: {self.host}:{self.port}\r\n"
        if api_key:
            self.head += f"Authorization: Api-Key {api_key}\r\nContent-Type: application/json\r\n"
        self.idle: list[_Connection] = []
        self.open: set[_Connection] = set()

    async def request(self, method: str, path: str, body: bytes = b"") -> tuple[int, bytes]:
        """(status, body) of the answer; raises TimeoutError or OSError."""
        request = f"{method} {path} HTTP/1.1\r\n{self.head}Content-Length: {len(body)}\r\n\r\n"
        async with asyncio.timeout(REQUEST_TIMEOUT_SECONDS):
            # The server closes connections idle for long (uvicorn: 5 s); those are dropped here.
            while self.idle and self.idle[-1].closed:
                self.open.discard(self.idle.pop())
            if self.idle:
                connection = self.idle.pop()
            else:
                loop = asyncio.get_running_loop()
                _, connection = await loop.create_connection(_Connection, self.host, self.port)
                self.open.add(connection)
            try:
                answer = await connection.exchange(request.encode() + body)
            except BaseException:
                connection.reusable = False
                raise
            finally:
                if not connection.reusable:
                    connection.transport.close()  # type: ignore[union-attr]
                    self.open.discard(connection)
        if connection.reusable:
            self.idle.append(connection)
        return answer

    def close(self) -> None:
        for connection in self.open:
            connection.transport.close()  # type: ignore[union-attr]
        self.open.clear()
        self.idle.clear()


@dataclass(frozen=True)
class OfferedLoad:
    url: str  # the server's base URL
    api_key: str  # a game server's key
    board: str
    season: str
    rate: float  # results a second offered, in all
    batch: int  # results a request (1: a single result object, more: a JSON array)
    players: int  # the load's players are p0 .. p{players-1}
    match_prefix: str  # every match id unique: {match_prefix}-{sender}-{n}
    senders: int = 8


class _BackgroundLoop:
    """Runs `_main` on an asyncio loop in a thread of its own until stop(); an exception there is
    raised again in the caller's thread."""

    def __init__(self, name: str, stop_seconds: float) -> None:
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.stop_seconds = stop_seconds
        self.ready = threading.Event()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.stopping: asyncio.Event | None = None
        self.failure: BaseException | None = None
        self.figures: dict[str, Any] = {}

    async def _main(self) -> None:
        """Set self.ready once running; return after self.stopping, the figures in self.figures."""
        raise NotImplementedError

    @property
    def running(self) -> bool:
        return self.thread.is_alive()

    def _check(self, doing: str) -> None:
        if self.failure is not None:
            raise RuntimeError(f"{self.thread.name} failed {doing}") from self.failure

    def start(self) -> Any:
        self.thread.start()
        if not self.ready.wait(10):
            raise RuntimeError(f"{self.thread.name} did not start")
        self._check("to start")
        return self

    def stop(self) -> dict[str, Any]:
        """Stop, wait (bounded) for what is in flight, and return the figures."""
        if self.loop is not None and self.stopping is not None and self.thread.is_alive():
            self.loop.call_soon_threadsafe(self.stopping.set)
        self.thread.join(self.stop_seconds)
        if self.thread.is_alive():
            raise RuntimeError(f"{self.thread.name} did not stop")
        self._check("")
        return self.figures

    def _run(self) -> None:
        try:
            asyncio.run(self._serve())
        except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
            self.failure = exc
            self.ready.set()

    async def _serve(self) -> None:
        self.loop, self.stopping = asyncio.get_running_loop(), asyncio.Event()
        await self._main()


async def _settle(tasks: set[asyncio.Task[None]], timeout: float) -> int:
    """Wait up to `timeout` for `tasks`, then cancel the rest; returns how many were left."""
    if not tasks:
        return 0
    _, unfinished = await asyncio.wait(tasks, timeout=timeout)
    for task in unfinished:
        task.cancel()
    await asyncio.gather(*unfinished, return_exceptions=True)
    return len(unfinished)


class OpenLoopSender(_BackgroundLoop):
    """Sends `load` from a background thread with its own asyncio loop until stop()."""

    def __init__(self, load: OfferedLoad) -> None:
        if load.rate <= 0 or load.batch < 1 or load.senders < 1 or load.players < load.batch:
            raise ValueError(f"not a load that can be offered: {load}")
        super().__init__("open-loop-sender", STOP_WAIT_SECONDS + REQUEST_TIMEOUT_SECONDS)
        self.load = load
        self.offered = self.dropped = self.late = 0
        self.lags_ms: list[float] = []
        self.latencies_ms: list[float] = []
        # Each answer's latency by the second of the window it was sent in: stalls show there.
        self.by_second: defaultdict[int, list[float]] = defaultdict(list)
        self.answers: Counter[str] = Counter()
        self.in_flight: set[asyncio.Task[None]] = set()

    async def _main(self) -> None:
        client = HttpClient(self.load.url, api_key=self.load.api_key)
        try:
            started_wall, origin = time.time(), time.monotonic()
            self.origin = origin
            count = self.load.senders
            senders = [asyncio.create_task(self._sender(client, i, origin)) for i in range(count)]
            self.ready.set()
            await self.stopping.wait()  # type: ignore[union-attr]
            seconds = time.monotonic() - origin
            for sender in senders:
                sender.cancel()
            await asyncio.gather(*senders, return_exceptions=True)
            unanswered = await _settle(self.in_flight, STOP_WAIT_SECONDS)
        finally:
            client.close()
        self.figures = self._summary(started_wall, seconds, unanswered)

    async def _sender(self, client: HttpClient, index: int, origin: float) -> None:
        load = self.load
        interval = load.senders * load.batch / load.rate
        rng = random.Random(f"{load.match_prefix}-{index}")
        mine: set[asyncio.Task[None]] = set()
        # Senders are spread over the interval, as independent game servers would be.
        due = origin + interval * index / load.senders
        sent = 0
        while True:
            if (delay := due - time.monotonic()) > 0:
                await asyncio.sleep(delay)
            slot, due = due, due + interval
            self.offered += 1
            if len(mine) >= MAX_IN_FLIGHT:
                self.dropped += 1
                continue
            lag = time.monotonic() - slot
            self.lags_ms.append(lag * 1000)
            self.late += lag > LATE_SECONDS
            sent += 1
            # Distinct players: one match cannot count a player twice.
            items = [
                {
                    "player_id": f"p{player}",
                    "points": rng.randint(INGEST_POINTS_MIN, INGEST_POINTS_MAX),
                    "match_id": f"{load.match_prefix}-{index}-{sent}",
                    "board": load.board,
                    "season": load.season,
                }
                for player in rng.sample(range(load.players), load.batch)
            ]
            body = json.dumps(items[0] if load.batch == 1 else items, separators=(",", ":"))
            task = asyncio.create_task(self._post(client, body.encode()))
            for tracked in (mine, self.in_flight):
                tracked.add(task)
                task.add_done_callback(tracked.discard)

    async def _post(self, client: HttpClient, body: bytes) -> None:
        sent = time.monotonic()
        try:
            status, _ = await client.request("POST", SCORES_PATH, body)
        except TimeoutError:
            self.answers["timeout"] += 1
            return
        except OSError as exc:
            self.answers[type(exc).__name__] += 1
            return
        latency_ms = (time.monotonic() - sent) * 1000
        self.latencies_ms.append(latency_ms)
        self.by_second[int(sent - self.origin)].append(latency_ms)
        self.answers[str(status)] += 1

    def _summary(self, started_wall: float, seconds: float, unanswered: int) -> dict[str, Any]:
        load, sent = self.load, self.offered - self.dropped
        return {
            "rate_results_per_s": load.rate,
            "batch": load.batch,
            "senders": load.senders,
            "started_at_epoch": round(started_wall, 3),
            "seconds": round(seconds, 3),
            "offered_requests": self.offered,
            "offered_results": self.offered * load.batch,
            "sent": sent,
            "sent_per_s": round(sent / seconds, 1) if seconds else 0.0,
            "sent_late": self.late,
            "late_after_ms": LATE_SECONDS * 1000,
            "not_sent_on_time": self.dropped,
            "max_in_flight_per_sender": MAX_IN_FLIGHT,
            "unanswered_at_stop": unanswered,
            "answers": dict(sorted(self.answers.items())),
            "send_lag": latency_summary(self.lags_ms, curve=False),
            "post_latency": latency_summary(self.latencies_ms),
            # [second of the window, answers, p50 ms, p99 ms, max ms] of the requests sent then.
            "post_latency_by_second": [
                [second, len(ordered), *(round(percentile(ordered, p), 1) for p in (50, 99, 100))]
                for second, samples in sorted(self.by_second.items())
                for ordered in [sorted(samples)]
            ],
        }


def _field(answer: bytes, name: str) -> int | None:
    """An integer field of a JSON answer, or None when the answer has none."""
    try:
        return int(json.loads(answer)[name])
    except (ValueError, KeyError, TypeError):
        return None


class FreshnessProbe(_BackgroundLoop):
    """Posts single results for its own players at a fixed rate and, after each 201, polls the
    public rank endpoint until it shows the total the 201 returned: freshness is the time from
    the 201's arrival to the answer that shows it. Started with the window's origin
    (time.monotonic()): a result belongs to the part of the window it was posted in."""

    def __init__(
        self, *, url: str, api_key: str, board: str, season: str, players: list[str], rate: float
    ) -> None:
        stop_seconds = LOST_AFTER_SECONDS + 2 * REQUEST_TIMEOUT_SECONDS + STOP_WAIT_SECONDS
        super().__init__("freshness-probe", stop_seconds)
        self.url, self.api_key, self.board, self.season = url, api_key, board, season
        self.players, self.interval = players, 1.0 / rate
        self.origin = time.monotonic()
        self.nonce = f"probe-{int(time.time() * 1000)}"
        self.pending: set[str] = set()
        self.samples: list[tuple[float, float, float]] = []  # sent at, freshness ms, POST ms
        self.posted = self.failed = self.lost = self.skipped = self.polls = self.poll_errors = 0
        self.probes: set[asyncio.Task[None]] = set()

    async def _main(self) -> None:
        writer, reader = HttpClient(self.url, api_key=self.api_key), HttpClient(self.url)
        try:
            rng = random.Random(self.nonce)
            schedule = asyncio.create_task(self._schedule(writer, reader, rng))
            self.ready.set()
            await self.stopping.wait()  # type: ignore[union-attr]
            schedule.cancel()
            await asyncio.gather(schedule, return_exceptions=True)
            await _settle(self.probes, LOST_AFTER_SECONDS + REQUEST_TIMEOUT_SECONDS)
        finally:
            writer.close()
            reader.close()
        self.lost += len(self.pending)
        self.figures = {
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

    async def _schedule(self, writer: HttpClient, reader: HttpClient, rng: random.Random) -> None:
        due = time.monotonic()
        while True:
            if (delay := due - time.monotonic()) > 0:
                await asyncio.sleep(delay)
            due += self.interval
            candidates = rng.sample(self.players, min(20, len(self.players)))
            player_id = next((p for p in candidates if p not in self.pending), None)
            if player_id is None:
                self.skipped += 1
                continue
            self.pending.add(player_id)
            task = asyncio.create_task(self._probe(writer, reader, rng, player_id))
            self.probes.add(task)
            task.add_done_callback(self.probes.discard)

    async def _probe(
        self, writer: HttpClient, reader: HttpClient, rng: random.Random, player_id: str
    ) -> None:
        self.posted += 1
        result = {
            "player_id": player_id,
            "points": rng.randint(INGEST_POINTS_MIN, INGEST_POINTS_MAX),
            "match_id": f"{self.nonce}-{self.posted}",
            "board": self.board,
            "season": self.season,
        }
        sent = time.monotonic()
        try:
            status, answer = await writer.request("POST", SCORES_PATH, json.dumps(result).encode())
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
                fresh, post = (seen - answered) * 1000, (answered - sent) * 1000
                self.samples.append((sent - self.origin, fresh, post))
                break
            self.poll_errors += points is None
            if (age := seen - answered) > LOST_AFTER_SECONDS:
                self.lost += 1
                break
            await asyncio.sleep(max(POLL_SECONDS, age * POLL_SHARE_OF_AGE))
        self.pending.discard(player_id)


def freshness_between(series: list[list[float]], start: float, end: float) -> dict[str, Any]:
    """Freshness of the probe results posted between `start` and `end` seconds."""
    return latency_summary([fresh for t, fresh in series if start <= t < end], curve=False)
