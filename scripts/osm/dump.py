#!/usr/bin/env python3
"""Prints every object of an .osm.pbf file in a canonical text form, read with pyosmium (libosmium): the independent
reader that the Swift PBF reader's tests compare against (Tests/OSMTests).

One line per object, in file order:
    n ID LAT LON k=v\tk=v...        (coordinates with 7 decimals; tags in file order)
    w ID ref,ref,... k=v...
    r ID type:ref:role,... k=v...
Usage: python3 scripts/osm/dump.py FILE.osm.pbf > dump.txt
"""
import sys

import osmium


def tags(o):
    return "\t".join(f"{t.k}={t.v}" for t in o.tags)


def main():
    out = sys.stdout
    for o in osmium.FileProcessor(sys.argv[1]):
        if o.is_node():
            out.write(f"n {o.id} {o.location.lat:.7f} {o.location.lon:.7f} {tags(o)}\n")
        elif o.is_way():
            out.write(f"w {o.id} {','.join(str(n.ref) for n in o.nodes)} {tags(o)}\n")
        elif o.is_relation():
            members = ",".join(f"{m.type}:{m.ref}:{m.role}" for m in o.members)
            out.write(f"r {o.id} {members} {tags(o)}\n")


if __name__ == "__main__":
    main()
