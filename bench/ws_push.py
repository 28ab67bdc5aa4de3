"""Live push benchmark (bench/README.md, "Live push"): N WebSockets each follow one player while
results for those players are posted at a fixed rate, idle and then under the peak write load."""

from __future__ import annotations

import asyncio
import contextlib
import functools
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
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from websockets.asyncio.client import connect

from scripts import devservices, processes
from scripts.devservices import DEFAULT_DATABASE_URL, DEFAULT_REDIS_URL
from scripts.processes import CeleryWorker, WebServer
from scripts.receiver import Receiver

from . import core, environment
from .core import BenchError, latency_summary
from .machine import Window, python_probe_ms
from .openloop import OfferedLoad, OpenLoopSender, json_field
from .pgstats import results_by_second

DATABASE = "leaderboard_bench_ws"
KEY_PREFIX = "bench-ws:lb:"
FILL_BATCH = 1000  # results per POST while filling the board (the API's largest batch)
CONNECTING_AT_ONCE = 200  # handshakes in flight while the sockets open
LOST_AFTER_SECONDS = 5.0  # a push not here this long after its result's commit is lost
LOAD_SETTLE_SECONDS = 2.0  # the probe starts this long after the load (its connections open)
TARGET_P99_MS = 1000.0  # the target under load, at 10,000 sockets
LOOP_LAG_INTERVAL_SECONDS = 0.05
PROBE_IN_FLIGHT = 32  # the probe's unanswered POSTs at most
PROBE_TIMEOUT_SECONDS = 30.0
# The load: the peak write load (results a second, in batches, from senders), on the board's
# players no socket follows.
LOAD_RATE, LOAD_BATCH, LOAD_SENDERS = 6000.0, 100, 8
TOP = 10  # the top K each socket follows
MAX_POINTS = 500  # the largest points of one probe result
WEB_WORKERS, WORKER_CONCURRENCY = 2, 4  # as the Procfile runs them
OPTIONS = (
    ("--sockets", 1000, "open sockets"),
    ("--ten-thousand", False, "10,000 sockets (the issue's target)"),
    ("--rate", 20.0, "probe results posted a second, each phase"),
    ("--seconds", 20.0, "idle phase: how long"),
    ("--load-seconds", 60.0, "load phase: how long (0: no load phase)"),
    ("--no-webhooks", False, "register no webhook endpoint (the events' cost is the difference)"),
)
say = functools.partial(core.say, program="ws_push")


def options_check(options: Any) -> str | None:
    if options.sockets < 1 or options.rate <= 0 or options.seconds <= 0:
        return "--sockets, --rate and --seconds must be positive"
    if options.load_seconds < 0 or 0 < options.load_seconds <= LOAD_SETTLE_SECONDS:
        return f"--load-seconds must be 0 or more than {LOAD_SETTLE_SECONDS:g}"
    return None


def django_prepare(variables: dict[str, str], *, run_seconds: float) -> tuple[int, dict[str, str]]:
    """Migrate the bench database, empty it and its keys, and check that the board's running
    season takes results for the whole run: its id, and where and with what key to post."""
    environment.django_setup(variables)
    from django.core.cache import cache
    from django.core.management import call_command
    from django.db import connection
    from django.utils import timezone

    from leaderboards import store
    from leaderboards.services import season_rebuild_standings
    from matches.models import GameServer
    from seasons.models import SeasonStatus
    from seasons.selectors import season_get

    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE matches_matchresult, matches_playertotal, matches_player CASCADE")
    store.delete_prefixed_keys()
    cache.delete_pattern("*")
    call_command("bootstrap", verbosity=0)
    season = season_get(board_slug=None, season_slug=None)
    # Its keys were just deleted, as if Redis were lost: rebuilt, as a deployment would be.
    season_rebuild_standings(season=season)
    # A season that ends mid-run would send the sockets `season_closed`.
    ends_too_soon = season.ends_at <= timezone.now() + timedelta(seconds=run_seconds)
    if season.status != SeasonStatus.RUNNING or ends_too_soon:
        raise BenchError(
            f"season '{season.slug}' ends at {season.ends_at.isoformat()}, before this run would"
        )
    _, key = GameServer.objects.create_key(name=f"bench-ws-{uuid.uuid4().hex[:8]}")
    return season.pk, {"board": season.board.slug, "season": season.slug, "api_key": key}


