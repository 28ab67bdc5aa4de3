"""The Redis gateway: the only module that names a Redis key or runs a sorted-set command.

One ZSET per season holds every player's composite score (see scoring.py). Keys carry the
season in a hash tag, `{s<id>}`, so a season's live key and its rebuild key share a Redis
Cluster slot and sharding boards over a cluster stays a change to this module alone.
Lua scripts are registered once per process and run by SHA; the connections, the calls by SHA
and their recovery when Redis forgot a script are config/redis.py's, which names no key.
"""

from __future__ import annotations

import heapq
import itertools
import json
import logging
import threading
import zlib
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from django.conf import settings
from redis.crc import key_slot
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError, ResponseError

from config.redis import (
    ScriptCall,
    areplica_commands_run,
    areplica_script_run,
    client,
    commands_run,
    evalsha,
    loop_commands_run,
    loop_mget,
    loop_script_run,
    loop_send,
    mget,
    replica_commands_run,
    replica_script_run,
    replicas_acknowledge,
    script,
    script_run,
    scripts_run,
)
from seasons.scoring import TIME_SLOTS

from .identity import database_identity

logger = logging.getLogger(__name__)

# Members with a better points part than a given score: ZCOUNT from the next points floor up.
# Only competition ranks (1-2-2-4) need it, and the callers say so with a flag ('1'): an ordinal
# rank is ZREVRANK alone, and the ZCOUNT would be most of a hot read's time in Redis.
_LUA_BETTER = f"""
local function better(key, score, competition)
  if competition ~= '1' then return false end
  local floor = (math.floor(tonumber(score) / {TIME_SLOTS}) + 1) * {TIME_SLOTS}
  return redis.call('ZCOUNT', key, string.format('%.0f', floor), '+inf')
end
"""

# Every read of a live set names the set's "whole" marker as KEYS[2], and gives this database's
# identity and whether the set must be whole ('1') as ARGV[1] and ARGV[2] (see "Whole standings"
# and "The database mirrored" below); the script's own arguments follow. A set marked by another
# database is never read, and one that must be whole is read only when marked by this one: it
# may be a lost one refilled in part, and the read fails rather than answer from it.
_NOT_WHOLE = "NOTWHOLE"
_LUA_WHOLE = f"""
local marked = redis.call('GET', KEYS[2])
if marked ~= ARGV[1] and (marked or ARGV[2] == '1') then
  return redis.error_reply('{_NOT_WHOLE} the season has no whole standings in Redis')
end
"""

# Rank, score, board size and competition-rank base of one player, in one atomic step.
_READ_RANK = (
    _LUA_BETTER
    + _LUA_WHOLE
    + """
local rank = redis.call('ZREVRANK', KEYS[1], ARGV[3])
local size = redis.call('ZCARD', KEYS[1])
if not rank then return {false, false, size, false} end
local score = redis.call('ZSCORE', KEYS[1], ARGV[3])
return {rank, score, size, better(KEYS[1], score, ARGV[4])}
"""
)

# A page of the board by rank, with the competition-rank base of its first row.
_READ_PAGE = (
    _LUA_BETTER
    + _LUA_WHOLE
    + """
local rows = redis.call('ZREVRANGE', KEYS[1], ARGV[3], ARGV[4], 'WITHSCORES')
local size = redis.call('ZCARD', KEYS[1])
local first_better = false
if #rows > 0 then first_better = better(KEYS[1], rows[2], ARGV[5]) end
return {size, first_better, rows}
"""
)

# The player's rank and the contiguous ranks around it, both read from the same set.
_READ_AROUND = (
    _LUA_BETTER
    + _LUA_WHOLE
    + """
local rank = redis.call('ZREVRANK', KEYS[1], ARGV[3])
local size = redis.call('ZCARD', KEYS[1])
if not rank then return {false, size, false, false, {}} end
local n = tonumber(ARGV[4])
local first = rank - n
if first < 0 then first = 0 end
local rows = redis.call('ZREVRANGE', KEYS[1], first, rank + n, 'WITHSCORES')
return {rank, size, first, better(KEYS[1], rows[2], ARGV[5]), rows}
"""
)

# Rank, score and (with the flag first in its arguments) competition-rank base of each of many
# players.
_READ_MANY = (
    _LUA_BETTER
    + _LUA_WHOLE
    + """
local out = {}
for i = 4, #ARGV do
  local rank = redis.call('ZREVRANK', KEYS[1], ARGV[i])
  if rank then
    local score = redis.call('ZSCORE', KEYS[1], ARGV[i])
    out[#out + 1] = {rank, score, better(KEYS[1], score, ARGV[3])}
  else
    out[#out + 1] = {false, false, false}
  end
end
return {redis.call('ZCARD', KEYS[1]), out}
"""
)

# Replace a member's score only if it still holds what the caller saw ("" = absent), so a
# repair never overwrites a newer score the mirror wrote in between.
_COMPARE_AND_SET = """
local current = redis.call('ZSCORE', KEYS[1], ARGV[1])
local expected = ARGV[2]
if expected == '' then
  if current then return 0 end
elseif (not current) or tonumber(current) ~= tonumber(expected) then
  return 0
end
if ARGV[3] == '' then
  redis.call('ZREM', KEYS[1], ARGV[1])
else
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
end
return 1
"""


# The mirror's write: ARGV[1] is GT (scores only rise) or LT, then member, score, stamp triples.
# Banned players are skipped, and so is a write older than the member's correction (its stamp
# below the correction's, see _CORRECT); while a rebuild runs (KEYS[3] exists) the set it builds
# gets the write too, so a result committed after the rebuild read PostgreSQL is not lost by the
# swap. Returns what it wrote, the set's "whole" marker (KEYS[5]: the identity of the database
# that marked it, or false) and a member it wrote (or false).
_MIRROR = """
local rebuilding = redis.call('EXISTS', KEYS[3]) == 1
local corrected = redis.call('EXISTS', KEYS[6]) == 1
local written = 0
local one = false
for i = 2, #ARGV, 3 do
  local member = ARGV[i]
  local current = true
  if corrected then
    local since = redis.call('HGET', KEYS[6], member)
    current = not since or (ARGV[i + 2] ~= '' and tonumber(ARGV[i + 2]) > tonumber(since))
  end
  if current and redis.call('SISMEMBER', KEYS[2], member) == 0 then
    redis.call('ZADD', KEYS[1], ARGV[1], ARGV[i + 1], member)
    if rebuilding then redis.call('ZADD', KEYS[4], ARGV[1], ARGV[i + 1], member) end
    written = written + 1
    one = member
  end
end
return {written, redis.call('GET', KEYS[5]), one}
"""

# Corrections. A correction (a voided result) sets the member's score exactly, whichever way it
# moves, or removes the member (ARGV[2] ""), in the live set and in any set being rebuilt; a
# banned player is left off. Older copies of the member's standing may still be on their way: an
# outbox row committed before the void, a mirror task redelivered, a rebuild's snapshot read
# before it. So the correction leaves its stamp (ARGV[3], a value of the outbox's id sequence
# taken while no write of the season could commit: leaderboards/services.py) in the shard's
# corrected players (KEYS[6]): the mirror skips the member's writes stamped below it, and the
# rebuild skips the member's snapshot rows once corrected during it (KEYS[7]). A correction
# older than the one stored changes nothing (0).
_CORRECT = """
local since = redis.call('HGET', KEYS[6], ARGV[1])
if since and tonumber(since) >= tonumber(ARGV[3]) then return 0 end
redis.call('HSET', KEYS[6], ARGV[1], ARGV[3])
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 then return 0 end
local rebuilding = redis.call('EXISTS', KEYS[3]) == 1
if rebuilding then redis.call('SADD', KEYS[7], ARGV[1]) end
if ARGV[2] == '' then
  redis.call('ZREM', KEYS[1], ARGV[1])
  if rebuilding then redis.call('ZREM', KEYS[4], ARGV[1]) end
else
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
  if rebuilding then redis.call('ZADD', KEYS[4], ARGV[2], ARGV[1]) end
end
return 1
"""

