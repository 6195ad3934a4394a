#!/usr/bin/env python3
"""Lists the objects of an .osm.pbf extract that must become POIs, found with pyosmium independently of the Swift
importer: named nodes, ways and multipolygon relations with a tag that data/categories.json maps to a category
(the first of the keys below that maps decides, as in Sources/Catalog/OSMTagMapping.swift).

Prints one id per line: osm-n..., osm-w..., osm-r...
Usage: python3 scripts/osm/expected_pois.py FILE.osm.pbf [data/categories.json]
"""
import json
import os
import sys

import osmium

KEYS = ["amenity", "shop", "tourism", "leisure", "office", "railway", "public_transport", "station", "highway", "historic", "aeroway"]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    categories = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "..", "..", "data", "categories.json")
    exact, wildcard = set(), set()
    for c in json.load(open(categories, encoding="utf-8"))["categories"]:
        for tag in c["osm"]:
            k, v = tag.split("=", 1)
            (wildcard.add(k) if v == "*" else exact.add((k, v)))
    for o in osmium.FileProcessor(sys.argv[1]):
        tags = {t.k: t.v for t in o.tags}
        if not tags.get("name", "").strip():
            continue
        if o.is_relation() and tags.get("type") != "multipolygon":
            continue
        if not any((k, tags[k]) in exact or k in wildcard for k in KEYS if k in tags):
            continue
        print(f"osm-{o.type_str()}{o.id}")


if __name__ == "__main__":
    main()
