"""Sustained writes through the whole path (HTTP, PostgreSQL commit, Celery mirror), how soon
each accepted result is visible through the public rank endpoint, and what PostgreSQL did for it.

Two kinds of load. Closed loop: wrk drives it from C with a Lua script that makes every match id
unique, each connection sending its next request when the last is answered, so it finds how much
the server takes. Open loop: bench/openloop.py offers a fixed rate whatever the answers, so it
tells whether the server keeps up with that rate; a server that does not shows a growing backlog
and growing freshness, not a client that slowed down with it.

Accepted results are counted where they are confirmed, in PostgreSQL (rows of
matches_matchresult), not from the client's side. Freshness comes from a probe
(bench/openloop.py): a few single-result POSTs a second for players the load never writes, each
polled on the public rank endpoint until it shows. PostgreSQL's own statistics (bench/pgstats.py)
cover the load and the drain after it, so the mirror's statements count with the results they
mirror.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import psycopg
import redis

from leaderboards import store
from seasons.models import Season
from seasons.scoring import points_of

from .environment import QUEUE, BenchEnvironment
from .openloop import FreshnessProbe, OfferedLoad, OpenLoopSender, freshness_between
from .options import Options
from .pgstats import PgSnapshot, harness_connection, pg_delta, pg_snapshot
from .processes import Started
from .window import Window
from .wrk import WrkLoad

# An open-loop rate is sustained when at least this share of the offered results is accepted
# and the freshness p99 over the window stays under this, with no probe lost or refused.
SUSTAINED_SHARE = 0.999
SUSTAINED_FRESHNESS_P99_MS = 1000.0
CONSISTENCY_SAMPLE = 500
STALLED_SECONDS = 5.0
# Freshness is also summarised over the first and the last seconds of a window: a backlog that
# grows shows as a last stretch worse than the first.
EDGE_SECONDS = 10.0
PROBE_PREFIX = "probe-"


def mirror_backlog(*, env: BenchEnvironment, conn: psycopg.Connection[Any]) -> dict[str, int]:
    """Standings committed but still in the mirror's outbox, and mirror tasks queued in the
    broker or taken by the worker but not yet done (acks_late keeps those in Redis's `unacked`
    hash)."""
    unmirrored = conn.execute("SELECT count(*) FROM matches_pendingstanding").fetchone()[0]
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


@dataclass(frozen=True)
class IngestTarget:
    """What every ingest phase posts to and watches: the server and its season, the game
    server's key, and the processes whose CPU counts."""

    env: BenchEnvironment
    server: Started
    api_key: str
    season: Season
    options: Options
    cpu_groups: dict[str, int]

    @property
    def load_players(self) -> int:
        """The load writes p0 .. p`load_players`-1; the players after them are the probe's."""
        return self.options.players - self.options.probe_players


class _IngestWindow:
    """What every ingest phase measures around its load: the freshness probe, the CPU and the
    database sessions (bench/window.py) and PostgreSQL's statistics from the start; when the load
    stops, the CPU and the backlog; then the drain, the counts, the consistency check and
    PostgreSQL's side."""

    def __init__(self, target: IngestTarget) -> None:
        self.target = target
        options, season = target.options, target.season
        self.probe = FreshnessProbe(
            url=target.server.url,
            api_key=target.api_key,
            board=season.board.slug,
            season=season.slug,
            player_ids=[f"p{i}" for i in range(target.load_players, options.players)],
            rate=options.probe_rate,
        )
        self.window = Window(cpu_groups=target.cpu_groups, env=target.env)
        self.conn: psycopg.Connection[Any]
        self.since_id = 0
        self.pg_before: PgSnapshot
        self.origin_wall = 0.0
        self.stopped = 0.0
        self.at_stop: dict[str, int] = {}
        self.freshness: dict[str, Any] | None = None

    def __enter__(self) -> _IngestWindow:
        self.conn = harness_connection(self.target.env)
        try:
            self.since_id = self.conn.execute(
                "SELECT coalesce(max(id), 0) FROM matches_matchresult"
            ).fetchone()[0]
            self.pg_before = pg_snapshot(self.conn)
            self.window.start()
            self.origin_wall = time.time()
            self.probe.start(time.monotonic())
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            if self.probe.running:
                self.probe.stop()
        finally:
            self.conn.close()

    def load_stopped(self) -> None:
        self.stopped = time.monotonic()
        self.window.load_stopped()
        self.at_stop = mirror_backlog(env=self.target.env, conn=self.conn)

    def figures(self, *, seconds: float, started_wall: float | None = None) -> dict[str, Any]:
        """Everything but the load's own figures, for a window of `seconds` of load from
        `started_wall` (time.time(); by default when the window was entered)."""
        conn = self.conn
        origin_wall = started_wall or self.origin_wall
        self.freshness = self.probe.stop()
        drain = _drain(
            env=self.target.env,
            conn=conn,
            at_stop=self.at_stop,
            stopped=self.stopped,
            seconds=self.target.options.drain_seconds,
        )
        per_second = conn.execute(
            """
            SELECT floor(extract(epoch FROM received_at)::float8 - %s::float8)::int AS second,
                   count(*)
            FROM matches_matchresult WHERE id > %s AND match_id NOT LIKE %s
            GROUP BY 1 ORDER BY 1
            """,
            [origin_wall, self.since_id, f"{PROBE_PREFIX}%"],
        ).fetchall()
        in_window, load_accepted, all_accepted = conn.execute(
            """
            SELECT count(*) FILTER (WHERE match_id NOT LIKE %(probe)s
                                    AND received_at >= to_timestamp(%(start)s)
                                    AND received_at < to_timestamp(%(end)s)),
                   count(*) FILTER (WHERE match_id NOT LIKE %(probe)s),
                   count(*)
            FROM matches_matchresult WHERE id > %(since)s
            """,
            {
                "probe": f"{PROBE_PREFIX}%",
                "start": origin_wall,
                "end": origin_wall + seconds,
                "since": self.since_id,
            },
        ).fetchone()
        edge = min(EDGE_SECONDS, seconds / 2)
        series = self.freshness["series"]
        return {
            "seconds": round(seconds, 3),
            "accepted_results": in_window,
            "accepted_results_per_s": round(in_window / seconds, 1) if seconds else 0.0,
            "accepted_results_total": load_accepted,
            "probe_results_accepted": all_accepted - load_accepted,
            "per_second": [[second, count] for second, count in per_second if second >= 0],
            "freshness": self.freshness,
            "freshness_window": freshness_between(series, 0, seconds),
            "freshness_first": freshness_between(series, 0, edge),
            "freshness_last": freshness_between(series, seconds - edge, seconds),
            "edge_seconds": edge,
            "mirror": drain,
            "consistency_after_drain": _consistency(
                conn=conn, season=self.target.season, since_id=self.since_id
            ),
            # From the start of the load to the end of the drain, per result accepted meanwhile.
            "postgres": pg_delta(conn, self.pg_before, results=all_accepted),
            **self.window.figures(),
        }


