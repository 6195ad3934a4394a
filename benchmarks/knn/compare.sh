#!/usr/bin/env bash
# In-process kNN of several builds of poi beside scipy's cKDTree, on the same data, rounds interleaved (this machine is
# noisy: compare only within one run). Prints each run's µs per query, then each build's median and minimum.
# Usage: benchmarks/knn/compare.sh ROUNDS DATA.jsonl QUERIES.jsonl POI_BINARY... [--k K] [--no-peer]
# Data and origins: `poi generate --count 1000000 --seed 42 > DATA`; `benchmarks/peers/make_queries.py DATA 200000 43`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rounds=$1 data=$2 queries=$3
shift 3
k=10 peer=1 builds=()
while (($#)); do
  case $1 in
    --k) k=$2; shift 2 ;;
    --no-peer) peer=0; shift ;;
    *) builds+=("$1"); shift ;;
  esac
done
out=$(mktemp)
for round in $(seq "$rounds"); do
  for build in "${builds[@]}"; do
    us=$("$build" bench knn --k "$k" --input "$data" --query-file "$queries" | tail -1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["us_per_query"])')
    echo "round $round $build $us" | tee -a "$out"
  done
  if ((peer)); then
    us=$(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python3 "$here/../peers/ckdtree_knn.py" "$data" "$queries" "$k" | python3 -c 'import json,sys; print(json.load(sys.stdin)["us_per_query"])')
    echo "round $round cKDTree $us" | tee -a "$out"
  fi
done
python3 - "$out" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    _, _, build, us = line.split()
    runs[build].append(float(us))
for build, values in runs.items():
    print(f"{build}: median {statistics.median(values):.3f} µs, min {min(values):.3f} µs over {len(values)} runs")
PY
rm -f "$out"
