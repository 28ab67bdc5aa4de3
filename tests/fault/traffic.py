"""The campaign's open-loop traffic: results offered at a fixed rate whatever the service answers,
reads at a fixed rate, and WebSocket subscribers following players. Each counts what it got;
every loop stops when told and every wait is bounded."""

from __future__ import annotations

import json
import logging
import queue
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
from websockets.exceptions import WebSocketException
from websockets.sync.client import connect

from .load import GameServer, Ledger, Results

# A socket whose web process was killed is counted, not logged with its traceback.
logging.getLogger("websockets").setLevel(logging.CRITICAL)

# Error codes that are right answers under faults: 503 `unavailable` aside (the ledger knows
# it), a result that reaches its short season after the close, or a board between two seasons
# while the planner (beat) is down.
TOLERATED_CODES = frozenset({"season_closed", "no_active_season"})


@dataclass(frozen=True, slots=True)
class Stream:
    """Results for one board: its players (a pool of their own) and its share of the rate."""

    board: str
    results: Results
    share: float


class OpenLoopResults:
    """Offers a batch every `batch / rate` seconds from a clock thread, whatever the service
    answers (open loop); sender threads post them. A batch refused with 503 or unanswered is
    posted again, to another web server, as the API asks a game server to, until confirmed,
    refused for good or `retry_for` is over. Offers the senders cannot take (the queue is full)
    are shed and counted: the service was not keeping up."""

    def __init__(
        self,
        *,
        base_urls: Callable[[], Sequence[str]],
        key: str,
        ledger: Ledger,
        streams: Sequence[Stream],
        rate: float,
        batch: int,
        senders: int,
        seed: int,
        retry_for: float = 90.0,
        timeout: float = 10.0,
    ) -> None:
        self.base_urls = base_urls
        self.key = key
        self.ledger = ledger
        self.streams = streams
        self.rate = rate
        self.batch = batch
        self.retry_for = retry_for
        self.timeout = timeout
        self.random = random.Random(seed)
        self.offers: queue.Queue[dict[str, Any] | list[dict[str, Any]]] = queue.Queue(
            maxsize=max(8, senders * 4)
        )
        self.stopping = threading.Event()
        self.offered = 0
        self.shed = 0
        self.given_up = 0
        self.retries = 0
        self.lock = threading.Lock()
        self.errors: list[BaseException] = []
        self.threads = [threading.Thread(target=self._clock, name="offer-clock", daemon=True)] + [
            threading.Thread(target=self._send, args=(i,), name=f"sender-{i}", daemon=True)
            for i in range(senders)
        ]

    def start(self) -> OpenLoopResults:
        for thread in self.threads:
            thread.start()
        return self

    def _clock(self) -> None:
        interval = self.batch / self.rate
        weights = [stream.share for stream in self.streams]
        due = time.monotonic()
        try:
            while not self.stopping.is_set():
                stream = self.random.choices(self.streams, weights)[0]
                body = [
                    {**item, "board": stream.board} for item in stream.results.batch(self.batch)
                ]
                self.offered += len(body)
                try:
                    self.offers.put_nowait(body)
                except queue.Full:
                    self.shed += len(body)
                due += interval
                self.stopping.wait(max(0.0, due - time.monotonic()))
        except BaseException as exc:  # reported by stop()
            self.errors.append(exc)

    def _send(self, index: int) -> None:
        servers: dict[str, GameServer] = {}
        try:
            while not self.stopping.is_set():
                try:
                    body = self.offers.get(timeout=0.2)
                except queue.Empty:
                    continue
                self._post(servers, index, body)
        except BaseException as exc:  # reported by stop()
            self.errors.append(exc)
        finally:
            for server in servers.values():
                server.http.close()

    def _post(self, servers: dict[str, GameServer], index: int, body: Any) -> None:
        give_up = time.monotonic() + self.retry_for
        attempt = index
        while True:
            urls = self.base_urls()
            url = urls[attempt % len(urls)]
            if url not in servers:
                servers[url] = GameServer(url, self.key, self.ledger, timeout=self.timeout)
            answer = servers[url].post(body)
            if answer.status is not None and answer.status != 503:
                return
            if time.monotonic() > give_up or self.stopping.is_set():
                with self.lock:
                    self.given_up += len(body)
                return
            with self.lock:
                self.retries += 1
            attempt += 1
            time.sleep(0.5)

    def stop(self, timeout: float = 30.0) -> list[str]:
        """Stop offering and posting; returns what went wrong in the threads themselves."""
        self.stopping.set()
        deadline = time.monotonic() + timeout
        for thread in self.threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        problems = [f"{t.name} still posting {timeout:.0f} s after the stop" for t in self.threads]
        problems = [p for p, t in zip(problems, self.threads, strict=True) if t.is_alive()]
        return problems + [f"a results thread failed: {exc!r}" for exc in self.errors]


