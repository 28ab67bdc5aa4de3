"""The gateway's Lua scripts that read: a live set's ranks, pages, around-me and batches, a sharded
board's steps, and the "whole" check every read makes. Registered once per process and run by SHA
(config/building_blocks/redis.py); single.py, reads.py and sharded.py send them."""

from __future__ import annotations

from seasons.scoring import TIME_SLOTS

# --- Reads of one set (single.py, reads.py) -------------------------------------------------------

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
# identity and whether the set must be whole ('1') as ARGV[1] and ARGV[2] (see whole.py and
# database.py); the script's own arguments follow. A set marked by another
# database is never read, and one that must be whole is read only when marked by this one: it
# may be a lost one refilled in part, and the read fails rather than answer from it.
NOT_WHOLE = "NOTWHOLE"
_LUA_WHOLE = f"""
local marked = redis.call('GET', KEYS[2])
if marked ~= ARGV[1] and (marked or ARGV[2] == '1') then
  return redis.error_reply('{NOT_WHOLE} the season has no whole standings in Redis')
end
"""

# Rank, score, board size and competition-rank base of one player, in one atomic step.
READ_RANK = (
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
READ_PAGE = (
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
READ_AROUND = (
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
READ_MANY = (
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

# Ordinal rank and score of many players, flat: rank, score, rank, score... (-1 when absent).
# No competition-rank base: the live ticker reads this for every followed player on every
# change, so it does only what an ordinal rank needs.
READ_RANKS = (
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

# --- Reads of a sharded board (sharded.py) --------------------------------------------------------

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
SHARD_AHEAD = (
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
SHARD_NEAR = (
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
