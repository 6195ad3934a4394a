#!/usr/bin/env python3
"""Peer for in-process kNN: scipy's cKDTree over the same points as 3-D unit vectors (chord distance ranks like
great-circle distance), queried with query(k, workers=1) on the same origins in one batch call, as a competent
numpy user would. Prints one JSON line in the shape of `poi bench`.
Usage: ckdtree_knn.py DATA.jsonl QUERIES.jsonl [K]"""
import json
import sys
import time

import numpy as np
import orjson
from scipy.spatial import cKDTree


def unit_vectors(lat, lon):
    phi, lam = np.radians(lat), np.radians(lon)
    return np.column_stack((np.cos(phi) * np.cos(lam), np.cos(phi) * np.sin(lam), np.sin(phi)))


def load(path):
    lat, lon = [], []
    with open(path, "rb") as f:
        for line in f:
            r = orjson.loads(line)
            lat.append(r["lat"])
            lon.append(r["lon"])
    return np.array(lat), np.array(lon)


def main():
    data, queries = sys.argv[1], sys.argv[2]
    k = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    points = unit_vectors(*load(data))
    origins = unit_vectors(*load(queries))
    t0 = time.perf_counter()
    tree = cKDTree(points, leafsize=16, balanced_tree=True, compact_nodes=True)
    build = time.perf_counter() - t0
    t0 = time.perf_counter()
    distances, _ = tree.query(origins, k=k, workers=1)
    seconds = time.perf_counter() - t0
    assert distances.shape == (len(origins), k)
    print(json.dumps({
        "op": "knn", "peer": "scipy.cKDTree", "scipy": __import__("scipy").__version__, "n": len(points),
        "queries": len(origins), "k": k, "build_seconds": round(build, 6), "seconds": round(seconds, 6),
        "qps": round(len(origins) / seconds), "us_per_query": round(seconds / len(origins) * 1e6, 3),
    }))


if __name__ == "__main__":
    main()
