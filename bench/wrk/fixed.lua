-- GET load on the one path of the URL wrk is given (wrk's own request), for the machine's
-- reference and the serving stacks. No arguments.
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local report = dofile(here .. "report.lua")

done = report.done
