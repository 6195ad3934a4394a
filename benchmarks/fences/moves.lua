-- wrk script: PUTs the pins listed in the file named by env PINS (one "id lat lon" per line) to random positions in
-- the box of env BOX ("west,south,east,north"), each request a different pin; a pin moves a little (up to env STEP
-- degrees) from where it last was, so pins cross fence edges as walking users do. Each of the env THREADS wrk threads
-- moves its own share of the pins (every THREADS-th), so that no two threads keep a position for the same pin: with
-- both moving every pin, each move jumped between the two threads' positions across the box. Seeded per thread.
-- Prints one JSON line when done.
local threads = tonumber(os.getenv("THREADS") or "1")
local counter = 0
setup = function(thread)
  counter = counter + 1
  thread:set("seed", counter)
end
local ids = {}
local positions = {}
local w, s, e, n = string.match(os.getenv("BOX"), "([^,]+),([^,]+),([^,]+),([^,]+)")
w, s, e, n = tonumber(w), tonumber(s), tonumber(e), tonumber(n)
local step = tonumber(os.getenv("STEP") or "0.002")
local i = 0
init = function(args)
  local me = tonumber(seed) or 1
  math.randomseed(me)
  local k = 0
  for line in io.lines(os.getenv("PINS")) do
    local id, lat, lon = string.match(line, "^(%S+)%s+(%S+)%s+(%S+)")
    if id then
      if k % threads == (me - 1) % threads then
        ids[#ids + 1] = id
        positions[#ids] = {tonumber(lat), tonumber(lon)}
      end
      k = k + 1
    end
  end
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
