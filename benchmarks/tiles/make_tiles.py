"""Tiles to request, drawn around the records themselves (people look where things are), one line per tile
"z x y" with the zoom's share of lines, seeded.

    python3 benchmarks/tiles/make_tiles.py DATA.jsonl ZOOM COUNT SEED > tiles.txt

Each tile is the one holding a record drawn at random from DATA, at zoom ZOOM.
"""
import json
import math
import random
import sys


def main():
    data, zoom, count, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    positions = []
    with open(data, "rb") as f:
        for line in f:
            r = json.loads(line)
            positions.append((r["lat"], r["lon"]))
    rng = random.Random(seed * 100 + zoom)
    n = 2 ** zoom
    for _ in range(count):
        lat, lon = rng.choice(positions)
        lat = max(-85.05112877, min(85.05112877, lat))
        x = min(n - 1, int((lon + 180) / 360 * n))
        y = min(n - 1, int((1 - math.log(math.tan(math.pi / 4 + math.radians(lat) / 2)) / math.pi) / 2 * n))
        print(zoom, x, y)


if __name__ == "__main__":
    main()
