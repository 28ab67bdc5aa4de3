"""The profile directory: every player's display name and avatar for the boards' names, in Redis
with no expiry (the `profiles()` role), so a window, a friends view or a rank event names its
players in one round trip instead of a query. The rule that keeps it true is in
leaderboards/profiles.py; here are the keys, the Lua and the round trips.

Players are spread over BUCKETS hashes by a CRC-32 of their id: at millions of players each
hash holds tens of them, small enough for Redis's compact encoding (a listpack, about 30-40
bytes a player with a short name against about 100 for a key of their own).
"""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from config.building_blocks.redis import ScriptCall, evalsha, profiles

# Fixed for the directory's life: a bucket count changed later would leave every entry where no
# reader looks (the identity claim or `delete_prefixed_keys` clears them). 2^20 keeps a bucket
# under Redis's default listpack limit (128 entries) up to about 100 million players.
BUCKETS = 1 << 20
# Between the fields of an entry: the API's names and avatar URLs hold no control characters.
_SEPARATOR = "\x1f"

# Keep an entry only if it is newer than the one held (versions rise with each profile change):
# a reader that read the row before a change and files it after cannot put the old name back.
# KEYS: each entry's bucket (the same one repeated on a Redis Cluster, where a call keeps to one
# bucket's slot); ARGV: field, version, entry, field, version, entry... in the same order.
PROFILES_FILE = """
local filed = 0
for i = 1, #KEYS do
  local at = 3 * i - 2
  local held = redis.call('HGET', KEYS[i], ARGV[at])
  if not held or tonumber(string.match(held, '^%d+')) < tonumber(ARGV[at + 1]) then
    redis.call('HSET', KEYS[i], ARGV[at], ARGV[at + 2])
    filed = filed + 1
  end
end
return filed
"""
# Entries one PROFILES_FILE call files on one Redis: a backfill of millions of players then costs
# a command per 500 of them, not one per bucket (nearly one per player at that size).
FILE_CALL_ENTRIES = 500


# The entries of many players in one command: each of redis-py's replies costs the event loop a
# parse under a timeout of its own, and an around-me read names eleven players (on a Redis
# Cluster the buckets lie on many nodes: there, a pipeline of HGETs). KEYS: the players'
# buckets; ARGV: the players, in the same order.
PROFILES_READ = """
local found = {}
for i = 1, #KEYS do found[i] = redis.call('HGET', KEYS[i], ARGV[i]) end
return found
"""


@dataclass(frozen=True, slots=True)
class Profile:
    # 0 for a player PostgreSQL does not know (yet): any profile written later replaces it.
    version: int
    display_name: str
    avatar_url: str


def bucket_key(player_id: str) -> str:
    bucket = zlib.crc32(player_id.encode()) & (BUCKETS - 1)
    return f"{settings.LEADERBOARD_KEY_PREFIX}profiles:{bucket:05x}"


def keys_pattern() -> str:
    """Every key of the directory (for the sweeps)."""
    return f"{settings.LEADERBOARD_KEY_PREFIX}profiles:*"


def _entry(profile: Profile) -> str:
    return _SEPARATOR.join((str(profile.version), profile.display_name, profile.avatar_url))


def _profile(raw: str) -> Profile:
    # The avatar (a validated URL) never holds the separator: split from both ends, so a name
    # that came in some other way than the API's rules still reads back whole.
    version, rest = raw.split(_SEPARATOR, 1)
    display_name, _, avatar_url = rest.rpartition(_SEPARATOR)
    return Profile(int(version), display_name, avatar_url)


def _reads(player_ids: Sequence[str]) -> list[tuple[Any, ...]]:
    keys = [bucket_key(i) for i in player_ids]
    if profiles().cluster:
        return [("HGET", key, i) for key, i in zip(keys, player_ids, strict=True)]
    return [evalsha(ScriptCall(PROFILES_READ, keys, list(player_ids)))]


def _replies(replies: list[Any]) -> list[str | None]:
    return replies if profiles().cluster else replies[0]


def _found(player_ids: Sequence[str], replies: Sequence[str | None]) -> dict[str, Profile]:
    return {
        player_id: _profile(raw)
        for player_id, raw in zip(player_ids, replies, strict=True)
        if raw is not None
    }


def profiles_read(player_ids: Sequence[str]) -> dict[str, Profile]:
    """The entries the directory holds, in one round trip (one per node on a Redis Cluster)."""
    if not player_ids:
        return {}
    return _found(player_ids, _replies(profiles().commands_run(_reads(player_ids))))


async def aprofiles_read(player_ids: Sequence[str]) -> dict[str, Profile]:
    """profiles_read from the event loop, with the loop's other commands of the moment."""
    if not player_ids:
        return {}
    replies = await profiles().loop_commands_run(_reads(player_ids))
    return _found(player_ids, _replies(replies))


def profiles_file(found: dict[str, Profile], *, per_round_trip: int = 1000) -> int:
    """File the profiles where the directory holds none or an older one; how many were filed.
    On one Redis, calls of FILE_CALL_ENTRIES entries across buckets; on a Cluster, a call per
    bucket (one slot each); `per_round_trip` calls at a time."""
    entries = [(bucket_key(player_id), player_id, profile) for player_id, profile in found.items()]
    if profiles().cluster:
        entries.sort(key=lambda entry: entry[0])
        groups = [list(g) for _, g in itertools.groupby(entries, key=lambda entry: entry[0])]
    else:
        step = FILE_CALL_ENTRIES
        groups = [entries[start : start + step] for start in range(0, len(entries), step)]
    calls = []
    for group in groups:
        args = []
        for _, player_id, profile in group:
            args.extend((player_id, str(profile.version), _entry(profile)))
        calls.append(evalsha(ScriptCall(PROFILES_FILE, [key for key, _, _ in group], args)))
    filed = 0
    for start in range(0, len(calls), per_round_trip):
        filed += sum(profiles().commands_run(calls[start : start + per_round_trip]))
    return filed
