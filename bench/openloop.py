"""Open loops (bench/README.md, "What a run does"): the schedule a slow server cannot hide its
latency from, a load of match results and the freshness probe. The HTTP client is keep-alive
HTTP/1.1 on asyncio with httptools: httpx spent ten times the CPU."""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlparse

import httptools

from .core import latency_summary, percentile
from .scores import INGEST_POINTS_MAX, INGEST_POINTS_MIN

SCORES_PATH = "/api/v1/scores"
RANK_PATH = "/api/v1/leaderboard/players/{player_id}?board={board}&season={season}"
REQUEST_TIMEOUT_SECONDS = 10.0
# A request due beyond this many unanswered is not sent but counted: an overloaded server shows
# as load it never received rather than as a client that slowed down.
MAX_IN_FLIGHT = 64
# A request sent this long after its slot is late: the harness, not the server, fell behind.
LATE_SECONDS = 0.05
STOP_WAIT_SECONDS = 15.0
# The probe polls every 10 ms, then every tenth of a result's age: within 10%, and a backlog of
# seconds does not turn its polls into a second load on the server it measures.
POLL_SECONDS = 0.01
POLL_SHARE_OF_AGE = 0.1
LOST_AFTER_SECONDS = 30.0


class _Answer:
    """One answer as httptools parses it (it calls the on_* while it parses)."""

    def __init__(self) -> None:
        self.parser = httptools.HttpResponseParser(self)
        self.body: list[bytes] = []
        self.complete = self.keep_alive = False

    def on_body(self, body: bytes) -> None:
        self.body.append(body)

    def on_message_complete(self) -> None:
        self.complete, self.keep_alive = True, self.parser.should_keep_alive()


class HttpClient:
    """Requests to one server over a pool of keep-alive connections (a new one whenever all are
    busy); every request has a deadline, and a connection that failed is closed, never reused."""

    def __init__(self, url: str, *, api_key: str = "", timeout: float = REQUEST_TIMEOUT_SECONDS):
        parsed = urlparse(url)
        self.host, self.port = parsed.hostname or "127.0.0.1", parsed.port or 80
        self.head = f"Host: {self.host}:{self.port}\r\n"
        if api_key:
            self.head += f"Authorization: Api-Key {api_key}\r\nContent-Type: application/json\r\n"
        self.timeout = timeout
        self.idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
        self.open: set[asyncio.StreamWriter] = set()

    async def request(self, method: str, path: str, body: bytes = b"") -> tuple[int, bytes]:
        """(status, body) of the answer; raises TimeoutError or OSError."""
        request = f"{method} {path} HTTP/1.1\r\n{self.head}Content-Length: {len(body)}\r\n\r\n"
        answer = _Answer()
        async with asyncio.timeout(self.timeout):
            # The server closes connections idle for long (uvicorn: 5 s); those are dropped here.
            while self.idle and self.idle[-1][0].at_eof():
                self.idle[-1][1].close()
                self.open.discard(self.idle.pop()[1])
            if self.idle:
                reader, writer = self.idle.pop()
            else:
                reader, writer = await asyncio.open_connection(self.host, self.port)
                self.open.add(writer)
            try:
                writer.write(request.encode() + body)
                while not answer.complete:
                    if not (data := await reader.read(65536)):
                        raise ConnectionError("connection closed before the answer")
                    answer.parser.feed_data(data)
            except httptools.HttpParserError as exc:
                raise ConnectionError(f"unreadable answer: {exc}") from exc
            finally:
                if not answer.keep_alive:
                    writer.close()
                    self.open.discard(writer)
        if answer.keep_alive:
            self.idle.append((reader, writer))
        return answer.parser.get_status_code(), b"".join(answer.body)

    def close(self) -> None:
        for writer in self.open:
            writer.close()
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


