"""Sockets following players, for the peak at once (bench/README.md, "The peak at once"): the
listener that opens them and notes when each player's new points arrived, the probe that posts
results for the followed players and times each one from its commit to its push, the watch that
splits that delay into the mirror's part and the ticker's, and the webhooks told all along."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import resource
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from typing import Any

from websockets.asyncio.client import connect

from scripts import processes
from scripts.receiver import Receiver

from .core import BenchError, latency_summary
from .openloop import OfferedLoad, OpenLoopSender, json_field

CONNECTING_AT_ONCE = 200  # handshakes in flight while the sockets open
LOST_AFTER_SECONDS = 5.0  # a push not here this long after its result's commit is lost
LOOP_LAG_INTERVAL_SECONDS = 0.05
PROBE_IN_FLIGHT = 32  # the probe's unanswered POSTs at most
PROBE_TIMEOUT_SECONDS = 30.0
TOP = 10  # the top K each socket follows
MAX_POINTS = 500  # the largest points of one probe result
# Every CLIMB_EVERY-th probe result takes its player to the top of the board, as a peak's best
# players climb: it crosses every threshold (top 1, 10 and 100) and pushes three players out of
# them, so the rank events' `threshold` and the webhooks' `player.threshold` flow all along (at
# 20 results/s, about six events a second), as they do on a real board's busy top.
CLIMB_EVERY = 20
TOP_READ_SECONDS = 0.2  # how often the watch reads the board's best points


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


def open_files_allow(sockets: int) -> None:
    """Raise this process's open-files limit for `sockets` and the rest, or say it cannot."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = min(hard, max(soft, sockets + 1024))
    resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    if wanted < sockets + 100:
        raise BenchError(f"the open-files limit ({hard}) is too low for {sockets} sockets")


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
        self.top_points = 0  # the board's best points, as last read
        self.lock, self.done = threading.Lock(), threading.Event()
        self.thread = threading.Thread(target=self._poll, name="mirror-watch", daemon=True)

    def expect(self, player_id: str, total: int) -> None:
        with self.lock:
            self.pending[player_id] = max(self.pending.get(player_id, 0), total)

    def _poll(self) -> None:
        from leaderboards import store
        from seasons.scoring import points_of

        top_read = 0.0
        while not self.done.is_set() or self.pending:
            if time.monotonic() - top_read > TOP_READ_SECONDS:
                top_read = time.monotonic()
                _, best = store.read_page(self.season_id, offset=0, limit=1)
                self.top_points = points_of(best[0].composite, lowest_first=False) if best else 0
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
        points = rng.randint(1, MAX_POINTS)
        if sent % CLIMB_EVERY == 0:
            # The best points as last read, added to the player's own: to first place (or near
            # it, when another climb came since the read).
            from seasons.scoring import MAX_POINTS as MOST

            points = min(MOST, max(points, self.mirror.top_points))
        return [result | {"points": points}]

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
