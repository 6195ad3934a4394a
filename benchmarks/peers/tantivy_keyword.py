#!/usr/bin/env python3
"""Peer for ranked keyword search: Tantivy (PyPI `tantivy`, the Rust engine's Python binding) on the same records,
replaying the queries `poi bench keyword-nearby --dump-queries` wrote. Fields name, address, city, category as
text (default tokenizer), position fast fields lat/lon; one segment (one writer thread, a heap large enough for a
single commit); default BM25. keyword: the query parser over the four fields (its default, words OR-ed, ranked by
BM25), top 20. keyword-nearby: the words AND-ed with lat/lon range filters of the 5 km box, up to 1000 hits read
back and the 10 nearest kept (Tantivy has no distance ordering in its Python API; the sort is counted).
Prints JSON lines in the shape of `poi bench`.
Usage: tantivy_keyword.py DATA.jsonl QUERIES.jsonl INDEX_DIR [QUERY_LIMIT]"""
import json
import math
import os
import shutil
import sys
import time

import orjson
import tantivy

R = 6371008.8


def build(data, path, transform=lambda text: text):
    """The records indexed at `path`; `transform` rewrites each text field before Tantivy tokenizes it."""
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    sb = tantivy.SchemaBuilder()
    sb.add_integer_field("row", stored=True, fast=True)
    for field in ("name", "address", "city", "category"):
        sb.add_text_field(field, stored=False)
    sb.add_float_field("lat", stored=True, fast=True, indexed=True)
    sb.add_float_field("lon", stored=True, fast=True, indexed=True)
    schema = sb.build()
    index = tantivy.Index(schema, path=path)
    t0 = time.perf_counter()
    writer = index.writer(heap_size=1_500_000_000, num_threads=1)
    points = []
    with open(data, "rb") as f:
        for i, line in enumerate(f):
            r = orjson.loads(line)
            writer.add_document(tantivy.Document(row=i, name=transform(r["name"]), address=transform(r.get("address") or ""),
                                                 city=transform(r.get("city") or ""), category=r.get("category", "").replace(".", " "),
                                                 lat=float(r["lat"]), lon=float(r["lon"])))
            points.append((r["lat"], r["lon"]))
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    return index, schema, points, time.perf_counter() - t0


def words(text):
    return [w for w in "".join(c if c.isalnum() else " " for c in text).split() if w]


def run(index, schema, points, queries, op):
    searcher = index.searcher()
    samples, results = [], 0
    for q in queries:
        ws = words(q["q"])
        if not ws:
            continue
        t0 = time.perf_counter()
        if op == "keyword":
            query = index.parse_query(" ".join(ws), ["name", "address", "city", "category"])
            hits = searcher.search(query, 20).hits
        else:
            dlat = math.degrees(5000 / R)
            dlon = dlat / max(0.01, math.cos(math.radians(q["lat"])))
            text = index.parse_query(" AND ".join(ws), ["name", "address", "city", "category"])
            lat = tantivy.Query.range_query(schema, "lat", tantivy.FieldType.Float, q["lat"] - dlat, q["lat"] + dlat)
            lon = tantivy.Query.range_query(schema, "lon", tantivy.FieldType.Float, q["lon"] - dlon, q["lon"] + dlon)
            query = tantivy.Query.boolean_query([(tantivy.Occur.Must, text), (tantivy.Occur.Must, lat), (tantivy.Occur.Must, lon)])
            found = searcher.search(query, 1000).hits
            coslat = math.cos(math.radians(q["lat"]))
            ranked = []
            for _, address in found:
                doc = searcher.doc(address)
                la, lo = doc["lat"][0], doc["lon"][0]
                ranked.append(((la - q["lat"]) ** 2 + ((lo - q["lon"]) * coslat) ** 2, doc["row"][0]))
            ranked.sort()
            hits = ranked[:10]
        samples.append((time.perf_counter() - t0) * 1e6)
        results += len(hits)
    samples.sort()
    total = sum(samples)
    return {"op": op, "peer": f"Tantivy {tantivy.__version__ if hasattr(tantivy, '__version__') else '0.27'} (Python binding), BM25, one segment",
            "queries": len(samples), "seconds": round(total / 1e6, 6), "qps": round(len(samples) / (total / 1e6)),
            "us_per_query": round(total / len(samples), 1), "p50_us": round(samples[len(samples) // 2], 1),
            "p99_us": round(samples[min(len(samples) - 1, len(samples) * 99 // 100)], 1), "mean_results": round(results / len(samples), 2)}


def main():
    data, queries_path, path = sys.argv[1], sys.argv[2], sys.argv[3]
    limit = int(sys.argv[4]) if len(sys.argv) > 4 else 2000
    index, schema, points, build_seconds = build(data, path)
    segments = len(index.searcher().segment_readers()) if hasattr(index.searcher(), "segment_readers") else None
    queries = [json.loads(line) for line in open(queries_path, encoding="utf-8") if line.strip()][:limit]
    for op in ("keyword", "keyword-nearby"):
        result = run(index, schema, points, queries, op)
        result["n"] = len(points)
        result["build_seconds"] = round(build_seconds, 3)
        if segments is not None:
            result["segments"] = segments
        print(json.dumps(result), flush=True)
    shutil.rmtree(path, ignore_errors=True)


if __name__ == "__main__":
    main()
