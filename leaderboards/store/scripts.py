"""The gateway's Lua scripts that write: the mirror's write, corrections, bans, the rebuild's
build and swap, deletion, and the markers and claims. (The reads' are read_scripts.py's.) Each is
registered once per process and run by SHA (config/building_blocks/redis.py); the modules beside
this one send them."""

from __future__ import annotations

from seasons.scoring import TIME_SLOTS

# --- Writes (writes.py) ---------------------------------------------------------------------------
# The writes name a shard's keys in keys.ShardKeys' order: KEYS[1] the live set, [2] the banned
# players, [3] the rebuild's marker, [4] the set it builds, [5] the whole marker, [6] the corrected
# players, [7] those corrected while the rebuild runs, [8] the members' segment values, [9] those
# of the set being built, [10] and [11] the segment names in use in either.

# Segments (keys.py, "Segments"). A member's entry is "<stamp>|country:DE|platform:pc": its
# values in the board's dimensions as PostgreSQL had them when read, stamped with the player's
# count of changes (of values and of clan), so an entry read before a change never replaces one
# read after it (a mirror task that read PostgreSQL before the change and writes after the
# refresh). An entry "" is none known (no dimensions on the board and no clan, or the player never
# had either). A player in a clan has "|clan:<id>" too, a segment of its own (the clan's members,
# ranked), and after the stamp the board's clan rule, "7;sum.0|...": how the clan's standing in
# `<set>:clans` is made of its members' (see `clan_follow`).
# `segments_follow` keeps one side's segment sets (the live set's, or the set being built's) on
# what that set holds: a newer entry moves the member out of its old segments and into the new,
# then each segment set of its current values gets the member's score in the set exactly (or
# loses the member, off the set: banned, voided, a stranger removed). A member off the set holds
# no entry either: a change of their values owes no refresh of a season they have no standing
# in, so their next write must read where they are now.
_LUA_SEGMENTS = f"""
local names_of = {{}}
-- An entry's segments: each {{name, the clan it names or false}}.
local function segment_names(entry)
  local found = names_of[entry]
  if not found then
    found = {{}}
    for name in string.gmatch(entry, '|([^|]+)') do
      found[#found + 1] = {{name, string.match(name, '^clan:(.+)$') or false}}
    end
    names_of[entry] = found
  end
  return found
end
local function stamp_of(entry)
  return tonumber(string.match(entry, '^%d+'))
end
-- A clan's standing after its members' set `members` changed for one member from `before` to
-- `after` (scores, or false for absent): on a board of sums, the sum of its members' points
-- (signed: a lowest-first board's as negatives, so a larger standing is better) times the time
-- slots, so its points part reads as a composite's does (with no time part: equal sums tie),
-- kept by the difference; on a board of bests, its best member's score itself (their time
-- breaks ties). A clan without members on the set has no standing.
local function clan_follow(set, entry, clan, members, before, after, present)
  local rule, offset = string.match(entry, '^%d+;(%a+)%.(%d+)')
  if not rule then return end
  local clans = set .. ':clans'
  if not present and redis.call('EXISTS', members) == 0 then
    redis.call('ZREM', clans, clan)
  elseif rule == 'sum' then
    local function signed(score)
      if not score then return 0 end
      return math.floor(tonumber(score) / {TIME_SLOTS}) - tonumber(offset)
    end
    local change = signed(after) - signed(before)
    if change ~= 0 then redis.call('ZINCRBY', clans, change * {TIME_SLOTS}, clan) end
  else
    local best = redis.call('ZREVRANGE', members, 0, 0, 'WITHSCORES')
    redis.call('ZADD', clans, best[2], clan)
  end
end
-- One segment set of the member: `score` by `rule`, or `exact`, or off it (both false); its
-- clan's standing follows. Under a rule, a member the write changed holds `score` exactly
-- (ZADD's CH says whether it did), so a clan's standing needs one read of what it held before,
-- and a write that changed nothing leaves it alone. `known`: the write changed the member's
-- score in `set` from `was` (a score, or false for none), which each of its segment sets held
-- too (they follow the set exactly), so the clan's standing follows without that read.
local function segment_write(set, entry, segment, member, rule, score, exact, known, was)
  local key = set .. ':' .. segment[1]
  local clan = segment[2]
  if rule and (known or not clan) then
    redis.call('ZADD', key, rule, score, member)
    if clan then clan_follow(set, entry, clan, key, was, score, true) end
    return
  end
  local before = clan and redis.call('ZSCORE', key, member)
  if rule then
    if redis.call('ZADD', key, rule, 'CH', score, member) == 1 then
      clan_follow(set, entry, clan, key, before, score, true)
    end
    return
  end
  if exact then
    redis.call('ZADD', key, exact, member)
  else
    redis.call('ZREM', key, member)
  end
  if clan then
    clan_follow(set, entry, clan, key, before, exact, exact ~= false)
  end
end
-- `rule` and `score`: the write just made to `set` (GT or LT), which the member's segment sets
-- get too; without them (a correction, a move, a ban) they get what `set` holds now, exactly.
-- `changed` (nil: not known) says whether that write changed the member's score in `set`, from
-- `was`: one that did not leaves the segment sets as they are, since they hold that score.
local function segments_follow(set, values, names, member, entry, rule, score, changed, was)
  local held = redis.call('HGET', values, member)
  local current = held
  if entry ~= '' and entry ~= held and (not held or stamp_of(entry) > stamp_of(held)) then
    if held then
      for _, segment in ipairs(segment_names(held)) do
        segment_write(set, held, segment, member, false, false, false)
      end
    end
    redis.call('HSET', values, member, entry)
    for _, segment in ipairs(segment_names(entry)) do redis.call('SADD', names, segment[1]) end
    current = entry
    rule = nil
  end
  if not current then return false end
  if rule and changed == false then return true end
  local exact = false
  if not rule then exact = redis.call('ZSCORE', set, member) end
  for _, segment in ipairs(segment_names(current)) do
    segment_write(set, current, segment, member, rule, score, exact, changed, was)
  end
  if not rule and not exact then
    redis.call('HDEL', values, member)
    return false
  end
  return true
end
-- Whether each side has segments at all, looked at once a call: a member of a board without
-- dimensions costs no segment lookup (a member placed by this call has an entry of its own).
local live_segmented = redis.call('EXISTS', KEYS[8]) == 1
local build_segmented = redis.call('EXISTS', KEYS[9]) == 1
-- An entry "?" is one the caller did not read (the mirror reads PostgreSQL only for members
-- Redis does not hold yet): the member keeps what it holds. live_follow says whether the member
-- holds an entry now.
local function live_follow(member, entry, rule, score, changed, was)
  if entry == '?' then entry = '' end
  if entry ~= '' or live_segmented then
    return segments_follow(KEYS[1], KEYS[8], KEYS[10], member, entry, rule, score, changed, was)
  end
  return false
end
local function build_follow(member, entry, rule, score)
  if entry == '?' then entry = '' end
  if entry ~= '' or build_segmented then
    segments_follow(KEYS[4], KEYS[9], KEYS[11], member, entry, rule, score)
  end
end
"""

