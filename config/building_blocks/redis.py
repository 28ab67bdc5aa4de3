"""Redis connections by role, shared by every user of Redis here; the driver under them (a client
per process and one per event loop, Lua scripts by SHA-1, pipelines) is redis_connection.py. It
names no key and holds no script: each user owns its own (leaderboards/store/ the leaderboards',
config/building_blocks/throttles.py the rate limits', config/building_blocks/minute_counts.py the
web processes' counts per minute).

Each role has its own setting, and each defaults to REDIS_URL, so one local Redis serves all:
- the leaderboard data (`leaderboard()`: LEADERBOARD_REDIS_URL, a Redis Cluster with
  LEADERBOARD_REDIS_CLUSTER), and its replicas for shared reads (`leaderboard_reads()`);
- the players' names and avatars (`profiles()`: PROFILES_REDIS_URL, the leaderboard data's by
  default);
- the rate limits (`rate_limits()`: CACHE_REDIS_URL, with Django's cache);
- the web processes' counts per minute (`minute_counts_redis()`: CACHE_REDIS_URL too).
Shared reads may go to a replica of the leaderboard primary (LEADERBOARD_REDIS_REPLICA_URLS,
`replica_script_run` and its kin): a replica that is behind, unlinked or down is left for the
primary, so a reader is never given a wrong answer for a replica's sake.
Roles on the same URL share one Connection, so the event loop still sends a rate-limit count
and a read in one round trip. The module-level functions (`client()`, `scripts_run()`...) are
the leaderboard data's, the gateway's connection.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import redis
from django.conf import settings

from .redis_connection import Connection as Connection
from .redis_connection import ScriptCall as ScriptCall
from .redis_connection import evalsha as evalsha

logger = logging.getLogger(__name__)

# --- The roles ----------------------------------------------------------------------------------

_connections: dict[tuple[str, bool], Connection] = {}
_connections_lock = threading.Lock()


def _connection(url: str, *, cluster: bool = False) -> Connection:
    key = (url, cluster)
    found = _connections.get(key)
    if found is None:
        with _connections_lock:
            found = _connections.setdefault(key, Connection(url, cluster=cluster))
    return found


_leaderboard: Connection | None = None


def leaderboard() -> Connection:
    """The leaderboard data's primary (or cluster): every write, and every read that must see
    the latest write."""
    global _leaderboard
    if _leaderboard is None:
        _leaderboard = _connection(
            settings.LEADERBOARD_REDIS_URL, cluster=settings.LEADERBOARD_REDIS_CLUSTER
        )
    return _leaderboard


def profiles() -> Connection:
    """The profile directory (leaderboards/store/profiles.py): names and avatars, no expiry."""
    return _connection(settings.PROFILES_REDIS_URL, cluster=settings.PROFILES_REDIS_CLUSTER)


def rate_limits() -> Connection:
    """The rate limits' counters (config/building_blocks/throttles.py), beside Django's cache."""
    return _connection(settings.CACHE_REDIS_URL)


def minute_counts_redis() -> Connection:
    """The web processes' counts per minute (config/building_blocks/minute_counts.py): short-lived
    counters like the rate limits', beside them."""
    return _connection(settings.CACHE_REDIS_URL)


def connections_forget() -> None:
    """Forget every connection (after the settings that name them changed, in tests)."""
    global _leaderboard, _replicas, _in_service
    with _connections_lock:
        _connections.clear()
        _leaderboard = None
        _in_service = None
        if _replicas is not None:
            _replicas.stop()
        _replicas = None


# --- Replicas for shared reads --------------------------------------------------------------