class OpenLoopSender:
    """Sends `load` from a thread of its own, on its own asyncio loop: start() returns once it
    runs, stop() returns its figures (a failure in the thread is raised again in the caller's).
    A subclass may choose each request's results (`_items`) and read each answer (`_answered`)."""

    max_in_flight = MAX_IN_FLIGHT

    def __init__(self, load: OfferedLoad, timeout: float = REQUEST_TIMEOUT_SECONDS,
                 settle: float = STOP_WAIT_SECONDS) -> None:  # fmt: skip
        if load.rate <= 0 or load.batch < 1 or load.senders < 1 or load.players < load.batch:
            raise ValueError(f"not a load that can be offered: {load}")
        self.thread = threading.Thread(target=self._run, name="open-loop-sender", daemon=True)
        self.ready, self.stopping = threading.Event(), threading.Event()
        self.failure: BaseException | None = None
        self.figures: dict[str, Any] = {}
        self.load, self.timeout, self.settle = load, timeout, settle
        self.offered = self.dropped = self.late = 0
        self.lags_ms: list[float] = []  # how long after its slot each request went out
        self.latencies_ms: list[float] = []
        # Each answer's latency by the second of the window it was sent in: stalls show there.
        self.by_second: defaultdict[int, list[float]] = defaultdict(list)
        self.answers: Counter[str] = Counter()
        self.in_flight: set[asyncio.Task[None]] = set()

    def start(self) -> Any:
        self.thread.start()
        if not self.ready.wait(10) or self.failure is not None:
            raise RuntimeError(f"{self.thread.name} did not start") from self.failure
        return self

    def stop(self) -> dict[str, Any]:
        """Stop, wait (bounded) for what is in flight, and return the figures."""
        self.stopping.set()
        self.thread.join(self.settle + self.timeout + STOP_WAIT_SECONDS)
        if self.thread.is_alive() or self.failure is not None:
            raise RuntimeError(f"{self.thread.name} did not stop cleanly") from self.failure
        return self.figures

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
            self.failure = exc
            self.ready.set()

    async def _main(self) -> None:
        client = HttpClient(self.load.url, api_key=self.load.api_key, timeout=self.timeout)
        try:
            self.started_wall, self.origin = time.time(), time.monotonic()
            count = self.load.senders
            senders = [asyncio.create_task(self._sender(client, i)) for i in range(count)]
            self.ready.set()
            await asyncio.to_thread(self.stopping.wait)
            seconds = time.monotonic() - self.origin
            for sender in senders:
                sender.cancel()
            await asyncio.gather(*senders, return_exceptions=True)
            # What is still in flight gets `settle` seconds, then is cancelled.
            unfinished = set()
            if self.in_flight:
                _, unfinished = await asyncio.wait(self.in_flight, timeout=self.settle)
            for task in unfinished:
                task.cancel()
            await asyncio.gather(*unfinished, return_exceptions=True)
        finally:
            client.close()
        self.figures = self._summary(self.started_wall, seconds, len(unfinished))

    def _items(self, rng: random.Random, index: int, sent: int) -> list[dict[str, Any]]:
        """The results of one request (none: nothing sent), of distinct players: one match cannot
        count one player twice."""
        load, match_id = self.load, f"{self.load.match_prefix}-{index}-{sent}"
        players = rng.sample(range(load.players), load.batch)
        return [self._result(f"p{p}", rng, match_id) for p in players]

    def _result(self, player_id: str, rng: random.Random, match_id: str) -> dict[str, Any]:
        load, points = self.load, rng.randint(INGEST_POINTS_MIN, INGEST_POINTS_MAX)
        result = {"player_id": player_id, "points": points, "match_id": match_id}
        return result | {"board": load.board, "season": load.season}

    async def _answered(self, items: list[dict[str, Any]], status: int, answer: bytes,
                        sent: float, now: float) -> None:  # fmt: skip
        """The answer to `items` sent at `sent` (time.monotonic(); status 0: no answer)."""

    async def _sender(self, client: HttpClient, index: int) -> None:
        load = self.load
        interval = load.senders * load.batch / load.rate
        rng = random.Random(f"{load.match_prefix}-{index}")
        mine: set[asyncio.Task[None]] = set()
        sent = 0
        # Senders are spread over the interval, as independent game servers would be.
        for slot in itertools.count(self.origin + interval * index / load.senders, interval):
            if (delay := slot - time.monotonic()) > 0:
                await asyncio.sleep(delay)
            self.offered += 1
            if len(mine) >= self.max_in_flight:
                self.dropped += 1
                continue
            lag = time.monotonic() - slot
            self.lags_ms.append(lag * 1000)
            self.late += lag > LATE_SECONDS
            sent += 1
            if not (items := self._items(rng, index, sent)):
                continue
            task = asyncio.create_task(self._post(client, items))
            for tracked in (mine, self.in_flight):
                tracked.add(task)
                task.add_done_callback(tracked.discard)

    async def _post(self, client: HttpClient, items: list[dict[str, Any]]) -> None:
        body = json.dumps(items[0] if self.load.batch == 1 else items, separators=(",", ":"))
        sent = time.monotonic()
        try:
            status, answer = await client.request("POST", SCORES_PATH, body.encode())
        except (TimeoutError, OSError) as exc:
            self.answers["timeout" if isinstance(exc, TimeoutError) else type(exc).__name__] += 1
            status, answer = 0, b""
        answered = time.monotonic()
        if status:
            latency_ms = (answered - sent) * 1000
            self.latencies_ms.append(latency_ms)
            self.by_second[int(sent - self.origin)].append(latency_ms)
            self.answers[str(status)] += 1
        await self._answered(items, status, answer, sent, answered)

    def _summary(self, started_wall: float, seconds: float, unanswered: int) -> dict[str, Any]:
        load, sent = self.load, self.offered - self.dropped
        return {
            "rate_results_per_s": load.rate, "batch": load.batch, "senders": load.senders,
            "started_at_epoch": round(started_wall, 3), "seconds": round(seconds, 3),
            "offered_requests": self.offered, "offered_results": self.offered * load.batch,
            "sent": sent, "sent_per_s": round(sent / seconds, 1) if seconds else 0.0,
            "sent_late": self.late, "late_after_ms": LATE_SECONDS * 1000,
            "not_sent_on_time": self.dropped, "max_in_flight_per_sender": self.max_in_flight,
            "unanswered_at_stop": unanswered, "answers": dict(sorted(self.answers.items())),
            "send_lag": latency_summary(self.lags_ms, curve=False),
            "post_latency": latency_summary(self.latencies_ms),
            # [second of the window, answers, p50 ms, p99 ms, max ms] of the requests sent then.
            "post_latency_by_second": [
                [second, len(ordered), *(round(percentile(ordered, p), 1) for p in (50, 99, 100))]
                for second, samples in sorted(self.by_second.items())
                for ordered in [sorted(samples)]
            ],
        }  # fmt: skip


