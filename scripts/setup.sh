#!/usr/bin/env bash
# Idempotent set-up for a fresh Debian 12 machine: installs what the command at hand needs, and does nothing when it
# is all present.
#
#   scripts/setup.sh serve   what building and serving need (make run, make release): the compiler's system
#                            libraries, PROJ's data and Leaflet for the map page — no browser, database or proxy
#   scripts/setup.sh [test]  all of that and the test tools (make test, make build): see below
set -euo pipefail
MODE="${1:-test}"
case "$MODE" in serve | test) ;; *) echo "usage: scripts/setup.sh [serve|test]" >&2; exit 2 ;; esac

# Building: pkg-config, zlib1g-dev, libsqlite3-dev, libproj-dev. Serving: proj-data (PROJ's grids and database for
# /v1/convert), libjs-leaflet (the map page).
PACKAGES=(pkg-config zlib1g-dev libsqlite3-dev libproj-dev proj-data libjs-leaflet)
# The tests: sqlite3 and proj-bin (the command-line tools the tests compare with), curl and openssl (the scripts'
# requests and test certificates); chromium, fonts-dejavu-core and fonts-wqy-zenhei (Han, for the screenshots of
# Chinese names): the map page's browser test (scripts/browser/run); postgresql: the shared store's tests
# (scripts/postgres/with-server starts a private server on loopback); haproxy, nftables, iproute2: the cluster's
# fault test (scripts/cluster/run: namespaces, partitions, packet loss); osmium-tool: `osmium apply-changes`, the
# reference for what an osmChange file does to an extract (OSMChangeTests).
if [ "$MODE" = test ]; then
    PACKAGES+=(sqlite3 proj-bin curl openssl chromium fonts-dejavu-core fonts-wqy-zenhei postgresql haproxy nftables iproute2 osmium-tool)
fi

missing=()
for pkg in "${PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$pkg")
    fi
done

if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]}" >&2
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    echo "setup: done" >&2
fi

# Serving needs nothing from PyPI.
[ "$MODE" = test ] || exit 0

# The contract test (scripts/contract/run, part of `make test`) drives the server with schemathesis, from PyPI.
SCHEMATHESIS_VERSION="4.32.5"
if ! python3 -c "import schemathesis, sys; sys.exit(0 if schemathesis.__version__ == '$SCHEMATHESIS_VERSION' else 1)" 2>/dev/null; then
    echo "setup: installing schemathesis $SCHEMATHESIS_VERSION (PyPI)" >&2
    python3 -m pip install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION" >&2
fi

# The browser test drives Chromium over the DevTools protocol with websocket-client, from PyPI.
WEBSOCKET_CLIENT_VERSION="1.8.0"
if ! python3 -c "import websocket, sys; sys.exit(0 if websocket.__version__ == '$WEBSOCKET_CLIENT_VERSION' else 1)" 2>/dev/null; then
    echo "setup: installing websocket-client $WEBSOCKET_CLIENT_VERSION (PyPI)" >&2
    python3 -m pip install --quiet --disable-pip-version-check "websocket-client==$WEBSOCKET_CLIENT_VERSION" >&2
fi

# The compatibility suite (scripts/compat/run) runs real client libraries from PyPI.
GEOPY_VERSION="2.5.0"
if ! python3 -c "import geopy, sys; sys.exit(0 if geopy.__version__ == '$GEOPY_VERSION' else 1)" 2>/dev/null; then
    echo "setup: installing geopy $GEOPY_VERSION (PyPI)" >&2
    python3 -m pip install --quiet --disable-pip-version-check "geopy==$GEOPY_VERSION" >&2
fi
# pypinyin: the independent reader the pinyin readings are compared with (scripts/pinyin/readings.py);
# mapbox-vector-tile: the independent decoder of the vector tiles (scripts/compat/tiles_check.py).
for requirement in amap-python-sdk==0.1.5 amap-cli==0.1.4 pypinyin==0.55.0 mapbox-vector-tile==2.2.0; do
    name="${requirement%%==*}"
    version="${requirement##*==}"
    if [ "$(python3 -m pip show "$name" 2>/dev/null | sed -n 's/^Version: //p')" != "$version" ]; then
        echo "setup: installing $requirement (PyPI)" >&2
        python3 -m pip install --quiet --disable-pip-version-check "$requirement" >&2
    fi
done

# amap-sdk (the other AMap client on PyPI with input tips) installs a module named `amap`, as amap-python-sdk does: it
# goes into a directory of its own, put on the path only by scripts/compat/amap_sdk_check.py.
AMAP_SDK_DIR="$(cd "$(dirname "$0")/.." && pwd)/var/python/amap-sdk"
if [ "$(sed -n 's/^Version: //p' "$AMAP_SDK_DIR"/amap_sdk-*.dist-info/METADATA 2>/dev/null)" != "0.1.0" ]; then
    echo "setup: installing amap-sdk 0.1.0 (PyPI) into $AMAP_SDK_DIR" >&2
    python3 -m pip install --quiet --disable-pip-version-check --no-deps --upgrade --target "$AMAP_SDK_DIR" "amap-sdk==0.1.0" >&2
fi

# pyosmium (libosmium), the independent .osm.pbf reader the OSM tests compare against and the writer of synthetic
# extracts (scripts/osm/).
OSMIUM_VERSION="4.3.2"
if ! python3 -c "import osmium.version as v, sys; sys.exit(0 if v.pyosmium_release == '$OSMIUM_VERSION' else 1)" 2>/dev/null; then
    echo "setup: installing osmium $OSMIUM_VERSION (PyPI)" >&2
    python3 -m pip install --quiet --disable-pip-version-check "osmium==$OSMIUM_VERSION" >&2
fi
