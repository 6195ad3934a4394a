#!/usr/bin/env bash
# Installs Nominatim 5.3 (PyPI nominatim-db/nominatim-api, Debian osm2pgsql + PostGIS) if missing, starts a private
# PostgreSQL cluster on a free loopback port and imports an extract into it, timed (../shared/PEERS.md has the notes).
#
#   benchmarks/addresses/nominatim.sh EXTRACT.osm.pbf WORKDIR
# Leaves the project in WORKDIR/project and prints "import_seconds=S" and "port=P"; stop the cluster with
#   su postgres -c "/usr/lib/postgresql/15/bin/pg_ctl -D WORKDIR/cluster stop"
set -euo pipefail
EXTRACT="$(readlink -f "$1")"
WORK="$(readlink -f "$2")"
mkdir -p "$WORK"

need_apt=()
for pkg in osm2pgsql postgresql-15-postgis-3 postgresql; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need_apt+=("$pkg")
done
if [ ${#need_apt[@]} -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi
if ! python3 -c "import nominatim_api, nominatim_db" 2>/dev/null; then
    python3 -m pip install --quiet --disable-pip-version-check "nominatim-db==5.3.3" "nominatim-api==5.3.3" psycopg PyICU SQLAlchemy falcon uvicorn >&2
fi

BIN=/usr/lib/postgresql/15/bin
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
rm -rf "$WORK/cluster" "$WORK/project"
mkdir -p "$WORK/cluster" "$WORK/project"
chown -R postgres "$WORK/cluster"
chmod 777 "$WORK"
su postgres -c "$BIN/initdb -D $WORK/cluster -A trust -U postgres >/dev/null"
cat >> "$WORK/cluster/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $PORT
unix_socket_directories = '$WORK/cluster'
fsync = off
shared_buffers = 512MB
maintenance_work_mem = 1GB
CONF
su postgres -c "$BIN/pg_ctl -D $WORK/cluster -l $WORK/cluster/log -w start >/dev/null"
# Nominatim looks its web user up in pg_user: it must exist before the import.
psql -h 127.0.0.1 -p "$PORT" -U postgres -qc "CREATE ROLE \"www-data\" LOGIN" >/dev/null
cat > "$WORK/project/.env" <<ENV
NOMINATIM_DATABASE_DSN="pgsql:host=127.0.0.1;port=$PORT;user=postgres;dbname=nominatim"
NOMINATIM_DATABASE_WEBUSER="www-data"
ENV
cd "$WORK/project"
started=$(date +%s.%N)
nominatim import --osm-file "$EXTRACT" --threads 2 --offline > "$WORK/import.log" 2>&1 || { tail -20 "$WORK/import.log" >&2; exit 1; }
ended=$(date +%s.%N)
echo "import_seconds=$(python3 -c "print(round($ended - $started, 2))")"
echo "port=$PORT"