def ingest_load(target: IngestTarget, *, wrk: str, batch: int, tag: str) -> WrkLoad:
    """wrk posting batches of `batch` results (1: single results) for the load's players, every
    match id unique through `tag`, on the ingest connections (closed loop)."""
    season, options = target.season, target.options
    return WrkLoad(
        wrk=wrk,
        url=target.server.url,
        script="ingest.lua",
        args=[
            str(batch),
            str(target.load_players),
            season.board.slug,
            season.slug,
            target.api_key,
            tag,
        ],
        connections=options.ingest_connections,
        threads=options.threads,
        timeout_s=10,
    )


def ingest_measure(target: IngestTarget, *, wrk: str, batch: int) -> dict[str, Any]:
    """Closed loop: wrk's connections post as fast as the answers come back."""
    options = target.options
    with _IngestWindow(target) as window:
        load = ingest_load(target, wrk=wrk, batch=batch, tag=f"w{batch}-{int(window.origin_wall)}")
        result = load.run(options.ingest_seconds)
        window.load_stopped()
        figures = window.figures(seconds=result.duration_s)
    return {
        "batch_size": batch,
        **figures,
        "requests": result.as_dict(),
        "client_side_results": (result.requests - result.errors["status"]) * batch,
        "connections": options.ingest_connections,
        "threads": options.threads,
    }


def openloop_measure(
    target: IngestTarget, *, rate: float, batch: int, seconds: float
) -> dict[str, Any]:
    """Open loop: `rate` results a second offered in requests of `batch`, for `seconds`."""
    season = target.season
    with _IngestWindow(target) as window:
        sender = OpenLoopSender(
            OfferedLoad(
                url=target.server.url,
                api_key=target.api_key,
                board=season.board.slug,
                season=season.slug,
                rate=rate,
                batch=batch,
                players=target.load_players,
                match_prefix=f"o{batch}-{rate:g}-{int(window.origin_wall)}",
                senders=target.options.senders,
            )
        ).start()
        try:
            time.sleep(seconds)
            window.load_stopped()
        finally:
            sent = sender.stop()
        # The window is the sender's own: results received (their transaction begun) from its
        # first slot to its last, committed then or in the drain after.
        figures = window.figures(seconds=sent["seconds"], started_wall=sent["started_at_epoch"])
    offered = sent["offered_results"]
    return {
        "rate_results_per_s": rate,
        "offered_results": offered,
        "offered_results_per_s": round(offered / figures["seconds"], 1),
        "accepted_share": round(figures["accepted_results"] / offered, 5) if offered else None,
        "batch_size": batch,
        **figures,
        "sender": sent,
    }


def sustained(figures: dict[str, Any]) -> bool:
    """Whether an open-loop phase kept up with the rate it was offered."""
    p99 = figures["freshness_window"].get("p99_ms")
    return (
        (figures["accepted_share"] or 0.0) >= SUSTAINED_SHARE
        and p99 is not None
        and p99 < SUSTAINED_FRESHNESS_P99_MS
        and figures["freshness"]["lost"] == 0
        and figures["freshness"]["failed_posts"] == 0
    )
