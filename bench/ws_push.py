"""Live push benchmark: `python -m bench.ws_push [--sockets 1000 | --ten-thousand]`.

Starts its own web process (uvicorn), Celery worker and broker (a private redis-server) on its
own database (`leaderboard_bench_ws`) and key prefixes, fills a board through the REST API,
opens N WebSockets that each follow one player, posts results for those players at a steady
rate, and reports:

- the delay from a result's commit (its POST answered) to the push that carries the player's
  new points, p50/p99/max, and from the POST being sent, as an upper bound;
- the web process's memory per open socket (RSS with N sockets minus RSS before, over N);
- the web process's CPU time while the results were posted.

Results go to bench/results/ws_push-latest.json; logs to bench/results/logs/ws_push/.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import resource
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse, urlunparse

import httpx
import psycopg
from psycopg import sql
from websockets.asyncio.client import connect

from .errors import BenchError
from .processes import Processes, Started, free_port, stop_on_sigterm, worker_start
from .stats import latency_summary

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
LOGS = RESULTS / "logs" / "ws_push"
DATABASE = "leaderboard_bench_ws"
KEY_PREFIX = "bench-ws:lb:"
CACHE_PREFIX = "bench-ws:cache"
DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/leaderboard"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
BATCH = 1000  # results per POST while filling the board (the API's largest batch)
CONNECTING_AT_ONCE = 200  # handshakes in flight while the sockets open
STARTUP_SECONDS = 60


@dataclass(frozen=True)
class Options:
    sockets: int
    board_players: int
    rate: float
    seconds: float
    top: int
    max_points: int
    worker_concurrency: int
    compression: bool
    seed: int
    output: Path


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
    parser.add_argument("--rate", type=float, default=20.0, help="results posted per second")
    parser.add_argument("--seconds", type=float, default=20.0, help="how long to post")
    parser.add_argument("--top", type=int, default=10, help="top K each socket follows")
    parser.add_argument(
        "--max-points", type=int, default=500, help="largest points of one posted result"
    )
    parser.add_argument("--worker-concurrency", type=int, default=1)
    parser.add_argument(
        "--no-compression",
        action="store_true",
        help="clients do not offer permessage-deflate (browsers do; it costs server memory)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--output", type=Path, default=RESULTS / "ws_push-latest.json")
    args = parser.parse_args(argv)
    sockets = 10_000 if args.ten_thousand else args.sockets
    if sockets < 1 or args.rate <= 0 or args.seconds <= 0:
        parser.error("--sockets, --rate and --seconds must be positive")
    return Options(
        sockets=sockets,
        board_players=max(args.board_players or max(20_000, 2 * sockets), sockets),
        rate=args.rate,
        seconds=args.seconds,
        top=args.top,
        max_points=args.max_points,
        worker_concurrency=args.worker_concurrency,
        compression=not args.no_compression,
        seed=args.seed,
        output=args.output,
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
            "CACHE_KEY_PREFIX": CACHE_PREFIX,
            # One client posts everything: per-client limits would measure the throttle.
            "THROTTLE_PUBLIC_RATE": "",
            "THROTTLE_GAME_SERVER_RATE": "",
            "DEBUG": "false",
            "LOG_LEVEL": "WARNING",
        }

    def process_env(self) -> dict[str, str]:
        path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
        return {**os.environ, **self.variables(), "PYTHONPATH": path}


def database_ensure(database_url: str) -> None:
    parsed = urlparse(database_url)
    info: dict[str, Any] = {
        "host": parsed.hostname or "127.0.0.1",
        "port": parsed.port or 5432,
        "user": unquote(parsed.username or "postgres"),
        "dbname": "postgres",
        "connect_timeout": 5,
    }
    if parsed.password:
        info["password"] = unquote(parsed.password)
    try:
        with psycopg.connect(**info, autocommit=True) as conn:
            if not conn.execute(
                "SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE]
            ).fetchone():
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(DATABASE)))
    except psycopg.OperationalError as exc:
        raise BenchError(f"PostgreSQL does not answer: {exc}") from exc


def django_prepare(env: Environment) -> tuple[int, str]:
    """Migrate the bench database, empty it and its keys; returns (season id, game-server key)."""
    os.environ.update(env.variables())
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", interactive=False, verbosity=0)
    from django.core.cache import cache
    from django.db import connection

    from leaderboards import store
    from matches.models import GameServer, MatchResult, Player, PlayerTotal
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
    _, key = GameServer.objects.create_key(name=f"bench-ws-{uuid.uuid4().hex[:8]}")
    return season.pk, key


def board_size(season_id: int) -> int:
    from leaderboards import store

    return store.board_size(season_id)


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise BenchError(f"no VmRSS for pid {pid}")


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_until(check: Any, what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise BenchError(f"{what}: not within {timeout:.0f} s")
        time.sleep(0.2)


def answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def redis_start(processes: Processes) -> tuple[Started, str]:
    port = free_port()
    started = processes.start(
        "broker",
        [
            "redis-server",
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        dict(os.environ),
    )
    url = f"redis://127.0.0.1:{port}/0"
    import redis

    def ping() -> bool:
        try:
            return bool(redis.Redis.from_url(url, socket_timeout=1).ping())
        except redis.RedisError:
            return False

    wait_until(ping, "the private broker answering", STARTUP_SECONDS)
    return started, url


def web_start(processes: Processes, env: dict[str, str]) -> Started:
    port = free_port()
    started = processes.start(
        "web",
        [
            str(Path(sys.executable).parent / "uvicorn"),
            "config.asgi:application",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--no-access-log",
            "--log-level",
            "warning",
        ],
        env,
    )
    started.url = f"http://127.0.0.1:{port}"
    wait_until(lambda: answers(f"{started.url}/healthz"), "the web process on /healthz", 60)
    return started


def board_fill(web: Started, key: str, options: Options, rng: random.Random) -> list[str]:
    """Post one result for every player on the board; returns the followed players' ids."""
    followed = [f"ws{i}" for i in range(options.sockets)]
    others = [f"bg{i}" for i in range(options.board_players - options.sockets)]
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
        from leaderboards.scoring import points_of

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