# Replace a member's score only if it still holds what the caller saw ("" = absent), so a
# repair never overwrites a newer score the mirror wrote in between; its segment sets follow,
# moved by the entry (ARGV[4]) if newer than the one held.
COMPARE_AND_SET = (
    _LUA_SEGMENTS
    + """
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
live_follow(ARGV[1], ARGV[4])
return 1
"""
)


# The mirror's write: ARGV[1] is GT (scores only rise) or LT, ARGV[2] the top-N thresholds whose
# crossings to report (ascending, comma-separated; "" for none), then member, score, stamp, entry
# quadruples. Banned players are skipped, and so is a write older than the member's correction
# (its stamp below the correction's, see CORRECT); while a rebuild runs (KEYS[3] exists) the set
# it builds gets the write too, so a result committed after the rebuild read PostgreSQL is not
# lost by the swap. The member's segment sets follow (see "Segments"). Returns what it wrote, the
# set's "whole" marker (KEYS[5]: the identity of the database that marked it, or false), a member
# it wrote (or false), the members written with entry "?" that hold none (the caller reads theirs
# and writes them again with it), and the moves: each member whose score the write changed, its
# score before ('' for none) and after, which the live push tells "overtaken" by; and the
# thresholds' crossings: member, N, 1 (entered the top N) or 0 (left it), rank after.
MIRROR = (
    _LUA_SEGMENTS
    + """
local rebuilding = redis.call('EXISTS', KEYS[3]) == 1
local corrected = redis.call('EXISTS', KEYS[6]) == 1
local written = 0
local one = false
local unplaced = {}
local moves = {}
local crossings = {}
local thresholds = {}
for n in string.gmatch(ARGV[2], '%d+') do thresholds[#thresholds + 1] = tonumber(n) end
local deepest = thresholds[#thresholds]
-- The score at the deepest threshold's edge (nil: no thresholds; false: fewer members than
-- that, so every write may cross one): a write that neither starts nor ends at or above it
-- crosses none, and costs no rank.
local function edge_score()
  if not deepest then return nil end
  local at = redis.call('ZREVRANGE', KEYS[1], deepest - 1, deepest - 1, 'WITHSCORES')
  if #at == 0 then return false end
  return tonumber(at[2])
end
local edge = edge_score()
local function crossed(member, top, entered, rank)
  crossings[#crossings + 1] = member
  crossings[#crossings + 1] = top
  crossings[#crossings + 1] = entered
  crossings[#crossings + 1] = rank
end
for i = 3, #ARGV, 4 do
  local member = ARGV[i]
  local current = true
  if corrected then
    local since = redis.call('HGET', KEYS[6], member)
    current = not since or (ARGV[i + 2] ~= '' and tonumber(ARGV[i + 2]) > tonumber(since))
  end
  if current and redis.call('SISMEMBER', KEYS[2], member) == 0 then
    local before = redis.call('ZSCORE', KEYS[1], member)
    local near = edge ~= nil and (edge == false or tonumber(ARGV[i + 1]) >= edge
      or (before and tonumber(before) >= edge))
    local was_at = near and before and redis.call('ZREVRANK', KEYS[1], member)
    local changed = redis.call('ZADD', KEYS[1], ARGV[1], 'CH', ARGV[i + 1], member) == 1
    if changed then
      moves[#moves + 1] = member
      moves[#moves + 1] = before or ''
      moves[#moves + 1] = ARGV[i + 1]
      if near then
        -- 0-based ranks: in the top n means an index below n. Whoever the write pushed past
        -- an edge, or pulled over it, crossed it the other way.
        local now_at = redis.call('ZREVRANK', KEYS[1], member)
        for _, n in ipairs(thresholds) do
          local was_in = was_at and was_at < n
          if now_at < n and not was_in then
            crossed(member, n, 1, now_at + 1)
            local out = redis.call('ZREVRANGE', KEYS[1], n, n)
            if #out == 1 then crossed(out[1], n, 0, n + 1) end
          elseif was_in and now_at >= n then
            crossed(member, n, 0, now_at + 1)
            local pulled = redis.call('ZREVRANGE', KEYS[1], n - 1, n - 1)
            if #pulled == 1 then crossed(pulled[1], n, 1, n) end
          end
        end
        edge = edge_score()
      end
    end
    local entry = ARGV[i + 3]
    if not live_follow(member, entry, ARGV[1], ARGV[i + 1], changed, before) and entry == '?' then
      unplaced[#unplaced + 1] = member
    end
    if rebuilding then
      redis.call('ZADD', KEYS[4], ARGV[1], ARGV[i + 1], member)
      build_follow(member, ARGV[i + 3], ARGV[1], ARGV[i + 1])
    end
    written = written + 1
    one = member
  end
end
return {written, redis.call('GET', KEYS[5]), one, unplaced, moves, crossings}
"""
)

