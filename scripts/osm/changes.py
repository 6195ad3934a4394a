#!/usr/bin/env python3
"""Writes a random osmChange file (.osc.gz) against an .osm.pbf extract with pyosmium: the change sets the tests apply
to an imported extract and compare with a fresh import of `osmium apply-changes` output (Tests/CatalogTests/
OSMChangeTests), and the minutely-sized diffs of the update benchmark.

Every kind of change, drawn with the seed:
- nodes: moved (way nodes too: streets, buildings, interpolation ends, multipolygon rings), tags changed (a POI renamed,
  its mapped tag removed, a house number changed), deleted (tagged nodes no way uses), created (POIs and houses);
- ways: tags changed (an address removed or added, a street renamed), node lists changed (a node dropped, a new one
  inserted), deleted (buildings), created (a building with an address, a street over existing nodes);
- relations: renamed, their mapped tag removed, deleted, created (a new multipolygon over new ways).
Objects are written with version 1 for a create, visible=False for a delete and the extract's version plus one
otherwise (osmium apply-changes keeps an object's highest version), nodes before
ways before relations, each with a timestamp after `--time`.

Usage: python3 scripts/osm/changes.py BASE.osm.pbf OUT.osc.gz --seed 7 [--changes 300] [--time 2026-01-01T00:00:00Z]
"""
import argparse
import datetime
import os
import random

