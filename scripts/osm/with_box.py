"""Copies an extract with another extract's header box: `osmium apply-changes` writes its output without the input's
bounding box, and the box is where an import closes the sea (docs/ARCHITECTURE.md, "Vector tiles"), so a fresh import
of a changed extract needs the box the original had to be compared with a database the change was applied to.

    python3 scripts/osm/with_box.py ORIGINAL.osm.pbf CHANGED.osm.pbf OUT.osm.pbf
"""
import sys

import osmium


def main():
    original, changed, target = sys.argv[1:4]
    source = osmium.io.Reader(original, osmium.osm.osm_entity_bits.NOTHING)
    box = source.header().box()
    source.close()
    header = osmium.io.Header()
    if box.valid():
        header.add_box(box)
    writer = osmium.SimpleWriter(target, header=header, overwrite=True)

    class Copy(osmium.SimpleHandler):
        def node(self, n):
            writer.add_node(n)

        def way(self, w):
            writer.add_way(w)

        def relation(self, r):
            writer.add_relation(r)

    Copy().apply_file(changed)
    writer.close()


if __name__ == "__main__":
    main()
