#!/usr/bin/env bash
# Installs what the benchmark scripts need, doing nothing when it is present: GNU time (max RSS), Xapian's Python
# binding (Debian python3-xapian, for the system Python), and numpy, scipy, orjson, matplotlib and tantivy from PyPI
# for the peers and the plot.
set -euo pipefail
if ! [ -x /usr/bin/time ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >/dev/null
fi
if ! /usr/bin/python3 -c "import xapian" 2>/dev/null; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-xapian >/dev/null
fi
missing=()
for module in numpy scipy orjson matplotlib tantivy; do
  python3 -c "import $module" 2>/dev/null || missing+=("$module")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "benchmarks/setup: pip install ${missing[*]}" >&2
  python3 -m pip install -q "${missing[@]}"
fi
