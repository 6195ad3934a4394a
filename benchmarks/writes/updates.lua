-- wrk script: PUTs the POIs of the file named by env BODIES (one JSON record per line, as `poi generate` writes
-- them), each request the next record, moved up to env STEP degrees (default 0.0001, ~10 m) north or south of where
-- the file has it: a record written again with the same words, as an edit of its hours or a corrected position is.
-- Seeded per thread. Prints one JSON line when done (benchmarks/wrk_summary.lua).
local bodies = {}
local ids = {}
for line in io.lines(os.getenv("BODIES")) do
  if #line > 0 then
    bodies[#bodies + 1] = line
    ids[#ids + 1] = string.match(line, '"id":%s*"([^"]+)"')
  end
end
local step = tonumber(os.getenv("STEP") or "0.0001")
local counter = 0
setup = function(thread)
  counter = counter + 1
  thread:set("seed", counter)
end
local i = 0
init = function(args)
  math.randomseed(tonumber(seed) or 1)
  i = math.random(#bodies)
end
request = function()
  i = i % #bodies + 1
  local body = string.gsub(bodies[i], '"lat":%s*([%-%d%.]+)', function(v)
    return '"lat":' .. string.format("%.6f", math.max(-90, math.min(90, tonumber(v) + (math.random() - 0.5) * 2 * step)))
  end, 1)
  return wrk.format("PUT", "/v1/pois/" .. ids[i], {["Content-Type"] = "application/json"}, body)
end
done = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "../wrk_summary.lua")
