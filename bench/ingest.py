"""Writes through the whole path (HTTP, PostgreSQL commit, Celery mirror), closed and open loop:
results accepted, how soon each shows on the rank endpoint, what PostgreSQL did for it."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import psycopg
import redis

from leaderboards import store
from scripts.processes import WebServer
from seasons.scoring import points_of

from .core import Figures, latency_summary
from .environment import QUEUE, Bench, BenchEnvironment
from .loaders import WrkLoad
from .machine import Window
from .openloop import FreshnessProbe, OfferedLoad, OpenLoopSender
from .pgstats import harness_connection, pg_delta, pg_snapshot, results_by_second

# An open-loop rate is sustained when at least this share of the offered results is accepted
# and the freshness p99 over the window stays under this, with no probe lost or refused.
SUSTAINED_SHARE = 0.999
SUSTAINED_FRESHNESS_P99_MS = 1000.0
CONSISTENCY_SAMPLE = 500
# The totals of the players last written (at most CONSISTENCY_SAMPLE results after an id).
WRITTEN_TOTALS = """SELECT t.player_id, t.points FROM matches_playertotal t
WHERE t.season_id = %s AND t.player_id IN (
    SELECT player_id FROM matches_matchresult WHERE id > %s ORDER BY id DESC LIMIT %s)"""
STALLED_SECONDS = 5.0
# Freshness over the first and the last seconds of a window too: a growing backlog shows there.
EDGE_SECONDS = 10.0
PROBE_PREFIX = "probe-"
Backlog = dict[str, int]  # the mirror's work left: unmirrored totals, queued tasks
# The outbox's standings (a row holds one write's, by season).
UNMIRRORED_SQL = """
    SELECT count(*) FROM matches_pendingstanding p, jsonb_each(p.standings) AS season,
        jsonb_array_elements(season.value)