@dataclass
class ReadTally:
    statuses: Counter[str] = field(default_factory=Counter)
    wrong: list[str] = field(default_factory=list)


class Readers:
    """Public reads at a fixed rate (a player's rank or a board's top page, on any web server):
    200, 404 (a player off the board: banned, or not mirrored yet) and 503 `unavailable` are
    answers; no answer is counted apart (a web process killed); anything else is wrong. Also
    polls /readyz once a second, for the mirror's lag."""

    def __init__(
        self,
        *,
        base_urls: Callable[[], Sequence[str]],
        boards: Sequence[str],
        players: Sequence[str],
        rate: float,
        threads: int,
        seed: int,
    ) -> None:
        self.base_urls = base_urls
        self.boards = boards
        self.players = players
        self.rate = rate
        self.random = random.Random(seed)
        self.tally = ReadTally()
        self.lags: list[float] = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.requests: queue.Queue[tuple[str, dict[str, str]]] = queue.Queue(maxsize=threads * 4)
        self.errors: list[BaseException] = []
        self.threads = [
            threading.Thread(target=self._clock, name="read-clock", daemon=True),
            threading.Thread(target=self._readiness, name="readyz", daemon=True),
        ] + [
            threading.Thread(target=self._read, name=f"reader-{i}", daemon=True)
            for i in range(threads)
        ]

    def start(self) -> Readers:
        for thread in self.threads:
            thread.start()
        return self

    def _count(self, name: str, wrong: str | None = None) -> None:
        with self.lock:
            self.tally.statuses[name] += 1
            if wrong is not None and len(self.tally.wrong) < 50:
                self.tally.wrong.append(wrong)

    def _clock(self) -> None:
        due = time.monotonic()
        try:
            while not self.stopping.is_set():
                board = self.random.choice(self.boards)
                if self.random.random() < 0.5:
                    read = ("/api/v1/leaderboard/top", {"board": board, "limit": "20"})
                else:
                    player = self.random.choice(self.players)
                    read = (f"/api/v1/leaderboard/players/{player}", {"board": board})
                try:
                    self.requests.put_nowait(read)
                except queue.Full:
                    self._count("shed")
                due += 1 / self.rate
                self.stopping.wait(max(0.0, due - time.monotonic()))
        except BaseException as exc:  # reported by stop()
            self.errors.append(exc)

    def _read(self) -> None:
        try:
            with httpx.Client(timeout=10) as http:
                turn = 0
                while not self.stopping.is_set():
                    try:
                        path, params = self.requests.get(timeout=0.2)
                    except queue.Empty:
                        continue
                    urls = self.base_urls()
                    turn += 1
                    self._one(http, urls[turn % len(urls)] + path, params)
        except BaseException as exc:  # reported by stop()
            self.errors.append(exc)

    def _one(self, http: httpx.Client, url: str, params: dict[str, str]) -> None:
        try:
            response = http.get(url, params=params)
        except httpx.HTTPError:
            self._count("no answer")
            return
        code = None
        if response.status_code != 200:
            try:
                code = response.json()["error"]["code"]
            except (ValueError, KeyError, TypeError):
                code = None
        if response.status_code in (200, 404) or (
            response.status_code == 503 and code == "unavailable"
        ):
            self._count(str(response.status_code))
        else:
            self._count(str(response.status_code), f"{url} {params}: {response.status_code} {code}")

    def _readiness(self) -> None:
        try:
            with httpx.Client(timeout=5) as http:
                while not self.stopping.wait(1.0):
                    try:
                        body = http.get(self.base_urls()[0] + "/readyz").json()
                    except (httpx.HTTPError, ValueError):
                        continue
                    lag = body.get("checks", {}).get("mirror_lag_seconds")
                    if isinstance(lag, int | float):
                        with self.lock:
                            self.lags.append(float(lag))
        except BaseException as exc:  # reported by stop()
            self.errors.append(exc)

    def stop(self, timeout: float = 30.0) -> list[str]:
        self.stopping.set()
        deadline = time.monotonic() + timeout
        for thread in self.threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        alive = [t.name for t in self.threads if t.is_alive()]
        return ([f"readers {alive} still reading after the stop"] if alive else []) + [
            f"a reader failed: {exc!r}" for exc in self.errors
        ]


