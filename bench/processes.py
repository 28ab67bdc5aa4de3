"""A private Redis for a bench of the Redis side alone (scripts/processes.py starts it, as it does
every server), and what such a server says of itself."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from pathlib import Path

import redis

from scripts import devservices
from scripts.processes import RedisServer, server_binary

# A private Redis's client waits this long for one command (a pipelined fill, MEMORY USAGE).
COMMAND_TIMEOUT_SECONDS = 120


@contextlib.contextmanager
def redis_private(engine: str) -> Iterator[tuple[RedisServer, redis.Redis]]:
    """A private server of `engine` in a directory of its own, and a client to it; both gone
    when the block ends."""
    with tempfile.TemporaryDirectory(prefix=f"bench-{engine}-") as work:
        server = RedisServer(Path(work), engine, server=server_binary(engine))
        with (
            server.start(),
            redis.Redis.from_url(server.url(), socket_timeout=COMMAND_TIMEOUT_SECONDS) as client,
        ):
            yield server, client


def redis_facts(client: redis.Redis) -> tuple[str, str, str]:
    """The engine a server is, its version and its allocator."""
    engine, version = devservices.server_engine(client.info("server"))
    return engine, version, str(client.info("memory")["mem_allocator"])


def set_memory(client: redis.Redis, key: str) -> tuple[int, int]:
    """A sorted set's players and its MEMORY USAGE (SAMPLES 0: every element)."""
    return int(client.zcard(key)), int(client.memory_usage(key, samples=0) or 0)
