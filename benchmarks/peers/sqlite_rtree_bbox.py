#!/usr/bin/env python3
"""Peer for in-process bounding-box queries: SQLite's R*Tree module (the system library, via Python's sqlite3) on
the same points, asked for the same boxes as `poi bench bbox --box-size SIZE` (a square of SIZE metres centred on
each origin, longitudes widened by 1/cos(latitude), split in two where it crosses the antimeridian). Written as a
competent SQLite user would: an rtree virtual table (id, min_lat, max_lat, min_lon, max_lon) bulk-loaded in one
transaction, one prepared SELECT per box counting the ids found. Prints one JSON line in the shape of `poi bench`.
Usage: sqlite_rtree_bbox.py DATA.jsonl QUERIES.jsonl DB_PATH [BOX_METRES] [QUERY_LIMIT]"""
import json
import math
import os
import sqlite3
import sys
import time

import orjson

R = 6371008.8


def wrap(lon):
    return (lon + 540) % 360 - 180 if lon < -180 or lon > 180 else lon


def box(lat, lon, size):
    half = math.degrees(size / 2 / R)
    lon_half = min(180, half / max(0.01, math.cos(math.radians(lat))))
    return wrap(lon - lon_half), max(-90, lat - half), wrap(lon + lon_half), min(90, lat + half)


def main():
    data, queries_path, path = sys.argv[1], sys.argv[2], sys.argv[3]
    size = float(sys.argv[4]) if len(sys.argv) > 4 else 600
    limit = int(sys.argv[5]) if len(sys.argv) > 5 else 100000
    if os.path.exists(path):
        os.remove(path)
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE VIRTUAL TABLE pos USING rtree(id, min_lat, max_lat, min_lon, max_lon)")
    t0 = time.perf_counter()
    with open(data, "rb") as f:
        rows = []
        for i, line in enumerate(f, 1):
            r = orjson.loads(line)
            rows.append((i, r["lat"], r["lat"], r["lon"], r["lon"]))
        db.executemany("INSERT INTO pos VALUES (?,?,?,?,?)", rows)
    db.commit()
    build = time.perf_counter() - t0
    n = len(rows)
    del rows
    origins = [json.loads(line) for line in open(queries_path) if line.strip()][:limit]
    boxes = [box(q["lat"], q["lon"], size) for q in origins]
    query = "SELECT count(*) FROM pos WHERE min_lat >= ? AND max_lat <= ? AND min_lon >= ? AND max_lon <= ?"
    samples, results = [], 0
    for west, south, east, north in boxes:
        t0 = time.perf_counter()
        if west <= east:
            results += db.execute(query, (south, north, west, east)).fetchone()[0]
        else:
            results += db.execute(query, (south, north, west, 180)).fetchone()[0]
            results += db.execute(query, (south, north, -180, east)).fetchone()[0]
        samples.append((time.perf_counter() - t0) * 1e6)
    samples.sort()
    total = sum(samples)
    print(json.dumps({
        "op": "bbox", "peer": f"SQLite {sqlite3.sqlite_version} R*Tree", "n": n, "queries": len(samples),
        "build_seconds": round(build, 3), "seconds": round(total / 1e6, 6), "qps": round(len(samples) / (total / 1e6)),
        "us_per_query": round(total / len(samples), 3), "p50_us": round(samples[len(samples) // 2], 1),
        "p99_us": round(samples[min(len(samples) - 1, len(samples) * 99 // 100)], 1),
        "mean_results": round(results / len(samples), 2),
    }))


if __name__ == "__main__":
    main()