# A chunk of the rebuild's snapshot into the set it builds (KEYS[1]), by ARGV[1] (GT or LT),
# then score, member pairs; ARGV[2] is how long the set may live. Members corrected since the
# rebuild began (KEYS[2]) are skipped: the correction read PostgreSQL after the snapshot, or
# the snapshot's copy would undo it. ZADD takes the pairs 500 at a time (Lua's unpack).
_BUILD = """
if redis.call('EXISTS', KEYS[2]) == 0 then
  for i = 3, #ARGV, 1000 do
    redis.call('ZADD', KEYS[1], ARGV[1], unpack(ARGV, i, math.min(i + 999, #ARGV)))
  end
else
  local batch = {}
  for i = 3, #ARGV, 2 do
    if redis.call('SISMEMBER', KEYS[2], ARGV[i + 1]) == 0 then
      batch[#batch + 1] = ARGV[i]
      batch[#batch + 1] = ARGV[i + 1]
    end
    if #batch >= 1000 or (i + 2 > #ARGV and #batch > 0) then
      redis.call('ZADD', KEYS[1], ARGV[1], unpack(batch))
      batch = {}
    end
  end
end
redis.call('EXPIRE', KEYS[1], ARGV[2])
return 1
"""

# A ban: remembered for the mirror, and the player off the live set and any set being rebuilt.
_BAN = """
redis.call('SADD', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
return 1
"""

# The rebuild's swap: the built set replaces the live one (the old one is freed in the
# background), minus players banned while it was built; the rebuild's marker goes, so the mirror
# writes the live set alone again, and the set is marked whole (built from PostgreSQL) with this
# database's identity (ARGV[1]). Without the rebuild's marker the build set lost its start with
# its Redis (restarted meanwhile): no swap.
_SWAP = """
if redis.call('EXISTS', KEYS[3]) == 0 then
  return redis.error_reply('REBUILDLOST the set being built was lost with its Redis')
end
local banned = redis.call('SMEMBERS', KEYS[2])
for i = 1, #banned do redis.call('ZREM', KEYS[4], banned[i]) end
redis.call('DEL', KEYS[3])
redis.call('UNLINK', KEYS[1])
if redis.call('EXISTS', KEYS[4]) == 1 then
  redis.call('RENAME', KEYS[4], KEYS[1])
  redis.call('PERSIST', KEYS[1])
end
redis.call('SET', KEYS[5], ARGV[1])
return redis.call('ZCARD', KEYS[1])
"""

# How long a rebuild's marker and half-built set outlive its last renewal (a crashed rebuild
# must not leave the mirror writing twice forever). A running rebuild renews them from a thread
# (_Heartbeat), also while PostgreSQL sorts before the first chunk.
REBUILD_TTL_SECONDS = 600


def standings_key(season_id: int, shards: int = 1, shard: int = 0) -> str:
    """The sorted set of a season's standings (of one of its shards)."""
    return _shard_key(season_id, shards, shard, "standings")


def _season_key(season_id: int, name: str) -> str:
    """A key of the season as a whole (shared answers, the reconciliation's cursor)."""
    return f"{settings.LEADERBOARD_KEY_PREFIX}{{s{season_id}}}:{name}"


# --- Shards -------------------------------------------------------------------------------------
# A season of a board with `shards` N > 1 spreads its players over N sorted sets by a stable hash
# of player_id. Each shard has its own hash tag, chosen so that the N tags fall in N different
# N-ths of the cluster's 16,384 slots: on a cluster whose nodes hold equal runs of slots (what
# `redis-cli --cluster create` makes) shard i lives on node i, and on more nodes they still
# spread. Each shard has its own bookkeeping (banned players, rebuild marker and set) in its
# slot, so every script touches one slot. With one shard the keys are the season's own `{s<id>}`.

_CLUSTER_SLOTS = 16384
_shard_tags: dict[tuple[int, int, int], str] = {}


def _shard_tag(season_id: int, shards: int, shard: int) -> str:
    if shards == 1:
        return f"s{season_id}"
    found = _shard_tags.get((season_id, shards, shard))
    if found is None:
        for salt in itertools.count():
            tag = f"s{season_id}.{shard}.{salt}"
            if key_slot(tag.encode()) * shards // _CLUSTER_SLOTS == shard:
                found = _shard_tags[(season_id, shards, shard)] = tag
                break
    return found  # type: ignore[return-value]


def _shard_key(season_id: int, shards: int, shard: int, name: str) -> str:
    return f"{settings.LEADERBOARD_KEY_PREFIX}{{{_shard_tag(season_id, shards, shard)}}}:{name}"


def shard_of(player_id: str, shards: int) -> int:
    """The shard that holds a player: CRC-32 of the id, the same in every process and release."""
    return 0 if shards == 1 else zlib.crc32(player_id.encode()) % shards


def _banned_key(season_id: int, shards: int = 1, shard: int = 0) -> str:
    """The banned players of the season's shard: the mirror never writes them."""
    return _shard_key(season_id, shards, shard, "banned")


def _whole_key(season_id: int, shards: int = 1, shard: int = 0) -> str:
    """The shard's "whole" marker (see "Whole standings" below)."""
    return _shard_key(season_id, shards, shard, "whole")


def _season_keys(season_id: int, shards: int = 1, shard: int = 0) -> list[str]:
    """The keys the mirror's and the rebuild's scripts touch, all in the shard's slot: the live
    set, the banned players, the marker of a rebuild in progress, the set it builds, the
    marker of a whole set, the corrected players (see "Corrections" at _CORRECT) and the players
    corrected while the rebuild runs."""
    return [
        standings_key(season_id, shards, shard),
        _banned_key(season_id, shards, shard),
        _shard_key(season_id, shards, shard, "rebuilding"),
        _shard_key(season_id, shards, shard, "rebuild"),
        _whole_key(season_id, shards, shard),
        _shard_key(season_id, shards, shard, "corrected"),
        _shard_key(season_id, shards, shard, "rebuild-corrected"),
    ]


def _player_keys(season_id: int, shards: int, player_id: str) -> list[str]:
    return _season_keys(season_id, shards, shard_of(player_id, shards))


def _standings_keys(season_id: int, shards: int) -> list[str]:
    """The live set of every shard."""
    return [standings_key(season_id, shards, shard) for shard in range(shards)]


@dataclass(frozen=True, slots=True)
class StandingWrite:
    season_id: int
    player_id: str
    composite: int
    # Sum totals on lowest-first boards only get worse as results arrive; every other
    # combination only gets better. The write may move the score in that direction only,
    # which makes the mirror indifferent to redelivery and order.
    worsening: bool = False
    shards: int = 1  # the season's
    # Where the standing stands among corrections: its outbox row's id, or a value of that
    # sequence taken before PostgreSQL was read (leaderboards/services.py). A write stamped
    # below the player's last correction is older than it and skipped (see _CORRECT); one
    # without a stamp (tests, benchmarks) is skipped for a player ever corrected.
    stamp: int | None = None


@dataclass(frozen=True, slots=True)
class Standing:
    player_id: str
    rank: int  # 1-based ordinal rank
    composite: int
    # Members with strictly better points (competition rank - 1); None when the read did not
    # ask for competition ranks.
    better_count: int | None


@dataclass(frozen=True, slots=True)
class NotWhole:
    """A season the mirror wrote whose sets (some shard's, at least) are not marked whole: new,
    or lost with its Redis (the caller tells which: services.py)."""

    shards: int
    # A player written into each such shard, to mark it whole by (standings_mark_whole).
    written: dict[int, str]


@dataclass(frozen=True, slots=True)
class Mirrored:
    written: int
    not_whole: dict[int, NotWhole]  # by season id


def mirror_standings(writes: Iterable[StandingWrite]) -> Mirrored:
    """Mirror standings with ZADD GT (or LT): never moves a score back, so replays and tasks
    arriving out of order are harmless. Banned players are skipped, and so are writes older
    than the player's correction (by stamp); while a rebuild is building the season's next set,
    the write goes to that set too (see rebuild_standings). One script call per season, all in
    one round trip."""
    groups: dict[tuple[int, int, int, bool], list[str]] = {}
    for write in writes:
        shard = shard_of(write.player_id, write.shards)
        groups.setdefault((write.season_id, write.shards, shard, write.worsening), []).extend(
            (write.player_id, str(write.composite), "" if write.stamp is None else str(write.stamp))
        )
    if not groups:
        return Mirrored(0, {})
    commands = [
        evalsha(
            ScriptCall(
                _MIRROR,
                _season_keys(season_id, shards, shard),
                ["LT" if worsening else "GT", *members],
            )
        )
        for (season_id, shards, shard, worsening), members in groups.items()
    ]
    replies = _acknowledged_run(commands)
    identity = _identity()
    written = 0
    not_whole: dict[int, NotWhole] = {}
    for (season_id, shards, shard, _), reply in zip(groups, replies, strict=True):
        written += int(reply[0])
        if reply[1] != identity:
            found = not_whole.setdefault(season_id, NotWhole(shards, {}))
            if reply[2]:
                found.written[shard] = reply[2]
    return Mirrored(written, not_whole)