import osmium


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("base")
    parser.add_argument("out")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--changes", type=int, default=300)
    parser.add_argument("--time", default="2026-01-01T00:00:00Z")
    args = parser.parse_args()
    rnd = random.Random(args.seed)
    stamp = datetime.datetime.fromisoformat(args.time.replace("Z", "+00:00")) + datetime.timedelta(seconds=args.seed)

    nodes, ways, relations = {}, {}, {}
    versions = {}  # a change's version is one past the extract's (osmium apply-changes keeps the highest)
    used = set()
    for o in osmium.FileProcessor(args.base):
        versions[(o.type_str(), o.id)] = o.version
        if o.is_node():
            nodes[o.id] = ((o.location.lat, o.location.lon), {t.k: t.v for t in o.tags})
        elif o.is_way():
            refs = [n.ref for n in o.nodes]
            ways[o.id] = (refs, {t.k: t.v for t in o.tags})
            used.update(refs)
        elif o.is_relation():
            relations[o.id] = ([(m.type, m.ref, m.role) for m in o.members], {t.k: t.v for t in o.tags})

    next_node = max(nodes) + 1 if nodes else 1
    next_way = max(ways) + 1 if ways else 1
    next_relation = max(relations) + 1 if relations else 1
    out_nodes, out_ways, out_relations = {}, {}, {}
    created_nodes = []

    def put_node(nid, loc, tags, create=False):
        out_nodes[nid] = ("create" if create else "modify", loc, tags)

    def new_node(loc, tags=None):
        nonlocal next_node
        nid = next_node
        next_node += 1
        put_node(nid, loc, tags or {}, create=True)
        created_nodes.append(nid)
        return nid

    def jitter(loc, d=0.0003):
        return (round(loc[0] + rnd.uniform(-d, d), 7), round(loc[1] + rnd.uniform(-d, d), 7))

    node_ids = sorted(nodes)
    tagged_free = [n for n in node_ids if nodes[n][1] and n not in used]
    way_ids = sorted(ways)
    for _ in range(args.changes):
        kind = rnd.random()
        if kind < 0.25:  # move a node (a way's or a POI's)
            nid = rnd.choice(node_ids)
            if nid in out_nodes and out_nodes[nid][0] == "delete":
                continue
            loc, tags = nodes[nid]
            put_node(nid, jitter(loc), dict(tags))
        elif kind < 0.37 and tagged_free:  # change a tagged node's tags
            nid = rnd.choice(tagged_free)
            if nid in out_nodes:
                continue
            loc, tags = nodes[nid]
            tags = dict(tags)
            choice = rnd.random()
            if "name" in tags and choice < 0.4:
                tags["name"] = tags["name"] + " uusi"
            elif "amenity" in tags and choice < 0.7:
                del tags["amenity"]
            elif "addr:housenumber" in tags:
                tags["addr:housenumber"] = str(rnd.randint(1, 99))
            else:
                tags["addr:street"] = "Uusikatu"
                tags["addr:housenumber"] = str(rnd.randint(1, 99))
            put_node(nid, loc, tags)
        elif kind < 0.45 and tagged_free:  # delete a tagged node no way uses
            nid = rnd.choice(tagged_free)
            if nid in out_nodes:
                continue
            out_nodes[nid] = ("delete", nodes[nid][0], {})
        elif kind < 0.55:  # create a POI or a house
            loc = jitter(nodes[rnd.choice(node_ids)][0], 0.002)
            if rnd.random() < 0.5:
                new_node(loc, {"amenity": rnd.choice(["cafe", "restaurant", "pharmacy"]), "name": f"Uusi paikka {next_node}"})
            else:
                new_node(loc, {"addr:street": "Uusikatu", "addr:housenumber": str(rnd.randint(1, 99)), "addr:city": "Helsinki"})
        elif kind < 0.66:  # change a way's tags
            wid = rnd.choice(way_ids)
            if wid in out_ways:
                continue
            refs, tags = ways[wid]
            tags = dict(tags)
            if "addr:housenumber" in tags and rnd.random() < 0.5:
                del tags["addr:housenumber"]
            elif "highway" in tags:
                tags["name"] = tags.get("name", "Tie") + " B"
            elif not tags:
                tags = {"building": "yes", "addr:street": "Uusikatu", "addr:housenumber": str(rnd.randint(1, 99))}
            else:
                tags["addr:housenumber"] = str(rnd.randint(100, 199))
                tags.setdefault("addr:street", "Uusikatu")
            out_ways[wid] = ("modify", list(refs), tags)
        elif kind < 0.74:  # change a way's node list
            wid = rnd.choice(way_ids)
            if wid in out_ways:
                continue
            refs, tags = ways[wid]
            refs = list(refs)
            closed = len(refs) >= 4 and refs[0] == refs[-1]
            if len(refs) > 3 and not closed and rnd.random() < 0.5:
                del refs[rnd.randrange(1, len(refs) - 1)]
            else:
                i = rnd.randrange(1, len(refs)) if len(refs) > 1 else 1
                if refs[i - 1] not in nodes:  # a way clipped at the extract's edge
                    continue
                near = nodes[refs[i - 1]][0]
                refs.insert(i, new_node(jitter(near, 0.0001)))
            out_ways[wid] = ("modify", refs, dict(tags))
        elif kind < 0.80:  # delete a way that no relation uses
            wid = rnd.choice(way_ids)
            in_relation = any(("w", wid) == (m[0], m[1]) for members, _ in relations.values() for m in members)
            if wid in out_ways or in_relation:
                continue
            out_ways[wid] = ("delete", [], {})
        elif kind < 0.88:  # create a building with an address, or a street over existing nodes
            base = nodes[rnd.choice(node_ids)][0]
            if rnd.random() < 0.6:
                d = 0.00004
                ring = [new_node((round(base[0] - d, 7), round(base[1] - d, 7))), new_node((round(base[0] - d, 7), round(base[1] + d, 7))),
                        new_node((round(base[0] + d, 7), round(base[1] + d, 7)))]
                out_ways[next_way] = ("create", ring + [ring[0]], {"building": "yes", "addr:street": "Uusikatu", "addr:housenumber": str(rnd.randint(1, 99))})
            else:
                start = rnd.randrange(len(node_ids) - 3)
                out_ways[next_way] = ("create", node_ids[start:start + 3], {"highway": "service", "name": f"Uusi tie {next_way}"})
            next_way += 1
        elif relations:  # relations
            rid = rnd.choice(sorted(relations))
            if rid in out_relations:
                continue
            members, tags = relations[rid]
            choice = rnd.random()
            if choice < 0.35:
                out_relations[rid] = ("modify", list(members), dict(tags, name=tags.get("name", "Puisto") + " II"))
            elif choice < 0.55:
                out_relations[rid] = ("modify", list(members), {k: v for k, v in tags.items() if k != "leisure"})
            elif choice < 0.7:
                out_relations[rid] = ("delete", [], {})
            else:
                base = nodes[rnd.choice(node_ids)][0]
                d = 0.0005
                ring = [new_node((round(base[0], 7), round(base[1], 7))), new_node((round(base[0], 7), round(base[1] + d, 7))),
                        new_node((round(base[0] + d, 7), round(base[1] + d, 7))), new_node((round(base[0] + d, 7), round(base[1], 7)))]
                wid = next_way
                next_way += 1
                out_ways[wid] = ("create", ring + [ring[0]], {})
                out_relations[next_relation] = ("create", [("w", wid, "outer")],
                                                {"type": "multipolygon", "leisure": "park", "name": f"Uusi puisto {next_relation}"})
                next_relation += 1

    if os.path.exists(args.out):
        os.remove(args.out)
    writer = osmium.SimpleWriter(args.out)
    for nid in sorted(out_nodes):
        action, loc, tags = out_nodes[nid]
        version = 1 if action == "create" else versions.get(("n", nid), 1) + 1
        if action == "delete":
            writer.add_node(osmium.osm.mutable.Node(id=nid, version=version, visible=False, timestamp=stamp))
        else:
            writer.add_node(osmium.osm.mutable.Node(id=nid, version=version, location=(loc[1], loc[0]), tags=tags, timestamp=stamp))
    for wid in sorted(out_ways):
        action, refs, tags = out_ways[wid]
        version = 1 if action == "create" else versions.get(("w", wid), 1) + 1
        if action == "delete":
            writer.add_way(osmium.osm.mutable.Way(id=wid, version=version, visible=False, timestamp=stamp))
        else:
            writer.add_way(osmium.osm.mutable.Way(id=wid, version=version, nodes=refs, tags=tags, timestamp=stamp))
    for rid in sorted(out_relations):
        action, members, tags = out_relations[rid]
        version = 1 if action == "create" else versions.get(("r", rid), 1) + 1
        if action == "delete":
            writer.add_relation(osmium.osm.mutable.Relation(id=rid, version=version, visible=False, timestamp=stamp))
        else:
            writer.add_relation(osmium.osm.mutable.Relation(id=rid, version=version, members=members, tags=tags, timestamp=stamp))
    writer.close()


if __name__ == "__main__":
    main()