def webhooks_register(receiver: Receiver, *, none: bool) -> None:
    """Two endpoints for every event (unless `none`): `receiver`, which takes every event, and
    one that is down (nothing listens at its port), as a deployment has its dead endpoints."""
    from webhooks.models import WebhookEndpoint, WebhookEvent

    WebhookEndpoint.objects.all().delete()
    WebhookEvent.objects.all().delete()  # an earlier run's
    for url in () if none else (receiver.url, f"http://127.0.0.1:{processes.free_port()}/down"):
        WebhookEndpoint.objects.create(url=url, secret=uuid.uuid4().hex, timeout_seconds=2)


def webhooks_figures(receiver: Receiver) -> dict[str, Any]:
    """What the webhooks were told in the run: events by type, and the deliveries' fate."""
    from django.db.models import Count

    from webhooks.models import WebhookDelivery, WebhookEndpoint, WebhookEvent

    events = WebhookEvent.objects.values_list("type").annotate(Count("pk"))
    deliveries = WebhookDelivery.objects.values_list("endpoint__url", "status")
    received = Counter(json.loads(r.body)["type"] for r in receiver.received)
    fate = {
        f"{'up' if url == receiver.url else 'down'} {status}": count
        for (url, status), count in Counter(deliveries).items()
    }
    return {"endpoints": WebhookEndpoint.objects.count(), "events_by_type": dict(events),
            "deliveries": fate, "received_by_type": dict(received)}  # fmt: skip


def results_received(match_prefix: str, since: datetime, until: datetime) -> dict[str, Any]:
    """Results committed with ids starting `match_prefix` between `since` and `until`, in all
    and by wall-clock second from the one the load started in, and those committed after."""
    from django.db import connection

    params = {"origin": math.floor(since.timestamp()), "end": until.timestamp()}
    params |= {"match": f"{match_prefix}%", "since": since}
    try:
        with connection.cursor() as cursor:
            where = "match_id LIKE %(match)s AND received_at >= %(since)s"
            rows = results_by_second(cursor, where, params)
    finally:
        connection.close()
    seconds = (until - since).total_seconds()
    per_second = [[int(second), count] for second, count, _ in rows if count]
    accepted = sum(count for _, count in per_second)
    return {
        "seconds": round(seconds, 3), "accepted_results": accepted,
        "accepted_results_per_s": round(accepted / seconds, 1),
        # Requests still in flight when the sender stopped, committed after the window.
        "accepted_after_window": sum(later for _, _, later in rows), "per_second": per_second,
    }  # fmt: skip


def open_files_allow(sockets: int) -> None:
    """Raise this process's open-files limit for `sockets` and the rest, or say it cannot."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = min(hard, max(soft, sockets + 1024))
    resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    if wanted < sockets + 100:
        raise BenchError(f"the open-files limit ({hard}) is too low for {sockets} sockets")


def board_fill(target: dict[str, str], options: Any, rng: random.Random) -> list[str]:
    """One result for every player on the board; returns the followed players' ids (`ws0` ...;
    the others are `p0` ..., the ids the load writes)."""
    followed = [f"ws{i}" for i in range(options.sockets)]
    everyone = followed + [f"p{i}" for i in range(options.load_players)]
    rng.shuffle(everyone)
    headers = {"Authorization": f"Api-Key {target['api_key']}"}
    with httpx.Client(base_url=target["url"], headers=headers, timeout=60) as client:
        for start in range(0, len(everyone), FILL_BATCH):
            body = [
                {"player_id": p, "points": rng.randint(1, 100_000), "match_id": f"fill-{p}"}
                for p in everyone[start : start + FILL_BATCH]
            ]
            if (response := client.post("/api/v1/scores", json=body)).status_code != 200:
                raise BenchError(f"filling the board: {response.status_code} {response.text}")
    return followed


class Listener:
    """Sockets following players: when each player's new points arrived, and counts by type."""

    def __init__(self) -> None:
        self.arrivals: dict[tuple[str, int], float] = {}
        self.by_type: Counter[str] = Counter()
        self.snapshots = self.closed = 0
        self.sockets: list[Any] = []
        self.tasks: list[asyncio.Task[None]] = []

    async def follow(self, ws: Any) -> None:
        with contextlib.suppress(Exception):
            async for raw in ws:
                now, message = time.monotonic(), json.loads(raw)
                self.by_type[message["type"]] += 1
                if message["type"] == "snapshot":
                    self.snapshots += 1
                elif message["type"] == "player" and message["points"] is not None:
                    self.arrivals.setdefault((message["player_id"], message["points"]), now)
        self.closed += 1

    async def open(self, url: str, players: list[str], board: str = "global") -> None:
        gate = asyncio.Semaphore(CONNECTING_AT_ONCE)
        ws_url = url.replace("http://", "ws://") + f"/ws/v1/leaderboard/{board}/"

        async def open_one(player_id: str) -> None:
            async with gate:
                # permessage-deflate offered, as browsers do.
                ws = await connect(
                    f"{ws_url}?top={TOP}&player_id={player_id}", origin=url,
                    compression="deflate", open_timeout=60, ping_interval=None,
                )  # fmt: skip
            self.sockets.append(ws)
            self.tasks.append(asyncio.create_task(self.follow(ws)))

        await asyncio.gather(*(open_one(p) for p in players))

    async def close(self) -> None:
        for ws in self.sockets:
            await ws.close()
        await asyncio.gather(*self.tasks)