def _acknowledged_run(commands: Commands) -> list[Any]:
    """Writes in one round trip. With replicas, the writes' own connection waits for them to
    hold the writes (bounded), so a reader told of the change afterwards finds it on a replica
    too."""
    acknowledge = replicas_acknowledge()
    if acknowledge is None:
        return commands_run(commands)
    return commands_run([*commands, acknowledge])[:-1]


def write_standings(writes: Iterable[StandingWrite]) -> int:
    """mirror_standings, for callers that need only how many standings were written."""
    return mirror_standings(writes).written


def standing_correct(
    season_id: int, player_id: str, composite: int | None, *, stamp: int, shards: int = 1
) -> bool:
    """Set a player's score to exactly `composite` (None: off the board), even when that is
    worse than the one stored: the mirror's writes only move a score one way, and a voided
    result moves it the other. From now on the player's writes stamped below `stamp` are
    skipped (see _CORRECT). Returns False for a banned player (left off) and for a correction
    older than the last one made."""
    done = script(_CORRECT)(
        keys=_player_keys(season_id, shards, player_id),
        args=[player_id, "" if composite is None else str(composite), str(stamp)],
    )
    return bool(done)


def players_ban(seasons: Mapping[int, int], player_id: str) -> None:
    """Take a banned player off these seasons' boards (season id -> its shards) and keep later
    mirror writes off too."""
    scripts_run(
        [
            ScriptCall(_BAN, _player_keys(season_id, shards, player_id), [player_id])
            for season_id, shards in seasons.items()
        ]
    )


def players_unban(seasons: Mapping[int, int], player_id: str) -> None:
    """Let mirror writes for the player through again (the caller writes their standings)."""
    commands_run(
        [
            ("SREM", _banned_key(season_id, shards, shard_of(player_id, shards)), player_id)
            for season_id, shards in seasons.items()
        ]
    )


def season_banned_players(season_id: int, *, shards: int = 1) -> set[str]:
    """The players the season's boards (every shard's) hold off as banned: a few, so one
    SMEMBERS a shard."""
    replies = commands_run(
        [("SMEMBERS", _banned_key(season_id, shards, shard)) for shard in range(shards)]
    )
    return {player_id for members in replies for player_id in members}


def compare_and_set(
    season_id: int,
    player_id: str,
    *,
    expected: int | None,
    composite: int | None,
    shards: int = 1,
) -> bool:
    """Set (or remove, with None) a member's score if it still equals `expected`."""
    done = script(_COMPARE_AND_SET)(
        keys=[standings_key(season_id, shards, shard_of(player_id, shards))],
        args=[
            player_id,
            "" if expected is None else str(expected),
            "" if composite is None else str(composite),
        ],
    )
    return bool(done)


def _by_shard(player_ids: Iterable[str], shards: int) -> dict[int, list[str]]:
    groups: dict[int, list[str]] = {}
    for player_id in player_ids:
        groups.setdefault(shard_of(player_id, shards), []).append(player_id)
    return groups


def remove_players(season_id: int, player_ids: Sequence[str], *, shards: int = 1) -> int:
    if not player_ids:
        return 0
    groups = _by_shard(player_ids, shards)
    commands = [("ZREM", standings_key(season_id, shards, i), *ids) for i, ids in groups.items()]
    return sum(int(removed) for removed in commands_run(commands))


def scores_of(season_id: int, player_ids: Sequence[str], *, shards: int = 1) -> list[int | None]:
    if not player_ids:
        return []
    groups = _by_shard(player_ids, shards)
    commands = [("ZMSCORE", standings_key(season_id, shards, i), *ids) for i, ids in groups.items()]
    found: dict[str, Any] = {}
    for ids, scores in zip(groups.values(), commands_run(commands), strict=True):
        found.update(zip(ids, scores, strict=True))
    return [None if found[p] is None else int(float(found[p])) for p in player_ids]


def board_size(season_id: int, *, shards: int = 1) -> int:
    """Players on the board: the sum of the shards' sizes."""
    keys = _standings_keys(season_id, shards)
    return sum(int(size) for size in commands_run([("ZCARD", key) for key in keys]))


def standings_exist(season_id: int, *, shards: int = 1) -> bool:
    """Whether Redis holds the season's standings (any shard of them)."""
    keys = _standings_keys(season_id, shards)
    return any(int(found) for found in commands_run([("EXISTS", key) for key in keys]))


# --- Whole standings ---------------------------------------------------------------------------
# Redis cannot tell a season's set lost with its node (restarted empty, then refilled in part by
# the mirror) from a new one: both lack players PostgreSQL ranks. So each set (each shard) has a
# marker beside it, in its slot, which is lost with it: set by the rebuild's swap (a set built
# from PostgreSQL) and, for a season never marked, once at its first mirror write (services.py,
# which records the marking in PostgreSQL first). A read told the season was marked once
# (`whole`, see selectors.standings_whole_required) fails with StandingsNotWhole where a marker is
# missing, so the API answers 503 until the rebuild that the mirror or reconciliation starts has
# put the season back.


class StandingsNotWhole(RedisConnectionError):
    """A season's standings in Redis are not whole (lost with their Redis): no answer from them.
    To every caller it is the store being unavailable, as a Redis down is (503, the 503 page,
    a socket closed with 4503): its Redis is back, but not its standings yet."""


@contextmanager
def _whole_or_raise() -> Iterator[None]:
    """A read script's "not whole" reply as StandingsNotWhole."""
    try:
        yield
    except ResponseError as exc:
        if str(exc).startswith(_NOT_WHOLE):
            raise StandingsNotWhole(str(exc)) from exc
        raise


def _read_call(source: str, season_id: int, whole: bool, args: Sequence[Any]) -> ScriptCall:
    """A single-set read script's call: the set and its marker, this database's identity and
    whether the set must be whole (_LUA_WHOLE), then the script's own arguments."""
    return ScriptCall(
        source,
        [standings_key(season_id), _whole_key(season_id)],
        [_identity(), _flag(whole), *args],
    )


def _whole_commands(season_id: int, shards: int) -> Commands:
    return [("GET", _whole_key(season_id, shards, shard)) for shard in range(shards)]


def _readable(markers: Sequence[str | None], whole: bool) -> bool:
    """Whether sets with these markers may be read: none marked by another database and, when
    they must be whole (`whole`), every one marked by this one (the rule of _LUA_WHOLE)."""
    identity = _identity()
    return all(marked == identity or (marked is None and not whole) for marked in markers)


def _whole_checked(plan: Plan[_T], season_id: int, shards: int, whole: bool) -> Plan[_T]:
    """A sharded read's plan whose first round trip also asks for every shard's marker, and
    which raises StandingsNotWhole where a shard may not be read (_readable)."""
    markers = _whole_commands(season_id, shards)
    replies = yield [*next(plan), *markers]
    if not _readable(replies[-shards:], whole):
        raise StandingsNotWhole(f"season {season_id}: a shard has no whole standings in Redis")
    replies = replies[:-shards]
    try:
        while True:
            replies = yield plan.send(replies)
    except StopIteration as done:
        return done.value


# Mark a set whole with this database's identity (ARGV[2]), if it still holds the member its
# caller saw there (ARGV[1], "" for none): a set lost with its Redis since the caller looked is
# not marked, nor one another database marked (its players are not this one's: it is rebuilt).
_MARK_WHOLE = """
local marked = redis.call('GET', KEYS[2])
if marked then return marked == ARGV[2] and 1 or 0 end
if ARGV[1] ~= '' and not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
redis.call('SET', KEYS[2], ARGV[2])
return 1
"""


