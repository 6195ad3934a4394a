#!/usr/bin/env bash
# The main job behind `make run`. Until the HTTP server lands this runs the richest real commands there are, on
# the bundled data: the default database (var/poi.sqlite) is created from the bundled Helsinki POIs on first use.
set -euo pipefail
POI="${1:-.build/release/poi}"
step() { echo; echo "== $*"; }
step "poi nearby --lat 60.1699 --lon 24.9384 --limit 5 (Helsinki railway square)"
"$POI" nearby --lat 60.1699 --lon 24.9384 --limit 5
step "poi search 咖啡 --near 60.17,24.94 --limit 5 (category labels in Chinese find Helsinki cafes)"
"$POI" search 咖啡 --near 60.17,24.94 --limit 5
step "poi within --bbox 24.93,60.165,24.95,60.175 --category transport --limit 5"
"$POI" within --bbox 24.93,60.165,24.95,60.175 --category transport --limit 5
step "poi clusters --bbox 24.8,60.1,25.2,60.3 --precision 6"
"$POI" clusters --bbox 24.8,60.1,25.2,60.3 --precision 6 | head -8
step "poi geocode \"北京市海淀区中关村南大街5号\" and \"Springfield, IL\""
"$POI" geocode "北京市海淀区中关村南大街5号" --limit 2
"$POI" geocode "Springfield, IL" --limit 2
step "poi reverse --lat 39.9836 --lon 116.3164"
"$POI" reverse --lat 39.9836 --lon 116.3164
step "poi convert: WGS-84 -> GCJ-02 -> BD-09 (x,y = lon,lat)"
printf '116.3974,39.9087\n121.4998,31.2397\n' | "$POI" convert --from wgs84 --to gcj02 | "$POI" convert --from gcj02 --to bd09
