#!/usr/bin/python3
"""Peer for ranked keyword search: Xapian (Debian's python3-xapian, run with the system Python that package is
built for) on the same records, replaying the queries `poi bench keyword-nearby --dump-queries` wrote. Name,
address, city and category indexed by a TermGenerator (no stemming), lat/lon as sortable values; default BM25.
keyword: the QueryParser over the text (words OR-ed, its default; the last word also as a prefix, FLAG_PARTIAL),
top 20. keyword-nearby: the words AND-ed and filtered by value ranges of the 5 km box, up to 1000 matches read
back and the 10 nearest kept (the sort is counted). Prints JSON lines in the shape of `poi bench`.
Usage: /usr/bin/python3 xapian_keyword.py DATA.jsonl QUERIES.jsonl DB_DIR [QUERY_LIMIT]"""
import json
import math
import shutil
import sys
import time

import xapian

R = 6371008.8
LAT, LON, ROW = 0, 1, 2


def build(data, path):
    shutil.rmtree(path, ignore_errors=True)
    db = xapian.WritableDatabase(path, xapian.DB_CREATE_OR_OVERWRITE)
    tg = xapian.TermGenerator()
    t0 = time.perf_counter()
    n = 0
    db.begin_transaction(False)
    with open(data, "rb") as f:
        for i, line in enumerate(f):
            r = json.loads(line)
            doc = xapian.Document()
            tg.set_document(doc)
            for text in (r["name"], r.get("address") or "", r.get("city") or "", r.get("category", "").replace(".", " ")):
                tg.index_text(text)
                tg.increase_termpos()
            doc.add_value(LAT, xapian.sortable_serialise(r["lat"]))
            doc.add_value(LON, xapian.sortable_serialise(r["lon"]))
            doc.add_value(ROW, str(i))
            db.add_document(doc)
            n += 1
    db.commit_transaction()
    db.commit()
    db.compact(path + "-compact")
    db.close()
    return xapian.Database(path + "-compact"), n, time.perf_counter() - t0


def words(text):
    return [w for w in "".join(c if c.isalnum() else " " for c in text).split() if w]


def run(db, queries, op):
    enquire = xapian.Enquire(db)
    qp = xapian.QueryParser()
    qp.set_database(db)
    samples, results = [], 0
    for q in queries:
        ws = words(q["q"])
        if not ws:
            continue
        t0 = time.perf_counter()
        if op == "keyword":
            qp.set_default_op(xapian.Query.OP_OR)
            enquire.set_query(qp.parse_query(" ".join(ws), xapian.QueryParser.FLAG_DEFAULT | xapian.QueryParser.FLAG_PARTIAL))
            hits = list(enquire.get_mset(0, 20))
        else:
            qp.set_default_op(xapian.Query.OP_AND)
            text = qp.parse_query(" ".join(ws), xapian.QueryParser.FLAG_DEFAULT | xapian.QueryParser.FLAG_PARTIAL)
            dlat = math.degrees(5000 / R)
            dlon = dlat / max(0.01, math.cos(math.radians(q["lat"])))
            box = xapian.Query(xapian.Query.OP_AND,
                               xapian.Query(xapian.Query.OP_VALUE_RANGE, LAT, xapian.sortable_serialise(q["lat"] - dlat), xapian.sortable_serialise(q["lat"] + dlat)),
                               xapian.Query(xapian.Query.OP_VALUE_RANGE, LON, xapian.sortable_serialise(q["lon"] - dlon), xapian.sortable_serialise(q["lon"] + dlon)))
            enquire.set_query(xapian.Query(xapian.Query.OP_FILTER, text, box))
            coslat = math.cos(math.radians(q["lat"]))
            ranked = []
            for m in enquire.get_mset(0, 1000):
                la = xapian.sortable_unserialise(m.document.get_value(LAT))
                lo = xapian.sortable_unserialise(m.document.get_value(LON))
                ranked.append(((la - q["lat"]) ** 2 + ((lo - q["lon"]) * coslat) ** 2, m.docid))
            ranked.sort()
            hits = ranked[:10]
        samples.append((time.perf_counter() - t0) * 1e6)
        results += len(hits)
    samples.sort()
    total = sum(samples)
    return {"op": op, "peer": f"Xapian {xapian.version_string()} (Debian python3-xapian), BM25",
            "queries": len(samples), "seconds": round(total / 1e6, 6), "qps": round(len(samples) / (total / 1e6)),
            "us_per_query": round(total / len(samples), 1), "p50_us": round(samples[len(samples) // 2], 1),
            "p99_us": round(samples[min(len(samples) - 1, len(samples) * 99 // 100)], 1), "mean_results": round(results / len(samples), 2)}


def main():
    data, queries_path, path = sys.argv[1], sys.argv[2], sys.argv[3]
    limit = int(sys.argv[4]) if len(sys.argv) > 4 else 2000
    db, n, build_seconds = build(data, path)
    queries = [json.loads(line) for line in open(queries_path, encoding="utf-8") if line.strip()][:limit]
    for op in ("keyword", "keyword-nearby"):
        result = run(db, queries, op)
        result["n"] = n
        result["build_seconds"] = round(build_seconds, 3)
        print(json.dumps(result), flush=True)
    shutil.rmtree(path, ignore_errors=True)
    shutil.rmtree(path + "-compact", ignore_errors=True)


if __name__ == "__main__":
    main()