def standings_mark_whole(
    season_id: int, *, shards: int = 1, present: Mapping[int, str] | None = None
) -> bool:
    """Mark the season's sets whole (a season never marked: services.py). `present` names, by
    shard, a player the caller saw in the set: a shard that lost it since is not marked, and
    False is returned. With replicas, they hold the marks before this returns."""
    present = present or {}
    calls = [
        evalsha(
            ScriptCall(
                _MARK_WHOLE,
                [standings_key(season_id, shards, shard), _whole_key(season_id, shards, shard)],
                [present.get(shard, ""), _identity()],
            )
        )
        for shard in range(shards)
    ]
    return all(int(marked) for marked in _acknowledged_run(calls))


def standings_whole(season_id: int, *, shards: int = 1) -> bool:
    """Whether every shard of the season is marked whole by this database."""
    return _readable(commands_run(_whole_commands(season_id, shards)), True)


def _readable_or_raise(season_id: int, shards: int, whole: bool) -> None:
    if not _readable(commands_run(_whole_commands(season_id, shards)), whole):
        raise StandingsNotWhole(f"season {season_id} has no whole standings in Redis")


# --- The database mirrored ---------------------------------------------------------------------
# Season ids repeat from one PostgreSQL database to the next (identity.py), so what Redis holds
# is tied to the database it mirrors. The deployment's identity key names that database, and
# each whole marker holds its identity. A process's first use of the store claims the key: one
# that finds another database's identity there deletes that database's keys (the seasons' and
# the profiles'), so nothing of it is taken for this database's; reconciliation claims it again
# every run. The markers are the second line: a set marked by another database (a Redis brought
# back from elsewhere while running, or kept from before the identity was, marked '1') is never
# read: reads answer 503, the mirror does not mark it, and the season is rebuilt from PostgreSQL.

# Set the identity key to this database's; returns false when it held it already, else what it
# held ("" for nothing).
_IDENTITY_CLAIM = """
local held = redis.call('GET', KEYS[1])
if held == ARGV[1] then return false end
redis.call('SET', KEYS[1], ARGV[1])
return held or ''
"""

_claimed: str | None = None  # the identity this process claimed Redis for
_claim_lock = threading.Lock()


def _identity_key() -> str:
    return f"{settings.LEADERBOARD_KEY_PREFIX}identity"


def _identity() -> str:
    """This database's identity; the first use in a process claims Redis for it."""
    identity = database_identity()
    if _claimed != identity:
        with _claim_lock:
            if _claimed != identity:
                identity_claim()
    return identity


def identity_claim() -> str | None:
    """Claim Redis for this database: where the identity key named another database, delete that
    database's keys and return its identity (None: Redis held this database's, or nothing)."""
    global _claimed
    identity = database_identity()
    held = script_run(ScriptCall(_IDENTITY_CLAIM, [_identity_key()], [identity]))
    if held:
        # The seasons' keys (each behind its hash tag) and the profiles' (their names and
        # avatars are that database's).
        removed = _keys_delete(
            *(f"{settings.LEADERBOARD_KEY_PREFIX}{name}*" for name in ("{", "profile"))
        )
        logger.warning(
            "Redis held the standings of another database (%s, this one is %s): "
            "deleted its %d keys; seasons are rebuilt from PostgreSQL",
            held,
            identity,
            removed,
        )
    _claimed = identity
    return held or None


def identity_current() -> bool:
    """Whether Redis holds this database's standings: claimed by this process (at its first use,
    now if not yet) and not claimed by another database since (a second deployment on the same
    key prefix, which the readiness probe reports)."""
    identity = _identity()
    return client().get(_identity_key()) in (identity, None)


def heal_claim(season_id: int, *, seconds: int) -> bool:
    """Claim the healing of a season for `seconds` (one rebuild queued, however many callers
    find it lost meanwhile)."""
    return bool(client().set(_season_key(season_id, "healing"), "1", nx=True, ex=seconds))


def heal_release(season_id: int) -> None:
    """The season is healed: a loss of it from now on is healed at once again."""
    client().delete(_season_key(season_id, "healing"))


# --- Operators' jobs ----------------------------------------------------------------------------
# An operator's rebuild or close is one job, named by an id its message carries: one job of a
# kind waits per season (a double click queues one), and a job runs once (a message the broker
# delivers again, held past its visibility timeout, does nothing).

# Forget the queued job if it still is this one (a later one may have taken its place).
_JOB_DONE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
"""


def season_job_queue_claim(season_id: int, kind: str, job_id: str, *, seconds: int) -> bool:
    """Claim the season's one queued job of `kind` for `job_id` until it is done or `seconds`
    have passed; False if another is queued or running."""
    key = _season_key(season_id, f"job:{kind}")
    return bool(client().set(key, job_id, nx=True, ex=seconds))


def season_job_run_claim(season_id: int, job_id: str, *, seconds: int) -> bool:
    """Claim the one run of a job; False if a delivery of it ran already (within `seconds`)."""
    key = _season_key(season_id, f"job-run:{job_id}")
    return bool(client().set(key, "1", nx=True, ex=seconds))


def season_job_done(season_id: int, kind: str, job_id: str) -> None:
    """The job ended (done or failed): a new request of its kind is a new job."""
    script_run(ScriptCall(_JOB_DONE, [_season_key(season_id, f"job:{kind}")], [job_id]))


def _rows(flat: Sequence[str], first_rank: int) -> list[tuple[str, int, int]]:
    return [(flat[i], first_rank + i // 2, int(float(flat[i + 1]))) for i in range(0, len(flat), 2)]


def _with_better(rows: list[tuple[str, int, int]], first_better: int | None) -> list[Standing]:
    """Competition bases for a contiguous run of ranks, from the first row's base alone (None
    throughout when the read did not ask for them)."""
    standings: list[Standing] = []
    previous: Standing | None = None
    for player_id, rank, composite in rows:
        if first_better is None:
            better = None
        elif previous is None:
            better = first_better
        elif composite // TIME_SLOTS == previous.composite // TIME_SLOTS:
            better = previous.better_count
        else:
            better = rank - 1
        previous = Standing(player_id, rank, composite, better)
        standings.append(previous)
    return standings


def _flag(competition: bool) -> str:
    return "1" if competition else "0"


def _int_or_none(value: Any) -> int | None:
    return None if value is None else int(value)


# Each read is a script call and a parse of its reply. The calls are written once, as
# (script, keys, args), so the synchronous reads here and the event loop's reads below send
# exactly the same commands and read their replies with the same code.
def _page_call(
    season_id: int, offset: int, limit: int, competition: bool, whole: bool
) -> ScriptCall:
    args = [offset, offset + limit - 1, _flag(competition)]
    return _read_call(_READ_PAGE, season_id, whole, args)


def _page_reply(offset: int, reply: list[Any]) -> tuple[int, list[Standing]]:
    size, first_better, flat = reply
    return int(size), _with_better(
        _rows(flat, offset + 1), _int_or_none(first_better) if flat else None
    )


def _rank_call(season_id: int, player_id: str, competition: bool, whole: bool) -> ScriptCall:
    return _read_call(_READ_RANK, season_id, whole, [player_id, _flag(competition)])


def _rank_reply(player_id: str, reply: list[Any]) -> tuple[int, Standing | None]:
    rank, score, size, better = reply
    if rank is None:
        return int(size), None
    return int(size), Standing(player_id, int(rank) + 1, int(float(score)), _int_or_none(better))


def _around_call(
    season_id: int, player_id: str, n: int, competition: bool, whole: bool
) -> ScriptCall:
    args = [player_id, n, _flag(competition)]
    return _read_call(_READ_AROUND, season_id, whole, args)


def _around_reply(player_id: str, reply: list[Any]) -> tuple[int, Standing | None, list[Standing]]:
    rank, size, first, first_better, flat = reply
    if rank is None:
        return int(size), None, []
    standings = _with_better(_rows(flat, int(first) + 1), _int_or_none(first_better))
    me = next(s for s in standings if s.player_id == player_id)
    return int(size), me, standings


# A read with `shared` may be answered by a replica of the primary (config/redis.py says which
# and when); the others, and every read of the closing, reconciliation and checks, by the primary.
def _read(call: ScriptCall, shared: bool) -> Any:
    with _whole_or_raise():
        return replica_script_run(call) if shared else script_run(call)


def read_page(
    season_id: int,
    *,
    offset: int,
    limit: int,
    competition: bool = True,
    shared: bool = False,
    shards: int = 1,
    whole: bool = False,
) -> tuple[int, list[Standing]]:
    """Ranks offset+1 .. offset+limit, best first, and the board's size. With `whole`, raises
    StandingsNotWhole where the season's standings are not marked whole (the same below)."""
    if shards > 1:
        plan = _page_plan(season_id, shards, offset, limit, competition)
        return _run(_whole_checked(plan, season_id, shards, whole), shared)
    call = _page_call(season_id, offset, limit, competition, whole)
    return _page_reply(offset, _read(call, shared))


