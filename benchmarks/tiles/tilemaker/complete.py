"""Writes an extract tilemaker can read: tilemaker 2.2 stops at the first way node an extract cut away (even with
--skip-integrity), so ways lose the nodes the file lacks (a closed way missing any is left out, as poi leaves out an
area it cannot close) and relations the members it lacks.

    python3 benchmarks/tiles/tilemaker/complete.py IN.osm.pbf OUT.osm.pbf
"""
import sys

import osmium


class Nodes(osmium.SimpleHandler):
    def __init__(self):
        super().__init__()
        self.ids = set()
        self.ways = set()

    def node(self, n):
        self.ids.add(n.id)

    def way(self, w):
        self.ways.add(w.id)


def main():
    source, target = sys.argv[1], sys.argv[2]
    seen = Nodes()
    seen.apply_file(source)
    writer = osmium.SimpleWriter(target, overwrite=True)
    kept_ways = set()

    class Copy(osmium.SimpleHandler):
        def node(self, n):
            writer.add_node(n)

        def way(self, w):
            refs = [n.ref for n in w.nodes]
            present = [r for r in refs if r in seen.ids]
            if len(present) == len(refs):
                writer.add_way(w)
            elif refs[0] != refs[-1] and len(present) >= 2:
                writer.add_way(w.replace(nodes=present))
            else:
                return
            kept_ways.add(w.id)

        def relation(self, r):
            members = [(m.type, m.ref, m.role) for m in r.members
                       if (m.type == "n" and m.ref in seen.ids) or (m.type == "w" and m.ref in kept_ways) or m.type == "r"]
            writer.add_relation(r.replace(members=members))

    Copy().apply_file(source)
    writer.close()


if __name__ == "__main__":
    main()
