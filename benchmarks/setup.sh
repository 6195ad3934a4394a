#!/usr/bin/env bash
# Installs what the benchmark scripts need, doing nothing when it is present: GNU time (max RSS), and numpy,
# scipy, orjson and matplotlib from PyPI for the peers and the plot.
set -euo pipefail
if ! [ -x /usr/bin/time ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >/dev/null
fi
missing=()
for module in numpy scipy orjson matplotlib; do
  python3 -c "import $module" 2>/dev/null || missing+=("$module")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "benchmarks/setup: pip install ${missing[*]}" >&2
  python3 -m pip install -q "${missing[@]}"
fi
