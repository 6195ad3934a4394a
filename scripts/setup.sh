#!/usr/bin/env bash
# Idempotent set-up for a fresh Debian 12 machine: installs what the command at hand needs, and does nothing when it
# is all present.
#
#   scripts/setup.sh serve   what building and serving need (make run, make run-release, make release): the compiler's system
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
# reference for what an osmChange file does to an extract (OSMChangeTests); python3-venv: the test tools' virtualenv.
if [ "$MODE" = test ]; then
    PACKAGES+=(python3-venv sqlite3 proj-bin curl openssl chromium fonts-dejavu-core fonts-wqy-zenhei postgresql haproxy nftables iproute2 osmium-tool)
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

# The Python tools live in the project's virtualenv, .venv (python3-venv), never in the system's Python: the pinned
# requirements and the lock of their dependencies (scripts/requirements-test.{txt,lock}). `make test` puts .venv/bin
# first on PATH, so that every script's and test's `python3` is the virtualenv's. Installed again only when the
# requirements change (a stamp of their hash).
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="$ROOT/.venv"
REQUIREMENTS="$ROOT/scripts/requirements-test.txt"
LOCK="$ROOT/scripts/requirements-test.lock"
STAMP="$VENV/.requirements.sha256"
WANTED="$(cat "$REQUIREMENTS" "$LOCK" | sha256sum | cut -d' ' -f1)"
if [ ! -x "$VENV/bin/python3" ] || [ "$(cat "$STAMP" 2>/dev/null)" != "$WANTED" ]; then
    echo "setup: installing the Python test tools into $VENV (PyPI: scripts/requirements-test.txt)" >&2
    [ -x "$VENV/bin/python3" ] || python3 -m venv "$VENV"
    "$VENV/bin/python3" -m pip install --quiet --disable-pip-version-check -r "$REQUIREMENTS" -c "$LOCK" >&2
    echo "$WANTED" > "$STAMP"
fi
PIP=("$VENV/bin/python3" -m pip)

# amap-sdk (the other AMap client on PyPI with input tips) installs a module named `amap`, as amap-python-sdk does: it
# goes into a directory of its own, put on the path only by scripts/compat/amap_sdk_check.py.
AMAP_SDK_DIR="$ROOT/var/python/amap-sdk"
if [ "$(sed -n 's/^Version: //p' "$AMAP_SDK_DIR"/amap_sdk-*.dist-info/METADATA 2>/dev/null)" != "0.1.0" ]; then
    echo "setup: installing amap-sdk 0.1.0 (PyPI) into $AMAP_SDK_DIR" >&2
    "${PIP[@]}" install --quiet --disable-pip-version-check --no-deps --upgrade --target "$AMAP_SDK_DIR" "amap-sdk==0.1.0" >&2
fi