def read_rank(
    season_id: int,
    player_id: str,
    *,
    competition: bool = True,
    shared: bool = False,
    shards: int = 1,
    whole: bool = False,
) -> tuple[int, Standing | None]:
    if shards > 1:
        plan = _rank_plan(season_id, shards, player_id, competition)
        return _run(_whole_checked(plan, season_id, shards, whole), shared)
    call = _rank_call(season_id, player_id, competition, whole)
    return _rank_reply(player_id, _read(call, shared))


def read_around(
    season_id: int,
    player_id: str,
    *,
    n: int,
    competition: bool = True,
    shared: bool = False,
    shards: int = 1,
    whole: bool = False,
) -> tuple[int, Standing | None, list[Standing]]:
    if shards > 1:
        plan = _around_plan(season_id, shards, player_id, n, competition)
        return _run(_whole_checked(plan, season_id, shards, whole), shared)
    call = _around_call(season_id, player_id, n, competition, whole)
    return _around_reply(player_id, _read(call, shared))


def read_many(
    season_id: int,
    player_ids: Sequence[str],
    *,
    competition: bool = True,
    shards: int = 1,
    whole: bool = False,
) -> tuple[int, list[Standing | None]]:
    if shards > 1:
        plan = _many_plan(season_id, shards, player_ids, competition)
        return _run(_whole_checked(plan, season_id, shards, whole), False)
    if not player_ids:
        _readable_or_raise(season_id, 1, whole)
        return board_size(season_id), []
    with _whole_or_raise():
        size, rows = script_run(
            _read_call(_READ_MANY, season_id, whole, [_flag(competition), *player_ids])
        )
    out: list[Standing | None] = []
    for player_id, (rank, score, better) in zip(player_ids, rows, strict=True):
        if rank is None:
            out.append(None)
        else:
            out.append(Standing(player_id, int(rank) + 1, int(float(score)), _int_or_none(better)))
    return int(size), out


# Ordinal rank and score of many players, flat: rank, score, rank, score... (-1 when absent).
# No competition-rank base: the live ticker reads this for every followed player on every
# change, so it does only what an ordinal rank needs.
_READ_RANKS = (
    _LUA_WHOLE
    + """
local out = {}
for i = 3, #ARGV do
  local rank = redis.call('ZREVRANK', KEYS[1], ARGV[i])
  if rank then
    out[#out + 1] = rank
    out[#out + 1] = redis.call('ZSCORE', KEYS[1], ARGV[i])
  else
    out[#out + 1] = -1
    out[#out + 1] = 0
  end
end
return out
"""
)

# Players one script call ranks in a batch read: a long script blocks every other client.
_BATCH_CHUNK = 1000


@dataclass(frozen=True, slots=True)
class BatchRead:
    size: int
    top: list[Standing]
    # (1-based ordinal rank, composite) of each player asked, in order; None when unranked.
    players: list[tuple[int, int] | None]
    arounds: list[list[Standing]]  # one contiguous window per request, [] when unranked


def read_batch(
    season_id: int,
    *,
    top: int,
    player_ids: Sequence[str] = (),
    arounds: Sequence[tuple[str, int]] = (),
    shared: bool = False,
    shards: int = 1,
    whole: bool = False,
) -> BatchRead:
    """The top, many players' ordinal ranks and several around-me windows of one season, in one
    round trip (the live ticker's read). Each part is read atomically; the parts may be a few
    commands apart, which a reader that looks again on the next change tolerates. (A sharded
    board's parts are read one after the other, each in its few steps.)"""
    if shards > 1:
        plan = _batch_plan(season_id, shards, top, player_ids, arounds)
        return _run(_whole_checked(plan, season_id, shards, whole), shared)
    key = standings_key(season_id)
    calls = []
    if top > 0:
        calls.append(_read_call(_READ_PAGE, season_id, whole, [0, top - 1, _flag(False)]))
    chunks = [player_ids[i : i + _BATCH_CHUNK] for i in range(0, len(player_ids), _BATCH_CHUNK)]
    calls += [_read_call(_READ_RANKS, season_id, whole, list(chunk)) for chunk in chunks]
    calls += [
        _read_call(_READ_AROUND, season_id, whole, [player_id, n, _flag(False)])
        for player_id, n in arounds
    ]
    commands = [*map(evalsha, calls), ("ZCARD", key)]
    with _whole_or_raise():
        replies = iter(replica_commands_run(commands) if shared else commands_run(commands))

    page: list[Standing] = []
    if top > 0:
        _, _, flat = next(replies)
        page = _with_better(_rows(flat, 1), None)
    players: list[tuple[int, int] | None] = []
    for _ in chunks:
        flat = next(replies)
        ranks, scores = flat[0::2], flat[1::2]
        players.extend(
            None if rank < 0 else (rank + 1, int(float(score)))
            for rank, score in zip(ranks, scores, strict=True)
        )
    windows: list[list[Standing]] = []
    for _ in arounds:
        rank, _, first, _, flat = next(replies)
        windows.append([] if rank is None else _with_better(_rows(flat, int(first) + 1), None))
    return BatchRead(size=int(next(replies)), top=page, players=players, arounds=windows)


# --- Reads of a sharded board -----------------------------------------------------------------
# The same answers as one set gives, over N shards. The order is the set's: the larger composite
# first and, of equal composites, the member that sorts last byte by byte (ZREVRANGE's). So:
# - a player's rank is 1 + the members every shard holds ahead of them (its ZCOUNT of better
#   composites, plus the tied members that sort after them);
# - a page is a merge of each shard's run of members from the place where the ranks before the
#   page end on that shard (a merge of the shards' tops near the top; found by halving deeper);
# - around-me is a merge of the members just ahead and just behind on every shard.
# Each step sends one command to every shard in one round trip (a pipeline, in parallel on a
# cluster); a read takes two or three steps. A plan below is the read's steps, written once and
# run by the synchronous driver or the event loop's. Each shard answers a step at its own moment:
# exact on a board at rest; under writes as current as the moment of each shard's answer.

# Members of a shard ranked ahead of (score, member). Lua's own string comparison follows the
# server's locale, so ties are ordered byte by byte here, as the sorted set orders them.
_LUA_AHEAD = (
    _LUA_BETTER
    + """
local function sorts_after(a, b)
  local n = math.min(#a, #b)
  for i = 1, n do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x > y end
  end
  return #a > #b
end
local function ahead(key, score, member)
  local count = redis.call('ZCOUNT', key, '(' .. score, '+inf')
  local tied = redis.call('ZRANGEBYSCORE', key, score, score)
  for i = 1, #tied do
    if sorts_after(tied[i], member) then count = count + 1 end
  end
  return count
end
"""
)

# For each (score, member) pair after the flag: the members ahead of it on this shard and (flag
# '1') the members with better points. Flat: ahead, better, ahead, better...
_SHARD_AHEAD = (
    _LUA_AHEAD
    + """
local out = {}
for i = 2, #ARGV, 2 do
  out[#out + 1] = ahead(KEYS[1], ARGV[i], ARGV[i + 1])
  out[#out + 1] = better(KEYS[1], ARGV[i], ARGV[1]) or 0
end
return out
"""
)

# Around (score, member) on this shard: the members ahead of it, the n just ahead and the n + 1
# from there on (the member itself is among them on its own shard).
_SHARD_NEAR = (
    _LUA_AHEAD
    + """
local a = ahead(KEYS[1], ARGV[1], ARGV[2])
local n = tonumber(ARGV[3])
local before = {}
if a > 0 and n > 0 then
  local first = a - n
  if first < 0 then first = 0 end
  before = redis.call('ZREVRANGE', KEYS[1], first, a - 1, 'WITHSCORES')
end
return {a, before, redis.call('ZREVRANGE', KEYS[1], a, a + n, 'WITHSCORES')}
"""
)

