#!/usr/bin/env python3
"""Writes query origins near the data: random records jittered by 0-500 m in a random direction, one
{"lat","lon"} per line. Deterministic for a seed. Usage: make_queries.py DATA.jsonl COUNT SEED > queries.jsonl"""
import math
import random
import sys

import orjson

R = 6371008.8


def destination(lat, lon, distance, bearing):
    d = distance / R
    t = math.radians(bearing)
    p1 = math.radians(lat)
    l1 = math.radians(lon)
    p2 = math.asin(math.sin(p1) * math.cos(d) + math.cos(p1) * math.sin(d) * math.cos(t))
    l2 = l1 + math.atan2(math.sin(t) * math.sin(d) * math.cos(p1), math.cos(d) - math.sin(p1) * math.sin(p2))
    lon2 = (math.degrees(l2) + 540) % 360 - 180
    return math.degrees(p2), lon2


def main():
    path, count, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    points = []
    with open(path, "rb") as f:
        for line in f:
            r = orjson.loads(line)
            points.append((r["lat"], r["lon"]))
    rng = random.Random(seed)
    out = sys.stdout
    for _ in range(count):
        lat, lon = points[rng.randrange(len(points))]
        qlat, qlon = destination(lat, lon, rng.uniform(0, 500), rng.uniform(0, 360))
        out.write(f'{{"lat":{qlat:.7f},"lon":{qlon:.7f}}}\n')


if __name__ == "__main__":
    main()
