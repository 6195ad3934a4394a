-- The `done` function the wrk scripts share: one JSON line with requests, seconds, requests/s, p50 and p99 in
-- milliseconds, socket errors and non-2xx answers. A script takes it with
--   done = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "../wrk_summary.lua")
return function(summary, latency, requests)
  io.write(string.format('{"requests":%d,"seconds":%.3f,"rps":%.0f,"p50_ms":%.3f,"p99_ms":%.3f,"errors":%d,"non_2xx":%d}\n',
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.errors.status))
end
