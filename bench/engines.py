"""Memory per player on each engine the service runs on, one sorted set on a private Redis and
Valkey (bench/README.md, "Memory per player by engine"); its private server serves the others."""

from __future__ import annotations

import contextlib
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import redis

from scripts import devservices
from scripts.processes import REDIS_ENGINES, RedisServer, server_binary

from .core import BenchError, at_least, program_main, say, table
from .scores import ID_BYTES, standings

KEY = "standings"
MEMBERS_PER_ZADD = 10_000
ZADDS_PER_ROUND_TRIP = 10
OPTIONS = (
    ("--members", 1_000_000, "players"),
    ("--engines", list(REDIS_ENGINES), "the engines measured"),
)
# A private Redis's client waits this long for one command (a pipelined fill, MEMORY USAGE).
COMMAND_TIMEOUT_SECONDS = 120


@contextlib.contextmanager
def redis_private(engine: str) -> Iterator[tuple[RedisServer, redis.Redis]]:
    """A private server of `engine` in a directory of its own, and a client to it; both gone
    when the block ends."""
    with tempfile.TemporaryDirectory(prefix=f"bench-{engine}-") as work:
        server = RedisServer(Path(work), engine, server=server_binary(engine))
        url, timeout = server.url(), COMMAND_TIMEOUT_SECONDS
        with server.start(), redis.Redis.from_url(url, socket_timeout=timeout) as client:
            yield server, client


def redis_facts(client: redis.Redis) -> tuple[str, str, str]:
    """The engine a server is, its version and its allocator."""
    engine, version = devservices.server_engine(client.info("server"))
    return engine, version, str(client.info("memory")["mem_allocator"])


def set_memory(client: redis.Redis, key: str) -> tuple[int, int]:
    """A sorted set's players and its MEMORY USAGE (SAMPLES 0: every element)."""
    return int(client.zcard(key)), int(client.memory_usage(key, samples=0) or 0)


def engine_measure(engine: str, options: Any) -> dict[str, Any]:
    """N players in one sorted set, ZADDs of MEMBERS_PER_ZADD pipelined by the round trip, scored
    as the service scores a highest-first board: used_memory's growth (what the allocator handed
    out) and MEMORY USAGE of the key, a player each."""
    with redis_private(engine) as (started, client):
        named, version, allocator = redis_facts(client)
        before, began = int(client.info("memory")["used_memory"]), time.monotonic()
        pipe = client.pipeline(transaction=False)
        for chunk in standings(options.members, options.seed, MEMBERS_PER_ZADD):
            pipe.zadd(KEY, dict(chunk))
            if len(pipe) >= ZADDS_PER_ROUND_TRIP:
                pipe.execute()
        pipe.execute()
        fill_seconds, after = time.monotonic() - began, int(client.info("memory")["used_memory"])
        card, usage = set_memory(client, KEY)
        encoding = client.object("encoding", KEY)
    if card != options.members:
        raise BenchError(f"{engine}: {card} players in the set, {options.members} added")
    return {
        "server": started.process.args[0],
        "pid": started.pid,
        "version": version,
        "server_name": named,
        "mem_allocator": allocator,
        "encoding": encoding.decode() if isinstance(encoding, bytes) else str(encoding),
        "members": card,
        "used_memory_before": before,
        "used_memory_after": after,
        "memory_usage_key": usage,
        # What the allocator handed out for the set, and the server's own estimate of the key
        # (Redis 7.0's counts a dict entry at its struct size, below jemalloc's size class).
        "used_memory_growth_per_member": round((after - before) / card, 1),
        "memory_usage_per_member": round(usage / card, 1),
        "fill_seconds": round(fill_seconds, 2),
    }


def measure(options: Any, result: dict[str, Any]) -> None:
    result |= {"members": options.members, "id_bytes": ID_BYTES, "seed": options.seed}
    result["engines"] = {}
    for engine in options.engines:
        say(f"{engine}: {options.members:,} players", "engines")
        result["engines"][engine] = engine_measure(engine, options)


def report(result: dict[str, Any]) -> str:
    rows = [
        (engine, f["version"], f["mem_allocator"], f"{f['used_memory_growth_per_member']:.1f}",
         f"{f['memory_usage_per_member']:.1f}")
        for engine, f in result["engines"].items()
    ]  # fmt: skip
    header = "Engine | Version | Allocator | Bytes a player (used_memory growth) | MEMORY USAGE of "
    header += "the key a player"
    title = f"Memory per player: one sorted set of {result['members']:,} players, {ID_BYTES}-byte"
    title += " ids, composite scores"
    return "\n".join([title, "", *table(header, "lllrr", rows)])


def main(argv: list[str] | None = None) -> int:
    check = at_least(members=1)
    return program_main("engines", __doc__, OPTIONS, argv, check, measure, report)


if __name__ == "__main__":
    sys.exit(main())
