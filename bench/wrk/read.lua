-- GET load on one read endpoint: the ping ceiling, a random player's rank, the top 100, the
-- ranks around a random player, or the friends view of one of the first 1,000 players (each has
-- 1,000 friends: bench/load.py, FRIEND_LISTS). Arguments after `--`: kind, player count, board,
-- season.
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local report = dofile(here .. "report.lua")

local threads_started = 0

function setup(thread)
  threads_started = threads_started + 1
  thread:set("thread_number", threads_started)
end

local kind, players, query

function init(args)
  kind = args[1]
  players = tonumber(args[2])
  query = "board=" .. args[3] .. "&season=" .. args[4]
  math.randomseed(os.time() * 1000 + thread_number)
end

function request()
  if kind == "ping" then
    return wrk.format("GET", "/api/v1/ping")
  elseif kind == "top" then
    return wrk.format("GET", "/api/v1/leaderboard/top?limit=100&" .. query)
  end
  if kind == "friends" then
    local owner = "p" .. math.random(0, math.min(players, 1000) - 1)
    return wrk.format("GET", "/api/v1/leaderboard/players/" .. owner .. "/friends?" .. query)
  end
  local player = "p" .. math.random(0, players - 1)
  if kind == "rank" then
    return wrk.format("GET", "/api/v1/leaderboard/players/" .. player .. "?" .. query)
  end
  return wrk.format("GET", "/api/v1/leaderboard/players/" .. player .. "/around?n=5&" .. query)
end

done = report.done
