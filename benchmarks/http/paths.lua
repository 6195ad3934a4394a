-- wrk script: GETs the request paths of the file named by env PATHS (one path per line, e.g.
-- /v1/nearby?lat=..&lon=..&radius=1000&limit=10), cycling through them so that every request asks about a
-- different place; each wrk thread starts at a different offset. Prints one JSON line when done.
local paths = {}
for line in io.lines(os.getenv("PATHS")) do
  if #line > 0 then paths[#paths + 1] = line end
end
local i = 0
setup = function(thread)
  thread:set("offset", math.random(#paths))
end
init = function(args)
  i = tonumber(offset) or 0
end
request = function()
  i = i % #paths + 1
  return wrk.format("GET", paths[i])
end
done = function(summary, latency, requests)
  io.write(string.format('{"requests":%d,"seconds":%.3f,"rps":%.0f,"p50_ms":%.3f,"p99_ms":%.3f,"errors":%d,"non_2xx":%d}\n',
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.errors.status))
end
