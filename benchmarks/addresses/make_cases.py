#!/usr/bin/env python3
"""Builds a judged set of address cases from an .osm.pbf extract, read with pyosmium (not with the product's reader):
the set both geocoders — ours and Nominatim — answer in benchmarks/addresses/run.

Cases (seeded; kinds in the proportions of the set in issue 34):
  house      "Street N, City"         expect: within 50 m of an object with that street and number
  house      "Street N"               (no city)
  house      "street n, city"         (lower case)
  house      "Gatan N, Helsingfors"   (the street's Swedish name, from name:sv of its highway ways)
  house      "Stxeet N"               (one letter of the street replaced)
  street     "Street, City"           expect: within 50 m of one of the street's ways (distance to its segments)
  reverse    a point 3 m from a house expect: that street and number (or another object at the same spot)
Objects: addressed nodes, and addressed ways at the mean of their nodes. Writes JSON lines:
  {"kind": "house"|"street"|"reverse", "form": ..., "q": ..., "lat", "lon", "street", "housenumber",
   "targets": [[lat, lon], ...] (houses) or "lines": [[[lat, lon], ...], ...] (streets)}
Usage: python3 benchmarks/addresses/make_cases.py FILE.osm.pbf --seed 42 --count 150 > cases.jsonl
"""
import argparse
import json
import math
import random
import sys

import osmium


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("pbf")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--count", type=int, default=150)
    parser.add_argument("--city", default="Helsinki")
    parser.add_argument("--city-sv", default="Helsingfors")
    args = parser.parse_args()
    rnd = random.Random(args.seed)

    houses = {}  # (street, number) -> [(lat, lon)]
    streets = {}  # name -> [[(lat, lon), ...]]
    swedish = {}
    for o in osmium.FileProcessor(args.pbf).with_locations():
        tags = {t.k: t.v for t in o.tags}
        if o.is_node():
            if "addr:housenumber" in tags and "addr:street" in tags:
                for n in tags["addr:housenumber"].split(";"):
                    houses.setdefault((tags["addr:street"], n.strip()), []).append((o.location.lat, o.location.lon))
        elif o.is_way():
            points = [(n.lat, n.lon) for n in o.nodes if n.location.valid()]
            if not points:
                continue
            if "addr:housenumber" in tags and "addr:street" in tags:
                lat = sum(p[0] for p in points) / len(points)
                lon = sum(p[1] for p in points) / len(points)
                for n in tags["addr:housenumber"].split(";"):
                    houses.setdefault((tags["addr:street"], n.strip()), []).append((lat, lon))
            if "highway" in tags and "name" in tags:
                streets.setdefault(tags["name"], []).append(points)
                if "name:sv" in tags and tags["name:sv"] != tags["name"]:
                    swedish[tags["name"]] = tags["name:sv"]

    keys = sorted(houses)
    with_houses = {k[0] for k in keys}
    named = sorted(s for s in streets if s in with_houses)
    out = []

    def typo(name):
        letters = [i for i in range(1, len(name) - 1) if name[i].isalpha()]
        i = rnd.choice(letters)
        return name[:i] + ("y" if name[i] == "x" else "x") + name[i + 1:]

    swedish_keys = [k for k in keys if k[0] in swedish]
    share = {"Street N, City": 0.2, "Street N": 0.15, "lower case": 0.1, "Swedish": 0.1, "typo": 0.1, "street": 0.15, "reverse": 0.2}
    for form, fraction in share.items():
        for _ in range(round(args.count * fraction)):
            if form == "street":
                name = rnd.choice(named)
                out.append({"kind": "street", "form": form, "q": f"{name}, {args.city}", "street": name, "lines": streets[name]})
                continue
            candidates = keys if form != "Swedish" else swedish_keys
            street, number = rnd.choice(candidates)
            targets = houses[(street, number)]
            if form == "reverse":
                lat, lon = targets[0]
                bearing = rnd.uniform(0, 2 * math.pi)
                dlat = 3 * math.cos(bearing) / 111_195
                dlon = 3 * math.sin(bearing) / (111_195 * math.cos(math.radians(lat)))
                out.append({"kind": "reverse", "form": form, "lat": lat + dlat, "lon": lon + dlon, "street": street, "housenumber": number, "targets": targets})
                continue
            q = {"Street N, City": f"{street} {number}, {args.city}", "Street N": f"{street} {number}",
                 "lower case": f"{street} {number}, {args.city}".lower(), "Swedish": f"{swedish.get(street, street)} {number}, {args.city_sv}",
                 "typo": f"{typo(street)} {number}"}[form]
            out.append({"kind": "house", "form": form, "q": q, "street": street, "housenumber": number, "targets": targets})
    for case in out:
        sys.stdout.write(json.dumps(case, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