def json_field(answer: bytes, name: str) -> int | None:
    """An integer field of a JSON answer, or None when the answer has none."""
    try:
        return int(json.loads(answer)[name])
    except (ValueError, KeyError, TypeError):
        return None


class FreshnessProbe(OpenLoopSender):
    """Single results at a fixed rate for its own players, one pending a player; after each 201
    it polls the rank endpoint until that shows the 201's total: the freshness."""

    max_in_flight = 1 << 30  # one result a player at a time is the bound

    def __init__(self, url: str, api_key: str, board: str, season: str, *, players: list[str],
                 rate: float) -> None:  # fmt: skip
        prefix = f"probe-{int(time.time() * 1000)}"
        load = OfferedLoad(url, api_key, board, season, rate, 1, len(players), prefix, senders=1)
        super().__init__(load, settle=LOST_AFTER_SECONDS + REQUEST_TIMEOUT_SECONDS)
        self.thread.name, self.names = "freshness-probe", players
        self.pending: set[str] = set()
        self.samples: list[tuple[float, float, float]] = []  # sent at, freshness ms, POST ms
        self.posted = self.failed = self.lost = self.skipped = self.polls = self.poll_errors = 0

    async def _main(self) -> None:
        self.reader = HttpClient(self.load.url)
        try:
            await super()._main()
        finally:
            self.reader.close()

    def _items(self, rng: random.Random, index: int, sent: int) -> list[dict[str, Any]]:
        candidates = rng.sample(self.names, min(20, len(self.names)))
        player_id = next((p for p in candidates if p not in self.pending), None)
        if player_id is None:
            self.skipped += 1
            return []
        self.pending.add(player_id)
        self.posted += 1
        return [self._result(player_id, rng, f"{self.load.match_prefix}-{self.posted}")]

    async def _answered(self, items: list[dict[str, Any]], status: int, answer: bytes,
                        sent: float, now: float) -> None:  # fmt: skip
        player_id, load = items[0]["player_id"], self.load
        total = json_field(answer, "total_points") if status == 201 else None
        if total is None:
            self.failed += 1
            self.pending.discard(player_id)
            return
        board, season = quote(load.board), quote(load.season)
        path = RANK_PATH.format(player_id=player_id, board=board, season=season)
        while True:
            self.polls += 1
            try:
                status, answer = await self.reader.request("GET", path)
            except (TimeoutError, OSError):
                status = 0
            seen = time.monotonic()
            points = json_field(answer, "points") if status == 200 else None
            if points is not None and points >= total:
                self.samples.append((sent - self.origin, (seen - now) * 1000, (now - sent) * 1000))
                break
            self.poll_errors += points is None
            if (age := seen - now) > LOST_AFTER_SECONDS:
                self.lost += 1
                break
            await asyncio.sleep(max(POLL_SECONDS, age * POLL_SHARE_OF_AGE))
        self.pending.discard(player_id)

    def _summary(self, started_wall: float, seconds: float, unanswered: int) -> dict[str, Any]:
        return {
            "posted": self.posted, "failed_posts": self.failed,
            "skipped_all_players_pending": self.skipped, "not_visible_within_s": LOST_AFTER_SECONDS,
            "lost": self.lost + len(self.pending),
            "freshness": latency_summary([fresh for _, fresh, _ in self.samples]),
            "probe_post": latency_summary([post for _, _, post in self.samples]),
            "poll_interval_ms": POLL_SECONDS * 1000, "poll_share_of_age": POLL_SHARE_OF_AGE,
            "polls": self.polls, "poll_errors": self.poll_errors,
            "series": [[round(t, 3), round(fresh, 2)] for t, fresh, _ in self.samples],
        }  # fmt: skip
