-- Shared by the benchmark's wrk scripts: done() prints one line of JSON that bench/wrk.py reads.
-- Times are microseconds, as wrk measures them.
local report = {}

local PERCENTILES = {
  1, 5, 10, 20, 25, 30, 40, 50, 60, 70, 75, 80, 85, 90, 95, 97.5, 99, 99.5, 99.9, 99.99,
}

function report.done(summary, latency, requests)
  local errors = summary.errors
  local points = {}
  for _, p in ipairs(PERCENTILES) do
    points[#points + 1] = string.format("[%s,%d]", p, latency:percentile(p))
  end
  local fields = {
    string.format('"requests":%d', summary.requests),
    string.format('"duration_us":%d', summary.duration),
    string.format('"bytes":%d', summary.bytes),
    string.format(
      '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}',
      errors.connect, errors.read, errors.write, errors.status, errors.timeout
    ),
    string.format(
      '"latency_us":{"min":%d,"mean":%.1f,"stdev":%.1f,"max":%d}',
      latency.min, latency.mean, latency.stdev, latency.max
    ),
    '"percentiles_us":[' .. table.concat(points, ",") .. "]",
  }
  io.write("WRK_JSON {" .. table.concat(fields, ",") .. "}\n")
end

return report