class Replicas:
    """The leaderboard primary's replicas (one Redis each, not a Cluster), and which of them may
    answer now. A thread of each process checks them every LEADERBOARD_REPLICA_CHECK_SECONDS,
    never a request: a replica answers only while it is linked to its primary (not syncing)
    and has applied everything the primary had written at the check before (replication
    offsets), so it is at most about one check behind. A replica whose read fails is left at
    once, until a check finds it well again."""

    def __init__(self, primary: Connection, urls: Sequence[str], *, check_seconds: float) -> None:
        self.primary = primary
        self.connections = [Connection(url) for url in urls]
        self.check_seconds = check_seconds
        self.usable: tuple[Connection, ...] = ()
        self._turn = 0
        self._pid: int | None = None
        self._stopped = threading.Event()
        self._primary_offset: int | None = None
        self._lock = threading.Lock()

    def pick(self) -> Connection | None:
        """A replica that may answer now (in turn), or None: read the primary."""
        if self._pid != os.getpid():
            self._start()
        usable = self.usable
        if not usable:
            return None
        self._turn += 1
        return usable[self._turn % len(usable)]

    def failed(self, replica: Connection) -> None:
        self.usable = tuple(c for c in self.usable if c is not replica)
        logger.warning("leaderboard replica %s failed a read; the primary answers", replica.url)

    def _start(self) -> None:
        with self._lock:
            if self._pid == os.getpid():
                return
            # A forked process (a worker's child) checks for itself, from nothing known.
            self._pid = os.getpid()
            self.usable = ()
            self._primary_offset = None
            self.check()
            threading.Thread(target=self._run, name="replica-check", daemon=True).start()

    def _run(self) -> None:
        while not self._stopped.wait(self.check_seconds):
            try:
                self.check()
            except Exception:  # the thread must go on checking whatever one check met
                logger.exception("checking the leaderboard replicas failed")

    def check(self) -> None:
        try:
            offset = int(self.primary.client().info("replication")["master_repl_offset"])
        except redis.RedisError:
            offset = None  # the primary is down: nothing to compare with; keep what was known
        required = self._primary_offset if self._primary_offset is not None else offset
        if offset is not None:
            self._primary_offset = offset
        if required is None:
            return
        self.usable = tuple(c for c in self.connections if self._caught_up(c, required))

    def _caught_up(self, replica: Connection, primary_offset: int) -> bool:
        try:
            info = replica.client().info("replication")
        except redis.RedisError:
            return False
        return (
            info.get("role") == "slave"
            and info.get("master_link_status") == "up"
            and int(info.get("master_sync_in_progress", 1)) == 0
            and int(info.get("slave_repl_offset", -1)) >= primary_offset
        )

    def stop(self) -> None:
        self._stopped.set()


_replicas: Replicas | None = None


def replicas_configured() -> bool:
    """Whether shared reads may go to replicas: some are named, and the data is not on a
    Cluster (whose replicas are its own business)."""
    return bool(settings.LEADERBOARD_REDIS_REPLICA_URLS) and not settings.LEADERBOARD_REDIS_CLUSTER


def replicas() -> Replicas | None:
    """The leaderboard's replicas, or None when none are configured."""
    global _replicas
    if _replicas is None:
        if not replicas_configured():
            return None
        with _connections_lock:
            if _replicas is None:
                _replicas = Replicas(
                    leaderboard(),
                    settings.LEADERBOARD_REDIS_REPLICA_URLS,
                    check_seconds=settings.LEADERBOARD_REPLICA_CHECK_SECONDS,
                )
    return _replicas


_REPLICA_FAILURES = (redis.ConnectionError, redis.TimeoutError, redis.ReadOnlyError)


def _on_replica(run: Callable[[Connection], Any]) -> Any:
    chosen = replicas()
    replica = chosen.pick() if chosen is not None else None
    if replica is not None:
        try:
            return run(replica)
        except _REPLICA_FAILURES:
            chosen.failed(replica)  # type: ignore[union-attr]
    return run(leaderboard())


async def _aon_replica(run: Callable[[Connection], Awaitable[Any]]) -> Any:
    chosen = replicas()
    replica = chosen.pick() if chosen is not None else None
    if replica is not None:
        try:
            return await run(replica)
        except _REPLICA_FAILURES:
            chosen.failed(replica)  # type: ignore[union-attr]
    return await run(leaderboard())


