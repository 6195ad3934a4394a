-- wrk script: POST a pin with a bearer token (TOKEN) and count the answers: created (201), limited (429), other.
-- Prints one JSON line at the end.
local body = '{"uniqueKey":"bench","firstName":"Load","lastName":"Test","mapString":"Helsinki","mediaURL":"","lat":60.17,"lon":24.94}'
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  created, limited, other = 0, 0, 0
end

function request()
  return wrk.format("POST", "/v1/pins", {["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. os.getenv("TOKEN")}, body)
end

function response(status, headers, body)
  if status == 201 then created = created + 1 elseif status == 429 then limited = limited + 1 else other = other + 1 end
end

function done(summary, latency, requests)
  local c, l, o = 0, 0, 0
  for _, thread in ipairs(threads) do
    c = c + thread:get("created")
    l = l + thread:get("limited")
    o = o + thread:get("other")
  end
  io.write(string.format('{"requests": %d, "seconds": %.2f, "created": %d, "limited_429": %d, "other": %d}\n',
    summary.requests, summary.duration / 1e6, c, l, o))
end