async def loop_lag(samples: list[float]) -> None:
    """How late the harness's event loop runs a timer: the sockets' arrival times are taken on
    this loop, which shares the cores with the servers, so its lag is in every push delay."""
    while True:
        asked = time.monotonic()
        await asyncio.sleep(LOOP_LAG_INTERVAL_SECONDS)
        samples.append((time.monotonic() - asked - LOOP_LAG_INTERVAL_SECONDS) * 1000)


class MirrorWatch:
    """Notes when each posted total reached the season's sorted set, polling every 5 ms from a
    thread of its own, so the push delay splits into the mirror's part and the ticker's."""

    def __init__(self, season_id: int) -> None:
        self.season_id = season_id
        self.pending: dict[str, int] = {}
        self.mirrored_at: dict[tuple[str, int], float] = {}
        self.lock, self.done = threading.Lock(), threading.Event()
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
                scores = store.scores_of(self.season_id, list(waiting))
                now = time.monotonic()
                with self.lock:
                    for (player_id, total), score in zip(waiting.items(), scores, strict=True):
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


class Probe(OpenLoopSender):
    """One result a request for a followed player every 1/rate seconds, the players in turn, open
    loop like the load (at most PROBE_IN_FLIGHT unanswered); each 201 starts its result's clock."""

    max_in_flight = PROBE_IN_FLIGHT

    def __init__(self, load: OfferedLoad, rotation: Iterator[str], mirror: MirrorWatch) -> None:
        super().__init__(load, timeout=PROBE_TIMEOUT_SECONDS)
        self.rotation, self.mirror = rotation, mirror
        self.posted: list[tuple[str, int, float, float]] = []  # player, total, sent, committed

    def _items(self, rng: random.Random, index: int, sent: int) -> list[dict[str, Any]]:
        match_id = f"{self.load.match_prefix}-{uuid.uuid4().hex}"
        result = self._result(next(self.rotation), rng, match_id)
        return [result | {"points": rng.randint(1, MAX_POINTS)}]

    async def _answered(self, items: list[dict[str, Any]], status: int, answer: bytes,
                        sent: float, now: float) -> None:  # fmt: skip
        if status == 201 and (total := json_field(answer, "total_points")) is not None:
            self.mirror.expect(items[0]["player_id"], total)
            self.posted.append((items[0]["player_id"], total, sent, now))

    def pushes(self, listener: Listener) -> dict[str, Any]:
        """Each result's push delay, and the pushes lost (none within LOST_AFTER_SECONDS)."""
        names = ("commit_to_push", "send_to_push", "commit_to_mirror", "mirror_to_push")
        delays: dict[str, list[float]] = {name: [] for name in names}
        superseded = lost = 0
        latest: dict[str, int] = {}
        for player_id, total, _, _ in self.posted:
            latest[player_id] = max(latest.get(player_id, 0), total)
        for player_id, total, sent_at, committed_at in self.posted:
            arrived = listener.arrivals.get((player_id, total))
            mirrored = self.mirror.mirrored_at.get((player_id, total))
            if mirrored is not None:
                delays["commit_to_mirror"].append((mirrored - committed_at) * 1000)
            if arrived is not None:
                delays["commit_to_push"].append((arrived - committed_at) * 1000)
                delays["send_to_push"].append((arrived - sent_at) * 1000)
                if mirrored is not None:
                    delays["mirror_to_push"].append((arrived - mirrored) * 1000)
                lost += arrived - committed_at > LOST_AFTER_SECONDS
            elif latest[player_id] > total:
                superseded += 1  # a newer total of the same player replaced it before it was sent
            else:
                lost += 1
        return {
            "posted": len(self.posted), "probe_answers": self.figures["answers"],
            "probe_not_sent": self.figures["not_sent_on_time"],
            "probe_post": latency_summary([(c - s) * 1000 for _, _, s, c in self.posted]),
            "pushed": len(delays["commit_to_push"]), "superseded": superseded, "lost": lost,
            "lost_after_seconds": LOST_AFTER_SECONDS,
            # commit_to_mirror and mirror_to_push split commit_to_push: the Celery mirror's part,
            # then the live ticker's (each within about the 5 ms the sorted set is polled at).
            **{name: latency_summary(samples) for name, samples in delays.items()},
        }  # fmt: skip


