#!/usr/bin/env python3
"""Keyword query sets by class, drawn from records nobody picked: random records of DATA (seeded), and from each
record's name what a user types for it. Classes:
  one word, two words, three words  — one, two or three consecutive words of the name (names with enough words);
  as you type                        — the name cut after a random number of characters (at least 2), as sent on
                                        each key press: "Ra", "Railw", "Railway Sta";
  CJK                                — 2 to 4 consecutive CJK characters of a name with them (several bigrams);
each once without an origin and once with one (the record's position, jittered by up to 2 km), as a POI screen
sends them. Prints one JSON line per query: {"class", "q", "origin": true|false, "lat", "lon"}.
Usage: make_classes.py DATA.jsonl SEED PER_CLASS"""
import json
import math
import random
import re
import sys

CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


def words(name):
    return [w for w in re.split(r"[\s,()/]+", name) if w]


def main():
    data, seed, per_class = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rng = random.Random(seed)
    with open(data, "rb") as f:
        offsets = []
        offset = 0
        for line in f:
            offsets.append(offset)
            offset += len(line)
    classes = {"one word": [], "two words": [], "three words": [], "as you type": [], "CJK": []}
    with open(data, "rb") as f:
        tries = 0
        while any(len(v) < per_class for v in classes.values()) and tries < per_class * 2000:
            tries += 1
            f.seek(offsets[rng.randrange(len(offsets))])
            record = json.loads(f.readline())
            name = record["name"]
            ws = words(name)
            picked = []
            for count, label in ((1, "one word"), (2, "two words"), (3, "three words")):
                if len(ws) >= count and len(classes[label]) < per_class:
                    start = rng.randrange(len(ws) - count + 1)
                    picked.append((label, " ".join(ws[start:start + count])))
            if len(name) >= 3 and len(classes["as you type"]) < per_class:
                picked.append(("as you type", name[: rng.randint(2, len(name))].rstrip() or name[:2]))
            runs = [r for r in CJK.findall(name) if len(r) >= 2]
            if runs and len(classes["CJK"]) < per_class:
                run = rng.choice(runs)
                size = rng.randint(2, min(4, len(run)))
                start = rng.randrange(len(run) - size + 1)
                picked.append(("CJK", run[start:start + size]))
            for label, text in picked:
                if not re.search(r"\w", text):
                    continue
                # Up to 2 km from the record, in a random direction.
                d, bearing = rng.uniform(0, 2000), rng.uniform(0, 2 * math.pi)
                lat = record["lat"] + math.degrees(d * math.cos(bearing) / 6371008.8)
                lon = record["lon"] + math.degrees(d * math.sin(bearing) / 6371008.8) / max(0.01, math.cos(math.radians(record["lat"])))
                lat, lon = max(-90, min(90, lat)), ((lon + 180) % 360) - 180
                classes[label].append({"class": label, "q": text, "lat": round(lat, 6), "lon": round(lon, 6)})
    for label, queries in classes.items():
        for origin in (False, True):
            for q in queries:
                print(json.dumps(dict(q, origin=origin), ensure_ascii=False))


if __name__ == "__main__":
    main()
