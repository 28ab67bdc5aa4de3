"""One private deployment of the service for a fault test: its own database in the session's
PostgreSQL cluster, its own Redis (and broker), web servers and a Celery worker; if asked, the
leaderboard data on a Redis Cluster, and beat with the jobs worker running the periodic tasks."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Mapping
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


def template_create(postgres: PostgresCluster, name: str) -> str:
    """A migrated, bootstrapped database to copy each deployment's from; returns a game-server
    key valid in every copy."""
    postgres.create_database(name)
    env = django_env(
        database_url=postgres.url(name),
        # Nothing below talks to Redis; an unreachable address makes sure of it.
        redis_url="redis://127.0.0.1:1/0",
        broker_url="redis://127.0.0.1:1/0",
        key_prefix="fault:template:",
    )
    manage("migrate", "--noinput", env=env)
    manage("bootstrap", env=env)
    return manage("create_game_server", "fault tests", env=env).strip().splitlines()[-1]


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
        self.worker_concurrency = 2
        self.jobs_worker: CeleryWorker | None = None
        self.rebuilds_worker: CeleryWorker | None = None
        self.beat: CeleryBeat | None = None
        self.replicas: list[RedisServer] = []
        self._started: dict[str, int] = {}
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
        persistent_broker: bool = False,
        replicas: int = 0,
        worker_concurrency: int = 2,
        extra_env: Mapping[str, str] | None = None,
        rebuilds: bool = False,
    ) -> Deployment:
        """Database, Redis, web servers and a worker; the broker is the data Redis itself
        (the default deployment) unless `separate_broker` (a Redis of its own) or `broker_url`
        (any broker, RabbitMQ's among them). With `leaderboard_cluster`, the leaderboard data
        is on that Redis Cluster (LEADERBOARD_REDIS_CLUSTER) and the private Redis keeps the
        other roles; with `scheduled`, beat and the jobs worker run the periodic tasks.
        `persistent_broker`: the broker's Redis keeps its queues across a restart (its
        append-only file); `replicas`: that many replicas of the leaderboard Redis, read from
        (LEADERBOARD_REDIS_REPLICA_URLS); `extra_env`: settings for every process. With
        `rebuilds` (or `scheduled`), the rebuilds worker heals the seasons found lost."""
        self.cluster.create_database(self.database, template=self.template)
        self._cleanup.callback(self._drop_database)
        self._cleanup.callback(self.redis.stop)
        self.redis.start()
        broker_url = broker_url or self.redis.url()
        if separate_broker:
            self.broker = RedisServer(self.logs, name="broker", persistent=persistent_broker)
            self._cleanup.callback(self.broker.stop)
            self.broker.start()
            broker_url = self.broker.url()
        self.broker_url = broker_url
        roles: dict[str, str] = {}
        for index in range(replicas):
            replica = RedisServer(self.logs, name=f"replica-{index}", replica_of=self.redis)
            self.replicas.append(replica)
            self._cleanup.callback(replica.stop)
            replica.start()
        if self.replicas:
            roles["LEADERBOARD_REDIS_REPLICA_URLS"] = ",".join(r.url() for r in self.replicas)
        if leaderboard_cluster is not None:
            self.leaderboard_cluster = leaderboard_cluster
            roles |= {
                "LEADERBOARD_REDIS_URL": leaderboard_cluster.url,
                "LEADERBOARD_REDIS_CLUSTER": "1",
            }
        self.env = django_env(
            database_url=self.cluster.url(self.database),
            redis_url=self.redis.url(),
            broker_url=broker_url,
            key_prefix=self.prefix,
            **roles,
            **(extra_env or {}),
        )
        self.worker_concurrency = worker_concurrency
        for index in range(web_servers):
            web = WebServer(env=self.env, log=self.logs / f"web-{index}.log")
            self.web_servers.append(web)
            self._cleanup.callback(web.stop)
            web.start()
        self.start_worker()
        if rebuilds or scheduled:
            self.start_rebuilds_worker()
        if scheduled:
            self.start_jobs_worker()
            self.start_beat()
        return self

    def start_worker(self) -> CeleryWorker:
        assert self.worker is None or not self.worker.process.running()
        self.workers_started += 1
        self.worker = CeleryWorker(
            env=self.env,
            log=self.logs / f"worker-{self.workers_started}.log",
            concurrency=self.worker_concurrency,
        )
        self._cleanup.callback(self.worker.stop)
        return self.worker.start()

    def _log(self, name: str) -> Path:
        """A new log file per start of a role (a restarted process's readiness is read from
        its own log)."""
        self._started[name] = self._started.get(name, 0) + 1
        return self.logs / f"{name}-{self._started[name]}.log"

    def start_jobs_worker(self) -> CeleryWorker:
        """The Procfile's `jobs` worker: the long jobs' queue, one at a time."""
        assert self.jobs_worker is None or not self.jobs_worker.process.running()
        self.jobs_worker = CeleryWorker(
            env=self.env, log=self._log("jobs-worker"), queues="jobs", concurrency=1
        )
        self._cleanup.callback(self.jobs_worker.stop)
        return self.jobs_worker.start()

    def start_rebuilds_worker(self) -> CeleryWorker:
        """The Procfile's `rebuilds` worker: heals and operators' jobs, two at a time."""
        assert self.rebuilds_worker is None or not self.rebuilds_worker.process.running()
        self.rebuilds_worker = CeleryWorker(
            env=self.env, log=self._log("rebuilds-worker"), queues="rebuilds", concurrency=2
        )
        self._cleanup.callback(self.rebuilds_worker.stop)
        return self.rebuilds_worker.start()

    def start_beat(self) -> CeleryBeat:
        assert self.beat is None or not self.beat.process.running()
        self.beat = CeleryBeat(env=self.env, log=self._log("beat"))
        self._cleanup.callback(self.beat.stop)
        return self.beat.start()

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

    def standings_problems(self, *, live_only: bool = False) -> list[str]:
        with self.data_redis() as r:
            return checks.standings_problems(self.db(), r, self.prefix, live_only=live_only)

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
