"""What segments and clans cost Redis: `python -m bench.segments [--members N]`. On a private
Redis 7, the mirror's own script (leaderboards/store/scripts.py, MIRROR) writes the same N
players in batches of a results batch's size into a board without dimensions and into one with
two (country of COUNTRIES values, platform of PLATFORMS) whose players are in clans (of
CLAN_MEMBERS each, a board of sums), side by side: Redis's own CPU a write (INFO commandstats),
for each player's first write and for a later one that raises their score, and the memory a
player costs (bench/README.md, "What segments cost"). Results:
bench/results/segments-latest.json, and a Markdown table."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

import redis

from leaderboards.store.scripts import MIRROR
from leaderboards.store.writes import UNREAD
from scripts.processes import server_binary
from seasons.scoring import TIME_SLOTS

from .core import Program, json_write, now_stamp, options_parse, output_option, say, table
from .processes import Processes, redis_start
from .scores import ID_BYTES, standings

# The write path's batch: a game server's POST of up to 100 results is one script call a season.
BATCH = 100
CALLS_PER_ROUND_TRIP = 50
COUNTRIES = 50
PLATFORMS = 4
DIMENSIONS = 2
CLAN_MEMBERS = 50
COMMAND_TIMEOUT_SECONDS = 120
OPTIONS = (("--members", 1_000_000, "players"), *output_option("segments-latest.json"))
# The keys of one shard's writes, in keys.ShardKeys' order (the script names them by position).
SHARD_KEYS = [
    "standings",
    "rebuild-marker",
    "rebuild",
    "whole",
    "corrected",
    "rebuild-corrected",
    "segments",
    "rebuild-segments",
    "segment-names",
    "rebuild-segment-names",
]


def _keys(tag: str) -> list[str]:
    return [
        f"{{{tag}}}:standings",
        f"{{{tag}}}:banned",
        *(f"{{{tag}}}:{n}" for n in SHARD_KEYS[1:]),
    ]


def _entry(player_id: str) -> str:
    """A player's values and clan as the mirror passes them (a board of sums, highest first):
    spread over the values by the id's digits, CLAN_MEMBERS players a clan."""
    index = int(player_id[1:])
    values = f"|country:c{index * 7919 % COUNTRIES:02d}|platform:x{index % PLATFORMS}"
    return f"1;sum.0{values}|clan:k{index // CLAN_MEMBERS}"


def _writes(
    client: redis.Redis, keys: list[str], options: Any, segmented: bool, raise_by: int
) -> float:
    """Every player written once by the mirror's script; Redis's CPU a write, in microseconds."""
    sha = client.script_load(MIRROR)
    client.config_resetstat()
    pipe = client.pipeline(transaction=False)
    for chunk in standings(options.members, options.seed, BATCH):
        args: list[Any] = ["GT"]
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
    keys = _keys("segmented" if segmented else "plain")
    before = int(client.info("memory")["used_memory"])
    first = _writes(client, keys, options, segmented, 0)
    grown = int(client.info("memory")["used_memory"]) - before
    # Each player a point more: the mirror's steady state (a member that exists, values unchanged).
    later = _writes(client, keys, options, segmented, TIME_SLOTS)
    sets = client.smembers(keys[9]) if segmented else set()
    return {
        "dimensions": DIMENSIONS if segmented else 0,
        "segment_sets": len(sets),
        "clans": int(client.zcard(f"{keys[0]}:clans")),
        "redis_cpu_us_first_write": round(first, 2),
        "redis_cpu_us_later_write": round(later, 2),
        "used_memory_growth_per_player": round(grown / options.members, 1),
    }


def main(argv: list[str] | None = None) -> int:
    options = options_parse("bench.segments", __doc__, OPTIONS, argv)
    if options.members < BATCH:
        options.error(f"--members must be at least {BATCH}")
    result: dict[str, Any] = {"benchmark": "segments", "when": now_stamp()}
    result |= {"members": options.members, "id_bytes": ID_BYTES, "batch": BATCH}
    result |= {"countries": COUNTRIES, "platforms": PLATFORMS, "clan_members": CLAN_MEMBERS}
    result |= {"seed": options.seed}
    with (
        Program("segments") as run,
        tempfile.TemporaryDirectory(prefix="bench-segments-") as work,
        Processes(Path(work) / "logs") as processes,
    ):
        started = redis_start(
            processes, name="redis", server=server_binary("redis"), directory=Path(work)
        )
        with (
            processes.running(started),
            redis.Redis.from_url(started.url, socket_timeout=COMMAND_TIMEOUT_SECONDS) as client,
        ):
            result["redis_version"] = client.info("server")["redis_version"]
            for name, segmented in (("plain", False), ("segmented", True)):
                say(f"{name}: {options.members:,} players", "segments")
                result[name] = board_measure(client, options, segmented=segmented)
    if run.code:
        return run.code
    plain, segmented = result["plain"], result["segmented"]
    extra = segmented["used_memory_growth_per_player"] - plain["used_memory_growth_per_player"]
    # The clan's members' set is a dimension's worth; its standing is one entry per clan.
    result["bytes_per_player_per_dimension"] = round(extra / (DIMENSIONS + 1), 1)
    json_write(result, options.output)
    rows = [
        ("no dimensions, no clans" if not f["dimensions"] else
         f"{f['dimensions']} dimensions and a clan", f"{f['redis_cpu_us_first_write']:.2f}",
         f"{f['redis_cpu_us_later_write']:.2f}", f"{f['used_memory_growth_per_player']:.1f}")
        for f in (plain, segmented)
    ]  # fmt: skip
    title = f"{options.members:,} players, batches of {BATCH}, Redis {result['redis_version']}"
    print(f"What segments cost: {title}\n")
    header = "Board | Redis CPU a first write (µs) | a later write (µs) | Bytes a player"
    print("\n".join(table(header, "lrrr", rows)))
    per = result["bytes_per_player_per_dimension"]
    print(f"\nBytes a player a dimension (a clan counted as one): {per:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