@dataclass
class PushRun:
    """The servers, the season and the sockets every phase of a run works on."""

    options: Any
    web: WebServer
    worker: CeleryWorker
    season_id: int
    target: dict[str, str]  # where and with what key the phases post
    listener: Listener = field(default_factory=Listener)
    rotation: Iterator[str] = field(default_factory=lambda: iter(()))

    async def measure(self, players: list[str]) -> dict[str, Any]:
        options, web, listener = self.options, self.web, self.listener
        # Warm the processes up (imports, the ticker, connection pools) before the baseline.
        warm = Listener()
        await warm.open(web.base_url, players[:10])
        await asyncio.sleep(1)
        await warm.close()
        await asyncio.sleep(1)
        rss_before, opening = processes.rss_kib(processes.group_pids(web.pid)), time.monotonic()
        await listener.open(web.base_url, players)
        deadline = time.monotonic() + 120
        while listener.snapshots < len(players) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        opened_seconds = time.monotonic() - opening
        await asyncio.sleep(2)
        rss_after = processes.rss_kib(processes.group_pids(web.pid))
        order = list(players)
        random.Random(options.seed + 1).shuffle(order)
        self.rotation = itertools.cycle(order)
        say(f"idle phase: probe {options.rate:g} results/s for {options.seconds:g} s")
        phases = {"idle": await self.phase(load=False)}
        if options.load_seconds:
            say(f"load phase: {LOAD_RATE:,.0f} results/s offered for {options.load_seconds:g} s")
            phases["under_load"] = await self.phase(load=True)
        closed_by_server = listener.closed
        await listener.close()
        return {
            "sockets": len(players), "snapshots": listener.snapshots,
            "open_seconds": round(opened_seconds, 2), "closed_by_server": closed_by_server,
            "web_rss_before_mib": round(rss_before / 1024, 1),
            "web_rss_with_sockets_mib": round(rss_after / 1024, 1),
            "web_memory_per_socket_kib": round((rss_after - rss_before) / len(players), 2),
            "phases": phases,
        }  # fmt: skip

    async def phase(self, *, load: bool) -> dict[str, Any]:
        """The probe for a phase (`load`: beside the peak write load), the messages, the sockets
        the server closed (a slow reader's, 4408), the harness's loop lag, CPU and load average."""
        options, listener, target = self.options, self.listener, self.target
        began, messages_before = time.monotonic(), Counter(listener.by_type)
        closed_before, load_before = listener.closed, os.getloadavg()[0]
        lag: list[float] = []
        lag_task = asyncio.create_task(loop_lag(lag))
        window = Window({"web": self.web.pid, "worker": self.worker.pid}).start()
        seconds = options.load_seconds - LOAD_SETTLE_SECONDS if load else options.seconds
        match_prefix = f"load-{uuid.uuid4().hex[:8]}"
        figures: dict[str, Any] = {"seconds": seconds, "probe_rate_per_second": options.rate}
        sender, sent = None, None
        try:
            if load:
                since = datetime.now(UTC)
                sender = OpenLoopSender(OfferedLoad(
                    **target, rate=LOAD_RATE, batch=LOAD_BATCH, players=options.load_players,
                    match_prefix=match_prefix, senders=LOAD_SENDERS,
                ))  # fmt: skip
                await asyncio.to_thread(sender.start)
                await asyncio.sleep(LOAD_SETTLE_SECONDS)
            with MirrorWatch(self.season_id) as mirror:
                probe = Probe(OfferedLoad(
                    **target, rate=options.rate, batch=1, players=options.sockets,
                    match_prefix=f"probe-{uuid.uuid4().hex[:8]}", senders=1,
                ), self.rotation, mirror)  # fmt: skip
                await asyncio.to_thread(probe.start)
                try:
                    await asyncio.sleep(seconds)
                    until = datetime.now(UTC)
                    window.load_stopped()
                    load_after = os.getloadavg()[0]
                    if sender is not None:
                        sent = await asyncio.to_thread(sender.stop)
                finally:
                    await asyncio.to_thread(probe.stop)  # its posts in flight, each bounded
                await asyncio.sleep(LOST_AFTER_SECONDS + 1)  # until the last push is due
        except RuntimeError as exc:  # the senders' own failures (see bench/openloop.py)
            raise BenchError(f"the load's sender: {exc} ({exc.__cause__})") from exc
        finally:
            if sender is not None and sent is None:
                with contextlib.suppress(RuntimeError):
                    await asyncio.to_thread(sender.stop)
        figures.update(probe.pushes(listener))
        if load:
            p99 = figures["commit_to_push"].get("p99_ms")
            met = p99 is not None and p99 <= TARGET_P99_MS and figures["lost"] == 0
            figures["target"] = {"p99_ms_at_most": TARGET_P99_MS, "lost": 0, "met": met,
                                 "at_sockets": 10_000}  # fmt: skip
            answers = sent["answers"].items()
            answered = sum(count for status, count in answers if status.startswith("2"))
            figures["load"] = {
                "offered_results_per_s": LOAD_RATE, "batch": LOAD_BATCH, "senders": LOAD_SENDERS,
                "players": options.load_players, "match_prefix": match_prefix,
                **await asyncio.to_thread(results_received, match_prefix, since, until),
                # The same from the client's side: results in requests answered 2xx, in all.
                "accepted_results_by_answers": answered * LOAD_BATCH,
                "sender": sent,
            }  # fmt: skip
        lag_task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await lag_task
        counts = dict(listener.by_type - messages_before)  # the kinds that came meanwhile
        per_second = round(sum(counts.values()) / (time.monotonic() - began), 1)
        return figures | {
            "messages": {"by_type": counts, "per_second": per_second},
            "sockets_closed_by_server": listener.closed - closed_before,
            # The harness (sockets, probe, load), the servers, Redis and PostgreSQL share cores.
            "cpu_cores": {part: cores for part, cores in window.cpu.items() if part != "wrk"},
            "harness_loop_lag": latency_summary(lag),
            "load_average_1m": {"before": load_before, "after": load_after},
        }