# Corrections. A correction (a voided result) sets the member's score exactly, whichever way it
# moves, or removes the member (ARGV[2] ""), in the live set and in any set being rebuilt, with
# its segment sets (ARGV[4] its entry); a banned player is left off. Older copies of the
# member's standing may still be on their way: an outbox row committed before the void, a
# mirror task redelivered, a rebuild's snapshot read before it. So the correction leaves its
# stamp (ARGV[3], a value of the outbox's id sequence taken while no write of the season could
# commit: leaderboards/services.py) in the shard's corrected players (KEYS[6]): the mirror skips
# the member's writes stamped below it, and the rebuild skips the member's snapshot rows once
# corrected during it (KEYS[7]). A correction older than the one stored changes nothing (0).
CORRECT = (
    _LUA_SEGMENTS
    + """
local since = redis.call('HGET', KEYS[6], ARGV[1])
if since and tonumber(since) >= tonumber(ARGV[3]) then return 0 end
redis.call('HSET', KEYS[6], ARGV[1], ARGV[3])
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 then
  -- Banned: off the board already (see BAN), and so without an entry (one kept from before
  -- that rule goes now).
  live_follow(ARGV[1], ARGV[4])
  return 0
end
local rebuilding = redis.call('EXISTS', KEYS[3]) == 1
if rebuilding then redis.call('SADD', KEYS[7], ARGV[1]) end
if ARGV[2] == '' then
  redis.call('ZREM', KEYS[1], ARGV[1])
  if rebuilding then redis.call('ZREM', KEYS[4], ARGV[1]) end
else
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
  if rebuilding then redis.call('ZADD', KEYS[4], ARGV[2], ARGV[1]) end
end
live_follow(ARGV[1], ARGV[4])
if rebuilding then build_follow(ARGV[1], ARGV[4]) end
return 1
"""
)

