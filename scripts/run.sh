#!/usr/bin/env bash
# The main job behind `make run`. Until the HTTP server lands this runs the richest real commands there are:
# coordinate conversion of a few landmarks through every datum.
set -euo pipefail
POI="${1:-.build/release/poi}"
echo "== WGS-84 -> GCJ-02 -> BD-09 -> EPSG:3857 for a few landmarks (x,y = lon,lat) =="
printf '116.3974,39.9087\n121.4998,31.2397\n113.3245,23.1064\n24.9384,60.1699\n' | tee /dev/stderr \
  | "$POI" convert --from wgs84 --to gcj02 | tee /dev/stderr \
  | "$POI" convert --from gcj02 --to bd09 | tee /dev/stderr \
  | "$POI" convert --from bd09 --to EPSG:3857
