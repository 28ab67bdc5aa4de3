"""What segments and clans cost Redis: the mirror's own script writes N players into a board
without dimensions and one with two and clans (bench/README.md, "What segments cost")."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

import redis

from leaderboards.store.scripts import MIRROR
from leaderboards.store.writes import UNREAD
from scripts.processes import RedisServer, server_binary
from seasons.scoring import TIME_SLOTS

from .core import program_main, say, table
from .scores import ID_BYTES, standings

# The write path's batch: a game server's POST of up to 100 results is one script call a season.
BATCH = 100
CALLS_PER_ROUND_TRIP = 50
COUNTRIES = 50
PLATFORMS = 4
DIMENSIONS = 2
CLAN_MEMBERS = 50
OPTIONS = (("--members", 1_000_000, "players"),)
# The keys of one shard's writes, in keys.ShardKeys' order (the script names them by position).
_KEY_NAMES = """standings banned rebuild-marker rebuild whole corrected rebuild-corrected segments
rebuild-segments segment-names rebuild-segment-names"""
SHARD_KEYS = _KEY_NAMES.split()
# The private Redis's client waits this long for one command (a pipelined pass of writes).
COMMAND_TIMEOUT_SECONDS = 120


def _entry(player_id: str) -> str:
    """A player's values and clan as the mirror passes them (a board of sums, highest first):
    spread over the values by the id's digits, CLAN_MEMBERS players a clan."""
    index = int(player_id[1:])
    values = f"|country:c{index * 7919 % COUNTRIES:02d}|platform:x{index % PLATFORMS}"
    return f"1;sum.0{values}|clan:k{index // CLAN_MEMBERS}"


def _writes(client: redis.Redis, keys: list[str], options: Any, segmented: bool,
            raise_by: int) -> float:  # fmt: skip
    """Every player written once by the mirror's script; Redis's CPU a write, in microseconds."""
    sha = client.script_load(MIRROR)
    client.config_resetstat()
    pipe = client.pipeline(transaction=False)
    for chunk in standings(options.members, options.seed, BATCH):
        args: list[Any] = ["GT", ""]  # no top-N edges to report (as no webhook wants them)
        for player_id, composite in chunk:
            # The mirror reads a player's values only for their first write (see services.py).
            entry = (UNREAD if raise_by else _entry(player_id)) if segmented else ""
            args += [player_id, composite + raise_by, "", entry]
        pipe.evalsha(sha, len(keys), *keys, *args)
        if len(pipe) >= CALLS_PER_ROUND_TRIP:
            pipe.execute()
    pipe.execute()
    return int(client.info("commandstats")["cmdstat_evalsha"]["usec"]) / options.members


def board_measure(client: redis.Redis, options: Any, *, segmented: bool) -> dict[str, Any]:
    tag = "segmented" if segmented else "plain"
    keys = [f"{{{tag}}}:{name}" for name in SHARD_KEYS]
    before = int(client.info("memory")["used_memory"])
    first = _writes(client, keys, options, segmented, 0)
    grown = int(client.info("memory")["used_memory"]) - before
    # Each player a point more: the mirror's steady state (a member that exists, values unchanged).
    later = _writes(client, keys, options, segmented, TIME_SLOTS)
    sets = client.smembers(keys[SHARD_KEYS.index("segment-names")]) if segmented else set()
    return {
        "dimensions": DIMENSIONS if segmented else 0, "segment_sets": len(sets),
        "clans": int(client.zcard(f"{keys[0]}:clans")),
        "redis_cpu_us_first_write": round(first, 2), "redis_cpu_us_later_write": round(later, 2),
        "used_memory_growth_per_player": round(grown / options.members, 1),
    }  # fmt: skip


def measure(options: Any, result: dict[str, Any]) -> None:
    result |= {"members": options.members, "id_bytes": ID_BYTES, "seed": options.seed,
               "batch": BATCH, "countries": COUNTRIES, "platforms": PLATFORMS,
               "clan_members": CLAN_MEMBERS}  # fmt: skip
    # A private Redis 7 without persistence, in a directory of its own, gone at the end.
    with tempfile.TemporaryDirectory(prefix="bench-segments-") as work:
        server = RedisServer(Path(work), "redis", server=server_binary("redis"))
        timeout = COMMAND_TIMEOUT_SECONDS
        with server.start(), redis.Redis.from_url(server.url(), socket_timeout=timeout) as client:
            result["redis_version"] = client.info("server")["redis_version"]
            for name, segmented in (("plain", False), ("segmented", True)):
                say(f"{name}: {options.members:,} players", "segments")
                result[name] = board_measure(client, options, segmented=segmented)
    extra = [result[name]["used_memory_growth_per_player"] for name in ("segmented", "plain")]
    # The clan's members' set is a dimension's worth; its standing is one entry per clan.
    result["bytes_per_player_per_dimension"] = round((extra[0] - extra[1]) / (DIMENSIONS + 1), 1)


def report(result: dict[str, Any]) -> str:
    rows = [
        ("no dimensions, no clans" if not f["dimensions"] else
         f"{f['dimensions']} dimensions and a clan", f"{f['redis_cpu_us_first_write']:.2f}",
         f"{f['redis_cpu_us_later_write']:.2f}", f"{f['used_memory_growth_per_player']:.1f}")
        for f in (result["plain"], result["segmented"])
    ]  # fmt: skip
    title = f"{result['members']:,} players, batches of {BATCH}, Redis {result['redis_version']}"
    header = "Board | Redis CPU a first write (µs) | a later write (µs) | Bytes a player"
    per = result["bytes_per_player_per_dimension"]
    return "\n".join([
        f"What segments cost: {title}", "", *table(header, "lrrr", rows), "",
        f"Bytes a player a dimension (a clan counted as one): {per:.1f}",
    ])  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    def check(options: Any) -> str | None:
        return f"--members must be at least {BATCH}" if options.members < BATCH else None

    return program_main("segments", __doc__, OPTIONS, argv, check, measure, report)


if __name__ == "__main__":
    sys.exit(main())
