#!/usr/bin/env python3
"""Pinyin query classes drawn from the Chinese names of DATA (seeded) that begin with Han, typed from their start as
people type them into a search box:
  pinyin full      the whole pinyin of a name's first Han run, no spaces ("xingbake" for 星巴克(中关村店));
  pinyin initials  its initials ("xbk");
  pinyin as typed  its full pinyin cut inside a later syllable ("xingb", "xingbak"): the last syllable a prefix;
  pinyin mixed     its first character in Han, the rest in pinyin ("星bake").
Readings come from pypinyin (PyPI, MIT): an independent reader, not the product's. Each query is printed once
without an origin and once with one (the record's position moved by up to 100 m: the user stands by it), with the
record's id, so that `poi bench keyword --classes` can say how often it is among the first three. `py` holds the
query's full pinyin and `initials` its initials, given to Tantivy up front.
Usage: make_pinyin_classes.py DATA.jsonl SEED PER_CLASS"""
import json
import math
import random
import re
import sys

from pypinyin import Style, lazy_pinyin

HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


def main():
    data, seed, per_class = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rng = random.Random(seed)
    with open(data, "rb") as f:
        offsets = []
        offset = 0
        for line in f:
            offsets.append(offset)
            offset += len(line)
    labels = ["pinyin full", "pinyin initials", "pinyin as typed", "pinyin mixed"]
    classes = {label: [] for label in labels}
    with open(data, "rb") as f:
        tries = 0
        while any(len(v) < per_class for v in classes.values()) and tries < per_class * 4000:
            tries += 1
            f.seek(offsets[rng.randrange(len(offsets))])
            record = json.loads(f.readline())
            # A name that starts with Han, typed from its start ("Costa咖啡" would be typed "costa").
            match = HAN.match(record["name"])
            if not match or len(match.group(0)) < 2:
                continue
            run = match.group(0)
            syllables = lazy_pinyin(run, style=Style.NORMAL)
            if not all(s.isascii() and s.isalpha() for s in syllables):
                continue
            full = "".join(syllables)
            initials = "".join(s[0] for s in syllables)
            # Round robin over the classes that still need queries.
            label = min(labels, key=lambda l: len(classes[l]))
            if label == "pinyin full":
                text = full
            elif label == "pinyin initials":
                text = initials
            elif label == "pinyin as typed":
                start = len(syllables[0]) + 1
                if start > len(full) - 1:
                    continue
                text = full[: rng.randint(start, len(full) - 1)]
            else:
                text = run[0] + "".join(syllables[1:])
            d, bearing = rng.uniform(0, 100), rng.uniform(0, 2 * math.pi)
            lat = record["lat"] + math.degrees(d * math.cos(bearing) / 6371008.8)
            lon = record["lon"] + math.degrees(d * math.sin(bearing) / 6371008.8) / max(0.01, math.cos(math.radians(record["lat"])))
            classes[label].append({"class": label, "q": text, "lat": round(lat, 6), "lon": round(lon, 6), "id": record["id"],
                                   "py": full if label != "pinyin as typed" else text, "initials": initials})
    for label, queries in classes.items():
        for origin in (False, True):
            for q in queries:
                print(json.dumps(dict(q, origin=origin), ensure_ascii=False))


if __name__ == "__main__":
    main()
