#!/usr/bin/env bash
# HTTP load: `poi serve` under wrk against Redis GEOSEARCH under redis-benchmark, same 1 M points, loopback, same
# connection count. Usage: benchmarks/http/run-load.sh DATA.jsonl QUERIES.jsonl DB.sqlite [SECONDS] [CONNECTIONS]
# DB.sqlite must hold DATA (poi import DATA --db DB). Installs wrk and redis-server if missing.
set -euo pipefail
DATA="$1"; QUERIES="$2"; DB="$3"; SECONDS_RUN="${4:-20}"; CONNECTIONS="${5:-64}"
cd "$(dirname "$0")/../.."
command -v wrk >/dev/null && command -v redis-server >/dev/null || {
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk redis-server >/dev/null
}
POI=.build/release/poi
PORT=$((20000 + RANDOM % 10000))
"$POI" serve --port "$PORT" --db "$DB" >/tmp/poi-load-serve.log 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true; [ -n "${REDIS:-}" ] && kill $REDIS 2>/dev/null || true' EXIT
for _ in $(seq 1 600); do curl -sf "http://127.0.0.1:$PORT/health" >/dev/null && break; sleep 0.1; done
echo "== poi serve: wrk -t2 -c$CONNECTIONS -d${SECONDS_RUN}s nearby (k=10, radius 1 km)" >&2
QUERIES="$QUERIES" wrk -t2 -c"$CONNECTIONS" -d"${SECONDS_RUN}s" -s benchmarks/http/nearby.lua "http://127.0.0.1:$PORT" | tail -1 | sed 's/^/{"system":"poi",/; s/^{"system":"poi",{/{"system":"poi",/'
kill $SERVER; wait $SERVER 2>/dev/null || true

RPORT=$((30000 + RANDOM % 10000))
redis-server --port "$RPORT" --save "" --appendonly no --daemonize no >/tmp/poi-load-redis.log 2>&1 &
REDIS=$!
for _ in $(seq 1 100); do redis-cli -p "$RPORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
python3 - "$DATA" <<'PY' | redis-cli -p "$RPORT" --pipe >/dev/null
import sys, orjson
out = sys.stdout.buffer
for line in open(sys.argv[1], "rb"):
    r = orjson.loads(line)
    lon, lat, member = repr(r["lon"]), repr(r["lat"]), r["id"]
    parts = [b"GEOADD", b"pois", lon.encode(), lat.encode(), member.encode()]
    out.write(b"*5\r\n" + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts))
PY
ORIGIN=$(head -1 "$QUERIES" | python3 -c 'import json,sys; q=json.load(sys.stdin); print(q["lon"], q["lat"])')
echo "== Redis $(redis-server --version | grep -o 'v=[0-9.]*'): redis-benchmark -c$CONNECTIONS GEOSEARCH pois FROMLONLAT $ORIGIN BYRADIUS 1 km ASC COUNT 10 WITHDIST" >&2
redis-benchmark -p "$RPORT" -c "$CONNECTIONS" -n $((SECONDS_RUN * 20000)) --threads 2 -q --csv \
  GEOSEARCH pois FROMLONLAT $ORIGIN BYRADIUS 1 km ASC COUNT 10 WITHDIST | tail -1