# Pages whose last rank is at most this are a merge of every shard's top; deeper ones first find
# where they start on each shard.
_MERGED_TOP_REACH = 1000

Commands = list[tuple[Any, ...]]
_T = TypeVar("_T")
Plan = Generator[Commands, list[Any], _T]
Row = tuple[str, int]  # (player_id, composite)


def _run(plan: Plan[_T], shared: bool) -> _T:
    """Run a read's steps, each a round trip (on a replica that may answer, with `shared`)."""
    run = replica_commands_run if shared else commands_run
    try:
        commands = next(plan)
        while True:
            commands = plan.send(run(commands))
    except StopIteration as done:
        return done.value


async def _arun(plan: Plan[_T], shared: bool) -> _T:
    """_run from the event loop: each step's commands leave with the others of its turn."""
    try:
        commands = next(plan)
        while True:
            send = areplica_commands_run if shared else loop_commands_run
            replies = await send(commands)
            commands = plan.send(replies)
    except StopIteration as done:
        return done.value


def _pairs(flat: Sequence[Any]) -> list[Row]:
    """(player_id, composite) rows of a WITHSCORES reply, flat or paired."""
    if flat and isinstance(flat[0], (list, tuple)):
        return [(member, int(float(score))) for member, score in flat]
    return [(flat[i], int(float(flat[i + 1]))) for i in range(0, len(flat), 2)]


def _order(row: Row) -> tuple[int, str]:
    # Python orders str by code point, which is UTF-8's byte order: the set's order of ties.
    return row[1], row[0]


def _merged(runs: Iterable[list[Row]]) -> Iterator[Row]:
    """Rows of several shards' runs (each best first), best first."""
    return heapq.merge(*runs, key=_order, reverse=True)


def _ahead_command(key: str, rows: Sequence[Row], competition: bool) -> tuple[Any, ...]:
    args: list[Any] = [_flag(competition)]
    for player_id, composite in rows:
        args += [composite, player_id]
    return evalsha(ScriptCall(_SHARD_AHEAD, [key], args))


