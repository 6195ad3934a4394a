#!/usr/bin/env python3
"""Writes a synthetic .osm.pbf extract with pyosmium, for the reader's tests and the import benchmark.

A grid of streets over a city-sized area: named street ways (with Swedish name variants) whose nodes carry
nothing, houses along them (nodes with addr:street + addr:housenumber, every fifth one a building outline way with
the address instead), POIs (named nodes with amenity/shop tags), some multipolygon relations (an outer and an inner
ring) and addr:interpolation lines. Deterministic for a seed.

With `--shape country` each street also gets what makes most of a country's nodes: a forest outline, an unnamed
track and a stream (~200 untagged way nodes a street, ~90 % of all nodes), and three POIs instead of one in two
streets: ~8 % of the nodes are addresses, ~1 % POIs, as in a real country extract.

Usage: python3 scripts/osm/synthetic.py OUT.osm.pbf --nodes 20000 [--seed 42] [--shape city|country]
Objects come out sorted (nodes, ways, relations; ids ascending), as real extracts are.
"""
import argparse
import os
import random
from math import cos, sin

import osmium


STREET_WORDS = ["Koivu", "Mänty", "Kuusi", "Vaahtera", "Tammi", "Pihlaja", "Haapa", "Leppä", "Saarni", "Kataja", "Raita", "Jalava"]
SUFFIXES = [("katu", "gatan"), ("tie", "vägen"), ("kuja", "gränden"), ("polku", "stigen")]
POI_TAGS = [("amenity", "cafe"), ("amenity", "restaurant"), ("shop", "bakery"), ("amenity", "pharmacy"), ("shop", "books"), ("amenity", "bank")]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--nodes", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--shape", choices=["city", "country"], default="city")
    args = parser.parse_args()
    rnd = random.Random(args.seed)
    if os.path.exists(args.out):
        os.remove(args.out)
    writer = osmium.SimpleWriter(args.out)
    ways, relations = [], []
    next_node = [1]
    next_way = [1]

    def node(lat, lon, tags=None):
        nid = next_node[0]
        next_node[0] += 1
        # Nodes go straight to the file (they come first and in id order); ways and relations wait in memory.
        writer.add_node(osmium.osm.mutable.Node(id=nid, location=(lon, lat), tags=tags or {}))
        return nid

    def way(refs, tags):
        wid = next_way[0]
        next_way[0] += 1
        ways.append(osmium.osm.mutable.Way(id=wid, nodes=refs, tags=tags))
        return wid

    lat0, lon0 = 60.10, 24.80
    street = 0
    while next_node[0] < args.nodes:
        street += 1
        word = STREET_WORDS[street % len(STREET_WORDS)]
        fi, sv = SUFFIXES[(street // len(STREET_WORDS)) % len(SUFFIXES)]
        name = f"{word}{fi} {street}" if street > len(STREET_WORDS) * len(SUFFIXES) else f"{word}{fi}"
        name_sv = name.replace(fi, sv)
        base_lat = lat0 + (street % 40) * 0.004
        base_lon = lon0 + (street // 40) * 0.008
        horizontal = street % 2 == 0
        points = []
        for i in range(12):
            lat = base_lat + (0 if horizontal else i * 0.0004) + rnd.uniform(-0.00002, 0.00002)
            lon = base_lon + (i * 0.0008 if horizontal else 0) + rnd.uniform(-0.00002, 0.00002)
            points.append(node(lat, lon))
        way(points, {"highway": "residential", "name": name, "name:fi": name, "name:sv": name_sv})
        for number in range(1, 23):
            i = min(number // 2, 11)
            side = 0.00012 if number % 2 else -0.00012
            lat = base_lat + (side if horizontal else i * 0.0004)
            lon = base_lon + (i * 0.0008 if horizontal else side)
            if number % 5 == 0:
                d = 0.00004
                ring = [node(lat - d, lon - d), node(lat - d, lon + d), node(lat + d, lon + d), node(lat + d, lon - d)]
                way(ring + [ring[0]], {"building": "yes", "addr:street": name, "addr:housenumber": str(number), "addr:postcode": "00100", "addr:city": "Helsinki"})
            else:
                letter = "a" if number == 7 else ""
                node(lat, lon, {"addr:street": name, "addr:housenumber": f"{number}{letter}", "addr:postcode": "00100", "addr:city": "Helsinki"})
        for p in range(3 if args.shape == "country" else 1):
            if args.shape == "country" or rnd.random() < 0.5:
                k, v = rnd.choice(POI_TAGS)
                node(base_lat + 0.0001 + p * 0.0003, base_lon + 0.0001, {k: v, "name": f"{word} {v} {street}", "opening_hours": "Mo-Fr 08:00-18:00"})
        if args.shape == "country":
            # The countryside around the street: nodes that only ways use, most of a country's nodes.
            forest = []
            for j in range(100):
                t = j / 100 * 6.283185307179586
                forest.append(node(base_lat + 0.0015 + 0.0008 * sin(t), base_lon + 0.004 + 0.0016 * cos(t)))
            way(forest + [forest[0]], {"landuse": "forest"})
            track = [node(base_lat + 0.0025 + rnd.uniform(-0.00005, 0.00005), base_lon + j * 0.00016) for j in range(50)]
            way(track, {"highway": "track"})
            stream = [node(base_lat + 0.0032 + 0.0002 * sin(j / 5), base_lon + j * 0.00016) for j in range(50)]
            way(stream, {"waterway": "stream"})
        if street % 7 == 0:
            a = node(base_lat + 0.0002, base_lon + 0.003, {"addr:street": name, "addr:housenumber": "30"})
            b = node(base_lat + 0.0002, base_lon + 0.006, {"addr:street": name, "addr:housenumber": "40"})
            way([a, b], {"addr:interpolation": "even", "addr:street": name})
        if street % 11 == 0:
            d = 0.0006
            outer = [node(base_lat + 0.001, base_lon + 0.001), node(base_lat + 0.001, base_lon + 0.001 + d),
                     node(base_lat + 0.001 + d, base_lon + 0.001 + d), node(base_lat + 0.001 + d, base_lon + 0.001)]
            inner = [node(base_lat + 0.0012, base_lon + 0.0012), node(base_lat + 0.0012, base_lon + 0.0014),
                     node(base_lat + 0.0014, base_lon + 0.0014), node(base_lat + 0.0014, base_lon + 0.0012)]
            wo = way(outer + [outer[0]], {})
            wi = way(inner + [inner[0]], {})
            relations.append(osmium.osm.mutable.Relation(
                id=len(relations) + 1, members=[("w", wo, "outer"), ("w", wi, "inner")],
                tags={"type": "multipolygon", "leisure": "park", "name": f"{word}puisto {street}", "name:sv": f"{word}parken {street}"}))
    for w in ways:
        writer.add_way(w)
    for r in relations:
        writer.add_relation(r)
    writer.close()


if __name__ == "__main__":
    main()
