-- wrk script: GET /v1/nearby (k = 10 within 1 km) from origins read from queries.jsonl (one {"lat","lon"} per line),
-- cycling through them so every request asks about a different place.
local origins = {}
for line in io.lines(os.getenv("QUERIES") or "queries.jsonl") do
  local lat, lon = line:match('"lat":([%-%d%.e]+),"lon":([%-%d%.e]+)')
  if lat then origins[#origins + 1] = "/v1/nearby?lat=" .. lat .. "&lon=" .. lon .. "&radius=1000&limit=10" end
end
local i = 0
request = function()
  i = i % #origins + 1
  return wrk.format("GET", origins[i])
end
done = function(summary, latency, requests)
  io.write(string.format('{"requests":%d,"seconds":%.3f,"rps":%.0f,"p50_ms":%.3f,"p99_ms":%.3f,"errors":%d}\n',
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
