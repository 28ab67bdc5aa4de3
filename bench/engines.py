"""Memory per player on each engine the service runs on: `python -m bench.engines [--members N]`.
One sorted set of N players on a private Redis 7 and Valkey 9 (bench/README.md, "Memory per player
by engine"). Results: bench/results/engines-latest.json, and a Markdown table."""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import redis

from scripts import devservices
from scripts.processes import REDIS_ENGINES, server_binary

from .core import (
    BenchError,
    Program,
    json_write,
    now_stamp,
    options_parse,
    output_option,
    say,
    table,
)
from .processes import Processes, redis_start
from .scores import ID_BYTES, standings

KEY = "standings"
MEMBERS_PER_ZADD = 10_000
ZADDS_PER_ROUND_TRIP = 10
COMMAND_TIMEOUT_SECONDS = 120
OPTIONS = (
    ("--members", 1_000_000, "players"),
    ("--engines", list(REDIS_ENGINES), "the engines measured"),
    *output_option("engines-latest.json"),
)


def engine_measure(
    processes: Processes, engine: str, options: Any, directory: Path
) -> dict[str, Any]:
    """N players in one sorted set, ZADDs of MEMBERS_PER_ZADD pipelined by the round trip, scored
    as the service scores a highest-first board: used_memory's growth (what the allocator handed
    out) and MEMORY USAGE of the key (SAMPLES 0: every element), a player each."""
    directory.mkdir(parents=True, exist_ok=True)
    started = redis_start(processes, name=engine, server=server_binary(engine), directory=directory)
    with (
        processes.running(started),
        redis.Redis.from_url(started.url, socket_timeout=COMMAND_TIMEOUT_SECONDS) as client,
    ):
        named, version = devservices.server_engine(client.info("server"))
        before, began = client.info("memory"), time.monotonic()
        pipe = client.pipeline(transaction=False)
        for chunk in standings(options.members, options.seed, MEMBERS_PER_ZADD):
            pipe.zadd(KEY, dict(chunk))
            if len(pipe) >= ZADDS_PER_ROUND_TRIP:
                pipe.execute()
        pipe.execute()
        fill_seconds, after = time.monotonic() - began, client.info("memory")
        usage, card = int(client.memory_usage(KEY, samples=0) or 0), int(client.zcard(KEY))
        encoding = client.object("encoding", KEY)
    if card != options.members:
        raise BenchError(f"{engine}: {card} players in the set, {options.members} added")
    grown = int(after["used_memory"]) - int(before["used_memory"])
    return {
        "server": started.args[0],
        "pid": started.pid,
        "version": version,
        "server_name": named,
        "mem_allocator": str(after["mem_allocator"]),
        "encoding": encoding.decode() if isinstance(encoding, bytes) else str(encoding),
        "members": card,
        "used_memory_before": int(before["used_memory"]),
        "used_memory_after": int(after["used_memory"]),
        "memory_usage_key": usage,
        # What the allocator handed out for the set, and the server's own estimate of the key
        # (Redis 7.0's counts a dict entry at its struct size, below jemalloc's size class).
        "used_memory_growth_per_member": round(grown / card, 1),
        "memory_usage_per_member": round(usage / card, 1),
        "fill_seconds": round(fill_seconds, 2),
    }


def main(argv: list[str] | None = None) -> int:
    options = options_parse("bench.engines", __doc__, OPTIONS, argv)
    if options.members < 1:
        options.error("--members must be at least 1")
    result: dict[str, Any] = {"benchmark": "engines", "when": now_stamp()}
    result |= {"members": options.members, "id_bytes": ID_BYTES, "seed": options.seed}
    engines = result["engines"] = {}
    with (
        Program("engines") as run,
        tempfile.TemporaryDirectory(prefix="bench-engines-") as work,
        Processes(Path(work) / "logs") as processes,
    ):
        for engine in options.engines:
            say(f"{engine}: {options.members:,} players", "engines")
            engines[engine] = engine_measure(processes, engine, options, Path(work) / engine)
    if run.code:
        return run.code
    json_write(result, options.output)
    rows = [
        (engine, f["version"], f["mem_allocator"], f"{f['used_memory_growth_per_member']:.1f}",
         f"{f['memory_usage_per_member']:.1f}")
        for engine, f in engines.items()
    ]  # fmt: skip
    title = f"one sorted set of {options.members:,} players, {ID_BYTES}-byte ids, composite scores"
    print(f"Memory per player: {title}\n")
    header = "Engine | Version | Allocator | Bytes a player (used_memory growth) | MEMORY USAGE of "
    header += "the key a player"
    print("\n".join(table(header, "lllrr", rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
