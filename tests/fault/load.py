"""Game servers posting results from threads, and a ledger of what the API answered them."""

from __future__ import annotations

import dataclasses
import itertools
import logging
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx

from .procs import Timeout, wait_until

# The test settings log at INFO; a line per request would bury a failure's report.
logging.getLogger("httpx").setLevel(logging.WARNING)

Body = dict[str, Any] | list[dict[str, Any]]
# A result as PostgreSQL keys it: (season slug, match_id, player_id).
ResultKey = tuple[str, str, str]


@dataclass(frozen=True, slots=True)
class Answer:
    started: float  # time.monotonic() when the request was sent
    finished: float
    status: int | None  # None: no answer at all (timeout, connection refused)
    code: str | None  # the error code of an error body
    body: Body
    # "accepted" or "duplicate" for each result of a confirmed body, in the body's order
    outcomes: tuple[str, ...] = ()


@dataclass
class Ledger:
    """Every result sent, every result the API confirmed (201 or 200) and every answer."""

    sent: dict[tuple[str, str], int] = field(default_factory=dict)
    confirmed: dict[ResultKey, int] = field(default_factory=dict)
    answers: list[Answer] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    # Error codes that are right answers in this run besides 503 `unavailable` (a result that
    # reaches its season after the close: `season_closed`), and whether no answer at all is too
    # (a web process killed under the request): the game server posts it again.
    tolerated: frozenset[str] = frozenset()
    unanswered_tolerated: bool = False
    # False: count the answers instead of keeping each (a long campaign gets millions).
    keep_answers: bool = True
    counts: Counter[int | None] = field(default_factory=Counter)
    codes: Counter[str] = field(default_factory=Counter)

    def record(self, body: Body, started: float, response: httpx.Response | Exception) -> Answer:
        items = body if isinstance(body, list) else [body]
        with self.lock:
            for item in items:
                self.sent[(item["match_id"], item["player_id"])] = item["points"]
        if isinstance(response, Exception):
            answer = Answer(started, time.monotonic(), None, None, body)
            waited = answer.finished - answer.started
            problem = f"no answer in {waited:.1f} s: {type(response).__name__}: {response}"
            self._add(answer, None if self.unanswered_tolerated else problem)
            return answer
        payload = _json(response)
        code = None
        if isinstance(payload, dict) and isinstance(payload.get("error"), dict):
            code = payload["error"].get("code")
        answer = Answer(started, time.monotonic(), response.status_code, code, body)
        if response.status_code in (200, 201) and code is None:
            outcomes = payload if isinstance(body, list) else [payload]
            answer = dataclasses.replace(answer, outcomes=self._confirm(items, outcomes, response))
            single = {201: ("accepted",), 200: ("duplicate",)}[response.status_code]
            if not isinstance(body, list) and answer.outcomes != single:
                self.note(f"{response.status_code} for a result {answer.outcomes}")
            self._add(answer, None)
        elif (response.status_code == 503 and code == "unavailable") or code in self.tolerated:
            self._add(answer, None)
        else:
            self._add(answer, f"{response.status_code} {response.text[:500]}")
        return answer

    def _confirm(
        self, items: Sequence[dict[str, Any]], outcomes: Any, response: httpx.Response
    ) -> tuple[str, ...]:
        """Record the confirmed results; return each one's status."""
        if (
            not isinstance(outcomes, list)
            or len(outcomes) != len(items)
            or not all(isinstance(o, dict) for o in outcomes)
        ):
            self._add(None, f"{response.status_code} with a malformed body: {response.text[:500]}")
            return ()
        with self.lock:
            for item, outcome in zip(items, outcomes, strict=True):
                if outcome.get("status") not in ("accepted", "duplicate") or (
                    outcome.get("match_id"),
                    outcome.get("player_id"),
                    outcome.get("points"),
                ) != (item["match_id"], item["player_id"], item["points"]):
                    self.unexpected.append(f"outcome {outcome} does not answer {item}")
                    continue
                self.confirmed[(outcome["season"], item["match_id"], item["player_id"])] = item[
                    "points"
                ]
        return tuple(str(outcome.get("status")) for outcome in outcomes)

    def fail_on_unexpected(self) -> None:
        """Fail now, not at a later timeout, once the API answered something it should not."""
        with self.lock:
            if self.unexpected:
                raise AssertionError(
                    f"{len(self.unexpected)} unexpected answers, the first: {self.unexpected[:3]}"
                )

    def note(self, problem: str) -> None:
        self._add(None, problem)

    def unconfirmed(self) -> set[tuple[str, str]]:
        """(match_id, player_id) of results sent but never confirmed."""
        with self.lock:
            return self.sent.keys() - {(key[1], key[2]) for key in self.confirmed}

    def _add(self, answer: Answer | None, problem: str | None) -> None:
        with self.lock:
            if answer is not None:
                self.counts[answer.status] += 1
                if answer.code is not None:
                    self.codes[answer.code] += 1
                if self.keep_answers:
                    self.answers.append(answer)
            if problem is not None:
                self.unexpected.append(problem)

    def statuses(self) -> dict[int | None, int]:
        with self.lock:
            return dict(self.counts)

    def refused(self) -> list[Answer]:
        with self.lock:
            return [a for a in self.answers if a.status == 503]

    def confirmed_count(self) -> int:
        with self.lock:
            return len(self.confirmed)