"""


def mirror_backlog(env: BenchEnvironment, conn: psycopg.Connection[Any]) -> Backlog:
    """Totals committed but still in the mirror's outbox, and mirror tasks queued in the broker
    or taken but not done (acks_late keeps those in Redis's `unacked` hash)."""
    unmirrored = conn.execute(UNMIRRORED_SQL).fetchone()[0]
    broker = redis.Redis.from_url(env.broker_url, socket_timeout=5)
    # The bench's queue, or Celery's default one where the settings do not name queues.
    queued = broker.llen(QUEUE) + broker.llen("celery") + broker.hlen("unacked")
    return {"unmirrored_totals": int(unmirrored), "queued_tasks": int(queued)}


def mirror_wait(env: BenchEnvironment, conn: psycopg.Connection[Any], seconds: float) -> Backlog:
    """Wait until the mirror has caught up; returns the backlog left. Gives up after `seconds`,
    or once nothing is queued and the unmirrored count has not moved for a while: those totals
    belong to tasks that failed, and only the periodic sweep (not run here) would repair them."""
    deadline = time.monotonic() + seconds
    backlog = last = mirror_backlog(env, conn)
    last_change = time.monotonic()
    while any(backlog.values()) and time.monotonic() < deadline:
        if backlog["queued_tasks"] == 0 and time.monotonic() - last_change > STALLED_SECONDS:
            break
        time.sleep(0.25)
        if (backlog := mirror_backlog(env, conn)) != last:
            last_change, last = time.monotonic(), backlog
    return backlog


def freshness_between(series: list[list[float]], start: float, end: float) -> dict[str, Any]:
    """Freshness of the probe results posted between `start` and `end` seconds."""
    return latency_summary([fresh for t, fresh in series if start <= t < end], curve=False)


class IngestWindow:
    """What every ingest phase measures around its load (bench/README.md, "What a run does", 7
    and 12): the freshness probe, CPU, the backlog, drain and consistency, PostgreSQL's side."""

    def __init__(self, bench: Bench, server: WebServer, cpu: dict[str, int]) -> None:
        self.bench, options, season = bench, bench.options, bench.season
        self.load_players = options.players - options.probe_players
        # Where and with what key the load and the probe post.
        self.target = (server.base_url, bench.api_key, season.board.slug, season.slug)
        players = [f"p{i}" for i in range(self.load_players, options.players)]
        self.probe = FreshnessProbe(*self.target, players=players, rate=options.probe_rate)
        self.window = Window(cpu, bench.env)

    def __enter__(self) -> IngestWindow:
        self.conn = harness_connection(self.bench.env)
        try:
            query = "SELECT coalesce(max(id), 0) FROM matches_matchresult"
            self.since_id = self.conn.execute(query).fetchone()[0]
            self.pg_before = pg_snapshot(self.conn)
            self.window.start()
            self.probe.start()
            self.origin_wall = self.probe.started_wall  # the probe's series counts from there
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            if self.probe.thread.is_alive():
                self.probe.stop()
        finally:
            self.conn.close()

    def load_stopped(self) -> None:
        self.stopped = time.monotonic()
        self.window.load_stopped()
        self.at_stop = mirror_backlog(self.bench.env, self.conn)

    def figures(self, *, seconds: float, started_wall: float | None = None) -> dict[str, Any]:
        """Everything but the load's own figures, for `seconds` of load from `started_wall`
        (time.time(); by default when the window was entered)."""
        conn, start = self.conn, started_wall or self.origin_wall
        freshness = self.probe.stop()
        backlog = mirror_wait(self.bench.env, conn, self.bench.options.drain_seconds)
        params = {"probe": f"{PROBE_PREFIX}%", "since": self.since_id}
        params |= {"origin": start, "end": start + seconds}
        with conn.cursor() as cursor:
            load = "id > %(since)s AND match_id NOT LIKE %(probe)s"
            rows = results_by_second(cursor, load, params)
        in_window = sum(before for second, before, _ in rows if second >= 0)
        load_accepted = sum(before + after for _, before, after in rows)
        probes = "FROM matches_matchresult WHERE id > %(since)s AND match_id LIKE %(probe)s"
        probes_accepted = conn.execute(f"SELECT count(*) {probes}", params).fetchone()[0]
        edge, series = min(EDGE_SECONDS, seconds / 2), freshness["series"]
        drain_seconds = round(time.monotonic() - self.stopped, 2)
        mirror = {"backlog_when_load_stopped": self.at_stop, "drained": not any(backlog.values())}
        mirror |= {"drain_seconds": drain_seconds, "backlog_left": backlog}
        return {
            "seconds": round(seconds, 3), "accepted_results": in_window,
            "accepted_results_per_s": round(in_window / seconds, 1) if seconds else 0.0,
            "accepted_results_total": load_accepted, "probe_results_accepted": probes_accepted,
            "per_second": [[second, b + a] for second, b, a in rows if second >= 0],
            "freshness": freshness, "freshness_window": freshness_between(series, 0, seconds),
            "freshness_first": freshness_between(series, 0, edge),
            "freshness_last": freshness_between(series, seconds - edge, seconds),
            "edge_seconds": edge, "mirror": mirror,
            "consistency_after_drain": self._consistency(),
            # From the start of the load to the end of the drain, per result accepted meanwhile.
            "postgres": pg_delta(conn, self.pg_before, results=load_accepted + probes_accepted),
            **self.window.figures(),
        }  # fmt: skip

    def _consistency(self) -> dict[str, Any]:
        """After the drain, Redis must show exactly PostgreSQL's totals for the players written."""
        sid, sample = self.bench.season.pk, CONSISTENCY_SAMPLE
        rows = self.conn.execute(WRITTEN_TOTALS, [sid, self.since_id, sample]).fetchall()
        scores = store.scores_of(sid, [r[0] for r in rows])
        mismatched = sum(
            score is None or points_of(score, lowest_first=False) != points
            for (_, points), score in zip(rows, scores, strict=True)
        )
        return {"checked": len(rows), "mismatched": mismatched}


def ingest_load(bench: Bench, server: WebServer, *, batch: int, tag: str) -> WrkLoad:
    """wrk posting batches of `batch` results for the load's players, match ids unique by `tag`."""
    options, season = bench.options, bench.season
    load_players = options.players - options.probe_players
    args = [str(batch), str(load_players), season.board.slug, season.slug, bench.api_key, tag]
    connections = options.ingest_connections
    return WrkLoad(bench.wrk, server.base_url, "ingest.lua", args, connections, options.threads, 10)


def ingest_measure(bench: Bench, server: WebServer, cpu: dict[str, int], *, batch: int) -> Figures:
    """Closed loop: wrk's connections post as fast as the answers come back."""
    with IngestWindow(bench, server, cpu) as window:
        load = ingest_load(bench, server, batch=batch, tag=f"w{batch}-{int(window.origin_wall)}")
        result = load.run(bench.options.ingest_seconds)
        window.load_stopped()
        figures = window.figures(seconds=result["duration_s"])
    client_side = (result["requests"] - result["errors"]["status"]) * batch
    return {"batch_size": batch, **figures, "requests": result, "client_side_results": client_side,
            "connections": load.connections, "threads": load.threads}  # fmt: skip


def openloop_measure(bench: Bench, server: WebServer, cpu: dict[str, int], *, rate: float,
                     batch: int, seconds: float, spare: int = 0,
                     during: Callable[[], None] | None = None) -> Figures:  # fmt: skip
    """Open loop: `rate` results a second in requests of `batch` for `seconds` (or while `during`
    runs), leaving alone the last `spare` of the load's players (another probe's)."""
    with IngestWindow(bench, server, cpu) as window:
        prefix = f"o{batch}-{rate:g}-{int(window.origin_wall)}"
        players, senders = window.load_players - spare, bench.options.senders
        load = OfferedLoad(*window.target, rate, batch, players, prefix, senders)
        sender = OpenLoopSender(load).start()
        try:
            if during is None:
                time.sleep(seconds)
            else:
                during()
            window.load_stopped()
        finally:
            sent = sender.stop()
        # The window is the sender's own: results received (their transaction begun) from its
        # first slot to its last, committed then or in the drain after.
        figures = window.figures(seconds=sent["seconds"], started_wall=sent["started_at_epoch"])
    offered = sent["offered_results"]
    return {
        "rate_results_per_s": rate, "offered_results": offered,
        "offered_results_per_s": round(offered / figures["seconds"], 1),
        "accepted_share": round(figures["accepted_results"] / offered, 5) if offered else None,
        "batch_size": batch, **figures, "sender": sent,
    }  # fmt: skip


def sustained(figures: dict[str, Any]) -> bool:
    """Whether an open-loop phase kept up with the rate it was offered."""
    p99, probe = figures["freshness_window"].get("p99_ms"), figures["freshness"]
    kept_share = (figures["accepted_share"] or 0.0) >= SUSTAINED_SHARE
    fresh = p99 is not None and p99 < SUSTAINED_FRESHNESS_P99_MS
    return kept_share and fresh and probe["lost"] == probe["failed_posts"] == 0
