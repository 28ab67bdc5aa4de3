"""The Redis gateway: the only module that names a Redis key or runs a sorted-set command.

One ZSET per season holds every player's composite score (see scoring.py). Keys carry the
season in a hash tag, `{s<id>}`, so a season's live key and its rebuild key share a Redis
Cluster slot and sharding boards over a cluster stays a change to this module alone.
Lua scripts are registered once per process and run by SHA; the connections, the calls by SHA
and their recovery when Redis forgot a script are config/redis.py's, which names no key.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from config.redis import (
    ScriptCall,
    areplica_script_run,
    client,
    commands_run,
    evalsha,
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

# Rank, score, board size and competition-rank base of one player, in one atomic step.
_READ_RANK = (
    _LUA_BETTER
    + """
local rank = redis.call('ZREVRANK', KEYS[1], ARGV[1])
local size = redis.call('ZCARD', KEYS[1])
if not rank then return {false, false, size, false} end
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
return {rank, score, size, better(KEYS[1], score, ARGV[2])}
"""
)

# A page of the board by rank, with the competition-rank base of its first row.
_READ_PAGE = (
    _LUA_BETTER
    + """
local rows = redis.call('ZREVRANGE', KEYS[1], ARGV[1], ARGV[2], 'WITHSCORES')
local size = redis.call('ZCARD', KEYS[1])
local first_better = false
if #rows > 0 then first_better = better(KEYS[1], rows[2], ARGV[3]) end
return {size, first_better, rows}
"""
)

# The player's rank and the contiguous ranks around it, both read from the same set.
_READ_AROUND = (
    _LUA_BETTER
    + """
local rank = redis.call('ZREVRANK', KEYS[1], ARGV[1])
local size = redis.call('ZCARD', KEYS[1])
if not rank then return {false, size, false, false, {}} end
local n = tonumber(ARGV[2])
local first = rank - n
if first < 0 then first = 0 end
local rows = redis.call('ZREVRANGE', KEYS[1], first, rank + n, 'WITHSCORES')
return {rank, size, first, better(KEYS[1], rows[2], ARGV[3]), rows}
"""
)

# Rank, score and (with the flag first in ARGV) competition-rank base of each of many players.
_READ_MANY = (
    _LUA_BETTER
    + """
