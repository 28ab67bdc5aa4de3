"""One private deployment of the service for a fault test: its own database in the session's
PostgreSQL cluster, its own Redis (and broker), web servers and a Celery worker; if asked, the
leaderboard data on a Redis Cluster, and beat with the jobs worker running the periodic tasks."""

from __future__ import annotations

import contextlib
import uuid
from pathlib import Path

import psycopg
import redis
from celery import Celery

from tests.redis_cluster import LocalRedisCluster

from . import checks
from .procs import (
    CeleryBeat,
    CeleryWorker,
    PostgresCluster,
    RedisServer,
    WebServer,
    django_env,
    manage,
    tail,
    wait_until,
)

BOARD = "global"


class Deployment:
    def __init__(self, *, cluster: PostgresCluster, template: str, key: str, logs: Path) -> None:
        self.cluster = cluster
        self.template = template
        self.key = key
        self.logs = logs
        self.database = f"lb_{uuid.uuid4().hex[:12]}"
        self.prefix = f"fault:{uuid.uuid4().hex[:8]}:lb:"
        self.redis = RedisServer(logs, name="redis")
        self.broker: RedisServer | None = None
        self.web_servers: list[WebServer] = []
        self.worker: CeleryWorker | None = None
        self.workers_started = 0
        self.leaderboard_cluster: LocalRedisCluster | None = None
        self._conn: psycopg.Connection | None = None
        self._celery: Celery | None = None
        self.env: dict[str, str] = {}
        self.broker_url = ""
        self._cleanup = contextlib.ExitStack()

    # --- starting and stopping ------------------------------------------------------------

    def start(
        self,
        *,
        separate_broker: bool = False,
        broker_url: str | None = None,
        web_servers: int = 1,
        leaderboard_cluster: LocalRedisCluster | None = None,
        scheduled: bool = False,
    ) -> Deployment:
        """Database, Redis, web servers and a worker; the broker is the data Redis itself
        (the default deployment) unless `separate_broker` (a Redis of its own) or `broker_url`
        (any broker, RabbitMQ's among them). With `leaderboard_cluster`, the leaderboard data
        is on that Redis Cluster (LEADERBOARD_REDIS_CLUSTER) and the private Redis keeps the
        other roles; with `scheduled`, beat and the jobs worker run the periodic tasks."""
        self.cluster.create_database(self.database, template=self.template)
        self._cleanup.callback(self._drop_database)
        self._cleanup.callback(self.redis.stop)
        self.redis.start()
        broker_url = broker_url or self.redis.url()
        if separate_broker:
            self.broker = RedisServer(self.logs, name="broker")
            self._cleanup.callback(self.broker.stop)
            self.broker.start()
            broker_url = self.broker.url()
        self.broker_url = broker_url
        on_cluster: dict[str, str] = {}
        if leaderboard_cluster is not None:
            self.leaderboard_cluster = leaderboard_cluster
            on_cluster = {
                "LEADERBOARD_REDIS_URL": leaderboard_cluster.url,
                "LEADERBOARD_REDIS_CLUSTER": "1",
            }
        self.env = django_env(
            database_url=self.cluster.url(self.database),
            redis_url=self.redis.url(),
            broker_url=broker_url,
            key_prefix=self.prefix,
            **on_cluster,
        )
        for index in range(web_servers):
            web = WebServer(env=self.env, log=self.logs / f"web-{index}.log")
            self.web_servers.append(web)
            self._cleanup.callback(web.stop)
            web.start()
        self.start_worker()
        if scheduled:
            jobs = CeleryWorker(
                env=self.env, log=self.logs / "jobs-worker.log", queues="jobs", concurrency=1
            )
            self._cleanup.callback(jobs.stop)
            jobs.start()
            beat = CeleryBeat(env=self.env, log=self.logs / "beat.log")
            self._cleanup.callback(beat.stop)
            beat.start()
        return self

    def start_worker(self) -> CeleryWorker:
        assert self.worker is None or not self.worker.process.running()
        self.workers_started += 1
        self.worker = CeleryWorker(
            env=self.env, log=self.logs / f"worker-{self.workers_started}.log"
        )
        self._cleanup.callback(self.worker.stop)
        return self.worker.start()

    def close(self) -> None:
        """Stop everything this deployment started, newest first, and drop its database; each
        step runs even when an earlier one failed."""
        self._cleanup.close()

    def _drop_database(self) -> None:
        if not self.cluster.running():
            self.cluster.start()
        with self.cluster.connect() as conn:
            conn.execute(
                psycopg.sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
                    psycopg.sql.Identifier(self.database)
                )
            )

    def logs_tail(self) -> str:
        paths = [*sorted(self.logs.glob("*.log")), self.cluster.log]
        return "\n".join(f"--- {path.name}\n{tail(path, 30)}" for path in paths)

    # --- looking inside ---------------------------------------------------------------------

    @property
    def base_urls(self) -> list[str]:
        return [web.base_url for web in self.web_servers]

    def db(self) -> psycopg.Connection:
        """A connection to the deployment's database, reopened after a PostgreSQL restart."""
        if self._conn is None or self._conn.closed or self._conn.broken:
            self._conn = self.cluster.connect(self.database)
            self._cleanup.callback(self._conn.close)
        return self._conn

    def data_redis(self) -> redis.Redis | redis.RedisCluster:
        """A client of the leaderboard data: the private Redis, or the Cluster's nodes."""
        if self.leaderboard_cluster is not None:
            return redis.RedisCluster.from_url(
                self.leaderboard_cluster.url, decode_responses=True, socket_timeout=5
            )
        return self.redis.client()

    def celery(self) -> Celery:
        """A Celery client on the deployment's broker, to deliver tasks as the web would."""
        if self._celery is None:
            self._celery = Celery("fault-tests", broker=self.broker_url, set_as_current=False)
            self._cleanup.callback(self._celery.close)
        return self._celery

    def season_slugs(self) -> list[str]:
        rows = self.db().execute(
            "SELECT DISTINCT s.slug FROM matches_playertotal t"
            " JOIN seasons_season s ON s.id = t.season_id ORDER BY 1"
        )
        return [row[0] for row in rows]

    def mirrored(self, player_ids: list[str]) -> bool:
        """Whether these players' ZSET scores equal PostgreSQL's totals (all of them exist)."""
        expected = checks.expected_standings(self.db())
        with self.data_redis() as r:
            for season_id, want in expected.items():
                players = [p for p in player_ids if p in want]
                if not players:
                    continue
                have = r.zmscore(checks.standings_key(self.prefix, season_id), players)
                if have != [want[p] for p in players]:
                    return False
        return any(p in want for want in expected.values() for p in player_ids)

    def standings_problems(self) -> list[str]:
        with self.data_redis() as r:
            return checks.standings_problems(self.db(), r, self.prefix)

    def assert_invariant(
        self, *, confirmed: dict[checks.ResultKey, int], sent: dict[tuple[str, str], int]
    ) -> None:
        with self.data_redis() as r:
            checks.assert_invariant(self.db(), r, self.prefix, confirmed=confirmed, sent=sent)

    # --- operations, run the way an operator runs them -------------------------------------

    def sweep(self) -> int:
        """The periodic sweep, once: mirror standings committed but not yet in Redis (however
        young: the test waits on them)."""
        out = manage(
            "shell",
            "-c",
            "from datetime import timedelta; "
            "from leaderboards.services import totals_mirror_pending; "
            "print(totals_mirror_pending(older_than=timedelta(0)))",
            env=self.env,
        )
        return int(out.strip().splitlines()[-1])

    def boards_add(self, slugs: list[str], *, shards: int = 1) -> None:
        """More boards on the monthly schedule, each with its running season planned."""
        manage(
            "shell",
            "-c",
            "from seasons.models import Board, ScheduleKind; "
            "from seasons.planning import board_seasons_plan; "
            f"[board_seasons_plan(board=Board.objects.create(slug=slug, name=slug, "
            f"schedule=ScheduleKind.MONTHLY, shards={shards})) for slug in {slugs!r}]",
            env=self.env,
        )

    def running_seasons(self) -> dict[str, int]:
        """Each board's running season id, by board slug."""
        rows = self.db().execute(
            "SELECT b.slug, s.id FROM seasons_season s JOIN seasons_board b ON b.id = s.board_id"
            " WHERE s.starts_at <= now() AND now() < s.ends_at ORDER BY 1"
        )
        return {slug: season_id for slug, season_id in rows}

    def rebuild(self, season: str) -> str:
        return manage(
            "rebuild_leaderboard",
            "--board",
            BOARD,
            "--season",
            season,
            "--no-progress",
            env=self.env,
        )

    def settle(self, *, timeout: float = 30.0, sweep: bool = True) -> None:
        """Wait until the mirror has caught up with PostgreSQL: every total recorded as
        mirrored and every ZSET equal to PostgreSQL (running the sweep in between if asked)."""

        def caught_up() -> bool:
            if sweep:
                self.sweep()
            return checks.unmirrored(self.db()) == 0 and not self.standings_problems()

        wait_until(
            caught_up,
            timeout=timeout,
            interval=0.5,
            what=lambda: (
                f"the mirror catching up ({checks.unmirrored(self.db())} totals unmirrored; "
                f"{self.standings_problems()})"
            ),
        )