def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


class GameServer:
    """One game server's HTTP client: posts results and records the answers in the ledger."""

    def __init__(self, base_url: str, key: str, ledger: Ledger, *, timeout: float = 15.0) -> None:
        self.ledger = ledger
        self.http = httpx.Client(
            base_url=base_url,
            headers={"Authorization": f"Api-Key {key}"},
            timeout=timeout,
        )

    def post(self, body: Body) -> Answer:
        started = time.monotonic()
        try:
            response: httpx.Response | Exception = self.http.post("/api/v1/scores", json=body)
        except httpx.HTTPError as exc:
            response = exc
        return self.ledger.record(body, started, response)


class Results:
    """Fresh results: unique match ids, players drawn from a pool so totals change often."""

    def __init__(self, *, players: int, seed: int, player_prefix: str = "p") -> None:
        self.players = [f"{player_prefix}{i}" for i in range(players)]
        self.random = random.Random(seed)
        self.lock = threading.Lock()
        self.matches = itertools.count()

    def batch(self, size: int) -> list[dict[str, Any]]:
        """One match that just ended (a player twice in it played two rounds). The end time is
        explicit, so posting the batch again resolves the same season whenever it arrives."""
        with self.lock:
            match = next(self.matches)
            players = self.random.sample(self.players, min(size, len(self.players)))
            while len(players) < size:
                players.append(self.random.choice(self.players))
            ended_at = datetime.now(UTC).isoformat()
            return [
                {
                    "player_id": player,
                    "points": self.random.randint(1, 1000),
                    "match_id": f"m{match}-r{index}",
                    "ended_at": ended_at,
                }
                for index, player in enumerate(players)
            ]

    def single(self) -> dict[str, Any]:
        return self.batch(1)[0]


class Ingest:
    """Threads posting bodies from `next_body(thread)` until stopped or `limit` bodies each.

    With `retry`, a body refused with 503 is posted again until confirmed, as the API asks a
    game server to do; a body still refused after `retry_for` seconds is reported unexpected.
    """

    def __init__(
        self,
        *,
        servers: Sequence[GameServer],
        next_body: Callable[[int], Body],
        limit: int | None = None,
        pause: float = 0.0,
        retry: bool = False,
        retry_for: float = 30.0,
    ) -> None:
        self.servers = servers
        self.next_body = next_body
        self.limit = limit
        self.pause = pause
        self.retry = retry
        self.retry_for = retry_for
        self.stopping = threading.Event()
        self.threads = [
            threading.Thread(target=self._run, args=(i,), name=f"ingest-{i}", daemon=True)
            for i in range(len(servers))
        ]
        self.errors: list[BaseException] = []

    def _run(self, index: int) -> None:
        server = self.servers[index]
        try:
            for _ in itertools.count() if self.limit is None else range(self.limit):
                if self.stopping.is_set():
                    return
                self._post(server, self.next_body(index))
                if self.pause:
                    time.sleep(self.pause)
        except BaseException as exc:  # reported by stop(): a thread must not fail silently
            self.errors.append(exc)

    def _post(self, server: GameServer, body: Body) -> None:
        give_up = time.monotonic() + self.retry_for
        answer = server.post(body)
        while self.retry and answer.status == 503:
            if time.monotonic() > give_up:
                server.ledger.note(f"still refused after {self.retry_for:.0f} s: {body}")
                return
            time.sleep(0.2)
            answer = server.post(body)

    def __enter__(self) -> Ingest:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def done(self) -> bool:
        return not any(thread.is_alive() for thread in self.threads)

    def wait_until_done(self, *, timeout: float) -> None:
        """Wait for every thread to post its `limit` bodies."""
        wait_until(self.done, timeout=timeout, what="the ingest threads posting all they had")

    def stop(self, timeout: float = 40.0) -> None:
        self.stopping.set()
        deadline = time.monotonic() + timeout
        for thread in self.threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        alive = [t.name for t in self.threads if t.is_alive()]
        if alive:
            raise Timeout(f"ingest threads {alive} still posting {timeout:.0f} s after the stop")
        if self.errors:
            raise AssertionError(f"an ingest thread failed: {self.errors[0]!r}")

    def wait_for_confirmed(self, ledger: Ledger, count: int, *, timeout: float) -> None:
        def enough() -> bool:
            ledger.fail_on_unexpected()
            return ledger.confirmed_count() >= count

        wait_until(
            enough,
            timeout=timeout,
            what=lambda: (
                f"{count} results confirmed (so far {ledger.confirmed_count()}, "
                f"answers {ledger.statuses()}, unexpected {ledger.unexpected[:3]})"
            ),
        )
