#!/usr/bin/env python3
"""Tantivy (PyPI `tantivy`) on the query classes of make_classes.py, in the shape of `poi bench keyword --classes`:
the same records indexed as benchmarks/peers/tantivy_keyword.py does (name, address, city, category; default
tokenizer; BM25; one segment), top 20 per query, each query once after a warm-up pass.
  words (one, two, three words, CJK): Tantivy's query parser over the four fields (words OR-ed, BM25);
  as you type: the complete words through the parser, and the last, partial word as a regex prefix query
  (`word.*`) on each field, all as Should clauses of one boolean query.
  CJK: Tantivy's default tokenizer keeps a CJK run as one token ("公交站" finds only a name whose whole run is
  "公交站"), where poi matches the run's bigrams ("公交", "交站") anywhere in a run. So the CJK class is also timed
  like for like, on a second index of the same records whose CJK runs are written as their overlapping bigrams
  (a run of one character as itself) before the default tokenizer sees them, queried with the query's bigrams
  through the same parser (OR-ed, BM25): class "CJK". The first index's answer is class "CJK, runs as one token".
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
CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


def bigrams(text):
    """CJK runs as their overlapping bigrams (a run of one character as itself), the rest of the text as it is."""
    def expand(match):
        run = match.group(0)
        return " " + (" ".join(run[i:i + 2] for i in range(len(run) - 1)) if len(run) > 1 else run) + " "
    return CJK.sub(expand, text)


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


def timed(index, schema, queries, build_seconds, label=lambda q: q["class"], make=make_query):
    """Each query's time (parsing included) and result count, grouped by (label, origin) in the order met."""
    searcher = index.searcher()
    for q in queries:
        query = make(index, schema, q)
        if query is not None:
            searcher.search(query, 20)
    groups = []
    for q in queries:
        key = (label(q), q["origin"])
        if not groups or groups[-1][0] != key:
            groups.append((key, [], [0], build_seconds))
        t0 = time.perf_counter()
        # The query object is made inside the timing too: parsing is part of Tantivy's answer.
        query = make(index, schema, q)
        if query is None:
            continue
        hits = searcher.search(query, 20).hits
        groups[-1][1].append((time.perf_counter() - t0) * 1e6)
        groups[-1][2][0] += len(hits)
    return groups


def main():
    data, classes_path, path = sys.argv[1], sys.argv[2], sys.argv[3]
    queries = [json.loads(line) for line in open(classes_path, encoding="utf-8") if line.strip()]
    index, schema, points, build_seconds = build(data, path)
    groups = timed(index, schema, queries, build_seconds, label=lambda q: "CJK, runs as one token" if q["class"] == "CJK" else q["class"])
    cjk = [q for q in queries if q["class"] == "CJK"]
    if cjk:
        index, schema, _, bigram_seconds = build(data, path + "-bigrams", transform=bigrams)
        groups += timed(index, schema, cjk, bigram_seconds,
                        make=lambda index, schema, q: index.parse_query(" ".join(words(bigrams(q["q"]))), FIELDS))
        shutil.rmtree(path + "-bigrams", ignore_errors=True)
    for (label, origin), samples, results, build_seconds in groups:
        samples.sort()
        total = sum(samples)
        print(json.dumps({"class": label, "origin": origin, "peer": "Tantivy (Python binding), BM25, one segment", "n": len(points),
                          "queries": len(samples), "build_seconds": round(build_seconds, 3), "qps": round(len(samples) / (total / 1e6)),
                          "p50_us": round(samples[len(samples) // 2], 1), "p99_us": round(samples[min(len(samples) - 1, len(samples) * 99 // 100)], 1),
                          "mean_results": round(results[0] / len(samples), 2)}, ensure_ascii=False), flush=True)
    shutil.rmtree(path, ignore_errors=True)


if __name__ == "__main__":
    main()
