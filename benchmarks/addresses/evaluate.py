#!/usr/bin/env python3
"""Scores a geocoder on the judged address cases of make_cases.py and times it.

Backends:
  --poi URL          our server, through its Nominatim-compatible endpoints (/nominatim/search, /nominatim/reverse),
                     as geopy would call it; latency is per HTTP request from this process
  --nominatim DIR    a Nominatim project directory, through nominatim_api's NominatimAPI (in-process, as the
                     peer's own Python API; the first query of the process is made and not timed)
Prints one JSON object: right/total per form and kind, the misses, median and p99 latency in ms.
Usage: python3 benchmarks/addresses/evaluate.py cases.jsonl (--poi http://127.0.0.1:PORT | --nominatim DIR)
"""
import argparse
import json
import math
import statistics
import sys
import time
import urllib.parse
import urllib.request


def metres(a, b):
    lat1, lon1, lat2, lon2 = map(math.radians, (a[0], a[1], b[0], b[1]))
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return 2 * 6371008.8 * math.asin(min(1, math.sqrt(h)))


def to_segment(p, a, b):
    scale = 6371008.8 * math.pi / 180
    c = math.cos(math.radians(p[0]))
    ax, ay = (a[1] - p[1]) * c * scale, (a[0] - p[0]) * scale
    bx, by = (b[1] - p[1]) * c * scale, (b[0] - p[0]) * scale
    ex, ey = bx - ax, by - ay
    length = ex * ex + ey * ey
    t = 0 if length == 0 else max(0, min(1, -(ax * ex + ay * ey) / length))
    return math.hypot(ax + t * ex, ay + t * ey)


def judge(case, answer):
    """answer: dict with lat, lon, road, house_number (any may be None)."""
    if answer is None or answer.get("lat") is None:
        return False
    p = (answer["lat"], answer["lon"])
    if case["kind"] == "house":
        return min(metres(p, t) for t in case["targets"]) <= 50
    if case["kind"] == "street":
        # A way of one node (its others outside the extract) is a point: its distance is to that node.
        return min(to_segment(p, w[max(0, i - 1)], w[i]) for w in case["lines"] for i in range(min(1, len(w) - 1), len(w))) <= 50
    def number(text):  # "26, 14. krs." is house 26 (a floor after the comma)
        return (text or "").split(",")[0].replace(" ", "").lower()

    same = answer.get("road") == case["street"] and number(answer.get("house_number")) == number(case["housenumber"])
    return same or min(metres(p, t) for t in case["targets"]) <= 1


class Poi:
    def __init__(self, base):
        self.base = base.rstrip("/")

    def get(self, path, params):
        with urllib.request.urlopen(f"{self.base}{path}?{urllib.parse.urlencode(params)}", timeout=30) as r:
            return json.loads(r.read())

    def search(self, q):
        found = self.get("/nominatim/search", {"q": q, "format": "jsonv2", "limit": 1, "addressdetails": 1})
        if not found:
            return None
        a = found[0].get("address", {})
        return {"lat": float(found[0]["lat"]), "lon": float(found[0]["lon"]), "road": a.get("road"), "house_number": a.get("house_number")}

    def reverse(self, lat, lon):
        r = self.get("/nominatim/reverse", {"lat": lat, "lon": lon, "format": "jsonv2", "zoom": 18, "addressdetails": 1})
        if "error" in r:
            return None
        a = r.get("address", {})
        return {"lat": float(r["lat"]), "lon": float(r["lon"]), "road": a.get("road"), "house_number": a.get("house_number")}


class Nominatim:
    def __init__(self, project):
        from nominatim_api import NominatimAPI

        self.api = NominatimAPI(project)
        self.api.search("Helsinki")  # the first query of a process loads everything: not timed

    @staticmethod
    def answer(result):
        if result is None:
            return None
        # The object's own address tags first (a house), else its address lines (a POI inside a building).
        own = result.address or {}
        road, number = own.get("street"), own.get("housenumber") or result.housenumber
        for line in result.address_rows or []:
            name = (line.names or {}).get("name") or line.local_name
            if road is None and line.isaddress and line.rank_address == 26 and name:
                road = name
            if number is None and line.isaddress and line.category == ("place", "house_number") and name:
                number = name
        return {"lat": result.centroid.lat, "lon": result.centroid.lon, "road": road, "house_number": number}

    def search(self, q):
        found = self.api.search(q, max_results=1, address_details=True)
        return self.answer(found[0]) if found else None

    def reverse(self, lat, lon):
        return self.answer(self.api.reverse((lon, lat), address_details=True))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("cases")
    parser.add_argument("--poi")
    parser.add_argument("--nominatim")
    args = parser.parse_args()
    backend = Poi(args.poi) if args.poi else Nominatim(args.nominatim)
    cases = [json.loads(line) for line in open(args.cases, encoding="utf-8")]
    tally, misses, times = {}, [], []
    for case in cases:
        started = time.perf_counter()
        answer = backend.reverse(case["lat"], case["lon"]) if case["kind"] == "reverse" else backend.search(case["q"])
        times.append((time.perf_counter() - started) * 1000)
        ok = judge(case, answer)
        key = case["form"]
        right, total = tally.get(key, (0, 0))
        tally[key] = (right + ok, total + 1)
        if not ok:
            misses.append({"case": case.get("q") or f"reverse {case['lat']:.6f},{case['lon']:.6f} ({case['street']} {case['housenumber']})", "answer": answer})
    kinds = {}
    for case, t in zip(cases, times):
        kinds.setdefault(case["kind"], []).append(t)
    right = sum(r for r, _ in tally.values())
    times.sort()
    print(json.dumps({
        "right": right, "total": len(cases), "forms": {k: f"{r}/{t}" for k, (r, t) in sorted(tally.items())},
        "median_ms": round(statistics.median(times), 3), "p99_ms": round(times[min(len(times) - 1, int(0.99 * len(times)))], 3),
        "misses": misses,
    }, ensure_ascii=False))


if __name__ == "__main__":
    main()
