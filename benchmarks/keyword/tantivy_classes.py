#!/usr/bin/env python3
"""Tantivy (PyPI `tantivy`) on the query classes of make_classes.py, in the shape of `poi bench keyword --classes`:
the same records indexed as benchmarks/peers/tantivy_keyword.py does (name, address, city, category; default
tokenizer; BM25; one segment), top 20 per query, each query once after a warm-up pass.
  words (one, two, three words, CJK): Tantivy's query parser over the four fields (words OR-ed, BM25);
  as you type: the complete words through the parser, and the last, partial word as a regex prefix query
  (`word.*`) on each field, all as Should clauses of one boolean query.
Tantivy has no distance ranking: a query "with origin" is timed as the same query without one.
Usage: tantivy_classes.py DATA.jsonl CLASSES.jsonl INDEX_DIR"""
import json
import os
import re
import shutil
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "peers"))
import tantivy  # noqa: E402
from tantivy_keyword import build, words  # noqa: E402

FIELDS = ["name", "address", "city", "category"]


def make_query(index, schema, q):
    ws = words(q["q"])
    if not ws:
        return None
    if q["class"] != "as you type" or q["q"][-1:].isspace():
        return index.parse_query(" ".join(ws), FIELDS)
    clauses = []
    if len(ws) > 1:
        clauses.append((tantivy.Occur.Should, index.parse_query(" ".join(ws[:-1]), FIELDS)))
    prefix = re.escape(ws[-1].lower()) + ".*"
    for field in FIELDS:
        clauses.append((tantivy.Occur.Should, tantivy.Query.regex_query(schema, field, prefix)))
    return tantivy.Query.boolean_query(clauses)


def main():
    data, classes_path, path = sys.argv[1], sys.argv[2], sys.argv[3]
    index, schema, points, build_seconds = build(data, path)
    searcher = index.searcher()
    queries = [json.loads(line) for line in open(classes_path, encoding="utf-8") if line.strip()]
    built = [(q, make_query(index, schema, q)) for q in queries]
    for _, query in built:
        if query is not None:
            searcher.search(query, 20)
    groups = []
    for q, query in built:
        if not groups or groups[-1][0] != (q["class"], q["origin"]):
            groups.append(((q["class"], q["origin"]), [], [0]))
        if query is None:
            continue
        t0 = time.perf_counter()
        # The query object is made inside the timing too: parsing is part of Tantivy's answer.
        query = make_query(index, schema, q)
        hits = searcher.search(query, 20).hits
        groups[-1][1].append((time.perf_counter() - t0) * 1e6)
        groups[-1][2][0] += len(hits)
    for (label, origin), samples, results in groups:
        samples.sort()
        total = sum(samples)
        print(json.dumps({"class": label, "origin": origin, "peer": "Tantivy (Python binding), BM25, one segment", "n": len(points),
                          "queries": len(samples), "build_seconds": round(build_seconds, 3), "qps": round(len(samples) / (total / 1e6)),
                          "p50_us": round(samples[len(samples) // 2], 1), "p99_us": round(samples[min(len(samples) - 1, len(samples) * 99 // 100)], 1),
                          "mean_results": round(results[0] / len(samples), 2)}, ensure_ascii=False), flush=True)
    shutil.rmtree(path, ignore_errors=True)


if __name__ == "__main__":
    main()