def phase_line(name: str, figures: dict[str, Any]) -> str:
    commit = {p: figures["commit_to_push"].get(f"{p}_ms", 0) for p in ("p50", "p99", "max")}
    failed = sum(count for answer, count in figures["probe_answers"].items() if answer != "201")
    cpu = ", ".join(f"{part} {cores:.2f}" for part, cores in figures["cpu_cores"].items())
    return (
        f"{name}: {figures['pushed']}/{figures['posted']} pushes, commit to push p50 "
        f"{commit['p50']:.0f} ms, p99 {commit['p99']:.0f} ms, max {commit['max']:.0f} ms; lost "
        f"{figures['lost']} (not within {LOST_AFTER_SECONDS:g} s); probe POSTs failed {failed}, "
        f"not sent {figures['probe_not_sent']}; harness loop lag p99 "
        f"{figures['harness_loop_lag'].get('p99_ms', 0):.0f} ms; CPU cores {cpu}"
    )


def measure(options: Any, result: dict[str, Any]) -> None:
    options.sockets = 10_000 if options.ten_thousand else options.sockets
    options.board_players = max(20_000, 2 * options.sockets)
    # The board's players the sockets do not follow: p0 ..., the load's players.
    options.load_players = options.board_players - options.sockets
    open_files_allow(options.sockets)
    database_url = os.environ.get("DATABASE_URL", DEFAULT_DATABASE_URL)
    database_url = environment.with_database(database_url, DATABASE)
    devservices.ensure_database(database_url)
    logs = core.RESULTS / "logs" / "ws_push"
    logs.mkdir(parents=True, exist_ok=True)
    with processes.RedisServer(logs, "broker").start() as broker:
        variables = environment.settings_env(
            DATABASE_URL=database_url, REDIS_URL=os.environ.get("REDIS_URL", DEFAULT_REDIS_URL),
            CELERY_BROKER_URL=broker.url(), LEADERBOARD_KEY_PREFIX=KEY_PREFIX,
            # One client posts everything and opens every socket: no limits per client.
            THROTTLE_PUBLIC_RATE="", THROTTLE_GAME_SERVER_RATE="", LIVE_SOCKETS_PER_ADDRESS="0",
            # The webhooks' receiver listens on 127.0.0.1 (scripts/receiver.py).
            WEBHOOK_ALLOW_PRIVATE_URLS="1",
        )  # fmt: skip
        # The fill, the sockets and the waits take a few minutes: 15 is a wide margin.
        run_seconds = options.seconds + options.load_seconds + 900
        season_id, posting = django_prepare(variables, run_seconds=run_seconds)
        receiver = Receiver().start()
        webhooks_register(receiver, none=options.no_webhooks)
        env, concurrency = environment.server_env(variables), WORKER_CONCURRENCY
        worker = CeleryWorker(env=env, log=logs / "celery-worker.log", concurrency=concurrency)
        webhooks = CeleryWorker(
            env=env, log=logs / "webhooks-worker.log", queues="webhooks", concurrency=1
        )
        web = WebServer(env=env, log=logs / "web.log", workers=WEB_WORKERS)
        with worker.start(), webhooks.start(), web.start():
            say(f"filling the board with {options.board_players} players")
            run = PushRun(options, web, worker, season_id, {"url": web.base_url, **posting})
            players = board_fill(run.target, options, random.Random(options.seed))
            from leaderboards import store

            processes.wait_until(lambda: store.board_size(season_id) >= options.board_players,
                                 timeout=300, what="the mirror to catch up")  # fmt: skip
            say(f"opening {options.sockets} sockets")
            figures = asyncio.run(run.measure(players))
            figures["webhooks"] = webhooks_figures(receiver)
        receiver.stop()
    # This shared machine's speed varies by half between runs, and every figure with it.
    result["machine"] = {"cpus": os.cpu_count(), "python_probe_ms": python_probe_ms()}
    result["options"] = {
        "sockets": options.sockets, "board_players": options.board_players,
        "seconds": options.seconds, "load_batch": LOAD_BATCH, "load_senders": LOAD_SENDERS,
        "load_seconds": options.load_seconds, "top": TOP, "max_points": MAX_POINTS,
        "web_workers": WEB_WORKERS, "worker_concurrency": WORKER_CONCURRENCY,
        "rate_per_second": options.rate, "load_rate_per_second": LOAD_RATE,
        "permessage_deflate": True,
    }  # fmt: skip
    result |= figures


