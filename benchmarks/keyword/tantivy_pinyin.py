#!/usr/bin/env python3
"""Tantivy given the pinyin up front, as the Elasticsearch pinyin plugin works at index time: the same records, each
name's Han runs also indexed as their full pinyin joined ("xingbake", field name_py) and their initials ("xbk", field
name_initials), both with pypinyin's readings (phrase table first, one reading per character). The pinyin query
classes of make_pinyin_classes.py, in the shape of `poi bench keyword --classes`:
  full and mixed: the query's full pinyin (`py`, Han converted by pypinyin up front) as a term of name_py;
  as typed: a regex prefix query (`py.*`) on name_py;
  initials: a term of name_initials;
each OR-ed with the query parser over the text fields (what a search box sends as typed), ranked by BM25, top 20.
With an origin: the same query AND-ed with a 5 km box on lat/lon (range queries), up to 1 000 hits read back and
ordered by distance (Tantivy has no distance ranking in its Python API; the read and the sort are timed), as
benchmarks/peers/tantivy_keyword.py does for keyword-nearby. `top3`: the share of queries whose record is among
the first three. Usage: tantivy_pinyin.py DATA.jsonl CLASSES.jsonl INDEX_DIR"""
import json
import math
import os
import re
import shutil
import sys
import time

import orjson
import tantivy
from pypinyin import Style, lazy_pinyin

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "peers"))
from tantivy_keyword import words  # noqa: E402

HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
R = 6371008.8
FIELDS = ["name", "address", "city", "category"]


def pinyin_fields(name):
    runs = HAN.findall(name)
    full, initials = [], []
    for run in runs:
        syllables = [s for s in lazy_pinyin(run, style=Style.NORMAL) if s.isascii()]
        full.append("".join(syllables))
        initials.append("".join(s[0] for s in syllables if s))
    return " ".join(full), " ".join(initials)


def build(data, path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    sb = tantivy.SchemaBuilder()
    sb.add_integer_field("row", stored=True, fast=True)
    for field in FIELDS + ["name_py", "name_initials"]:
        sb.add_text_field(field, stored=False)
    sb.add_float_field("lat", stored=True, fast=True, indexed=True)
    sb.add_float_field("lon", stored=True, fast=True, indexed=True)
    schema = sb.build()
    index = tantivy.Index(schema, path=path)
    t0 = time.perf_counter()
    writer = index.writer(heap_size=1_500_000_000, num_threads=1)
    ids = []
    with open(data, "rb") as f:
        for i, line in enumerate(f):
            r = orjson.loads(line)
            py, initials = pinyin_fields(r["name"]) if HAN.search(r["name"]) else ("", "")
            writer.add_document(tantivy.Document(row=i, name=r["name"], address=r.get("address") or "", city=r.get("city") or "",
                                                 category=r.get("category", "").replace(".", " "), name_py=py, name_initials=initials,
                                                 lat=float(r["lat"]), lon=float(r["lon"])))
            ids.append(r["id"])
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    return index, schema, ids, time.perf_counter() - t0


def text_query(index, schema, q):
    clauses = []
    ws = words(q["q"])
    if ws:
        clauses.append((tantivy.Occur.Should, index.parse_query(" ".join(ws), FIELDS)))
    if q["class"] == "pinyin initials":
        clauses.append((tantivy.Occur.Should, tantivy.Query.term_query(schema, "name_initials", q["initials"])))
    elif q["class"] == "pinyin as typed":
        clauses.append((tantivy.Occur.Should, tantivy.Query.regex_query(schema, "name_py", re.escape(q["py"]) + ".*")))
    else:
        clauses.append((tantivy.Occur.Should, tantivy.Query.term_query(schema, "name_py", q["py"])))
    return tantivy.Query.boolean_query(clauses)


def answer(index, schema, searcher, q):
    """The rows of the first results (three with an origin, by distance; else twenty by BM25)."""
    query = text_query(index, schema, q)
    if not q["origin"]:
        return [searcher.doc(address)["row"][0] for _, address in searcher.search(query, 20).hits]
    dlat = math.degrees(5000 / R)
    dlon = dlat / max(0.01, math.cos(math.radians(q["lat"])))
    lat = tantivy.Query.range_query(schema, "lat", tantivy.FieldType.Float, q["lat"] - dlat, q["lat"] + dlat)
    lon = tantivy.Query.range_query(schema, "lon", tantivy.FieldType.Float, q["lon"] - dlon, q["lon"] + dlon)
    boxed = tantivy.Query.boolean_query([(tantivy.Occur.Must, query), (tantivy.Occur.Must, lat), (tantivy.Occur.Must, lon)])
    coslat = math.cos(math.radians(q["lat"]))
    ranked = []
    for _, address in searcher.search(boxed, 1000).hits:
        doc = searcher.doc(address)
        la, lo = doc["lat"][0], doc["lon"][0]
        ranked.append(((la - q["lat"]) ** 2 + ((lo - q["lon"]) * coslat) ** 2, doc["row"][0]))
    ranked.sort()
    return [row for _, row in ranked[:20]]


def main():
    data, classes_path, path = sys.argv[1], sys.argv[2], sys.argv[3]
    queries = [json.loads(line) for line in open(classes_path, encoding="utf-8") if line.strip()]
    index, schema, ids, build_seconds = build(data, path)
    searcher = index.searcher()
    top3 = []
    for q in queries:
        rows = answer(index, schema, searcher, q)
        top3.append(q["id"] in [ids[r] for r in rows[:3]])
    groups = []
    for q, hit in zip(queries, top3):
        key = (q["class"], q["origin"])
        if not groups or groups[-1][0] != key:
            groups.append((key, [], [0, 0]))
        t0 = time.perf_counter()
        rows = answer(index, schema, searcher, q)
        groups[-1][1].append((time.perf_counter() - t0) * 1e6)
        groups[-1][2][0] += len(rows)
        groups[-1][2][1] += hit
    for (label, origin), samples, counts in groups:
        samples.sort()
        print(json.dumps({"class": label, "origin": origin, "peer": "Tantivy (Python binding) with pinyin fields, BM25, one segment",
                          "n": len(ids), "queries": len(samples), "build_seconds": round(build_seconds, 3),
                          "top3": round(counts[1] / len(samples), 4),
                          "p50_us": round(samples[len(samples) // 2], 1), "p99_us": round(samples[min(len(samples) - 1, len(samples) * 99 // 100)], 1),
                          "mean_results": round(counts[0] / len(samples), 2)}, ensure_ascii=False), flush=True)
    shutil.rmtree(path, ignore_errors=True)


if __name__ == "__main__":
    main()