def replica_script_run(call: ScriptCall) -> Any:
    """A read-only script call on a replica that may answer, else on the primary."""
    return _on_replica(lambda connection: connection.scripts_run([call])[0])


def replica_commands_run(commands: list[tuple[Any, ...]]) -> list[Any]:
    """Read-only commands in one pipeline on a replica that may answer, else on the primary."""
    return _on_replica(lambda connection: connection.commands_run(commands))


async def areplica_script_run(call: ScriptCall) -> Any:
    """replica_script_run from the event loop."""
    return await _aon_replica(lambda connection: connection.loop_script_run(call))


async def areplica_commands_run(commands: list[tuple[Any, ...]]) -> list[Any]:
    """replica_commands_run from the event loop."""
    return await _aon_replica(lambda connection: connection.loop_commands_run(commands))


# A replica in service acknowledges its primary every second; one not heard from for longer is
# cut off (its link not closed yet), and one syncing (state other than "online") has nothing yet.
_REPLICA_SILENT_SECONDS = 2
# When the replicas in service were counted (time.monotonic()) and how many there were.
_in_service: tuple[float, int] | None = None


def replicas_in_service() -> int:
    """How many of the configured replicas the primary streams to now: linked, synced and heard
    from within a couple of seconds. Read from the primary's INFO at most once every
    LEADERBOARD_REPLICA_CHECK_SECONDS per process, so a write costs no round trip for it."""
    global _in_service
    now = time.monotonic()
    known = _in_service
    if known is not None and now - known[0] < settings.LEADERBOARD_REPLICA_CHECK_SECONDS:
        return known[1]
    try:
        info = leaderboard().client().info("replication")
    except redis.RedisError:
        return 0  # the primary is away: the writes that asked fail on their own
    streaming = sum(
        1
        for name, replica in info.items()
        if name.startswith("slave")
        and isinstance(replica, dict)
        and replica.get("state") == "online"
        and int(replica.get("lag", 0)) <= _REPLICA_SILENT_SECONDS
    )
    # The primary may stream to replicas of its own (a backup's) besides the configured ones.
    count = min(streaming, len(settings.LEADERBOARD_REDIS_REPLICA_URLS))
    _in_service = (now, count)
    return count


def replicas_acknowledge() -> tuple[Any, ...] | None:
    """The WAIT command that holds a writer until the replicas in service have its writes
    (bounded by LEADERBOARD_REPLICA_WAIT_MS), to send in the writes' own pipeline; None without
    replicas in service. A replica down or syncing is not waited for: it would add the whole
    bound to every write, and no read goes to it meanwhile (Replicas)."""
    if not replicas_configured():
        return None
    count = replicas_in_service()
    if count == 0:
        return None
    return ("WAIT", count, settings.LEADERBOARD_REPLICA_WAIT_MS)


# The leaderboard data's shortcuts: the gateway's (leaderboards/store.py) connection.
def client() -> Any:
    return leaderboard().client()


def script(source: str) -> Any:
    return leaderboard().script(source)


def script_run(call: ScriptCall) -> Any:
    return leaderboard().script_run(call)


def scripts_run(calls: Sequence[ScriptCall]) -> list[Any]:
    return leaderboard().scripts_run(calls)


def commands_run(commands: list[tuple[Any, ...]]) -> list[Any]:
    return leaderboard().commands_run(commands)


def loop_send(*command: Any) -> asyncio.Future[Any]:
    return leaderboard().loop_send(*command)


def loop_script_run(call: ScriptCall) -> asyncio.Future[Any]:
    return leaderboard().loop_script_run(call)


def mget(keys: Sequence[str]) -> list[Any]:
    return leaderboard().mget(keys)


def loop_mget(keys: Sequence[str]) -> Awaitable[list[Any]]:
    return leaderboard().loop_mget(keys)


def loop_commands_run(commands: list[tuple[Any, ...]]) -> Awaitable[list[Any]]:
    """Commands from the event loop, with the others of this turn of the loop (one round trip)."""
    return leaderboard().loop_commands_run(commands)