def report(result: dict[str, Any]) -> str:
    phases, sockets = result["phases"], result["options"]["sockets"]
    lines = [phase_line("idle", phases["idle"])]
    if during := phases.get("under_load"):
        verdict = "met" if during["target"]["met"] else "missed"
        lines.append(
            phase_line(f"during {LOAD_RATE:,.0f} results/s", during)
            + f"; accepted {during['load']['accepted_results_per_s']:,.0f} results/s; target p99 "
            f"under {TARGET_P99_MS:,.0f} ms, none lost: {verdict} at {sockets} sockets"
        )
    lines.append(f"{result['web_memory_per_socket_kib']:.1f} KiB per socket")
    if hooks := result.get("webhooks"):
        told = ", ".join(f"{kind} {count}" for kind, count in hooks["events_by_type"].items())
        fate = ", ".join(f"{kind} {count}" for kind, count in sorted(hooks["deliveries"].items()))
        told = f"events {told or 'none'}; deliveries {fate or 'none'}"
        lines.append(f"webhooks ({hooks['endpoints']} endpoints, one of 2 down): {told}")
    return "\n".join(f"[ws_push] {line}" for line in lines)


def main(argv: list[str] | None = None) -> int:
    return core.program_main("ws_push", __doc__, OPTIONS, argv, options_check, measure, report)


if __name__ == "__main__":
    sys.exit(main())
