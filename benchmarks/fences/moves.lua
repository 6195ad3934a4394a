-- wrk script: PUTs the pins listed in the file named by env PINS (one id per line) to random positions in the box
-- of env BOX ("west,south,east,north"), each request a different pin; a pin moves a little (up to env STEP
-- degrees) from where this thread last put it, so pins cross fence edges as walking users do. Seeded per thread.
-- Prints one JSON line when done.
local ids = {}
for line in io.lines(os.getenv("PINS")) do
  if #line > 0 then ids[#ids + 1] = line end
end
local w, s, e, n = string.match(os.getenv("BOX"), "([^,]+),([^,]+),([^,]+),([^,]+)")
w, s, e, n = tonumber(w), tonumber(s), tonumber(e), tonumber(n)
local step = tonumber(os.getenv("STEP") or "0.002")
local counter = 0
setup = function(thread)
  counter = counter + 1
  thread:set("seed", counter)
end
local positions = {}
local i = 0
init = function(args)
  math.randomseed(tonumber(seed) or 1)
  i = math.random(#ids)
end
request = function()
  i = i % #ids + 1
  local p = positions[i]
  if p == nil then
    p = {s + math.random() * (n - s), w + math.random() * (e - w)}
  else
    p = {math.min(n, math.max(s, p[1] + (math.random() - 0.5) * 2 * step)), math.min(e, math.max(w, p[2] + (math.random() - 0.5) * 2 * step))}
  end
  positions[i] = p
  local body = string.format('{"uniqueKey":"bench","firstName":"B","lastName":"%d","mapString":"","mediaURL":"","lat":%.6f,"lon":%.6f}', i, p[1], p[2])
  return wrk.format("PUT", "/v1/pins/" .. ids[i], {["Content-Type"] = "application/json"}, body)
end
done = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "../wrk_summary.lua")