def post_steadily(
    web: Started,
    key: str,
    players: list[str],
    options: Options,
    rng: random.Random,
    mirror: MirrorWatch,
) -> list[Posted]:
    """Post one result at a time at `options.rate` per second (a thread of its own)."""
    posted: list[Posted] = []
    count = int(options.rate * options.seconds)
    headers = {"Authorization": f"Api-Key {key}"}
    with httpx.Client(base_url=web.url, headers=headers, timeout=30) as client:
        started = time.monotonic()
        for i in range(count):
            delay = started + i / options.rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            player_id = rng.choice(players)
            sent_at = time.monotonic()
            response = client.post(
                "/api/v1/scores",
                json={
                    "player_id": player_id,
                    "points": rng.randint(1, options.max_points),
                    "match_id": uuid.uuid4().hex,
                },
            )
            committed_at = time.monotonic()
            if response.status_code != 201:
                raise BenchError(f"posting: {response.status_code} {response.text}")
            total = response.json()["total_points"]
            mirror.expect(player_id, total)
            posted.append(Posted(player_id, total, sent_at, committed_at))
    return posted


async def measure(
    web: Started,
    key: str,
    season_id: int,
    players: list[str],
    options: Options,
    rng: random.Random,
) -> dict[str, Any]:
    listener = Listener()
    # Warm the process up (imports, the ticker, connection pools) before the baseline.
    warm, warm_tasks = await sockets_open(web.url, players[:10], options, listener)
    await asyncio.sleep(1)
    for ws in warm:
        await ws.close()
    await asyncio.gather(*warm_tasks)
    await asyncio.sleep(1)
    listener = Listener()
    rss_before = rss_kib(web.pid)

    opening = time.monotonic()
    sockets, tasks = await sockets_open(web.url, players, options, listener)
    deadline = time.monotonic() + 120
    while listener.snapshots < len(players) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    opened_seconds = time.monotonic() - opening
    await asyncio.sleep(2)
    rss_after = rss_kib(web.pid)

    cpu_before = cpu_seconds(web.pid)
    load_before = os.getloadavg()[0]
    with MirrorWatch(season_id) as mirror:
        posted = await asyncio.to_thread(post_steadily, web, key, players, options, rng, mirror)
        await asyncio.sleep(3)  # the last pushes
    cpu_used = cpu_seconds(web.pid) - cpu_before
    load_after = os.getloadavg()[0]

    commit_to_push: list[float] = []
    send_to_push: list[float] = []
    commit_to_mirror: list[float] = []
    mirror_to_push: list[float] = []
    superseded = missed = 0
    latest: dict[str, int] = {}
    for p in posted:
        latest[p.player_id] = max(latest.get(p.player_id, 0), p.total)
    for p in posted:
        arrived = listener.arrivals.get((p.player_id, p.total))
        mirrored = mirror.mirrored_at.get((p.player_id, p.total))
        if mirrored is not None:
            commit_to_mirror.append((mirrored - p.committed_at) * 1000)
        if arrived is not None:
            commit_to_push.append((arrived - p.committed_at) * 1000)
            send_to_push.append((arrived - p.sent_at) * 1000)
            if mirrored is not None:
                mirror_to_push.append((arrived - mirrored) * 1000)
        elif latest[p.player_id] > p.total:
            superseded += 1  # a newer total of the same player replaced it before it was sent
        else:
            missed += 1
    for ws in sockets:
        await ws.close()
    await asyncio.gather(*tasks)

    return {
        "sockets": len(players),
        "snapshots": listener.snapshots,
        "open_seconds": round(opened_seconds, 2),
        "posted": len(posted),
        "pushed": len(commit_to_push),
        "superseded": superseded,
        "missed": missed,
        "messages": listener.by_type,
        "commit_to_push": latency_summary(commit_to_push),
        "send_to_push": latency_summary(send_to_push),
        # The two parts of commit_to_push: the Celery mirror's, then the live ticker's (seen
        # by polling the sorted set every 5 ms, so each part is within about 5 ms).
        "commit_to_mirror": latency_summary(commit_to_mirror),
        "mirror_to_push": latency_summary(mirror_to_push),
        "web_rss_before_mib": round(rss_before / 1024, 1),
        "web_rss_with_sockets_mib": round(rss_after / 1024, 1),
        "web_memory_per_socket_kib": round((rss_after - rss_before) / len(players), 2),
        "web_cpu_seconds_while_posting": round(cpu_used, 2),
        # Everything shares the machine's cores: the harness's clients, the web process, the
        # worker, Redis and PostgreSQL (and whatever else runs), so say how busy it was.
        "load_average_1m": {"before_posting": load_before, "after_posting": load_after},
    }