# A chunk of the rebuild's snapshot into the set it builds (KEYS[4]), by ARGV[1] (GT or LT);
# ARGV[2] is how long the set may live; ARGV[3] '1' when the rows carry segment entries. Then
# score, member pairs (score, member, entry triples with entries), or with ARGV[3] 'p' the pairs
# packed into ARGV[4] as one text, "score member score member ...": player ids hold no space,
# and packing a chunk is one join in the client where 40,000 arguments each cost it an encoding
# (over half of a 100-million-player rebuild's client time). Members corrected since the
# rebuild began (KEYS[7]) are skipped: the correction read PostgreSQL after the snapshot, or the
# snapshot's copy would undo it. ZADD takes the pairs 500 at a time (Lua's unpack), into the set
# and into each segment set (a chunk's members grouped by segment): a member the mirror placed
# in the built segments already, from a PostgreSQL read no older than the snapshot's, keeps its
# place (HSETNX), and its clan's standing the mirror's part; each new member's adds to its clan's
# (the sum of their points, or the best of their scores: see `clan_follow`).
BUILD = (
    _LUA_SEGMENTS
    + f"""
local any_corrected = redis.call('EXISTS', KEYS[7]) == 1
local function corrected(member)
  return any_corrected and redis.call('SISMEMBER', KEYS[7], member) == 1
end
local function zadd_all(key, rows)
  for i = 1, #rows, 1000 do
    redis.call('ZADD', key, ARGV[1], unpack(rows, i, math.min(i + 999, #rows)))
  end
end
local stride = ARGV[3] == '1' and 3 or 2
local values, first = ARGV, 4
if ARGV[3] == 'p' then
  values, first = {{}}, 1
  for token in string.gmatch(ARGV[4], '%S+') do values[#values + 1] = token end
end
if stride == 2 and not any_corrected then
  for i = first, #values, 1000 do
    redis.call('ZADD', KEYS[4], ARGV[1], unpack(values, i, math.min(i + 999, #values)))
  end
  redis.call('EXPIRE', KEYS[4], ARGV[2])
  return 1
end
local rows, by_segment, rule_of = {{}}, {{}}, {{}}
for i = first, #values, stride do
  local score, member = values[i], values[i + 1]
  if not corrected(member) then
    rows[#rows + 1] = score
    rows[#rows + 1] = member
    local entry = stride == 3 and values[i + 2] or ''
    if entry ~= '' and redis.call('HSETNX', KEYS[9], member, entry) == 1 then
      for _, segment in ipairs(segment_names(entry)) do
        local found = by_segment[segment[1]]
        if not found then
          found = {{}}
          by_segment[segment[1]] = found
          rule_of[segment[1]] = entry
        end
        found[#found + 1] = score
        found[#found + 1] = member
      end
    end
  end
end
zadd_all(KEYS[4], rows)
for name, members in pairs(by_segment) do
  zadd_all(KEYS[4] .. ':' .. name, members)
  redis.call('EXPIRE', KEYS[4] .. ':' .. name, ARGV[2])
  redis.call('SADD', KEYS[11], name)
  local clan = string.match(name, '^clan:(.+)$')
  local rule, offset = string.match(rule_of[name], '^%d+;(%a+)%.(%d+)')
  if clan and rule == 'sum' then
    local sum = 0
    for i = 1, #members, 2 do
      sum = sum + math.floor(tonumber(members[i]) / {TIME_SLOTS}) - tonumber(offset)
    end
    redis.call('ZINCRBY', KEYS[4] .. ':clans', sum * {TIME_SLOTS}, clan)
  elseif clan and rule then
    local best = redis.call('ZREVRANGE', KEYS[4] .. ':' .. name, 0, 0, 'WITHSCORES')
    redis.call('ZADD', KEYS[4] .. ':clans', best[2], clan)
  end
end
if stride == 3 then
  -- Only the segment sets this chunk wrote: every one of them each chunk would be O(segments)
  -- a chunk (200,000 clans' member sets at 10 million players). The rebuild's heartbeat renews
  -- them all now and then (writes.py, _Heartbeat).
  redis.call('EXPIRE', KEYS[4] .. ':clans', ARGV[2])
  redis.call('EXPIRE', KEYS[9], ARGV[2])
  redis.call('EXPIRE', KEYS[11], ARGV[2])
end
redis.call('EXPIRE', KEYS[4], ARGV[2])
return 1
"""
)