@dataclass
class SocketTally:
    connections: int = 0
    messages: Counter[str] = field(default_factory=Counter)
    refused: Counter[str] = field(default_factory=Counter)
    gaps: list[str] = field(default_factory=list)


class Subscribers:
    """WebSocket clients each following a player on a board (and its top 10), reconnecting a
    second after their socket closes (a web process killed, a close code), as the page does.
    Each connection's messages must be numbered 1, 2, 3... with no gap (docs/websocket.md)."""

    def __init__(
        self, *, base_urls: Callable[[], Sequence[str]], follows: Sequence[tuple[str, str]]
    ) -> None:
        self.base_urls = base_urls
        self.follows = follows
        self.tally = SocketTally()
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.errors: list[BaseException] = []
        self.threads = [
            threading.Thread(target=self._follow, args=(i,), name=f"socket-{i}", daemon=True)
            for i in range(len(follows))
        ]

    def start(self) -> Subscribers:
        for thread in self.threads:
            thread.start()
        return self

    def _follow(self, index: int) -> None:
        board, player = self.follows[index]
        turn = index
        try:
            while not self.stopping.is_set():
                urls = self.base_urls()
                base = urls[turn % len(urls)]
                turn += 1
                self._connection(base, board, player)
                self.stopping.wait(1.0)
        except BaseException as exc:  # reported by stop()
            self.errors.append(exc)

    def _connection(self, base: str, board: str, player: str) -> None:
        url = base.replace("http://", "ws://") + (
            f"/ws/v1/leaderboard/{board}/?player_id={player}&top=10"
        )
        seq = 0
        try:
            with connect(
                url, origin=base, open_timeout=5, close_timeout=2, max_size=2**22
            ) as socket:
                with self.lock:
                    self.tally.connections += 1
                while not self.stopping.is_set():
                    try:
                        raw = socket.recv(timeout=1.0)
                    except TimeoutError:
                        continue
                    message = json.loads(raw)
                    with self.lock:
                        self.tally.messages[str(message.get("type"))] += 1
                        if message.get("seq") != seq + 1 and len(self.tally.gaps) < 20:
                            self.tally.gaps.append(f"{url}: seq {message.get('seq')} after {seq}")
                    seq = int(message.get("seq", seq + 1))
        except (OSError, WebSocketException, TimeoutError) as exc:
            with self.lock:
                self.tally.refused[_close_reason(exc)] += 1

    def stop(self, timeout: float = 20.0) -> list[str]:
        self.stopping.set()
        deadline = time.monotonic() + timeout
        for thread in self.threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        alive = [t.name for t in self.threads if t.is_alive()]
        return ([f"sockets {alive} still open after the stop"] if alive else []) + [
            f"a socket thread failed: {exc!r}" for exc in self.errors
        ]


def _close_reason(exc: BaseException) -> str:
    rcvd = getattr(exc, "rcvd", None)
    if rcvd is not None:
        return f"closed {rcvd.code}"
    return type(exc).__name__
