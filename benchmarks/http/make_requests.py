#!/usr/bin/env python3
"""Writes the request paths the HTTP load replays, one per line, from the benchmark's query sets:
  nearby.paths          GET /v1/nearby  k = 10 within 1 km of each origin
  keyword-nearby.paths  GET /v1/nearby  the 10 nearest matches of a keyword within 5 km (the in-process keyword set)
  search.paths          GET /v1/search  the same keywords ranked, limit 20 (no origin)
  within.paths          GET /v1/within  a 1 km square around each origin, limit 20
  geocode.paths         GET /v1/geocode the geocoding test table's queries, limit 5
Usage: make_requests.py ORIGINS.jsonl KEYWORDS.jsonl GEOCODE.txt OUTDIR"""
import json
import math
import os
import sys
from urllib.parse import quote

R = 6371008.8


def main():
    origins_path, keywords_path, geocode_path, out = sys.argv[1:5]
    os.makedirs(out, exist_ok=True)
    origins = [json.loads(line) for line in open(origins_path) if line.strip()]
    with open(os.path.join(out, "nearby.paths"), "w") as f:
        for o in origins:
            f.write(f"/v1/nearby?lat={o['lat']}&lon={o['lon']}&radius=1000&limit=10\n")
    with open(os.path.join(out, "within.paths"), "w") as f:
        half = math.degrees(500 / R)
        for o in origins:
            lon_half = min(179, half / max(0.01, math.cos(math.radians(o["lat"]))))
            west, east = o["lon"] - lon_half, o["lon"] + lon_half
            if west < -180 or east > 180:
                continue  # keep the set simple: no antimeridian boxes (they are tested, not benchmarked)
            south, north = max(-90, o["lat"] - half), min(90, o["lat"] + half)
            f.write(f"/v1/within?bbox={west:.7f},{south:.7f},{east:.7f},{north:.7f}&limit=20\n")
    with open(os.path.join(out, "keyword-nearby.paths"), "w") as f:
        for line in open(keywords_path, encoding="utf-8"):
            if line.strip():
                q = json.loads(line)
                f.write(f"/v1/nearby?lat={q['lat']}&lon={q['lon']}&radius=5000&q={quote(q['q'], safe='')}&limit=10\n")
    with open(os.path.join(out, "search.paths"), "w") as f:
        for line in open(keywords_path, encoding="utf-8"):
            if line.strip():
                f.write(f"/v1/search?q={quote(json.loads(line)['q'], safe='')}&limit=20\n")
    with open(os.path.join(out, "geocode.paths"), "w") as f:
        for line in open(geocode_path, encoding="utf-8"):
            if line.strip():
                f.write(f"/v1/geocode?q={quote(line.strip(), safe='')}&limit=5\n")


if __name__ == "__main__":
    main()
