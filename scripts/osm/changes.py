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
       python3 scripts/osm/changes.py BASE.osm.pbf FEED_DIR --files 60 [--first 1] ...   (a replication feed: one file a
       minute from --time, each drawn against the extract as the files before leave it, and state.txt at the last)
"""
import argparse
import datetime
import os
import random
from array import array

import numpy
import osmium


class Extract:
    """The objects of an extract as the changes drawn so far leave them, so that a series of change files stays
    consistent (nothing modified after its delete).

    Sized for a country-shaped extract (≥ 50 M nodes, ~90 % of them untagged way nodes): the extract's nodes are kept in
    numpy arrays (id, fixed-point location, version and how many ways use it: 28 bytes a node), their tags only where
    a node has any; the nodes the feed creates or changes, and all ways and relations, in dicts. A draw is the same,
    seed for seed, as with every object in a dict."""

    def __init__(self, path):
        ids, ys, xs, versions = array("q"), array("i"), array("i"), array("i")
        self.node_tags = {}  # tags of every node that has any, as the feed leaves them
        self.ways, self.relations = {}, {}
        self.versions = {}  # ways', relations' and changed nodes' versions; the extract's nodes' are in an array
        for o in osmium.FileProcessor(path):
            if o.is_node():
                location = o.location
                ids.append(o.id)
                ys.append(location.y)
                xs.append(location.x)
                versions.append(o.version)
                if len(o.tags):
                    self.node_tags[o.id] = {t.k: t.v for t in o.tags}
            elif o.is_way():
                self.versions[("w", o.id)] = o.version
                self.ways[o.id] = (array("q", (n.ref for n in o.nodes)), {t.k: t.v for t in o.tags})
            elif o.is_relation():
                self.versions[("r", o.id)] = o.version
                self.relations[o.id] = ([(m.type, m.ref, m.role) for m in o.members], {t.k: t.v for t in o.tags})
        self.base_ids = numpy.frombuffer(ids, dtype=numpy.int64)
        order = numpy.argsort(self.base_ids, kind="stable")
        self.base_ids = self.base_ids[order]
        self.base_y = numpy.frombuffer(ys, dtype=numpy.int32)[order]
        self.base_x = numpy.frombuffer(xs, dtype=numpy.int32)[order]
        self.base_versions = numpy.frombuffer(versions, dtype=numpy.int32)[order]
        del ids, ys, xs, versions, order
        self.base_alive = numpy.ones(len(self.base_ids), dtype=bool)
        self.alive_ids = self.base_ids  # the extract's nodes not deleted, sorted (recomputed after a delete)
        self.changed_nodes = {}  # node id -> location, for the nodes the feed created or changed
        self.created_nodes = set()  # created by the feed and not deleted since
        self.base_uses = numpy.zeros(len(self.base_ids), dtype=numpy.int32)  # how many ways use each node
        self.created_uses = {}
        if self.ways:
            refs = numpy.concatenate([numpy.frombuffer(r, dtype=numpy.int64) for r, _ in self.ways.values()])
            at = numpy.searchsorted(self.base_ids, refs)
            found = at < len(self.base_ids)
            found[found] = self.base_ids[at[found]] == refs[found]
            self.base_uses = numpy.bincount(at[found], minlength=len(self.base_ids)).astype(numpy.int32)
        self.next_node = int(self.base_ids[-1]) + 1 if len(self.base_ids) else 1
        self.next_way = max(self.ways) + 1 if self.ways else 1
        self.next_relation = max(self.relations) + 1 if self.relations else 1

    def base_index(self, nid):
        """The node's index in the extract's arrays, or None if the extract did not have it."""
        i = int(numpy.searchsorted(self.base_ids, nid))
        return i if i < len(self.base_ids) and self.base_ids[i] == nid else None

    def node(self, nid):
        """The node's (location, tags) as the feed leaves it, or None if it has none."""
        if nid in self.changed_nodes:
            return self.changed_nodes[nid], self.node_tags.get(nid, {})
        i = self.base_index(nid)
        if i is None or not self.base_alive[i]:
            return None
        return (int(self.base_y[i]) / 1e7, int(self.base_x[i]) / 1e7), self.node_tags.get(nid, {})

    def node_ids(self):
        """The ids of the nodes as the feed leaves them, sorted (the feed's ids are past the extract's)."""
        return numpy.concatenate([self.alive_ids, numpy.array(sorted(self.created_nodes), dtype=numpy.int64)])

    def uses(self, nid):
        i = self.base_index(nid)
        return int(self.base_uses[i]) if i is not None else self.created_uses.get(nid, 0)

    def add_uses(self, refs, delta):
        for ref in refs:
            i = self.base_index(ref)
            if i is not None:
                self.base_uses[i] += delta
            else:
                self.created_uses[ref] = self.created_uses.get(ref, 0) + delta

    def tagged_free(self):
        """The nodes with tags that no way uses, sorted."""
        tagged = numpy.fromiter(self.node_tags.keys(), dtype=numpy.int64, count=len(self.node_tags))
        tagged.sort()
        in_base = numpy.zeros(len(tagged), dtype=bool)
        free = numpy.zeros(len(tagged), dtype=bool)
        if len(self.base_ids):
            at = numpy.minimum(numpy.searchsorted(self.base_ids, tagged), len(self.base_ids) - 1)
            in_base = self.base_ids[at] == tagged
            free = in_base & (self.base_uses[at] == 0)
        for k in numpy.flatnonzero(~in_base):
            free[k] = self.created_uses.get(int(tagged[k]), 0) == 0
        return [int(n) for n in tagged[free]]

    def version(self, kind, oid):
        """The object's version as the feed leaves it (1 if it never had one)."""
        if kind == "n" and (kind, oid) not in self.versions:
            i = self.base_index(oid)
            return int(self.base_versions[i]) if i is not None else 1
        return self.versions.get((kind, oid), 1)

    def draw(self, rnd, changes):
        """Draws one change file's objects: {id: (action, ...)} for nodes, ways and relations."""
        ways, relations = self.ways, self.relations
        out_nodes, out_ways, out_relations = {}, {}, {}

        def put_node(nid, loc, tags, create=False):
            out_nodes[nid] = ("create" if create else "modify", loc, tags)

        def new_node(loc, tags=None):
            nid = self.next_node
            self.next_node += 1
            put_node(nid, loc, tags or {}, create=True)
            return nid

        def jitter(loc, d=0.0003):
            return (round(loc[0] + rnd.uniform(-d, d), 7), round(loc[1] + rnd.uniform(-d, d), 7))

        node_ids = self.node_ids()
        tagged_free = self.tagged_free()
        way_ids = sorted(ways)
        member_ways = {m[1] for ms, _ in relations.values() for m in ms if m[0] == "w"}
        for _ in range(changes):
            kind = rnd.random()
            if kind < 0.25:  # move a node (a way's or a POI's)
                nid = int(rnd.choice(node_ids))
                if nid in out_nodes and out_nodes[nid][0] == "delete":
                    continue
                loc, tags = self.node(nid)
                put_node(nid, jitter(loc), dict(tags))
            elif kind < 0.37 and tagged_free:  # change a tagged node's tags
                nid = rnd.choice(tagged_free)
                if nid in out_nodes:
                    continue
                loc, tags = self.node(nid)
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
                out_nodes[nid] = ("delete", self.node(nid)[0], {})
            elif kind < 0.55:  # create a POI or a house
                loc = jitter(self.node(int(rnd.choice(node_ids)))[0], 0.002)
                if rnd.random() < 0.5:
                    new_node(loc, {"amenity": rnd.choice(["cafe", "restaurant", "pharmacy"]), "name": f"Uusi paikka {self.next_node}"})
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
                    if self.node(refs[i - 1]) is None:  # a way clipped at the extract's edge
                        continue
                    near = self.node(refs[i - 1])[0]
                    refs.insert(i, new_node(jitter(near, 0.0001)))
                out_ways[wid] = ("modify", refs, dict(tags))
            elif kind < 0.80:  # delete a way that no relation uses
                wid = rnd.choice(way_ids)
                if wid in out_ways or wid in member_ways:
                    continue
                out_ways[wid] = ("delete", [], {})
            elif kind < 0.88:  # create a building with an address, or a street over existing nodes
                base = self.node(int(rnd.choice(node_ids)))[0]
                if rnd.random() < 0.6:
                    d = 0.00004
                    ring = [new_node((round(base[0] - d, 7), round(base[1] - d, 7))), new_node((round(base[0] - d, 7), round(base[1] + d, 7))),
                            new_node((round(base[0] + d, 7), round(base[1] + d, 7)))]
                    out_ways[self.next_way] = ("create", ring + [ring[0]], {"building": "yes", "addr:street": "Uusikatu", "addr:housenumber": str(rnd.randint(1, 99))})
                else:
                    start = rnd.randrange(len(node_ids) - 3)
                    out_ways[self.next_way] = ("create", [int(n) for n in node_ids[start:start + 3]], {"highway": "service", "name": f"Uusi tie {self.next_way}"})
                self.next_way += 1
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
                    base = self.node(int(rnd.choice(node_ids)))[0]
                    d = 0.0005
                    ring = [new_node((round(base[0], 7), round(base[1], 7))), new_node((round(base[0], 7), round(base[1] + d, 7))),
                            new_node((round(base[0] + d, 7), round(base[1] + d, 7))), new_node((round(base[0] + d, 7), round(base[1], 7)))]
                    wid = self.next_way
                    self.next_way += 1
                    out_ways[wid] = ("create", ring + [ring[0]], {})
                    out_relations[self.next_relation] = ("create", [("w", wid, "outer")],
                                                    {"type": "multipolygon", "leisure": "park", "name": f"Uusi puisto {self.next_relation}"})
                    self.next_relation += 1

        return out_nodes, out_ways, out_relations

    def apply(self, change):
        """Leaves the objects as the change file does, each version one higher."""
        out_nodes, out_ways, out_relations = change
        deleted_base = False
        for nid, (action, loc, tags) in out_nodes.items():
            self.versions[("n", nid)] = 1 if action == "create" else self.version("n", nid) + 1
            if action == "delete":
                self.changed_nodes.pop(nid, None)
                self.node_tags.pop(nid, None)
                if nid in self.created_nodes:
                    self.created_nodes.discard(nid)
                else:
                    self.base_alive[self.base_index(nid)] = False
                    deleted_base = True
                continue
            if action == "create":
                self.created_nodes.add(nid)
            self.changed_nodes[nid] = loc
            if tags:
                self.node_tags[nid] = tags
            else:
                self.node_tags.pop(nid, None)
        if deleted_base:
            self.alive_ids = self.base_ids[self.base_alive]
        for wid, (action, refs, tags) in out_ways.items():
            self.versions[("w", wid)] = 1 if action == "create" else self.version("w", wid) + 1
            if wid in self.ways:
                self.add_uses(self.ways[wid][0], -1)
            if action == "delete":
                self.ways.pop(wid, None)
            else:
                self.ways[wid] = (array("q", refs), tags)
                self.add_uses(refs, 1)
        for rid, (action, members, tags) in out_relations.items():
            self.versions[("r", rid)] = 1 if action == "create" else self.version("r", rid) + 1
            if action == "delete":
                self.relations.pop(rid, None)
            else:
                self.relations[rid] = (members, tags)

    def write(self, change, path, stamp):
        """Writes a change file (nodes, then ways, then relations), with the versions `apply` gives them."""
        out_nodes, out_ways, out_relations = change
        if os.path.exists(path):
            os.remove(path)
        writer = osmium.SimpleWriter(path)

        def version(kind, oid, action):
            return 1 if action == "create" else self.version(kind, oid) + 1

        for nid in sorted(out_nodes):
            action, loc, tags = out_nodes[nid]
            if action == "delete":
                writer.add_node(osmium.osm.mutable.Node(id=nid, version=version("n", nid, action), visible=False, timestamp=stamp))
            else:
                writer.add_node(osmium.osm.mutable.Node(id=nid, version=version("n", nid, action), location=(loc[1], loc[0]), tags=tags,
                                                        timestamp=stamp))
        for wid in sorted(out_ways):
            action, refs, tags = out_ways[wid]
            if action == "delete":
                writer.add_way(osmium.osm.mutable.Way(id=wid, version=version("w", wid, action), visible=False, timestamp=stamp))
            else:
                writer.add_way(osmium.osm.mutable.Way(id=wid, version=version("w", wid, action), nodes=refs, tags=tags, timestamp=stamp))
        for rid in sorted(out_relations):
            action, members, tags = out_relations[rid]
            if action == "delete":
                writer.add_relation(osmium.osm.mutable.Relation(id=rid, version=version("r", rid, action), visible=False, timestamp=stamp))
            else:
                writer.add_relation(osmium.osm.mutable.Relation(id=rid, version=version("r", rid, action), members=members, tags=tags,
                                                                timestamp=stamp))
        writer.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("base")
    parser.add_argument("out", help="the change file, or with --files the feed's directory")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--changes", type=int, default=300)
    parser.add_argument("--time", default="2026-01-01T00:00:00Z")
    parser.add_argument("--files", type=int, default=0, help="write a replication feed of this many files (one a minute)")
    parser.add_argument("--first", type=int, default=1, help="the feed's first sequence number")
    args = parser.parse_args()
    rnd = random.Random(args.seed)
    start = datetime.datetime.fromisoformat(args.time.replace("Z", "+00:00"))
    extract = Extract(args.base)
    if not args.files:
        change = extract.draw(rnd, args.changes)
        extract.write(change, args.out, start + datetime.timedelta(seconds=args.seed))
        return
    for i in range(args.files):
        sequence = args.first + i
        stamp = start + datetime.timedelta(minutes=i + 1)
        digits = f"{sequence:09d}"
        directory = os.path.join(args.out, digits[0:3], digits[3:6])
        os.makedirs(directory, exist_ok=True)
        change = extract.draw(rnd, args.changes)
        extract.write(change, os.path.join(directory, digits[6:9] + ".osc.gz"), stamp)
        extract.apply(change)
        escaped = stamp.strftime("%Y-%m-%dT%H:%M:%SZ").replace(":", "\\:")
        state = f"sequenceNumber={sequence}\ntimestamp={escaped}\n"
        with open(os.path.join(directory, digits[6:9] + ".state.txt"), "w") as f:
            f.write(state)
    with open(os.path.join(args.out, "state.txt"), "w") as f:
        f.write(state)


if __name__ == "__main__":
    main()