def _points_floor(composite: int) -> int:
    return (composite // TIME_SLOTS + 1) * TIME_SLOTS


def _better_plan(keys: Sequence[str], composite: int) -> Plan[int]:
    """Members of every shard with better points than `composite` (a competition rank's base)."""
    counts = yield [("ZCOUNT", key, _points_floor(composite), "+inf") for key in keys]
    return sum(int(count) for count in counts)


def _sizes_commands(keys: Sequence[str]) -> Commands:
    return [("ZCARD", key) for key in keys]


def _rank_plan(
    season_id: int, shards: int, player_id: str, competition: bool
) -> Plan[tuple[int, Standing | None]]:
    keys = _standings_keys(season_id, shards)
    own = keys[shard_of(player_id, shards)]
    replies = yield [("ZSCORE", own, player_id), *_sizes_commands(keys)]
    size = sum(int(count) for count in replies[1:])
    if replies[0] is None:
        return size, None
    composite = int(float(replies[0]))
    counts = yield [_ahead_command(key, [(player_id, composite)], competition) for key in keys]
    ahead = sum(int(reply[0]) for reply in counts)
    better = sum(int(reply[1]) for reply in counts) if competition else None
    return size, Standing(player_id, ahead + 1, composite, better)


def _standings_from(
    rows: Sequence[Row], first_rank: int, first_better: int | None
) -> list[Standing]:
    return _with_better(
        [(player_id, first_rank + i, composite) for i, (player_id, composite) in enumerate(rows)],
        first_better,
    )


def _page_plan(
    season_id: int, shards: int, offset: int, limit: int, competition: bool
) -> Plan[tuple[int, list[Standing]]]:
    keys = _standings_keys(season_id, shards)
    if offset + limit <= _MERGED_TOP_REACH:
        last = offset + limit - 1
        replies = yield [
            *_sizes_commands(keys),
            *(("ZREVRANGE", key, 0, last, "WITHSCORES") for key in keys),
        ]
        size = sum(int(count) for count in replies[:shards])
        merged = list(itertools.islice(_merged(map(_pairs, replies[shards:])), last + 1))
        rows = merged[offset:]
        if not rows:
            return size, []
        # Every member with better points than the page's first row ranks before it, so among
        # the merged rows already.
        floor = _points_floor(rows[0][1])
        better = sum(1 for _, composite in merged[:offset] if composite >= floor)
        return size, _standings_from(rows, offset + 1, better if competition else None)
    sizes = [int(count) for count in (yield _sizes_commands(keys))]
    if offset >= sum(sizes):
        return sum(sizes), []
    starts = yield from _starts_plan(keys, sizes, offset)
    replies = yield [
        ("ZREVRANGE", key, start, start + limit - 1, "WITHSCORES")
        for key, start in zip(keys, starts, strict=True)
    ]
    rows = list(itertools.islice(_merged(map(_pairs, replies)), limit))
    if not rows:
        return sum(sizes), []
    better = (yield from _better_plan(keys, rows[0][1])) if competition else None
    return sum(sizes), _standings_from(rows, offset + 1, better)


def _starts_plan(keys: Sequence[str], sizes: Sequence[int], offset: int) -> Plan[list[int]]:
    """How many of the board's first `offset` members each shard holds, by halving: each round
    takes the middle member of every shard's open range, counts what is ahead of it on every
    shard, and so learns on which side of the offset it and the members ahead of it lie. About
    log2(shard size) rounds of two round trips."""
    total = sum(sizes)
    low = [max(0, offset - (total - size)) for size in sizes]
    high = [min(size, offset) for size in sizes]
    while True:
        open_shards = [i for i in range(len(keys)) if low[i] < high[i]]
        if not open_shards:
            return low
        middles = {i: (low[i] + high[i]) // 2 for i in open_shards}
        replies = yield [
            ("ZREVRANGE", keys[i], middles[i], middles[i], "WITHSCORES") for i in open_shards
        ]
        pivots: list[tuple[int, Row]] = []
        for i, reply in zip(open_shards, replies, strict=True):
            found = _pairs(reply)
            if found:
                pivots.append((i, found[0]))
            else:  # the shard shrank since its size was read: nothing of it from here on
                high[i] = middles[i]
        if not pivots:
            continue
        counts = yield [_ahead_command(key, [row for _, row in pivots], False) for key in keys]
        for j, (i, _) in enumerate(pivots):
            ahead = [int(reply[2 * j]) for reply in counts]
            ahead[i] = middles[i]
            if sum(ahead) < offset:  # the pivot is among the first `offset`, and all ahead of it
                low = [max(lo, a) for lo, a in zip(low, ahead, strict=True)]
                low[i] = max(low[i], middles[i] + 1)
            else:  # the pivot and everything behind it on each shard come after the offset
                high = [min(hi, a) for hi, a in zip(high, ahead, strict=True)]
            # Under writes the bounds may cross: the range closes where it is.
            low = [min(lo, hi) for lo, hi in zip(low, high, strict=True)]


def _around_plan(
    season_id: int, shards: int, player_id: str, n: int, competition: bool
) -> Plan[tuple[int, Standing | None, list[Standing]]]:
    keys = _standings_keys(season_id, shards)
    own = keys[shard_of(player_id, shards)]
    replies = yield [("ZSCORE", own, player_id), *_sizes_commands(keys)]
    size = sum(int(count) for count in replies[1:])
    if replies[0] is None:
        return size, None, []
    composite = int(float(replies[0]))
    near = yield [
        evalsha(ScriptCall(_SHARD_NEAR, [key], [composite, player_id, n])) for key in keys
    ]
    rank = 1 + sum(int(reply[0]) for reply in near)
    before = list(_merged(_pairs(reply[1]) for reply in near))[-n:] if n else []
    behind = (row for row in _merged(_pairs(reply[2]) for reply in near) if row[0] != player_id)
    rows = [*before, (player_id, composite), *itertools.islice(behind, n)]
    better = (yield from _better_plan(keys, rows[0][1])) if competition else None
    standings = _standings_from(rows, rank - len(before), better)
    return size, standings[len(before)], standings


def _many_plan(
    season_id: int, shards: int, player_ids: Sequence[str], competition: bool
) -> Plan[tuple[int, list[Standing | None]]]:
    keys = _standings_keys(season_id, shards)
    groups = _by_shard(player_ids, shards)
    replies = yield [
        *_sizes_commands(keys),
        *(("ZMSCORE", keys[shard], *ids) for shard, ids in groups.items()),
    ]
    size = sum(int(count) for count in replies[:shards])
    scores: dict[str, Any] = {}
    for ids, found in zip(groups.values(), replies[shards:], strict=True):
        scores.update(zip(ids, found, strict=True))
    ranked = [
        (p, int(float(scores[p]))) for p in dict.fromkeys(player_ids) if scores[p] is not None
    ]
    chunks = [ranked[i : i + _BATCH_CHUNK] for i in range(0, len(ranked), _BATCH_CHUNK)]
    counts = yield [_ahead_command(key, chunk, competition) for chunk in chunks for key in keys]
    ahead = dict.fromkeys((p for p, _ in ranked), 0)
    better = dict.fromkeys((p for p, _ in ranked), 0)
    replies_left = iter(counts)
    for chunk in chunks:
        for _ in keys:
            flat = next(replies_left)
            for k, (player_id, _) in enumerate(chunk):
                ahead[player_id] += int(flat[2 * k])
                better[player_id] += int(flat[2 * k + 1])
    found = {
        p: Standing(p, ahead[p] + 1, composite, better[p] if competition else None)
        for p, composite in ranked
    }
    return size, [found.get(p) for p in player_ids]


def _batch_plan(
    season_id: int,
    shards: int,
    top: int,
    player_ids: Sequence[str],
    arounds: Sequence[tuple[str, int]],
) -> Plan[BatchRead]:
    size, page = (yield from _page_plan(season_id, shards, 0, top, False)) if top > 0 else (0, [])
    many_size, many = yield from _many_plan(season_id, shards, player_ids, False)
    windows = []
    for player_id, n in arounds:
        _, _, window = yield from _around_plan(season_id, shards, player_id, n, False)
        windows.append(window)
    return BatchRead(
        size=max(size, many_size),
        top=page,
        players=[None if s is None else (s.rank, s.composite) for s in many],
        arounds=windows,
    )


def _iter_sharded(season_id: int, shards: int, page_size: int) -> Iterator[list[Standing]]:
    """The whole board by rank, a merge of each shard read in turn from its top (the close's
    snapshot): each row's competition base is where its points began."""

    def shard_rows(key: str) -> Iterator[Row]:
        start = 0
        while True:
            rows = _pairs(client().zrevrange(key, start, start + page_size - 1, withscores=True))
            yield from rows
            if len(rows) < page_size:
                return
            start += page_size

    page: list[Standing] = []
    points_began = 0
    previous_points: int | None = None
    keys = _standings_keys(season_id, shards)
    for rank, (player_id, composite) in enumerate(_merged(map(shard_rows, keys)), start=1):
        points = composite // TIME_SLOTS
        if points != previous_points:
            points_began, previous_points = rank - 1, points
        page.append(Standing(player_id, rank, composite, points_began))
        if len(page) == page_size:
            yield page
            page = []
    if page:
        yield page


def scan_standings(
    season_id: int, *, cursor: int, count: int, shards: int = 1
) -> tuple[int, list[tuple[str, int]]]:
    """One ZSCAN step over the season's members: the next cursor (0 at the end) and a few
    (player_id, composite) pairs. A member present for a whole scan is returned at least once.
    On a sharded board the cursor walks the shards in turn: ZSCAN's cursor * shards + shard."""
    shard, zscan_cursor = cursor % shards, cursor // shards
    next_cursor, members = client().zscan(
        standings_key(season_id, shards, shard), cursor=zscan_cursor, count=count
    )
    found = [(player_id, int(score)) for player_id, score in members]
    if int(next_cursor) == 0:
        # This shard is done: the next one from its start, or the end of the whole scan.
        return (shard + 1 if shard + 1 < shards else 0), found
    return int(next_cursor) * shards + shard, found


def reconcile_scan_cursor(season_id: int) -> int:
    """Where reconciliation's scan of the season's members stopped (0: at the start)."""
    return int(client().get(_season_key(season_id, "reconcile-scan")) or 0)


def reconcile_scan_cursor_set(season_id: int, cursor: int) -> None:
    client().set(_season_key(season_id, "reconcile-scan"), cursor)


def iter_standings(
    season_id: int, *, page_size: int = 1000, shards: int = 1, whole: bool = False
) -> Iterable[list[Standing]]:
    """Walk the whole board by rank in pages (for archiving and checks)."""
    _readable_or_raise(season_id, shards, whole)
    if shards > 1:
        yield from _iter_sharded(season_id, shards, page_size)
        return
    offset = 0
    while True:
        _, page = read_page(season_id, offset=offset, limit=page_size)
        if not page:
            return
        yield page
        offset += len(page)


def rebuild_standings(
    season_id: int,
    chunks_after_start: Any,
    *,
    worsening: bool,
    on_chunk: Any = None,
    shards: int = 1,
) -> int:
    """Build the season's ZSET anew (each shard's) and swap it in, so readers see the old board
    or the new one, never a half-built one.

    The build set exists (with a marker) before the caller reads PostgreSQL: from then on the
    mirror writes every new standing into it as well, and the chunks read from PostgreSQL go in
    with the same GT/LT rule (`worsening`: LT), so neither a newer mirrored score nor a ban is
    lost by the swap. A correction made meanwhile is not undone by the snapshot's older copy
    either (see _BUILD). `chunks_after_start` is called once the marker is set and yields
    chunks of (player_id, composite). Each shard swaps on its own (a script touches one slot).
    """
    every = [_season_keys(season_id, shards, shard) for shard in range(shards)]
    rule = "LT" if worsening else "GT"
    commands_run(
        [("UNLINK", keys[3]) for keys in every]
        + [("UNLINK", keys[6]) for keys in every]
        + [("SET", keys[2], "1", "EX", REBUILD_TTL_SECONDS) for keys in every]
    )
    heartbeat = _Heartbeat([keys[i] for keys in every for i in (2, 3, 6)], REBUILD_TTL_SECONDS)
    try:
        for chunk in chunks_after_start():
            if not chunk:
                continue
            parts: dict[int, list[Any]] = {}
            for player_id, composite in chunk:
                parts.setdefault(shard_of(player_id, shards), []).extend((composite, player_id))
            commands: list[tuple[Any, ...]] = []
            for shard, members in parts.items():
                build_keys = [every[shard][3], every[shard][6]]
                commands.append(
                    evalsha(ScriptCall(_BUILD, build_keys, [rule, REBUILD_TTL_SECONDS, *members]))
                )
            commands_run(commands + [("EXPIRE", keys[2], REBUILD_TTL_SECONDS) for keys in every])
            if on_chunk is not None:
                on_chunk(len(chunk))
        swaps = [ScriptCall(_SWAP, keys, [_identity()]) for keys in every]
        return sum(int(size) for size in scripts_run(swaps))
    finally:
        heartbeat.stop()
        # A failed rebuild leaves the live set as it was and the mirror writing it alone.
        commands_run(
            [("DEL", keys[2]) for keys in every]
            + [("UNLINK", keys[3]) for keys in every]
            + [("UNLINK", keys[6]) for keys in every]
        )


class _Heartbeat:
    """Renews the keys' TTL every third of it from a thread until stopped: a rebuild's marker
    must outlive PostgreSQL's sort before the first chunk (minutes at 100 million players), and
    still expire soon after a crash, since the thread dies with its process. A renewal that
    fails is tried again; a marker lost meanwhile (a Redis restarted) stays lost, and the swap
    refuses."""

    def __init__(self, keys: list[str], seconds: int) -> None:
        self._keys = keys
        self._seconds = seconds
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rebuild-heartbeat", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stopped.wait(self._seconds / 3):
            try:
                commands_run([("EXPIRE", key, self._seconds) for key in self._keys])
            except RedisError:
                logger.warning("could not renew a rebuild's keys", exc_info=True)

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join()


# Reconciliation's recent pass (leaderboards/reconciliation.py) leaves, beside each shard's set
# and after it compared them, the time through which the set was found to hold PostgreSQL's
# totals. A Redis that comes back older than it was (restarted from an AOF written every second,
# a replica promoted behind its primary, a restored copy) keeps a prefix of its writes: one that
# lost mirror writes lost this point with them, or kept an older one, so the next pass re-checks
# every total changed since the point Redis went back to, whatever the loss.
def _checked_through_keys(season_id: int, shards: int) -> list[str]:
    return [_shard_key(season_id, shards, shard, "checked-through") for shard in range(shards)]


def checked_through(season_id: int, *, shards: int = 1) -> float | None:
    """The earliest point (a Unix time) recorded over the season's shards; None where a shard
    has none."""
    found = commands_run([("GET", key) for key in _checked_through_keys(season_id, shards)])
    if any(at is None for at in found):
        return None
    return min(float(at) for at in found)


def checked_through_set(season_id: int, at: float, *, shards: int = 1) -> None:
    commands_run([("SET", key, repr(at)) for key in _checked_through_keys(season_id, shards)])


def delete_standings(season_id: int, *, shards: int = 1) -> None:
    """Free every key of a season (its standings and their bookkeeping)."""
    keys = [key for shard in range(shards) for key in _season_keys(season_id, shards, shard)]
    keys += _checked_through_keys(season_id, shards)
    commands_run([("UNLINK", key) for key in [*keys, _season_key(season_id, "reconcile-scan")]])


def delete_prefixed_keys() -> int:
    """Remove every key under this deployment's prefix (used by the test suite's cleanup)."""
    return _keys_delete(f"{settings.LEADERBOARD_KEY_PREFIX}*")


def _keys_delete(*patterns: str) -> int:
    """Remove every key matching one of the patterns (a SCAN of the whole keyspace)."""
    r = client()
    removed = 0
    for pattern in patterns:
        batch: list[str] = []
        for key in r.scan_iter(match=pattern, count=1000):
            batch.append(key)
            if len(batch) >= 500:
                removed += r.unlink(*batch)
                batch.clear()
        if batch:
            removed += r.unlink(*batch)
    return removed


def ping() -> bool:
    return bool(client().ping())


# Answers built once and shared by every process for a moment (the top pages): the rendered body,
# its validator and the times it was built and goes stale, one string per answer, in the
# season's slot.
@dataclass(frozen=True, slots=True)
class SharedAnswer:
    body: str
    etag: str
    built_at_ms: int
    expires_at_ms: int


def top_answer_key(season_id: int, *, offset: int, limit: int, rank_style: str) -> str:
    return _season_key(season_id, f"top:{offset}:{limit}:{rank_style}")


def _shared_answer(raw: str | None) -> SharedAnswer | None:
    if raw is None:
        return None
    built, expires, etag, body = raw.split(":", 3)
    return SharedAnswer(body, etag, int(built), int(expires))


def shared_answer_get(key: str) -> SharedAnswer | None:
    return _shared_answer(client().get(key))


def shared_answer_put(key: str, answer: SharedAnswer) -> None:
    """Share an answer until it goes stale (replacing the one before)."""
    ttl_ms = max(1, answer.expires_at_ms - answer.built_at_ms)
    raw = f"{answer.built_at_ms}:{answer.expires_at_ms}:{answer.etag}:{answer.body}"
    client().set(key, raw, px=ttl_ms)


# Player profiles for the boards' names: per player the entry [generation, display_name,
# avatar_url] (JSON) and the player's current generation (see leaderboards/selectors.py, which
# owns the rule; here are only the keys and the round trips).
def _profile_key(player_id: str) -> str:
    return f"{settings.LEADERBOARD_KEY_PREFIX}profile:{player_id}"


def _profile_generation_key(player_id: str) -> str:
    return f"{settings.LEADERBOARD_KEY_PREFIX}profile-generation:{player_id}"


@dataclass(frozen=True, slots=True)
class ProfileEntry:
    generation: str | None  # the generation it was filed under
    display_name: str
    avatar_url: str


def _profiles_command(player_ids: Sequence[str]) -> list[str]:
    return [_profile_key(i) for i in player_ids] + [_profile_generation_key(i) for i in player_ids]


def _profiles_reply(
    player_ids: Sequence[str], values: Sequence[str | None]
) -> tuple[dict[str, ProfileEntry], dict[str, str | None]]:
    entries: dict[str, ProfileEntry] = {}
    for player_id, raw in zip(player_ids, values[: len(player_ids)], strict=True):
        if raw is not None:
            generation, display_name, avatar_url = json.loads(raw)
            entries[player_id] = ProfileEntry(generation, display_name, avatar_url)
    generations = dict(zip(player_ids, values[len(player_ids) :], strict=True))
    return entries, generations


def profiles_read(
    player_ids: Sequence[str],
) -> tuple[dict[str, ProfileEntry], dict[str, str | None]]:
    """The cached entries found and every player's current generation, in one MGET (one per
    node on a Redis Cluster: a player's keys are spread by their own slots)."""
    if not player_ids:
        return {}, {}
    return _profiles_reply(player_ids, mget(_profiles_command(player_ids)))


def profiles_file(entries: dict[str, ProfileEntry], *, ttl_seconds: int) -> None:
    pipe = client().pipeline(transaction=False)
    for player_id, entry in entries.items():
        raw = json.dumps([entry.generation, entry.display_name, entry.avatar_url])
        pipe.set(_profile_key(player_id), raw, ex=ttl_seconds)
    pipe.execute()


def profile_generations_renew(generations: dict[str, str], *, ttl_seconds: int) -> None:
    pipe = client().pipeline(transaction=False)
    for player_id, generation in generations.items():
        pipe.set(_profile_generation_key(player_id), generation, ex=ttl_seconds)
    pipe.execute()


# --- Reads from an event loop -----------------------------------------------------------------
# The hottest public reads (leaderboards/fast_reads.py): the same calls and replies as above, sent
# with the other commands of the same turn of the loop (config/redis.py's loop_send).


def _player_banned_key(season_id: int, shards: int, player_id: str) -> str:
    return _banned_key(season_id, shards, shard_of(player_id, shards))


def player_banned_in(season_id: int, player_id: str, *, shards: int = 1) -> bool:
    """Whether the season's board holds the player off as banned (asked when they have no rank)."""
    return bool(client().sismember(_player_banned_key(season_id, shards, player_id), player_id))


async def aplayer_banned_in(season_id: int, player_id: str, *, shards: int = 1) -> bool:
    """player_banned_in from the event loop."""
    key = _player_banned_key(season_id, shards, player_id)
    return bool(await loop_send("SISMEMBER", key, player_id))


async def _aread(call: ScriptCall, shared: bool) -> Any:
    with _whole_or_raise():
        return await (areplica_script_run(call) if shared else loop_script_run(call))


async def aread_rank(
    season_id: int,
    player_id: str,
    *,
    competition: bool = True,
    shared: bool = False,
    shards: int = 1,
    whole: bool = False,
) -> tuple[int, Standing | None]:
    """read_rank from the event loop."""
    if shards > 1:
        plan = _rank_plan(season_id, shards, player_id, competition)
        return await _arun(_whole_checked(plan, season_id, shards, whole), shared)
    call = _rank_call(season_id, player_id, competition, whole)
    return _rank_reply(player_id, await _aread(call, shared))


async def aread_around(
    season_id: int,
    player_id: str,
    *,
    n: int,
    competition: bool = True,
    shared: bool = False,
    shards: int = 1,
    whole: bool = False,
) -> tuple[int, Standing | None, list[Standing]]:
    """read_around from the event loop."""
    if shards > 1:
        plan = _around_plan(season_id, shards, player_id, n, competition)
        return await _arun(_whole_checked(plan, season_id, shards, whole), shared)
    call = _around_call(season_id, player_id, n, competition, whole)
    return _around_reply(player_id, await _aread(call, shared))


async def aprofiles_read(
    player_ids: Sequence[str],
) -> tuple[dict[str, ProfileEntry], dict[str, str | None]]:
    """profiles_read from the event loop."""
    if not player_ids:
        return {}, {}
    return _profiles_reply(player_ids, await loop_mget(_profiles_command(player_ids)))


async def ashared_answer_get(key: str) -> SharedAnswer | None:
    """shared_answer_get from the event loop."""
    return _shared_answer(await loop_send("GET", key))
