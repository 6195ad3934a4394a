#!/usr/bin/env bash
# The main job behind `make run` (a debug build) and `make run-release`: `poi serve` on the bundled data. The default database (var/poi.sqlite) is created
# from the bundled Helsinki POIs on first use; the gazetteer is read from data/. Listens on 127.0.0.1:8080 unless
# HOST/PORT say otherwise (a non-loopback HOST needs POI_API_KEY).
set -euo pipefail
POI="${1:-.build/release/poi}"
HOST="${HOST:-127.0.0.1}"
PORT="${PORT:-8080}"
echo "poi serve on http://$HOST:$PORT — try: curl 'http://$HOST:$PORT/v1/nearby?lat=60.1699&lon=24.9384&limit=5'" >&2
exec "$POI" serve --host "$HOST" --port "$PORT"
