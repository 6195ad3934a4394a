#!/usr/bin/env python3
"""Houses of written records (POIs with their own addr:* tags) on a live server: what writes cost the address index.

    benchmarks/addresses/record_houses.py [--records N] [--writes W] [--seed S]

A new database with data/Helsinki.osm.pbf imported (the extract's houses are the base), then `poi serve` on it:
1. POST /v1/import of N generated POIs (default 100 000) whose tags carry addr:housenumber and addr:street: the
   task's wall time, and the first /v1/geocode after it (which indexes their houses once);
2. W times (default 500): PUT of one of them with a new number, then /v1/geocode of that new address (which must
   answer the house): p50/p99 of each. The last 447 writes or so sit in the recent layer (RecordHouses); every
   √(2N)-th write settles them, and the geocoding after it indexes every record's houses again.
Prints one JSON line. Needs a release build (make release).
"""
import argparse
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--writes", type=int, default=500)
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()
    poi = os.environ.get("POI", os.path.join(ROOT, ".build/release/poi"))
    env = dict(os.environ, POI_DATA_DIR=os.path.join(ROOT, "data"))
    work = tempfile.mkdtemp(prefix="poi-record-houses-")
    db = os.path.join(work, "h.sqlite")
    subprocess.run([poi, "import", os.path.join(ROOT, "data/Helsinki.osm.pbf"), "--db", db], env=env, check=True, capture_output=True)
    rng = random.Random(args.seed)
    streets = 2_000
    rows = []
    for k in range(args.records):
        s, n = k % streets, k // streets + 1
        rows.append(json.dumps({
            "id": f"h{k}", "name": f"Shop {k}", "category": "shop.kiosk",
            "lat": 60.1 + s * 0.0005, "lon": 24.9 + n * 0.0001,
            "tags": {"addr:housenumber": str(n), "addr:street": f"Testikatu{s}", "addr:city": "Helsinki"},
        }))
    body = ("\n".join(rows) + "\n").encode()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    log = open(os.path.join(work, "serve.log"), "w")
    server = subprocess.Popen([poi, "serve", "--port", str(port), "--db", db], stdout=log, stderr=subprocess.STDOUT, env=env)
    base = f"http://127.0.0.1:{port}"

    def call(method, path, data=None, ctype="application/json"):
        request = urllib.request.Request(base + path, data=data, method=method, headers={"Content-Type": ctype})
        with urllib.request.urlopen(request) as response:
            return json.loads(response.read() or b"null")

    try:
        for _ in range(1_200):
            try:
                call("GET", "/health")
                break
            except OSError:
                if server.poll() is not None:
                    sys.exit("poi serve exited: " + open(log.name).read())
                time.sleep(0.1)
        start = time.perf_counter()
        task = call("POST", "/v1/import?format=jsonl&name=houses.jsonl", body, "application/x-ndjson")["id"]
        while (done := call("GET", f"/v1/tasks/{task}"))["status"] not in ("succeeded", "failed"):
            time.sleep(0.05)
        imported = time.perf_counter() - start
        assert done["status"] == "succeeded", done
        start = time.perf_counter()
        first = call("GET", "/v1/geocode?q=Testikatu7%201&limit=1")["results"][0]
        first_geocode = time.perf_counter() - start
        assert first["type"] == "house", first
        writes, geocodes = [], []
        for w in range(args.writes):
            k = rng.randrange(args.records)
            number = 10_000 + w
            record = {"name": f"Shop {k}", "category": "shop.kiosk", "lat": 60.1, "lon": 24.9,
                      "tags": {"addr:housenumber": str(number), "addr:street": f"Testikatu{k % streets}"}}
            start = time.perf_counter()
            call("PUT", f"/v1/pois/h{k}", json.dumps(record).encode())
            writes.append(time.perf_counter() - start)
            start = time.perf_counter()
            answer = call("GET", f"/v1/geocode?q=Testikatu{k % streets}%20{number}&limit=1")["results"][0]
            geocodes.append(time.perf_counter() - start)
            assert answer["type"] == "house" and answer["address"]["housenumber"] == str(number), answer

        def pct(values, p):
            values = sorted(values)
            return round(values[min(len(values) - 1, int(p * len(values)))] * 1000, 2)

        print(json.dumps({
            "scenario": "record houses", "records": args.records, "writes": args.writes,
            "import_s": round(imported, 2), "first_geocode_ms": round(first_geocode * 1000, 1),
            "put_p50_ms": pct(writes, 0.5), "put_p99_ms": pct(writes, 0.99),
            "geocode_after_put_p50_ms": pct(geocodes, 0.5), "geocode_after_put_p99_ms": pct(geocodes, 0.99),
            "geocode_after_put_max_ms": pct(geocodes, 1.0),
        }))
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