def raise_open_files_limit(sockets: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = min(hard, max(soft, sockets + 1024))
    resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    if wanted < sockets + 100:
        raise BenchError(f"the open-files limit ({hard}) is too low for {sockets} sockets")


def main(argv: list[str] | None = None) -> int:
    options = options_parse(argv)
    stop_on_sigterm()
    rng = random.Random(options.seed)
    try:
        raise_open_files_limit(options.sockets)
        base = os.environ.get("DATABASE_URL", DEFAULT_DATABASE_URL)
        database_url = urlunparse(urlparse(base)._replace(path=f"/{DATABASE}"))
        database_ensure(database_url)
        with Processes(LOGS) as processes:
            _, broker_url = redis_start(processes)
            env = Environment(
                database_url=database_url,
                redis_url=os.environ.get("REDIS_URL", DEFAULT_REDIS_URL),
                broker_url=broker_url,
            )
            season_id, key = django_prepare(env)
            process_env = env.process_env()
            worker_start(processes, process_env, concurrency=options.worker_concurrency)
            web = web_start(processes, process_env)
            print(f"[ws_push] filling the board with {options.board_players} players", flush=True)
            players = board_fill(web, key, options, rng)
            wait_until(
                lambda: board_size(season_id) >= options.board_players,
                "the mirror to catch up",
                300,
            )
            print(f"[ws_push] {options.sockets} sockets, {options.rate:g} results/s", flush=True)
            figures = asyncio.run(measure(web, key, season_id, players, options, rng))
    except BenchError as exc:
        print(f"[ws_push] ERROR: {exc}", file=sys.stderr, flush=True)
        return 2
    except KeyboardInterrupt:
        return 130
    result = {
        "benchmark": "ws_push",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"cpus": os.cpu_count()},
        "options": {
            "sockets": options.sockets,
            "board_players": options.board_players,
            "rate_per_second": options.rate,
            "seconds": options.seconds,
            "top": options.top,
            "max_points": options.max_points,
            "worker_concurrency": options.worker_concurrency,
            "permessage_deflate": options.compression,
        },
        **figures,
    }
    options.output.parent.mkdir(parents=True, exist_ok=True)
    options.output.write_text(json.dumps(result, indent=2) + "\n")
    commit = figures["commit_to_push"]
    print(
        f"[ws_push] {figures['pushed']}/{figures['posted']} pushes, commit to push "
        f"p50 {commit.get('p50_ms', 0):.0f} ms, p99 {commit.get('p99_ms', 0):.0f} ms; "
        f"{figures['web_memory_per_socket_kib']:.1f} KiB per socket; "
        f"written to {options.output}",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
