"""Sustained writes through the whole path (HTTP, PostgreSQL commit, Celery mirror) and how
soon each accepted result is visible in Redis.

wrk drives the load from C with a Lua script that makes every match id unique, so the client
costs little CPU. Accepted results are counted where they are confirmed, in PostgreSQL (rows of
matches_matchresult received in the window), not from the client's side. Freshness comes from a
probe: a few single-result POSTs a second, interleaved with wrk's load, for players wrk never
writes; after each 201 the probe polls the gateway's ZMSCORE until the player's total shows.
"""

from __future__ import annotations

import http.client
import json
import random
import threading
import time
from typing import Any
from urllib.parse import urlparse

import psycopg
import redis

from leaderboards import store
from leaderboards.scoring import points_of
from seasons.models import Season

from .cpu import CpuMeter
from .environment import QUEUE, BenchEnvironment, database_connections
from .options import Options
from .processes import Started
from .stats import latency_summary
from .wrk import wrk_run

POLL_SECONDS = 0.005
LOST_AFTER_SECONDS = 30.0
CONSISTENCY_SAMPLE = 500
STALLED_SECONDS = 5.0


class FreshnessProbe:
    """Posts results for its own players at a steady rate and times each until Redis shows it."""

    def __init__(
        self, *, server: Started, api_key: str, season: Season, player_ids: list[str], rate: float
    ) -> None:
        self.url = urlparse(server.url)
        self.api_key = api_key
        self.season = season
        self.player_ids = player_ids
        self.interval = 1.0 / rate
        self.origin = 0.0
        self.nonce = f"probe-{int(time.time() * 1000)}"
        self.pending: dict[str, tuple[int, float, float]] = {}
        self.samples: list[dict[str, float]] = []
        self.posted = 0
        self.failed = 0
        self.lost = 0
        self._lock = threading.Lock()
        self._stop_posting = threading.Event()
        self._stop_polling = threading.Event()
        self._threads = [
            threading.Thread(target=self._post_loop, name="probe-post", daemon=True),
            threading.Thread(target=self._poll_loop, name="probe-poll", daemon=True),
        ]

    def start(self, origin: float) -> FreshnessProbe:
        self.origin = origin
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> dict[str, Any]:
        self._stop_posting.set()
        self._threads[0].join(timeout=15)
        self._stop_polling.set()
        self._threads[1].join(timeout=LOST_AFTER_SECONDS + 5)
        fresh = [s["fresh_ms"] for s in self.samples]
        return {
            "posted": self.posted,
            "failed_posts": self.failed,
            "not_visible_within_s": LOST_AFTER_SECONDS,
            "lost": self.lost + len(self.pending),
            "freshness": latency_summary(fresh),
            "probe_post": latency_summary([s["post_ms"] for s in self.samples]),
            "poll_interval_ms": POLL_SECONDS * 1000,
            "series": [[round(s["t"], 3), round(s["fresh_ms"], 2)] for s in self.samples],
        }

    def _connection(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection(self.url.hostname, self.url.port, timeout=10)

    def _next_player(self, rng: random.Random) -> str | None:
        with self._lock:
            for _ in range(20):
                player_id = rng.choice(self.player_ids)
                if player_id not in self.pending:
                    return player_id
        return None

    def _post_loop(self) -> None:
        conn = self._connection()
        rng = random.Random(7)
        headers = {"Authorization": f"Api-Key {self.api_key}", "Content-Type": "application/json"}
        due = time.monotonic()
        while not self._stop_posting.is_set():
            now = time.monotonic()
            if now < due:
                self._stop_posting.wait(due - now)
                continue
            # A stalled server does not earn a burst of catch-up probes afterwards.
            due = max(due + self.interval, now)
            player_id = self._next_player(rng)
            if player_id is None:
                continue
            self.posted += 1
            body = json.dumps(
                {
                    "player_id": player_id,
                    "points": rng.randint(1, 100),
                    "match_id": f"{self.nonce}-{self.posted}",
                    "board": self.season.board.slug,
                    "season": self.season.slug,
                }
            )
            sent = time.monotonic()
            try:
                conn.request("POST", "/api/v1/scores", body, headers)
                response = conn.getresponse()
                data = response.read()
            except (OSError, http.client.HTTPException):
                self.failed += 1
                conn.close()
                conn = self._connection()
                continue
            answered = time.monotonic()
            if response.status != 201:
                self.failed += 1
                continue
            total = int(json.loads(data)["total_points"])
            with self._lock:
                self.pending[player_id] = (total, answered, answered - sent)
        conn.close()

    def _poll_loop(self) -> None:
        while True:
            with self._lock:
                snapshot = dict(self.pending)
            if not snapshot:
                if self._stop_polling.is_set():
                    return
                time.sleep(POLL_SECONDS)
                continue
            player_ids = list(snapshot)
            try:
                scores = store.scores_of(self.season.pk, player_ids)
            except redis.RedisError:
                time.sleep(POLL_SECONDS)
                continue
            seen = time.monotonic()
            with self._lock:
                for player_id, score in zip(player_ids, scores, strict=True):
                    total, answered, post_seconds = snapshot[player_id]
                    if score is not None and points_of(score, lowest_first=False) >= total:
                        self.samples.append(
                            {
                                "t": answered - self.origin,
                                "fresh_ms": (seen - answered) * 1000,
                                "post_ms": post_seconds * 1000,
                            }
                        )
                        del self.pending[player_id]
                    elif seen - answered > LOST_AFTER_SECONDS:
                        self.lost += 1
                        del self.pending[player_id]
            time.sleep(POLL_SECONDS)


def mirror_backlog(*, env: BenchEnvironment, conn: psycopg.Connection[Any]) -> dict[str, int]:
    """Totals committed but not yet marked mirrored, and mirror tasks queued in the broker or
    taken by the worker but not yet done (acks_late keeps those in Redis's `unacked` hash)."""
    unmirrored = conn.execute(
        "SELECT count(*) FROM matches_playertotal WHERE mirrored_version < version"
    ).fetchone()[0]
    broker = redis.Redis.from_url(env.broker_url, socket_timeout=5)
    # The bench's queue, or Celery's default one where the settings do not name queues.
    queued = broker.llen(QUEUE) + broker.llen("celery") + broker.hlen("unacked")
    return {"unmirrored_totals": int(unmirrored), "queued_tasks": int(queued)}


def mirror_wait(
    *, env: BenchEnvironment, conn: psycopg.Connection[Any], seconds: float
) -> dict[str, int]:
    """Wait until the mirror has caught up; returns the backlog left. Gives up after `seconds`,
    or once nothing is queued and the unmirrored count has not moved for a while: those totals
    belong to tasks that failed, and only the periodic sweep (not run here) would repair them."""
    deadline = time.monotonic() + seconds
    backlog = mirror_backlog(env=env, conn=conn)
    last_change, last = time.monotonic(), backlog
    while any(backlog.values()) and time.monotonic() < deadline:
        if backlog["queued_tasks"] == 0 and time.monotonic() - last_change > STALLED_SECONDS:
            break
        time.sleep(0.25)
        backlog = mirror_backlog(env=env, conn=conn)
        if backlog != last:
            last_change, last = time.monotonic(), backlog
    return backlog


def _drain(
    *,
    env: BenchEnvironment,
    conn: psycopg.Connection[Any],
    at_stop: dict[str, int],
    stopped: float,
    seconds: float,
) -> dict[str, Any]:
    backlog = mirror_wait(env=env, conn=conn, seconds=seconds)
    return {
        "backlog_when_load_stopped": at_stop,
        "drained": not any(backlog.values()),
        "drain_seconds": round(time.monotonic() - stopped, 2),
        "backlog_left": backlog,
    }


def _consistency(*, conn: psycopg.Connection[Any], season: Season, since_id: int) -> dict[str, Any]:
    """After the drain, Redis must show exactly PostgreSQL's totals for the players written."""
    rows = conn.execute(
        """
        SELECT t.player_id, t.points FROM matches_playertotal t
        WHERE t.season_id = %s AND t.player_id IN (
            SELECT player_id FROM matches_matchresult WHERE id > %s ORDER BY id DESC LIMIT %s)
        """,
        [season.pk, since_id, CONSISTENCY_SAMPLE],
    ).fetchall()
    scores = store.scores_of(season.pk, [r[0] for r in rows])
    mismatched = sum(
        1
        for (_, points), score in zip(rows, scores, strict=True)
        if score is None or points_of(score, lowest_first=False) != points
    )
    return {"checked": len(rows), "mismatched": mismatched}


def ingest_measure(
    *,
    wrk: str,
    env: BenchEnvironment,
    server: Started,
    api_key: str,
    season: Season,
    batch: int,
    options: Options,
    cpu_groups: dict[str, int],
) -> dict[str, Any]:
    load_players = options.players - options.probe_players
    probe_ids = [f"p{i}" for i in range(load_players, options.players)]
    with psycopg.connect(**env.conninfo(), autocommit=True) as conn:
        since_id = conn.execute("SELECT coalesce(max(id), 0) FROM matches_matchresult").fetchone()[
            0
        ]
        probe = FreshnessProbe(
            server=server,
            api_key=api_key,
            season=season,
            player_ids=probe_ids,
            rate=options.probe_rate,
        )
        origin_wall = time.time()
        probe.start(time.monotonic())
        meter = CpuMeter(groups=cpu_groups).start()
        sessions_before = database_connections(env)["sessions"]
        try:
            result = wrk_run(
                wrk=wrk,
                url=server.url,
                script="ingest.lua",
                args=[
                    str(batch),
                    str(load_players),
                    season.board.slug,
                    season.slug,
                    api_key,
                    f"w{batch}-{int(origin_wall)}",
                ],
                seconds=options.ingest_seconds,
                connections=options.ingest_connections,
                threads=options.threads,
                timeout_s=10,
            )
            stopped = time.monotonic()
            cpu = meter.stop()
            at_stop = mirror_backlog(env=env, conn=conn)
            connections = database_connections(env)
        finally:
            freshness = probe.stop()
        drain = _drain(
            env=env, conn=conn, at_stop=at_stop, stopped=stopped, seconds=options.drain_seconds
        )
        window = result.duration_s
        per_second = conn.execute(
            """
            SELECT floor(extract(epoch FROM received_at)::float8 - %s::float8)::int AS second,
                   count(*)
            FROM matches_matchresult WHERE id > %s AND match_id NOT LIKE 'probe-%%'
            GROUP BY 1 ORDER BY 1
            """,
            [origin_wall, since_id],
        ).fetchall()
        probe_accepted = conn.execute(
            "SELECT count(*) FROM matches_matchresult WHERE id > %s AND match_id LIKE 'probe-%%'",
            [since_id],
        ).fetchone()[0]
        consistency = _consistency(conn=conn, season=season, since_id=since_id)
    in_window = sum(count for second, count in per_second if 0 <= second < window)
    total = sum(count for _, count in per_second)
    return {
        "batch_size": batch,
        "seconds": round(window, 3),
        "accepted_results": in_window,
        "accepted_results_per_s": round(in_window / window, 1) if window else 0.0,
        "accepted_results_total": total,
        "probe_results_accepted": probe_accepted,
        "requests": result.as_dict(),
        "client_side_results": (result.requests - result.errors["status"]) * batch,
        "connections": options.ingest_connections,
        "threads": options.threads,
        "per_second": [[second, count] for second, count in per_second if second >= 0],
        "freshness": freshness,
        "mirror": drain,
        "consistency_after_drain": consistency,
        "cpu_cores": cpu,
        "database_connections_after": connections["open"],
        "database_sessions_opened": connections["sessions"] - sessions_before,
    }
