#!/usr/bin/env bash
# HTTP load over loopback, one JSON line per measurement on standard output:
#   poi serve under wrk: nearby (k = 10 within 1 km), keyword+nearby, within (1 km box), geocode;
#   Redis 7 GEOSEARCH ... BYRADIUS 1 km ASC COUNT 10 WITHDIST under redis-benchmark;
#   PostGIS (geography column, GiST index, ST_DWithin 1 km + ORDER BY geog <-> origin LIMIT 10) under pgbench.
# Same points, origins near the data, the same connection count and two load-generator threads for each system.
# Each peer is installed if missing, started on loopback on a free port, loaded, measured and stopped.
#
#   benchmarks/http/run-load.sh DATA.jsonl ORIGINS.jsonl KEYWORDS.jsonl DB.sqlite OUTDIR [SECONDS] [CONNECTIONS] [SYSTEMS]
#
# DB.sqlite must hold DATA (`poi import DATA --db DB`); KEYWORDS is `poi bench keyword-nearby --dump-queries`
# output. SYSTEMS is a comma list of poi,poi-1loop,poi-loop-per-core,poi-router,poi-tls,redis,postgis (default
# poi,poi-router,redis,postgis).
# SCENARIOS (environment) narrows poi's scenarios, e.g. SCENARIOS=nearby. Progress goes to standard error.
set -euo pipefail
POI="${POI:-.build/release/poi}"   # another binary to compare: POI=/path/to/poi
DATA="$1"; ORIGINS="$2"; KEYWORDS="$3"; DB="$4"; OUT="$5"; SECONDS_RUN="${6:-15}"; CONNECTIONS="${7:-64}"
SYSTEMS="${8:-poi,poi-router,redis,postgis}"
SCENARIOS="${SCENARIOS:-nearby keyword-nearby search within geocode}"
cd "$(dirname "$0")/../.."
mkdir -p "$OUT"
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
install() { # command-to-check package...
  command -v "$1" >/dev/null 2>&1 && return 0
  shift
  echo "== installing $*" >&2
  [ -n "${APT_UPDATED:-}" ] || { $SUDO apt-get update -qq; APT_UPDATED=1; }
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
WARMUP=3
# CPU seconds a process and its reaped children have used (utime + stime + cutime + cstime): the server's share of
# the cores, so that requests per CPU-second compare the servers without the load generators' cost.
cpu_seconds() { python3 -c 'import os,sys; f=open(f"/proc/{sys.argv[1]}/stat").read().rsplit(")",1)[1].split(); print(sum(int(x) for x in f[11:15]) / os.sysconf("SC_CLK_TCK"))' "$1"; }
# Adds the server's CPU seconds (after - before) and requests per CPU-second to a JSON line.
with_cpu() { # json before after
  python3 -c 'import json,sys; d=json.loads(sys.argv[1]); cpu=float(sys.argv[3])-float(sys.argv[2]); d["server_cpu_s"]=round(cpu,2)
n = d.get("requests") or d["rps"] * d["seconds"]
d["requests_per_cpu_s"]=round(n/cpu) if cpu > 0 else None; print(json.dumps(d))' "$1" "$2" "$3"
}
PIDS=()
cleanup() { for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
N=$(wc -l < "$DATA")

# ---------------------------------------------------------------------------------------------------------- poi
# poi serve as shipped (read routes on the fast lane: light reads on one event loop per two cores, heavy ones on the
# read workers, one per core); with --event-loops 1 as "poi-1loop" (one thread, as Redis has); with one event loop
# per core as "poi-loop-per-core" (the default before issue 17's read workers); and with --no-fast-lane (every
# request through Hummingbird's router) as "poi-router", to measure what the fast lane gains.
run_poi() { # system-label serve-arguments...
  local system="$1"; shift
  install wrk wrk
  python3 benchmarks/http/make_requests.py "$ORIGINS" "$KEYWORDS" benchmarks/geocode_queries.txt "$OUT"
  PORT=$(free_port)
  "$POI" serve --port "$PORT" --db "$DB" "$@" >"$OUT/$system-serve.log" 2>&1 &
  SERVER=$!; PIDS+=("$SERVER")
  local scheme="${SCHEME:-http}"
  for _ in $(seq 1 1200); do curl -skf "$scheme://127.0.0.1:$PORT/health" >/dev/null && break; sleep 0.1; done
  curl -skf "$scheme://127.0.0.1:$PORT/health" >/dev/null || { echo "poi serve did not start; see $OUT/$system-serve.log" >&2; exit 1; }
  for scenario in $SCENARIOS; do
    echo "== $system: wrk -t2 -c$CONNECTIONS -d${SECONDS_RUN}s $scenario" >&2
    PATHS="$OUT/$scenario.paths" wrk -t2 -c"$CONNECTIONS" -d"${WARMUP}s" -s benchmarks/http/paths.lua "$scheme://127.0.0.1:$PORT" >/dev/null
    before=$(cpu_seconds "$SERVER")
    line=$(PATHS="$OUT/$scenario.paths" wrk -t2 -c"$CONNECTIONS" -d"${SECONDS_RUN}s" -s benchmarks/http/paths.lua "$scheme://127.0.0.1:$PORT" | tail -1)
    after=$(cpu_seconds "$SERVER")
    line=$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); d.update(system=sys.argv[4], scenario=sys.argv[2], connections=int(sys.argv[3]), client="wrk -t2"); print(json.dumps(d))' \
      "$line" "$scenario" "$CONNECTIONS" "$system")
    with_cpu "$line" "$before" "$after"
  done
  # Memory once every scenario has run: the anonymous part is the process's own; the file part is the mapped
  # snapshots' pages the queries touched (shared page cache) and the binaries.
  awk -v label="$system" '/^VmRSS/{r=$2} /^RssAnon/{a=$2} /^RssFile/{f=$2}
    END{printf "{\"system\": \"%s\", \"scenario\": \"memory after the scenarios\", \"rss_kb\": %d, \"rss_anon_kb\": %d, \"rss_file_kb\": %d}\n", label, r, a, f}' \
    "/proc/$SERVER/status"
  kill "$SERVER"; wait "$SERVER" 2>/dev/null || true
}
if [[ ",$SYSTEMS," == *",poi,"* ]]; then run_poi poi; fi
if [[ ",$SYSTEMS," == *",poi-1loop,"* ]]; then run_poi poi-1loop --event-loops 1; fi
if [[ ",$SYSTEMS," == *",poi-loop-per-core,"* ]]; then run_poi poi-loop-per-core --event-loops "$(nproc)"; fi
if [[ ",$SYSTEMS," == *",poi-router,"* ]]; then run_poi poi-router --no-fast-lane; fi
# HTTPS (--tls-cert/--tls-key, swift-nio-ssl) with a self-signed P-256 certificate made here; wrk does the handshake
# once per connection and does not verify the certificate.
if [[ ",$SYSTEMS," == *",poi-tls,"* ]]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$OUT/tls.key" -out "$OUT/tls.pem" -days 2 \
    -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>/dev/null
  SCHEME=https run_poi poi-tls --tls-cert "$OUT/tls.pem" --tls-key "$OUT/tls.key"
fi

# -------------------------------------------------------------------------------------------------------- Redis
if [[ ",$SYSTEMS," == *",redis,"* ]]; then
  install redis-server redis-server redis-tools
  RPORT=$(free_port)
  redis-server --port "$RPORT" --bind 127.0.0.1 --save "" --appendonly no >"$OUT/redis.log" 2>&1 &
  REDIS=$!; PIDS+=("$REDIS")
  for _ in $(seq 1 100); do redis-cli -p "$RPORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
  echo "== Redis: GEOADD $N points" >&2
  # Members are the records' line numbers as 12 digits, the form redis-benchmark's __rand_int__ takes, so each
  # request starts from a different record (FROMMEMBER): origins near the data, as poi's are.
  python3 benchmarks/peers/redis_geoadd.py "$DATA" | redis-cli -p "$RPORT" --pipe >/dev/null
  loaded=$(redis-cli -p "$RPORT" ZCARD pois)
  [ "$loaded" = "$N" ] || { echo "Redis holds $loaded points, expected $N" >&2; exit 1; }
  VERSION=$(redis-server --version | grep -o 'v=[0-9.]*' | cut -d= -f2)
  COMMAND=(GEOSEARCH pois FROMMEMBER __rand_int__ BYRADIUS 1 km ASC COUNT 10 WITHDIST)
  echo "== Redis $VERSION: redis-benchmark -c$CONNECTIONS --threads 2 -r $N ${COMMAND[*]}" >&2
  redis-benchmark -p "$RPORT" -c "$CONNECTIONS" --threads 2 -r "$N" -n $((WARMUP * 30000)) -q "${COMMAND[@]}" >/dev/null
  before=$(cpu_seconds "$REDIS")
  start=$(date +%s.%N)
  csv=$(redis-benchmark -p "$RPORT" -c "$CONNECTIONS" --threads 2 -r "$N" -n $((SECONDS_RUN * 60000)) -q --csv "${COMMAND[@]}" | tail -1)
  end=$(date +%s.%N)
  after=$(cpu_seconds "$REDIS")
  # redis-benchmark stops at the first error reply; check that every call was answered.
  stats=$(redis-cli -p "$RPORT" INFO commandstats | grep '^cmdstat_geosearch:' || true)
  grep -q 'failed_calls=0' <<<"$stats" || { echo "Redis GEOSEARCH failed: $stats" >&2; exit 1; }
  line=$(python3 -c '
import csv, json, sys
row = next(csv.reader([sys.argv[1]]))
# "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
rps, p50, p99 = float(row[1]), float(row[4]), float(row[6])
print(json.dumps({"system": "Redis " + sys.argv[2], "scenario": "nearby", "rps": round(rps), "p50_ms": p50, "p99_ms": p99,
                  "seconds": round(float(sys.argv[4]) - float(sys.argv[3]), 3), "connections": int(sys.argv[5]),
                  "client": "redis-benchmark --threads 2", "errors": 0, "requests": int(sys.argv[6])}))' "$csv" "$VERSION" "$start" "$end" "$CONNECTIONS" $((SECONDS_RUN * 60000)))
  with_cpu "$line" "$before" "$after"
  kill "$REDIS"; wait "$REDIS" 2>/dev/null || true
fi

# ------------------------------------------------------------------------------------------------------ PostGIS
if [[ ",$SYSTEMS," == *",postgis,"* ]]; then
  PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
  if [ -z "$PGBIN" ] || ! ls /usr/share/postgresql/*/extension/postgis.control >/dev/null 2>&1; then
    echo "== installing postgresql and postgis" >&2
    [ -n "${APT_UPDATED:-}" ] || $SUDO apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql postgresql-contrib postgis >/dev/null
    PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
  fi
  PGDIR=$(mktemp -d /tmp/poi-postgis.XXXXXX)
  AS=()
  if [ "$(id -u)" -eq 0 ]; then chown postgres "$PGDIR"; AS=(runuser -u postgres --); fi
  PGPORT=$(free_port)
  "${AS[@]}" "$PGBIN/initdb" -D "$PGDIR/data" -A trust -U postgres >/dev/null
  # Default settings, listening on loopback only.
  "${AS[@]}" "$PGBIN/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/server.log" -w \
    -o "-p $PGPORT -k $PGDIR -c listen_addresses=127.0.0.1" start >/dev/null
  stop_pg() { "${AS[@]}" "$PGBIN/pg_ctl" -D "$PGDIR/data" -m fast -w stop >/dev/null 2>&1 || true; rm -rf "$PGDIR"; }
  trap 'cleanup; stop_pg' EXIT
  PSQL=(psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PGPORT" -U postgres -d postgres)
  echo "== PostGIS: loading $N points" >&2
  "${PSQL[@]}" -c "CREATE EXTENSION postgis" \
    -c "CREATE UNLOGGED TABLE staging(id integer, ext text, lon float8, lat float8)" \
    -c "CREATE UNLOGGED TABLE staging_origins(i integer, lon float8, lat float8)"
  python3 - "$DATA" <<'PY' | "${PSQL[@]}" -c "COPY staging FROM STDIN WITH (FORMAT csv)"
import sys, orjson
w = sys.stdout.write
for i, line in enumerate(open(sys.argv[1], "rb"), 1):
    r = orjson.loads(line)
    w(f'{i},"{r["id"]}",{r["lon"]!r},{r["lat"]!r}\n')
PY
  python3 - "$ORIGINS" <<'PY' | "${PSQL[@]}" -c "COPY staging_origins FROM STDIN WITH (FORMAT csv)"
import sys, json
for i, line in enumerate(open(sys.argv[1]), 1):
    o = json.loads(line)
    sys.stdout.write(f'{i},{o["lon"]!r},{o["lat"]!r}\n')
PY
  "${PSQL[@]}" \
    -c "CREATE TABLE pois(id integer PRIMARY KEY, ext text NOT NULL, geog geography(Point, 4326) NOT NULL)" \
    -c "INSERT INTO pois SELECT id, ext, ST_SetSRID(ST_MakePoint(lon, lat), 4326)::geography FROM staging" \
    -c "CREATE INDEX pois_geog ON pois USING gist (geog)" \
    -c "CREATE TABLE origins(i integer PRIMARY KEY, g geography(Point, 4326) NOT NULL)" \
    -c "INSERT INTO origins SELECT i, ST_SetSRID(ST_MakePoint(lon, lat), 4326)::geography FROM staging_origins" \
    -c "DROP TABLE staging" -c "DROP TABLE staging_origins" -c "VACUUM ANALYZE"
  ORIGIN_COUNT=$("${PSQL[@]}" -At -c "SELECT count(*) FROM origins")
  cat > "$PGDIR/nearby.sql" <<SQL
\set i random(1, $ORIGIN_COUNT)
SELECT p.ext, ST_Distance(p.geog, o.g) AS distance FROM origins o CROSS JOIN LATERAL (SELECT ext, geog FROM pois WHERE ST_DWithin(geog, o.g, 1000) ORDER BY geog <-> o.g LIMIT 10) p WHERE o.i = :i;
SQL
  PLAN=$("${PSQL[@]}" -At -c "EXPLAIN SELECT p.ext FROM origins o CROSS JOIN LATERAL (SELECT ext, geog FROM pois WHERE ST_DWithin(geog, o.g, 1000) ORDER BY geog <-> o.g LIMIT 10) p WHERE o.i = 1")
  grep -q "pois_geog" <<<"$PLAN" || { echo "PostGIS does not use the GiST index:" >&2; echo "$PLAN" >&2; exit 1; }
  VERSION=$("${PSQL[@]}" -At -c "SELECT split_part(version(), ' ', 2) || ' + PostGIS ' || extversion FROM pg_extension WHERE extname = 'postgis'")
  PGBENCH=("$PGBIN/pgbench" -h 127.0.0.1 -p "$PGPORT" -U postgres -n -M prepared -c "$CONNECTIONS" -j 2 -f "$PGDIR/nearby.sql")
  echo "== PostgreSQL $VERSION: pgbench -M prepared -c$CONNECTIONS -j2 -T$SECONDS_RUN (GiST kNN within 1 km)" >&2
  "${PGBENCH[@]}" -T "$WARMUP" postgres >/dev/null 2>&1
  mkdir -p "$PGDIR/log"
  [ ${#AS[@]} -gt 0 ] && chown postgres "$PGDIR/log"
  # The backends' CPU time reaches the postmaster's children's time once they exit.
  POSTMASTER=$(head -1 "$PGDIR/data/postmaster.pid")
  sleep 1
  before=$(cpu_seconds "$POSTMASTER")
  (cd "$PGDIR/log" && "${PGBENCH[@]}" -T "$SECONDS_RUN" -l --log-prefix=tx postgres >"$PGDIR/pgbench.txt" 2>&1)
  sleep 1
  after=$(cpu_seconds "$POSTMASTER")
  line=$(python3 - "$PGDIR/pgbench.txt" "$PGDIR/log" "$VERSION" "$CONNECTIONS" <<'PY'
import glob, json, re, sys
text = open(sys.argv[1]).read()
tps = float(re.search(r"tps = ([0-9.]+)", text).group(1))
failed = int(re.search(r"number of failed transactions: (\d+)", text).group(1)) if "failed transactions" in text else 0
latencies = sorted(int(line.split()[2]) for path in glob.glob(sys.argv[2] + "/tx.*") for line in open(path))
print(json.dumps({"system": "PostgreSQL " + sys.argv[3], "scenario": "nearby", "rps": round(tps),
                  "p50_ms": round(latencies[len(latencies) // 2] / 1000, 3),
                  "p99_ms": round(latencies[min(len(latencies) - 1, len(latencies) * 99 // 100)] / 1000, 3),
                  "requests": len(latencies), "connections": int(sys.argv[4]), "client": "pgbench -j 2 -M prepared",
                  "errors": failed}))
PY
)
  with_cpu "$line" "$before" "$after"
  stop_pg
  trap cleanup EXIT
fi