local out = {}
for i = 2, #ARGV do
  local rank = redis.call('ZREVRANK', KEYS[1], ARGV[i])
  if rank then
    local score = redis.call('ZSCORE', KEYS[1], ARGV[i])
    out[#out + 1] = {rank, score, better(KEYS[1], score, ARGV[1])}
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


# The mirror's write: ARGV[1] is GT (scores only rise) or LT, then member, score pairs. Banned
# players are skipped; while a rebuild runs (KEYS[3] exists) the set it builds gets the write too,
# so a result committed after the rebuild read PostgreSQL is not lost by the swap.
_MIRROR = """
local rebuilding = redis.call('EXISTS', KEYS[3]) == 1
local written = 0
for i = 2, #ARGV, 2 do
  local member = ARGV[i]
  if redis.call('SISMEMBER', KEYS[2], member) == 0 then
    redis.call('ZADD', KEYS[1], ARGV[1], ARGV[i + 1], member)
    if rebuilding then redis.call('ZADD', KEYS[4], ARGV[1], ARGV[i + 1], member) end
    written = written + 1
  end
end
return written
"""

# A correction (a voided result): the member's score set exactly, whichever way it moves, or the
# member removed (ARGV[2] ""), in the live set and in any set being rebuilt; a banned player is
# left off.
_CORRECT = """
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 then return 0 end
local rebuilding = redis.call('EXISTS', KEYS[3]) == 1
if ARGV[2] == '' then
  redis.call('ZREM', KEYS[1], ARGV[1])
  if rebuilding then redis.call('ZREM', KEYS[4], ARGV[1]) end
else
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
  if rebuilding then redis.call('ZADD', KEYS[4], ARGV[2], ARGV[1]) end
end
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
# background), minus players banned while it was built; the marker goes, so the mirror writes
# the live set alone again.
_SWAP = """
local banned = redis.call('SMEMBERS', KEYS[2])
for i = 1, #banned do redis.call('ZREM', KEYS[4], banned[i]) end
redis.call('DEL', KEYS[3])
redis.call('UNLINK', KEYS[1])
if redis.call('EXISTS', KEYS[4]) == 1 then
  redis.call('RENAME', KEYS[4], KEYS[1])
  redis.call('PERSIST', KEYS[1])
end
return redis.call('ZCARD', KEYS[1])
"""

# How long a rebuild may run before its marker and half-built set expire (a crashed rebuild
# must not leave the mirror writing twice forever). A rebuild renews them as it goes.
REBUILD_TTL_SECONDS = 600


def standings_key(season_id: int) -> str:
    return f"{settings.LEADERBOARD_KEY_PREFIX}{{s{season_id}}}:standings"


def _season_key(season_id: int, name: str) -> str:
    return f"{settings.LEADERBOARD_KEY_PREFIX}{{s{season_id}}}:{name}"


def _banned_key(season_id: int) -> str:
    """The season's banned players: the mirror never writes them."""
    return _season_key(season_id, "banned")


def _season_keys(season_id: int) -> list[str]:
    """The keys the mirror's and the rebuild's scripts touch, all in the season's slot: the live
    set, the banned players, the marker of a rebuild in progress and the set it builds."""
    return [
        standings_key(season_id),
        _banned_key(season_id),
        _season_key(season_id, "rebuilding"),
        _season_key(season_id, "rebuild"),
    ]


@dataclass(frozen=True, slots=True)
class StandingWrite:
    season_id: int
    player_id: str
    composite: int
    # Sum totals on lowest-first boards only get worse as results arrive; every other
    # combination only gets better. The write may move the score in that direction only,
    # which makes the mirror indifferent to redelivery and order.
    worsening: bool = False


@dataclass(frozen=True, slots=True)
class Standing:
    player_id: str
    rank: int  # 1-based ordinal rank
    composite: int
    # Members with strictly better points (competition rank - 1); None when the read did not
    # ask for competition ranks.
    better_count: int | None


def write_standings(writes: Iterable[StandingWrite]) -> int:
    """Mirror standings with ZADD GT (or LT): never moves a score back, so replays and tasks
    arriving out of order are harmless. Banned players are skipped, and while a rebuild is
    building the season's next set, the write goes to that set too (see rebuild_standings).
    One script call per season, all in one round trip."""
    groups: dict[tuple[int, bool], list[str]] = {}
    for write in writes:
        groups.setdefault((write.season_id, write.worsening), []).extend(
            (write.player_id, str(write.composite))
        )
    if not groups:
        return 0
    commands = [
        evalsha(
            ScriptCall(_MIRROR, _season_keys(season_id), ["LT" if worsening else "GT", *members])
        )
        for (season_id, worsening), members in groups.items()
    ]
    # With replicas, the writes' own connection waits for them to hold the writes (bounded),
    # so a reader told of the change afterwards finds it on a replica too.
    acknowledge = replicas_acknowledge()
    if acknowledge is not None:
        return sum(commands_run([*commands, acknowledge])[:-1])
    return sum(commands_run(commands))


def standing_correct(season_id: int, player_id: str, composite: int | None) -> bool:
    """Set a player's score to exactly `composite` (None: off the board), even when that is
    worse than the one stored: the mirror's writes only move a score one way, and a voided
    result moves it the other. Returns False for a banned player (left off)."""
    done = script(_CORRECT)(
        keys=_season_keys(season_id), args=[player_id, "" if composite is None else str(composite)]
    )
    return bool(done)


def players_ban(season_ids: Iterable[int], player_id: str) -> None:
    """Take a banned player off these seasons' boards and keep later mirror writes off too."""
    scripts_run(
        [ScriptCall(_BAN, _season_keys(season_id), [player_id]) for season_id in season_ids]
    )


def players_unban(season_ids: Iterable[int], player_id: str) -> None:
    """Let mirror writes for the player through again (the caller writes their standings)."""
    pipe = client().pipeline(transaction=False)
    for season_id in season_ids:
        pipe.srem(_banned_key(season_id), player_id)
    pipe.execute()


def compare_and_set(
    season_id: int, player_id: str, *, expected: int | None, composite: int | None
) -> bool:
    """Set (or remove, with None) a member's score if it still equals `expected`."""
    done = script(_COMPARE_AND_SET)(
        keys=[standings_key(season_id)],
        args=[
            player_id,
            "" if expected is None else str(expected),
            "" if composite is None else str(composite),
        ],
    )
    return bool(done)


def remove_players(season_id: int, player_ids: Sequence[str]) -> int:
    if not player_ids:
        return 0
    return int(client().zrem(standings_key(season_id), *player_ids))


def scores_of(season_id: int, player_ids: Sequence[str]) -> list[int | None]:
    if not player_ids:
        return []
    scores = client().zmscore(standings_key(season_id), list(player_ids))
    return [None if score is None else int(score) for score in scores]


def board_size(season_id: int) -> int:
    return int(client().zcard(standings_key(season_id)))


def standings_exist(season_id: int) -> bool:
    return bool(client().exists(standings_key(season_id)))


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
def _page_call(season_id: int, offset: int, limit: int, competition: bool) -> ScriptCall:
    args = [offset, offset + limit - 1, _flag(competition)]
    return ScriptCall(_READ_PAGE, [standings_key(season_id)], args)


def _page_reply(offset: int, reply: list[Any]) -> tuple[int, list[Standing]]:
    size, first_better, flat = reply
    return int(size), _with_better(
        _rows(flat, offset + 1), _int_or_none(first_better) if flat else None
    )


def _rank_call(season_id: int, player_id: str, competition: bool) -> ScriptCall:
    return ScriptCall(_READ_RANK, [standings_key(season_id)], [player_id, _flag(competition)])


def _rank_reply(player_id: str, reply: list[Any]) -> tuple[int, Standing | None]:
    rank, score, size, better = reply
    if rank is None:
        return int(size), None
    return int(size), Standing(player_id, int(rank) + 1, int(float(score)), _int_or_none(better))


def _around_call(season_id: int, player_id: str, n: int, competition: bool) -> ScriptCall:
    return ScriptCall(_READ_AROUND, [standings_key(season_id)], [player_id, n, _flag(competition)])


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
    return replica_script_run(call) if shared else script_run(call)


def read_page(
    season_id: int, *, offset: int, limit: int, competition: bool = True, shared: bool = False
) -> tuple[int, list[Standing]]:
    """Ranks offset+1 .. offset+limit, best first, and the board's size."""
    return _page_reply(offset, _read(_page_call(season_id, offset, limit, competition), shared))


def read_rank(
    season_id: int, player_id: str, *, competition: bool = True, shared: bool = False
) -> tuple[int, Standing | None]:
    return _rank_reply(player_id, _read(_rank_call(season_id, player_id, competition), shared))


def read_around(
    season_id: int, player_id: str, *, n: int, competition: bool = True, shared: bool = False
) -> tuple[int, Standing | None, list[Standing]]:
    call = _around_call(season_id, player_id, n, competition)
    return _around_reply(player_id, _read(call, shared))


def read_many(
    season_id: int, player_ids: Sequence[str], *, competition: bool = True
) -> tuple[int, list[Standing | None]]:
    if not player_ids:
        return board_size(season_id), []
    size, rows = script(_READ_MANY)(
        keys=[standings_key(season_id)], args=[_flag(competition), *player_ids]
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
_READ_RANKS = """
local out = {}
for i = 1, #ARGV do
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
) -> BatchRead:
    """The top, many players' ordinal ranks and several around-me windows of one season, in one
    round trip (the live ticker's read). Each part is read atomically; the parts may be a few
    commands apart, which a reader that looks again on the next change tolerates."""
    key = standings_key(season_id)
    calls = []
    if top > 0:
        calls.append(ScriptCall(_READ_PAGE, [key], [0, top - 1, _flag(False)]))
    chunks = [player_ids[i : i + _BATCH_CHUNK] for i in range(0, len(player_ids), _BATCH_CHUNK)]
    calls += [ScriptCall(_READ_RANKS, [key], list(chunk)) for chunk in chunks]
    calls += [
        ScriptCall(_READ_AROUND, [key], [player_id, n, _flag(False)]) for player_id, n in arounds
    ]
    commands = [*map(evalsha, calls), ("ZCARD", key)]
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


def scan_standings(season_id: int, *, cursor: int, count: int) -> tuple[int, list[tuple[str, int]]]:
    """One ZSCAN step over the season's members: the next cursor (0 at the end) and a few
    (player_id, composite) pairs. A member present for a whole scan is returned at least once."""
    next_cursor, members = client().zscan(standings_key(season_id), cursor=cursor, count=count)
    return int(next_cursor), [(player_id, int(score)) for player_id, score in members]


def reconcile_scan_cursor(season_id: int) -> int:
    """Where reconciliation's scan of the season's members stopped (0: at the start)."""
    return int(client().get(_season_key(season_id, "reconcile-scan")) or 0)


def reconcile_scan_cursor_set(season_id: int, cursor: int) -> None:
    client().set(_season_key(season_id, "reconcile-scan"), cursor)


def iter_standings(season_id: int, *, page_size: int = 1000) -> Iterable[list[Standing]]:
    """Walk the whole board by rank in pages (for archiving and checks)."""
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
) -> int:
    """Build the season's ZSET anew and swap it in, so readers see the old board or the new one,
    never a half-built one.

    The build set exists (with a marker) before the caller reads PostgreSQL: from then on the
    mirror writes every new standing into it as well, and the chunks read from PostgreSQL go in
    with the same GT/LT rule (`worsening`: LT), so neither a newer mirrored score nor a ban is
    lost by the swap. `chunks_after_start` is called once the marker is set and yields chunks of
    (player_id, composite).
    """
    r = client()
    keys = _season_keys(season_id)
    live, _, marker, building = keys
    r.unlink(building)
    r.set(marker, "1", ex=REBUILD_TTL_SECONDS)
    written = 0
    try:
        for chunk in chunks_after_start():
            if not chunk:
                continue
            pipe = r.pipeline(transaction=False)
            pipe.zadd(building, dict(chunk), lt=worsening, gt=not worsening)
            pipe.expire(building, REBUILD_TTL_SECONDS)
            pipe.expire(marker, REBUILD_TTL_SECONDS)
            pipe.execute()
            written += len(chunk)
            if on_chunk is not None:
                on_chunk(len(chunk))
        return int(script(_SWAP)(keys=keys, args=[]))
    finally:
        # A failed rebuild leaves the live set as it was and the mirror writing it alone.
        r.delete(marker)
        r.unlink(building)


def delete_standings(season_id: int) -> None:
    """Free every key of a season (its standings and their bookkeeping)."""
    client().unlink(*_season_keys(season_id), _season_key(season_id, "reconcile-scan"))


def delete_prefixed_keys() -> int:
    """Remove every key under this deployment's prefix (used by the test suite's cleanup)."""
    r = client()
    removed = 0
    batch: list[str] = []
    for key in r.scan_iter(match=f"{settings.LEADERBOARD_KEY_PREFIX}*", count=1000):
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


def player_banned_in(season_id: int, player_id: str) -> bool:
    """Whether the season's board holds the player off as banned (asked when they have no rank)."""
    return bool(client().sismember(_banned_key(season_id), player_id))


async def aplayer_banned_in(season_id: int, player_id: str) -> bool:
    """player_banned_in from the event loop."""
    return bool(await loop_send("SISMEMBER", _banned_key(season_id), player_id))


async def _aread(call: ScriptCall, shared: bool) -> Any:
    return await (areplica_script_run(call) if shared else loop_script_run(call))


async def aread_rank(
    season_id: int, player_id: str, *, competition: bool = True, shared: bool = False
) -> tuple[int, Standing | None]:
    """read_rank from the event loop."""
    return _rank_reply(
        player_id, await _aread(_rank_call(season_id, player_id, competition), shared)
    )


async def aread_around(
    season_id: int, player_id: str, *, n: int, competition: bool = True, shared: bool = False
) -> tuple[int, Standing | None, list[Standing]]:
    """read_around from the event loop."""
    call = _around_call(season_id, player_id, n, competition)
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