# A ban: remembered for the mirror, and the player off the live set and any set being rebuilt,
# and off their segment sets.
BAN = (
    _LUA_SEGMENTS
    + """
redis.call('SADD', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
live_follow(ARGV[1], '')
build_follow(ARGV[1], '')
return 1
"""
)

# The rebuild's swap: the built set replaces the live one (the old one is freed in the
# background), minus players banned while it was built, and so do its segment sets, values and
# names; the rebuild's marker goes, so the mirror writes the live set alone again, and the set is
# marked whole (built from PostgreSQL) with this database's identity (ARGV[1]). Without the
# rebuild's marker the build set lost its start with its Redis (restarted meanwhile): no swap.
SWAP = (
    _LUA_SEGMENTS
    + """
if redis.call('EXISTS', KEYS[3]) == 0 then
  return redis.error_reply('REBUILDLOST the set being built was lost with its Redis')
end
local banned = redis.call('SMEMBERS', KEYS[2])
for i = 1, #banned do
  redis.call('ZREM', KEYS[4], banned[i])
  build_follow(banned[i], '')
end
redis.call('DEL', KEYS[3])
for _, name in ipairs(redis.call('SMEMBERS', KEYS[10])) do
  redis.call('UNLINK', KEYS[1] .. ':' .. name)
end
redis.call('UNLINK', KEYS[1], KEYS[8], KEYS[10], KEYS[1] .. ':clans')
for _, name in ipairs(redis.call('SMEMBERS', KEYS[11])) do
  if redis.call('EXISTS', KEYS[4] .. ':' .. name) == 1 then
    redis.call('RENAME', KEYS[4] .. ':' .. name, KEYS[1] .. ':' .. name)
    redis.call('PERSIST', KEYS[1] .. ':' .. name)
  end
end
for i, live in ipairs({KEYS[1], KEYS[8], KEYS[10], KEYS[1] .. ':clans'}) do
  local built = ({KEYS[4], KEYS[9], KEYS[11], KEYS[4] .. ':clans'})[i]
  if redis.call('EXISTS', built) == 1 then
    redis.call('RENAME', built, live)
    redis.call('PERSIST', live)
  end
end
redis.call('SET', KEYS[5], ARGV[1])
return redis.call('ZCARD', KEYS[1])
"""
)

# Free a set with its segment sets, their names and its clans' standings (KEYS[1], KEYS[2];
# KEYS[3] and on: more keys to free with them): a deleted season's, or a rebuild's half-built one.
DROP = """
for _, name in ipairs(redis.call('SMEMBERS', KEYS[2])) do
  redis.call('UNLINK', KEYS[1] .. ':' .. name)
end
redis.call('UNLINK', KEYS[1] .. ':clans', unpack(KEYS))
return 1
"""


# --- Markers and claims (whole.py, database.py, claims.py) ----------------------------------------

# Mark a set whole with this database's identity (ARGV[2]), if it still holds the member its
# caller saw there (ARGV[1], "" for none): a set lost with its Redis since the caller looked is
# not marked, nor one another database marked (its players are not this one's: it is rebuilt).
MARK_WHOLE = """
local marked = redis.call('GET', KEYS[2])
if marked then return marked == ARGV[2] and 1 or 0 end
if ARGV[1] ~= '' and not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
redis.call('SET', KEYS[2], ARGV[2])
return 1
"""


# Set the identity key to this database's; returns false when it held it already, else what it
# held ("" for nothing).
IDENTITY_CLAIM = """
local held = redis.call('GET', KEYS[1])
if held == ARGV[1] then return false end
redis.call('SET', KEYS[1], ARGV[1])
return held or ''
"""


# Forget the queued job if it still is this one (a later one may have taken its place).
JOB_DONE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
"""
