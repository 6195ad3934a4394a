-- wrk script: GETs the request paths of the file named by env PATHS (one path per line, e.g.
-- /v1/nearby?lat=..&lon=..&radius=1000&limit=10), cycling through them so that every request asks about a
-- different place; each wrk thread starts at a different offset. Prints one JSON line when done.
-- The requests are formatted once per thread in init, so that each request costs wrk a table lookup rather than
-- a wrk.format call: the load generator shares the cores with the server, and its cost is not the server's.
local paths = {}
for line in io.lines(os.getenv("PATHS")) do
  if #line > 0 then paths[#paths + 1] = line end
end
local i = 0
setup = function(thread)
  thread:set("offset", math.random(#paths))
end
local requests = {}
init = function(args)
  i = tonumber(offset) or 0
  for n = 1, #paths do requests[n] = wrk.format("GET", paths[n]) end
end
request = function()
  i = i % #requests + 1
  return requests[i]
end
done = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "../wrk_summary.lua")
