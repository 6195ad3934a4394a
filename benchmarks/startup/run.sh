#!/usr/bin/env bash
# Start-up time and memory of `poi serve` at several sizes, beside Redis 7 reloading the same points from its RDB
# file, in the same run:
#
#   benchmarks/startup/run.sh [SIZES] [RESTARTS]      e.g. benchmarks/startup/run.sh 100000,1000000 3
#
# For each size N (default 100000,1000000): `poi generate --count N --seed 42`, `poi import` into a new SQLite file,
# then
#   - poi, first start: no snapshot yet (the indexes are built from the database; the snapshot is then written in
#     the background); time from exec to the first 200 from /health, and RSS once ready;
#   - poi, restarts (RESTARTS times, default 3): SIGTERM, start again: the indexes are read from the snapshot;
#   - Redis: the same N points GEOADDed, SAVEd to an RDB file, redis-server restarted on it; time from exec to the
#     first PONG (Redis answers -LOADING until the RDB is read), RSS once ready.
# Prints one JSON line per start (system, n, kind, seconds, rss_kb, rss_anon_kb, rss_file_kb, file_bytes) on
# standard output; progress on standard error. Needs the release build (swift build -c release --product poi).
set -euo pipefail
cd "$(dirname "$0")/../.."
SIZES="${1:-100000,1000000}"
RESTARTS="${2:-3}"
POI="${POI:-.build/release/poi}"   # another binary to compare: POI=/path/to/poi
OUT=benchmarks/out/startup
mkdir -p "$OUT"
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
install() { # command package...
  command -v "$1" >/dev/null 2>&1 && return 0
  shift
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}
install redis-server redis-server redis-tools
python3 -c 'import orjson' 2>/dev/null || pip install -q orjson
[ -x "$POI" ] || swift build -c release --product poi >&2
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
now() { date +%s.%N; }
memory() { # pid -> "rss anon file" in kB
  awk '/^VmRSS/{r=$2} /^RssAnon/{a=$2} /^RssFile/{f=$2} END{print r, a, f}' "/proc/$1/status"
}
emit() { # system n kind seconds pid file
  read -r rss anon file <<<"$(memory "$5")"
  local bytes=0; [ -f "$6" ] && bytes=$(stat -c %s "$6")
  python3 -c 'import json,sys; a=sys.argv; print(json.dumps(dict(system=a[1], n=int(a[2]), kind=a[3], seconds=round(float(a[4]),3), rss_kb=int(a[5]), rss_anon_kb=int(a[6]), rss_file_kb=int(a[7]), file_bytes=int(a[8]))))' \
    "$1" "$2" "$3" "$4" "$rss" "$anon" "$file" "$bytes"
}
SERVER=""; REDIS=""
cleanup() { for p in $SERVER $REDIS; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

start_poi() { # db port; sets SERVER and READY (seconds from exec to the first 200 from /health)
  local start; start=$(now)
  $POI serve --db "$1" --port "$2" >"$OUT/serve.log" 2>&1 &
  SERVER=$!
  until curl -sf "http://127.0.0.1:$2/health" >/dev/null; do
    kill -0 "$SERVER" 2>/dev/null || { echo "poi serve exited; see $OUT/serve.log" >&2; cat "$OUT/serve.log" >&2; exit 1; }
    sleep 0.005
  done
  READY=$(python3 -c "print($(now) - $start)")
}

stop_poi() {
  kill -TERM "$SERVER"; wait "$SERVER" 2>/dev/null || true; SERVER=""
}

IFS=, read -r -a sizes <<<"$SIZES"
for n in "${sizes[@]}"; do
  data="$OUT/data-$n.jsonl"; db="$OUT/poi-$n.sqlite"
  [ -f "$data" ] || $POI generate --count "$n" --seed 42 >"$data"
  if [ ! -f "$db" ]; then
    echo "== importing $n records" >&2
    rm -f "$db" "$db"-* "$db.snapshot"
    $POI import "$data" --db "$db" >/dev/null 2>&1
  fi
  rm -f "$db.snapshot"
  port=$(free_port)
  echo "== poi, n=$n: first start (no snapshot)" >&2
  start_poi "$db" "$port"; sleep 1
  emit poi "$n" first-start "$READY" "$SERVER" "$db"
  stop_poi   # the shutdown writes the snapshot if the background writer has not yet
  for i in $(seq 1 "$RESTARTS"); do
    echo "== poi, n=$n: restart $i (from the snapshot)" >&2
    start_poi "$db" "$port"; sleep 1
    emit poi "$n" restart "$READY" "$SERVER" "$db.snapshot"
    grep -q "read from the snapshot" "$OUT/serve.log" || { echo "restart $i did not read the snapshot:" >&2; cat "$OUT/serve.log" >&2; exit 1; }
    stop_poi
  done

  echo "== Redis, n=$n: GEOADD, SAVE, restart on the RDB" >&2
  dir="$OUT/redis-$n"; rm -rf "$dir"; mkdir -p "$dir"
  rport=$(free_port)
  redis-server --port "$rport" --bind 127.0.0.1 --dir "$dir" --dbfilename dump.rdb --save "" --appendonly no >"$dir/log" 2>&1 &
  REDIS=$!
  until redis-cli -p "$rport" ping 2>/dev/null | grep -q PONG; do sleep 0.05; done
  python3 benchmarks/peers/redis_geoadd.py "$data" | redis-cli -p "$rport" --pipe >/dev/null
  [ "$(redis-cli -p "$rport" ZCARD pois)" = "$n" ] || { echo "Redis did not load $n points" >&2; exit 1; }
  redis-cli -p "$rport" SAVE >/dev/null
  redis-cli -p "$rport" SHUTDOWN NOSAVE >/dev/null 2>&1 || true; wait "$REDIS" 2>/dev/null || true
  for i in $(seq 1 "$RESTARTS"); do
    start=$(now)
    redis-server --port "$rport" --bind 127.0.0.1 --dir "$dir" --dbfilename dump.rdb --save "" --appendonly no >"$dir/log" 2>&1 &
    REDIS=$!
    until redis-cli -p "$rport" ping 2>/dev/null | grep -q PONG; do sleep 0.005; done
    seconds=$(python3 -c "print($(now) - $start)"); sleep 1
    [ "$(redis-cli -p "$rport" ZCARD pois)" = "$n" ] || { echo "Redis reloaded a different count" >&2; exit 1; }
    emit "redis $(redis-server --version | grep -o 'v=[0-9.]*' | cut -d= -f2)" "$n" restart "$seconds" "$REDIS" "$dir/dump.rdb"
    redis-cli -p "$rport" SHUTDOWN NOSAVE >/dev/null 2>&1 || true; wait "$REDIS" 2>/dev/null || true; REDIS=""
  done
done
