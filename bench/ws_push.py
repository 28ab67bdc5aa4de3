"""Live push benchmark: `python -m bench.ws_push [--sockets 1000 | --ten-thousand]`.

Starts its own web processes (uvicorn) and Celery worker as the Procfile runs them (2 and 4),
and a broker (a private redis-server), on its own database (`leaderboard_bench_ws`) and key
prefixes; fills the board through the REST API, opens N WebSockets that each follow one player,
and posts results for those players on a fixed schedule (20 a second, one result a request),
in two phases:

- idle: this probe is the service's only writer;
- under load: an open-loop sender (bench/openloop.py) meanwhile offers the service's peak write
  load, 6,000 results a second in batches of 100, for the board's other players in the same
  season, so the mirror and every ticker have work (target: p99 under 1 s, none lost).

For each phase: the delay from a result's commit (its POST answered) to the push that carries
the player's new points, p50/p99/max, and from the POST being sent, as an upper bound; pushes
not received within 5 s ("lost"); the messages the sockets got; the CPU of the web and worker
processes and of the rest of the machine. Under load also the results accepted a second,
counted in PostgreSQL, and the sender's own figures. Once: the web processes' memory per open
socket (their RSS with N sockets minus before, over N).

Results go to bench/results/ws_push-latest.json and ws_push-<N>.json; logs to
bench/results/logs/ws_push/.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import math
import os
import random
import resource
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlparse, urlunparse

import httpx
from psycopg import sql
from websockets.asyncio.client import connect

from .environment import DEFAULT_REDIS_URL, database_create, django_setup, server_env
from .errors import BenchError
from .machine import python_probe_ms
from .openloop import OfferedLoad, OpenLoopSender
from .options import RESULTS
from .processes import (
    Processes,
    Started,
    group_pids,
    redis_start,
    stop_on_sigterm,
    web_start,
    worker_start,
)
from .stats import latency_summary
from .window import Window

LOGS = RESULTS / "logs" / "ws_push"
DATABASE = "leaderboard_bench_ws"
KEY_PREFIX = "bench-ws:lb:"
DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/leaderboard"
BATCH = 1000  # results per POST while filling the board (the API's largest batch)
CONNECTING_AT_ONCE = 200  # handshakes in flight while the sockets open
# A push that has not arrived this long after its result's commit counts as lost.
LOST_AFTER_SECONDS = 5.0
# The probe starts this long after the load, once the sender's connections are open.
LOAD_SETTLE_SECONDS = 2.0
# The target under load, at 10,000 sockets.
TARGET_P99_MS = 1000.0
LOOP_LAG_INTERVAL_SECONDS = 0.05
# The probe's unanswered POSTs at most, and how long one may take.
PROBE_IN_FLIGHT = 32
PROBE_TIMEOUT_SECONDS = 30.0


@dataclass(frozen=True)
class Options:
    sockets: int
    board_players: int
    rate: float
    seconds: float
    load_rate: float
    load_batch: int
    load_senders: int
    load_seconds: float
    top: int
    max_points: int
    web_workers: int
    worker_concurrency: int
    compression: bool
    seed: int
    outputs: tuple[Path, ...]

    @property
    def load_players(self) -> int:
        """The board's players the sockets do not follow: `p0` ... , the load's players."""
        return self.board_players - self.sockets


def options_parse(argv: list[str] | None) -> Options:
    parser = argparse.ArgumentParser(prog="python -m bench.ws_push", description=__doc__)
    parser.add_argument("--sockets", type=int, default=1000, help="open sockets (default 1000)")
    parser.add_argument(
        "--ten-thousand", action="store_true", help="10,000 sockets (the issue's target)"
    )
    parser.add_argument(
        "--board-players",
        type=int,
        default=0,
        help="players on the board, the followed ones included (default: 20,000 or 2x sockets)",
    )
    parser.add_argument(
        "--rate", type=float, default=20.0, help="probe results posted per second, each phase"
    )
    parser.add_argument("--seconds", type=float, default=20.0, help="idle phase: how long")
    parser.add_argument(
        "--load-rate", type=float, default=6000.0, help="results per second the load offers"
    )
    parser.add_argument("--load-batch", type=int, default=100, help="results per load request")
    parser.add_argument("--load-senders", type=int, default=8, help="the load's connections")
    parser.add_argument(
        "--load-seconds", type=float, default=60.0, help="load phase: how long (0: no load phase)"
    )
    parser.add_argument("--top", type=int, default=10, help="top K each socket follows")
    parser.add_argument(
        "--max-points", type=int, default=500, help="largest points of one probe result"
    )
    parser.add_argument("--web-workers", type=int, default=2, help="uvicorn workers (Procfile)")
    parser.add_argument(
        "--worker-concurrency", type=int, default=4, help="Celery concurrency (Procfile)"
    )
    parser.add_argument(
        "--no-compression",
        action="store_true",
        help="clients do not offer permessage-deflate (browsers do; it costs server memory)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--output",
        type=Path,
        help="results file (default: bench/results/ws_push-latest.json and ws_push-<N>.json)",
    )
    args = parser.parse_args(argv)
    sockets = 10_000 if args.ten_thousand else args.sockets
    if sockets < 1 or args.rate <= 0 or args.seconds <= 0:
        parser.error("--sockets, --rate and --seconds must be positive")
    if args.load_seconds < 0 or (
        args.load_seconds and (args.load_rate <= 0 or args.load_batch < 1 or args.load_senders < 1)
    ):
        parser.error("--load-rate, --load-batch and --load-senders must be positive")
    if args.load_seconds and args.load_seconds <= LOAD_SETTLE_SECONDS:
        parser.error(f"--load-seconds must be 0 or more than {LOAD_SETTLE_SECONDS:g}")
    board_players = max(args.board_players or max(20_000, 2 * sockets), sockets)
    if args.load_seconds and board_players - sockets < args.load_batch:
        parser.error("--board-players must leave at least --load-batch players unfollowed")
    outputs = (
        (args.output,)
        if args.output
        else (RESULTS / "ws_push-latest.json", RESULTS / f"ws_push-{sockets}.json")
    )
    return Options(
        sockets=sockets,
        board_players=board_players,
        rate=args.rate,
        seconds=args.seconds,
        load_rate=args.load_rate,
        load_batch=args.load_batch,
        load_senders=args.load_senders,
        load_seconds=args.load_seconds,
        top=args.top,
        max_points=args.max_points,
        web_workers=args.web_workers,
        worker_concurrency=args.worker_concurrency,
        compression=not args.no_compression,
        seed=args.seed,
        outputs=outputs,
    )


@dataclass(frozen=True)
class Environment:
    database_url: str
    redis_url: str
    broker_url: str

    def variables(self) -> dict[str, str]:
        return {
            "DJANGO_SETTINGS_MODULE": "config.settings.local",
            "DATABASE_URL": self.database_url,
            "REDIS_URL": self.redis_url,
            "CELERY_BROKER_URL": self.broker_url,
            "LEADERBOARD_KEY_PREFIX": KEY_PREFIX,
            # One client posts everything: per-client limits would measure the throttle.
            "THROTTLE_PUBLIC_RATE": "",
            "THROTTLE_GAME_SERVER_RATE": "",
            # Every socket comes from this one client too: no cap per address.
            "LIVE_SOCKETS_PER_ADDRESS": "0",
            "DEBUG": "false",
            "LOG_LEVEL": "WARNING",
        }

    def process_env(self) -> dict[str, str]:
        return server_env(self.variables())


@dataclass(frozen=True)
class Prepared:
    season_id: int
    board: str
    season: str
    api_key: str


def django_prepare(env: Environment, *, run_seconds: float) -> Prepared:
    """Migrate the bench database, empty it and its keys, and check that the board's running
    season takes results for the whole run; returns it and a game-server key."""
    django_setup(env.variables())
    from django.core.cache import cache
    from django.core.management import call_command
    from django.db import connection
    from django.utils import timezone

    from leaderboards import store
    from leaderboards.services import season_rebuild_standings
    from matches.models import GameServer, MatchResult, Player, PlayerTotal
    from seasons.models import SeasonStatus
    from seasons.selectors import season_get

    tables = [model._meta.db_table for model in (MatchResult, PlayerTotal, Player)]
    with connection.cursor() as cursor:
        cursor.execute(
            sql.SQL("TRUNCATE {} CASCADE")
            .format(sql.SQL(", ").join(sql.Identifier(t) for t in tables))
            .as_string(connection.connection)
        )
    store.delete_prefixed_keys()
    cache.delete_pattern("*")
    call_command("bootstrap", verbosity=0)
    season = season_get(board_slug=None, season_slug=None)
    # Its keys were just deleted: to the service that is a season lost with its Redis (reads
    # 503 until it is rebuilt), so it starts rebuilt from the emptied tables, as a deployment
    # that lost its Redis would be.
    season_rebuild_standings(season=season)
    # The sockets follow the season running when they connect: one that ends mid-run would
    # send them `season_closed` and take the load's results into the next season.
    until = timezone.now() + timedelta(seconds=run_seconds)
    if season.status != SeasonStatus.RUNNING or season.ends_at <= until:
        raise BenchError(
            f"season '{season.slug}' of board '{season.board.slug}' ends at "
            f"{season.ends_at.isoformat()}, before this run would; run it after that"
        )
    _, key = GameServer.objects.create_key(name=f"bench-ws-{uuid.uuid4().hex[:8]}")
    return Prepared(season_id=season.pk, board=season.board.slug, season=season.slug, api_key=key)


def board_size(season_id: int) -> int:
    from leaderboards import store

    return store.board_size(season_id)


def results_received(match_prefix: str, since: datetime, until: datetime) -> dict[str, Any]:
    """Results committed with ids starting `match_prefix` between `since` and `until`, in all
    and second by second (the load's accepted results, counted where they are confirmed)."""
    from django.db import connection
    from django.db.models import Count
    from django.db.models.functions import TruncSecond

    from matches.models import MatchResult

    try:
        rows = (
            MatchResult.objects.filter(
                match_id__startswith=match_prefix, received_at__gte=since, received_at__lt=until
            )
            .annotate(second=TruncSecond("received_at"))
            .values("second")
            .annotate(results=Count("id"))
            .order_by("second")
        )
        # Whole wall-clock seconds, counted from the one the load started in.
        first = math.floor(since.timestamp())
        per_second = [[int(row["second"].timestamp()) - first, row["results"]] for row in rows]
        later = MatchResult.objects.filter(
            match_id__startswith=match_prefix, received_at__gte=until
        ).count()
    finally:
        connection.close()
    seconds = (until - since).total_seconds()
    accepted = sum(results for _, results in per_second)
    return {
        "seconds": round(seconds, 3),
        "accepted_results": accepted,
        "accepted_results_per_s": round(accepted / seconds, 1),
        # Requests still in flight when the sender stopped, committed after the window.
        "accepted_after_window": later,
        "per_second": per_second,
    }


def rss_kib(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        with contextlib.suppress(FileNotFoundError), open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
    return total


def wait_until(check: Any, what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise BenchError(f"{what}: not within {timeout:.0f} s")
        time.sleep(0.2)


def board_fill(web: Started, key: str, options: Options, rng: random.Random) -> list[str]:
    """Post one result for every player on the board; returns the followed players' ids.

    The followed players are `ws0` ...; the others are `p0` ..., the ids the load writes."""
    followed = [f"ws{i}" for i in range(options.sockets)]
    others = [f"p{i}" for i in range(options.load_players)]
    everyone = followed + others
    rng.shuffle(everyone)
    headers = {"Authorization": f"Api-Key {key}"}
    with httpx.Client(base_url=web.url, headers=headers, timeout=60) as client:
        for start in range(0, len(everyone), BATCH):
            body = [
                {"player_id": p, "points": rng.randint(1, 100_000), "match_id": f"fill-{p}"}
                for p in everyone[start : start + BATCH]
            ]
            response = client.post("/api/v1/scores", json=body)
            if response.status_code != 200:
                raise BenchError(f"filling the board: {response.status_code} {response.text}")
    return followed


@dataclass
class Listener:
    """Every socket's messages: when each player's new points arrived, and counts by type."""

    arrivals: dict[tuple[str, int], float] = field(default_factory=dict)
    by_type: dict[str, int] = field(default_factory=dict)
    snapshots: int = 0
    closed: int = 0

    async def follow(self, ws: Any) -> None:
        with contextlib.suppress(Exception):
            async for raw in ws:
                now = time.monotonic()
                message = json.loads(raw)
                kind = message["type"]
                self.by_type[kind] = self.by_type.get(kind, 0) + 1
                if kind == "snapshot":
                    self.snapshots += 1
                elif kind == "player" and message["points"] is not None:
                    self.arrivals.setdefault((message["player_id"], message["points"]), now)
        self.closed += 1


class LoopLag:
    """How late the harness's event loop runs a timer. The sockets' arrival times are taken on
    this loop, which shares the machine's cores with the servers, so its lag is part of every
    measured push delay."""

    def __init__(self) -> None:
        self.samples: list[float] = []
        self.task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        while True:
            asked = time.monotonic()
            await asyncio.sleep(LOOP_LAG_INTERVAL_SECONDS)
            late = time.monotonic() - asked - LOOP_LAG_INTERVAL_SECONDS
            self.samples.append(late * 1000)

    def start(self) -> LoopLag:
        self.task = asyncio.create_task(self._run())
        return self

    async def stop(self) -> dict[str, object]:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task
        return latency_summary(self.samples)


async def sockets_open(
    url: str, players: list[str], options: Options, listener: Listener
) -> tuple[list[Any], list[asyncio.Task[None]]]:
    ws_url = url.replace("http://", "ws://")
    gate = asyncio.Semaphore(CONNECTING_AT_ONCE)
    sockets: list[Any] = []
    tasks: list[asyncio.Task[None]] = []

    async def open_one(player_id: str) -> None:
        async with gate:
            ws = await connect(
                f"{ws_url}/ws/v1/leaderboard/global/?top={options.top}&player_id={player_id}",
                origin=url,
                compression="deflate" if options.compression else None,
                open_timeout=60,
                ping_interval=None,
            )
        sockets.append(ws)
        tasks.append(asyncio.create_task(listener.follow(ws)))

    await asyncio.gather(*(open_one(p) for p in players))
    return sockets, tasks


@dataclass
class Posted:
    player_id: str
    total: int
    sent_at: float
    committed_at: float


class MirrorWatch:
    """Notes when each posted total reached the season's sorted set, polling from a thread of
    its own, so the push delay splits into the mirror's part and the live ticker's part."""

    def __init__(self, season_id: int) -> None:
        self.season_id = season_id
        self.pending: dict[str, int] = {}
        self.mirrored_at: dict[tuple[str, int], float] = {}
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._poll, name="mirror-watch", daemon=True)

    def expect(self, player_id: str, total: int) -> None:
        with self.lock:
            self.pending[player_id] = max(self.pending.get(player_id, 0), total)

    def _poll(self) -> None:
        from leaderboards import store
        from seasons.scoring import points_of

        while not self.done.is_set() or self.pending:
            with self.lock:
                waiting = dict(self.pending)
            if waiting:
                players = list(waiting)
                scores = store.scores_of(self.season_id, players)
                now = time.monotonic()
                with self.lock:
                    for player_id, score in zip(players, scores, strict=True):
                        total = waiting[player_id]
                        if score is not None and points_of(score, lowest_first=False) >= total:
                            self.mirrored_at.setdefault((player_id, total), now)
                            if self.pending.get(player_id) == total:
                                del self.pending[player_id]
            time.sleep(0.005)

    def __enter__(self) -> MirrorWatch:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.thread.join(timeout=10)


class Probe:
    """Posts one result for a followed player every 1/rate seconds, the players in turn, so a
    player's next result comes long after its push is due. Like the load it is open-loop: each
    POST runs on a thread of its own and a slow answer delays neither the next post nor the end
    of the phase; at most PROBE_IN_FLIGHT are unanswered, a post due beyond that is counted as
    not sent. Each 201 starts that result's clock."""

    def __init__(
        self,
        *,
        web: Started,
        api_key: str,
        rotation: Iterator[str],
        options: Options,
        rng: random.Random,
        mirror: MirrorWatch,
    ) -> None:
        self.rotation = rotation
        self.options = options
        self.rng = rng
        self.mirror = mirror
        self.posted: list[Posted] = []
        self.answers: Counter[str] = Counter()
        self.not_sent = 0
        self.in_flight = 0
        self.lock = threading.Lock()
        self.client = httpx.Client(
            base_url=web.url,
            headers={"Authorization": f"Api-Key {api_key}"},
            timeout=PROBE_TIMEOUT_SECONDS,
            limits=httpx.Limits(max_connections=PROBE_IN_FLIGHT),
        )
        self.pool = ThreadPoolExecutor(max_workers=PROBE_IN_FLIGHT, thread_name_prefix="probe")

    def __enter__(self) -> Probe:
        return self

    def __exit__(self, *exc: object) -> None:
        self.finish()

    def post_for(self, seconds: float) -> None:
        """Post on the fixed schedule for `seconds` (blocking), then return at once."""
        interval = 1.0 / self.options.rate
        due = time.monotonic()
        deadline = due + seconds
        while (now := time.monotonic()) < deadline:
            if now < due:
                time.sleep(min(due, deadline) - now)
                continue
            due += interval
            with self.lock:
                if self.in_flight >= PROBE_IN_FLIGHT:
                    self.not_sent += 1
                    continue
                self.in_flight += 1
            self.pool.submit(
                self._post, next(self.rotation), self.rng.randint(1, self.options.max_points)
            )

    def finish(self) -> None:
        """Wait for the posts in flight (each bounded by its timeout)."""
        self.pool.shutdown(wait=True)
        self.client.close()

    def _post(self, player_id: str, points: int) -> None:
        answer = "error"
        try:
            sent_at = time.monotonic()
            response = self.client.post(
                "/api/v1/scores",
                json={"player_id": player_id, "points": points, "match_id": uuid.uuid4().hex},
            )
            committed_at = time.monotonic()
            answer = str(response.status_code)
            if response.status_code == 201:
                total = response.json()["total_points"]
                self.mirror.expect(player_id, total)
                with self.lock:
                    self.posted.append(Posted(player_id, total, sent_at, committed_at))
        except httpx.TimeoutException:
            answer = "timeout"
        except httpx.HTTPError as exc:
            answer = type(exc).__name__
        finally:
            with self.lock:
                self.answers[answer] += 1
                self.in_flight -= 1

    def figures(self) -> dict[str, Any]:
        post_ms = [(p.committed_at - p.sent_at) * 1000 for p in self.posted]
        return {
            "posted": len(self.posted),
            "probe_answers": dict(sorted(self.answers.items())),
            "probe_not_sent": self.not_sent,
            "probe_post": latency_summary(post_ms),
        }


def pushes_summary(probe: Probe, listener: Listener, mirror: MirrorWatch) -> dict[str, Any]:
    """Each probe result's push delay, and the pushes lost (none within LOST_AFTER_SECONDS)."""
    commit_to_push: list[float] = []
    send_to_push: list[float] = []
    commit_to_mirror: list[float] = []
    mirror_to_push: list[float] = []
    superseded = lost = 0
    latest: dict[str, int] = {}
    for p in probe.posted:
        latest[p.player_id] = max(latest.get(p.player_id, 0), p.total)
    for p in probe.posted:
        arrived = listener.arrivals.get((p.player_id, p.total))
        mirrored = mirror.mirrored_at.get((p.player_id, p.total))
        if mirrored is not None:
            commit_to_mirror.append((mirrored - p.committed_at) * 1000)
        if arrived is not None:
            commit_to_push.append((arrived - p.committed_at) * 1000)
            send_to_push.append((arrived - p.sent_at) * 1000)
            if mirrored is not None:
                mirror_to_push.append((arrived - mirrored) * 1000)
            if arrived - p.committed_at > LOST_AFTER_SECONDS:
                lost += 1
        elif latest[p.player_id] > p.total:
            superseded += 1  # a newer total of the same player replaced it before it was sent
        else:
            lost += 1
    return {
        **probe.figures(),
        "pushed": len(commit_to_push),
        "superseded": superseded,
        "lost": lost,
        "lost_after_seconds": LOST_AFTER_SECONDS,
        "commit_to_push": latency_summary(commit_to_push),
        "send_to_push": latency_summary(send_to_push),
        # The two parts of commit_to_push: the Celery mirror's, then the live ticker's (seen
        # by polling the sorted set every 5 ms, so each part is within about 5 ms).
        "commit_to_mirror": latency_summary(commit_to_mirror),
        "mirror_to_push": latency_summary(mirror_to_push),
    }


@dataclass
class Phase:
    """What a phase shares: the servers, the sockets' listener and the probe's player order."""

    web: Started
    worker: Started
    prepared: Prepared
    listener: Listener
    rotation: Iterator[str]
    options: Options
    rng: random.Random

    def probe(self, mirror: MirrorWatch) -> Probe:
        return Probe(
            web=self.web,
            api_key=self.prepared.api_key,
            rotation=self.rotation,
            options=self.options,
            rng=self.rng,
            mirror=mirror,
        )

    def offered_load(self, match_prefix: str) -> OfferedLoad:
        return OfferedLoad(
            url=self.web.url,
            api_key=self.prepared.api_key,
            board=self.prepared.board,
            season=self.prepared.season,
            rate=self.options.load_rate,
            batch=self.options.load_batch,
            players=self.options.load_players,
            match_prefix=match_prefix,
            senders=self.options.load_senders,
        )


class PhaseMeters:
    """What a phase measures besides the pushes: the messages the sockets got, the sockets the
    server closed, the harness's loop lag, and the CPU and load average while it posted."""

    def __init__(self, phase: Phase) -> None:
        self.listener = phase.listener
        self.started = time.monotonic()
        self.messages_before = dict(self.listener.by_type)
        self.closed_before = self.listener.closed
        self.lag = LoopLag().start()
        self.load_before = os.getloadavg()[0]
        self.load_after = 0.0
        self.window = Window(cpu_groups={"web": phase.web.pid, "worker": phase.worker.pid})
        self.window.start()
        self.cpu: dict[str, float] = {}

    def posting_stopped(self) -> None:
        self.window.load_stopped()
        self.cpu = self.window.cpu
        self.cpu.pop("wrk", None)  # the harness's waited-for children: it starts none here
        self.load_after = os.getloadavg()[0]

    async def figures(self) -> dict[str, Any]:
        seconds = time.monotonic() - self.started
        counts = {
            kind: n - self.messages_before.get(kind, 0) for kind, n in self.listener.by_type.items()
        }
        counts = {kind: n for kind, n in counts.items() if n}
        return {
            "messages": {
                "by_type": counts,
                "per_second": round(sum(counts.values()) / seconds, 1),
            },
            # A socket whose client reads too slowly is closed by the server (4408).
            "sockets_closed_by_server": self.listener.closed - self.closed_before,
            # Everything shares the machine's cores: the harness (the sockets' client, the
            # probe, the load's sender), the web processes, the worker, Redis and PostgreSQL,
            # and whatever else runs ("other").
            "cpu_cores": self.cpu,
            "harness_loop_lag": await self.lag.stop(),
            "load_average_1m": {"before": self.load_before, "after": self.load_after},
        }


async def phase_idle(phase: Phase) -> dict[str, Any]:
    """The probe alone, as the service's only writer."""
    seconds = phase.options.seconds
    meters = PhaseMeters(phase)
    with MirrorWatch(phase.prepared.season_id) as mirror, phase.probe(mirror) as probe:
        await asyncio.to_thread(probe.post_for, seconds)
        meters.posting_stopped()
        await asyncio.to_thread(probe.finish)
        await asyncio.sleep(LOST_AFTER_SECONDS + 1)  # until the last push is due
    return {
        "seconds": seconds,
        "probe_rate_per_second": phase.options.rate,
        **pushes_summary(probe, phase.listener, mirror),
        **await meters.figures(),
    }


async def phase_under_load(phase: Phase) -> dict[str, Any]:
    """The probe while the open-loop sender offers the peak write load to the same season."""
    options = phase.options
    probe_seconds = options.load_seconds - LOAD_SETTLE_SECONDS
    match_prefix = f"load-{uuid.uuid4().hex[:8]}"
    meters = PhaseMeters(phase)
    since = datetime.now(UTC)
    sender = OpenLoopSender(phase.offered_load(match_prefix))
    sent: dict[str, Any] | None = None
    try:
        await asyncio.to_thread(sender.start)
        await asyncio.sleep(LOAD_SETTLE_SECONDS)
        with MirrorWatch(phase.prepared.season_id) as mirror, phase.probe(mirror) as probe:
            await asyncio.to_thread(probe.post_for, probe_seconds)
            until = datetime.now(UTC)
            meters.posting_stopped()
            sent = await asyncio.to_thread(sender.stop)
            await asyncio.to_thread(probe.finish)
            await asyncio.sleep(LOST_AFTER_SECONDS + 1)  # until the last push is due
    except RuntimeError as exc:  # the sender's own failures (see bench/openloop.py)
        raise BenchError(f"the load's sender: {exc} ({exc.__cause__})") from exc
    finally:
        if sent is None:
            with contextlib.suppress(RuntimeError):
                await asyncio.to_thread(sender.stop)
    pushes = pushes_summary(probe, phase.listener, mirror)
    accepted = await asyncio.to_thread(results_received, match_prefix, since, until)
    answered_2xx = sum(n for status, n in sent["answers"].items() if status.startswith("2"))
    p99 = pushes["commit_to_push"].get("p99_ms")
    return {
        "seconds": probe_seconds,
        "probe_rate_per_second": options.rate,
        **pushes,
        "target": {
            "p99_ms_at_most": TARGET_P99_MS,
            "lost": 0,
            "met": p99 is not None and p99 <= TARGET_P99_MS and pushes["lost"] == 0,
            "at_sockets": 10_000,
        },
        "load": {
            "offered_results_per_s": options.load_rate,
            "batch": options.load_batch,
            "senders": options.load_senders,
            "players": options.load_players,
            "match_prefix": match_prefix,
            **accepted,
            # The same from the client's side: results in requests answered 2xx, in all.
            "accepted_results_by_answers": answered_2xx * options.load_batch,
            "sender": sent,
        },
        **await meters.figures(),
    }


async def measure(
    web: Started, worker: Started, prepared: Prepared, players: list[str], options: Options
) -> dict[str, Any]:
    rng = random.Random(options.seed + 1)
    listener = Listener()
    # Warm the processes up (imports, the ticker, connection pools) before the baseline.
    warm, warm_tasks = await sockets_open(web.url, players[:10], options, listener)
    await asyncio.sleep(1)
    for ws in warm:
        await ws.close()
    await asyncio.gather(*warm_tasks)
    await asyncio.sleep(1)
    listener = Listener()
    rss_before = rss_kib(group_pids(web.pid))

    opening = time.monotonic()
    sockets, tasks = await sockets_open(web.url, players, options, listener)
    deadline = time.monotonic() + 120
    while listener.snapshots < len(players) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    opened_seconds = time.monotonic() - opening
    await asyncio.sleep(2)
    rss_after = rss_kib(group_pids(web.pid))

    order = list(players)
    rng.shuffle(order)
    phase = Phase(
        web=web,
        worker=worker,
        prepared=prepared,
        listener=listener,
        rotation=itertools.cycle(order),
        options=options,
        rng=rng,
    )
    print(
        f"[ws_push] idle phase: probe {options.rate:g} results/s for {options.seconds:g} s",
        flush=True,
    )
    phases = {"idle": await phase_idle(phase)}
    if options.load_seconds:
        print(
            f"[ws_push] load phase: {options.load_rate:,.0f} results/s offered in batches of "
            f"{options.load_batch} for {options.load_seconds:g} s",
            flush=True,
        )
        phases["under_load"] = await phase_under_load(phase)
    closed_by_server = listener.closed
    for ws in sockets:
        await ws.close()
    await asyncio.gather(*tasks)

    return {
        "sockets": len(players),
        "snapshots": listener.snapshots,
        "open_seconds": round(opened_seconds, 2),
        "closed_by_server": closed_by_server,
        "web_rss_before_mib": round(rss_before / 1024, 1),
        "web_rss_with_sockets_mib": round(rss_after / 1024, 1),
        "web_memory_per_socket_kib": round((rss_after - rss_before) / len(players), 2),
        "phases": phases,
    }


def raise_open_files_limit(sockets: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = min(hard, max(soft, sockets + 1024))
    resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    if wanted < sockets + 100:
        raise BenchError(f"the open-files limit ({hard}) is too low for {sockets} sockets")


def phase_line(name: str, figures: dict[str, Any]) -> str:
    commit = figures["commit_to_push"]
    failed = sum(n for answer, n in figures["probe_answers"].items() if answer != "201")
    return (
        f"[ws_push] {name}: {figures['pushed']}/{figures['posted']} pushes, commit to push "
        f"p50 {commit.get('p50_ms', 0):.0f} ms, p99 {commit.get('p99_ms', 0):.0f} ms, "
        f"max {commit.get('max_ms', 0):.0f} ms; lost {figures['lost']}"
        f" (not within {LOST_AFTER_SECONDS:g} s); probe POSTs failed {failed}, not sent "
        f"{figures['probe_not_sent']}; harness loop lag p99 "
        f"{figures['harness_loop_lag'].get('p99_ms', 0):.0f} ms; CPU cores "
        + ", ".join(f"{part} {cores:.2f}" for part, cores in figures["cpu_cores"].items())
    )


def report(options: Options, figures: dict[str, Any]) -> None:
    phases = figures["phases"]
    print(phase_line("idle", phases["idle"]), flush=True)
    if "under_load" in phases:
        during = phases["under_load"]
        load = during["load"]
        verdict = "met" if during["target"]["met"] else "missed"
        print(
            phase_line(f"during {options.load_rate:,.0f} results/s", during)
            + f"; accepted {load['accepted_results_per_s']:,.0f} results/s; target p99 "
            f"under {TARGET_P99_MS:,.0f} ms, none lost: {verdict} at {options.sockets} sockets",
            flush=True,
        )
    print(
        f"[ws_push] {figures['web_memory_per_socket_kib']:.1f} KiB per socket; written to "
        + ", ".join(str(path) for path in options.outputs),
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    options = options_parse(argv)
    stop_on_sigterm()
    rng = random.Random(options.seed)
    try:
        raise_open_files_limit(options.sockets)
        base = os.environ.get("DATABASE_URL", DEFAULT_DATABASE_URL)
        database_url = urlunparse(urlparse(base)._replace(path=f"/{DATABASE}"))
        database_create(database_url, DATABASE)
        with Processes(LOGS) as processes:
            broker_url = redis_start(processes, name="broker").url
            env = Environment(
                database_url=database_url,
                redis_url=os.environ.get("REDIS_URL", DEFAULT_REDIS_URL),
                broker_url=broker_url,
            )
            # The fill, the sockets and the waits take a few minutes: 15 is a wide margin.
            prepared = django_prepare(env, run_seconds=options.seconds + options.load_seconds + 900)
            process_env = env.process_env()
            worker = worker_start(processes, process_env, concurrency=options.worker_concurrency)
            web = web_start(processes, process_env, name="web", workers=options.web_workers)
            print(f"[ws_push] filling the board with {options.board_players} players", flush=True)
            players = board_fill(web, prepared.api_key, options, rng)
            wait_until(
                lambda: board_size(prepared.season_id) >= options.board_players,
                "the mirror to catch up",
                300,
            )
            print(f"[ws_push] opening {options.sockets} sockets", flush=True)
            figures = asyncio.run(measure(web, worker, prepared, players, options))
    except BenchError as exc:
        print(f"[ws_push] ERROR: {exc}", file=sys.stderr, flush=True)
        return 2
    except KeyboardInterrupt:
        return 130
    result = {
        "benchmark": "ws_push",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {
            "cpus": os.cpu_count(),
            # A fixed Python loop (bench/machine.py) at the end: this shared machine's speed
            # varies by half between runs, and every figure here with it.
            "python_probe_ms": python_probe_ms(),
        },
        "options": {
            "sockets": options.sockets,
            "board_players": options.board_players,
            "rate_per_second": options.rate,
            "seconds": options.seconds,
            "load_rate_per_second": options.load_rate,
            "load_batch": options.load_batch,
            "load_senders": options.load_senders,
            "load_seconds": options.load_seconds,
            "top": options.top,
            "max_points": options.max_points,
            "web_workers": options.web_workers,
            "worker_concurrency": options.worker_concurrency,
            "permessage_deflate": options.compression,
        },
        **figures,
    }
    for path in options.outputs:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(result, indent=2) + "\n")
    report(options, figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
