#!/usr/bin/env python3
"""Peer for keyword and keyword+nearby: SQLite (the system library, via Python's sqlite3) with an FTS5 table over
name/address/city and an R*Tree over positions, on the same records, replaying the queries `poi bench
keyword-nearby --dump-queries` ran. Written the way a competent SQLite user would: FTS5 MATCH joined to the R*Tree
on rowid with a bounding-box prefilter for the radius, ordered by an equirectangular distance with the cosine of
the origin's latitude bound as a parameter (no trigonometry per row), LIMIT 10; keyword alone: MATCH ... ORDER BY
rank LIMIT 20. Prints JSON lines in the shape of `poi bench`.
Usage: sqlite_fts_rtree.py DATA.jsonl QUERIES.jsonl DB_PATH [QUERY_LIMIT]   (PEER_REUSE=1 reuses DB_PATH)"""
import json
import math
import os
import sqlite3
import sys
import time

import orjson

R = 6371008.8


def build(data, path):
    if os.path.exists(path):
        os.remove(path)
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("CREATE TABLE poi(id INTEGER PRIMARY KEY, ext TEXT, name TEXT, category TEXT, lat REAL, lon REAL)")
    db.execute("CREATE VIRTUAL TABLE poi_fts USING fts5(name, address, city, content='', tokenize='unicode61 remove_diacritics 2')")
    db.execute("CREATE VIRTUAL TABLE poi_rtree USING rtree(id, min_lat, max_lat, min_lon, max_lon)")
    t0 = time.perf_counter()
    with open(data, "rb") as f:
        rows = []
        for i, line in enumerate(f, 1):
            r = orjson.loads(line)
            rows.append((i, r["id"], r["name"], r.get("category", ""), r["lat"], r["lon"], r.get("address", ""), r.get("city", "")))
            if len(rows) == 50000:
                insert(db, rows)
                rows = []
        insert(db, rows)
    db.commit()
    return db, time.perf_counter() - t0


def insert(db, rows):
    db.executemany("INSERT INTO poi VALUES (?,?,?,?,?,?)", [r[:6] for r in rows])
    db.executemany("INSERT INTO poi_fts(rowid, name, address, city) VALUES (?,?,?,?)", [(r[0], r[2], r[6], r[7]) for r in rows])
    db.executemany("INSERT INTO poi_rtree VALUES (?,?,?,?,?)", [(r[0], r[4], r[4], r[5], r[5]) for r in rows])


def fts_query(text):
    # Each word as a quoted token (prefix on the last), as a search box would send it.
    words = [w for w in "".join(c if c.isalnum() else " " for c in text).split() if w]
    if not words:
        return None
    return " ".join(f'"{w}"' for w in words[:-1]) + (" " if len(words) > 1 else "") + f'"{words[-1]}"*'


NEARBY = """
SELECT p.ext, (p.lat - :lat) * (p.lat - :lat) + ((p.lon - :lon) * :coslat) * ((p.lon - :lon) * :coslat) AS d2
FROM poi_fts JOIN poi_rtree r ON r.id = poi_fts.rowid JOIN poi p ON p.id = poi_fts.rowid
WHERE poi_fts MATCH :q AND r.min_lat >= :s AND r.max_lat <= :n AND r.min_lon >= :w AND r.max_lon <= :e
ORDER BY d2 LIMIT 10
"""

KEYWORD = "SELECT p.ext FROM poi_fts JOIN poi p ON p.id = poi_fts.rowid WHERE poi_fts MATCH :q ORDER BY rank LIMIT 20"


def run(db, queries, op):
    samples, results = [], 0
    for q in queries:
        match = fts_query(q["q"])
        if match is None:
            continue
        t0 = time.perf_counter()
        if op == "keyword-nearby":
            dlat = math.degrees(5000 / R)
            dlon = dlat / max(0.01, math.cos(math.radians(q["lat"])))
            rows = db.execute(NEARBY, {"q": match, "lat": q["lat"], "lon": q["lon"], "coslat": math.cos(math.radians(q["lat"])),
                                       "s": q["lat"] - dlat, "n": q["lat"] + dlat, "w": q["lon"] - dlon, "e": q["lon"] + dlon}).fetchall()
        else:
            rows = db.execute(KEYWORD, {"q": match}).fetchall()
        samples.append((time.perf_counter() - t0) * 1e6)
        results += len(rows)
    samples.sort()
    total = sum(samples)
    return {"op": op, "peer": f"SQLite {sqlite3.sqlite_version} FTS5 + R*Tree", "queries": len(samples),
            "seconds": round(total / 1e6, 6), "qps": round(len(samples) / (total / 1e6)), "us_per_query": round(total / len(samples), 1),
            "p50_us": round(samples[len(samples) // 2], 1), "p99_us": round(samples[min(len(samples) - 1, len(samples) * 99 // 100)], 1),
            "mean_results": round(results / len(samples), 2)}


def main():
    data, queries_path, path = sys.argv[1], sys.argv[2], sys.argv[3]
    limit = int(sys.argv[4]) if len(sys.argv) > 4 else 2000
    if os.environ.get("PEER_REUSE") and os.path.exists(path):
        db, build_seconds = sqlite3.connect(path), float("nan")
    else:
        db, build_seconds = build(data, path)
    queries = [json.loads(line) for line in open(queries_path, encoding="utf-8") if line.strip()][:limit]
    for op in ("keyword-nearby", "keyword"):
        result = run(db, queries, op)
        result["n"] = db.execute("SELECT count(*) FROM poi").fetchone()[0]
        result["build_seconds"] = round(build_seconds, 3)
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
