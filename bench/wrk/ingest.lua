-- POST load on the write path: one result per request, or batches of distinct players from one
-- match. Every (match_id, player_id) is new, so each item is an accepted result.
-- Arguments after `--`: batch size, player count, board, season, API key, run nonce.
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local report = dofile(here .. "report.lua")

local threads_started = 0

function setup(thread)
  threads_started = threads_started + 1
  thread:set("thread_number", threads_started)
end

local batch, players, board, season, match_prefix, headers
local sent = 0

function init(args)
  batch = tonumber(args[1])
  players = tonumber(args[2])
  board = args[3]
  season = args[4]
  headers = { ["Authorization"] = "Api-Key " .. args[5], ["Content-Type"] = "application/json" }
  match_prefix = args[6] .. "-" .. thread_number .. "-"
  math.randomseed(os.time() * 1000 + thread_number)
end

local function item(match_id, player)
  return string.format(
    '{"player_id":"p%d","points":%d,"match_id":"%s","board":"%s","season":"%s"}',
    player, math.random(1, 100), match_id, board, season
  )
end

function request()
  sent = sent + 1
  local match_id = match_prefix .. sent
  local body
  if batch == 1 then
    body = item(match_id, math.random(0, players - 1))
  else
    local chosen, items = {}, {}
    while #items < batch do
      local player = math.random(0, players - 1)
      if not chosen[player] then
        chosen[player] = true
        items[#items + 1] = item(match_id, player)
      end
    end
    body = "[" .. table.concat(items, ",") .. "]"
  end
  return wrk.format("POST", "/api/v1/scores", headers, body)
end

done = report.done
