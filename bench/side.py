"""What the side benchmarks (bench.shards, bench.engines, bench.segments) share: their run, from
the options to a results file and a table, and a private Redis with what it says of itself."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import redis

from scripts import devservices
from scripts.processes import server_binary

from . import core
from .processes import Processes, Started, redis_start
from .scores import ID_BYTES

# A private Redis's client waits this long for one command (a pipelined fill, MEMORY USAGE).
COMMAND_TIMEOUT_SECONDS = 120
Result = dict[str, Any]


def side_main(
    name: str,
    doc: str | None,
    options: Sequence[tuple[Any, ...]],
    argv: list[str] | None,
    *,
    least: dict[str, int],
    measure: Callable[[Any, Result], None],
    report: Callable[[Result], str],
) -> int:
    """`python -m bench.<name>`: its options (with --seed and --output), each of `least` at its
    least (the first, the players, named in the results' head); `measure(options, result)` fills
    the results, written to --output and shown by `report`. Returns the exit code."""
    parsed = core.options_parse(
        f"bench.{name}", doc, (*options, *core.output_option(f"{name}-latest.json")), argv
    )
    for option, value in least.items():
        if getattr(parsed, option) < value:
            parsed.error(f"--{option} must be at least {value}")
    count = next(iter(least))
    result: Result = {"benchmark": name, "when": core.now_stamp()}
    result |= {count: getattr(parsed, count), "id_bytes": ID_BYTES, "seed": parsed.seed}
    with core.Program(name) as run:
        measure(parsed, result)
    if run.code:
        return run.code
    core.json_write(result, parsed.output)
    print(report(result))
    return 0


@contextlib.contextmanager
def redis_private(engine: str) -> Iterator[tuple[Started, redis.Redis]]:
    """A private server of `engine` in a directory of its own, and a client to it; both gone
    when the block ends."""
    with (
        tempfile.TemporaryDirectory(prefix=f"bench-{engine}-") as work,
        Processes(Path(work) / "logs") as processes,
    ):
        server = server_binary(engine)
        started = redis_start(processes, name=engine, server=server, directory=Path(work))
        with redis.Redis.from_url(started.url, socket_timeout=COMMAND_TIMEOUT_SECONDS) as client:
            yield started, client


def redis_facts(client: redis.Redis) -> tuple[str, str, str]:
    """The engine a server is, its version and its allocator."""
    engine, version = devservices.server_engine(client.info("server"))
    return engine, version, str(client.info("memory")["mem_allocator"])


def set_memory(client: redis.Redis, key: str) -> tuple[int, int]:
    """A sorted set's players and its MEMORY USAGE (SAMPLES 0: every element)."""
    return int(client.zcard(key)), int(client.memory_usage(key, samples=0) or 0)
