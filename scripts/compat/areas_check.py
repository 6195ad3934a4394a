"""The base tiles' water and buildings, against areas built by an independent implementation from the same extract,
on a live server (scripts/compat/run).

    python3 scripts/compat/areas_check.py --base http://HOST:PORT --pbf data/Helsinki.osm.pbf [--seed N] [--tiles 30] [--points 400]

- Areas: pyosmium (libosmium's multipolygon assembler) builds every closed way and multipolygon relation of the
  extract; those tagged as water (natural=water, waterway=riverbank, landuse=reservoir|basin) or a building
  (building=*, not "no") are the oracle. For base tiles drawn at random (seeded; the seed is printed) inside the
  extract at zooms 13 to 17, decoded by PyPI mapbox-vector-tile, the `water` and `buildings` layers hold exactly the
  oracle's areas whose part inside the tile and its 64-unit buffer is 2 square units or more (less than 0.5: left
  out; in between: not judged), buildings only from zoom 13, each the same shape within rounding (the symmetric
  difference at most 0.6 units times the outline's length, plus 2).
- The sea: points drawn at random in the extract's box are judged by the coastline itself — OpenStreetMap draws it
  with the land on its left, so a point is sea when the nearest coastline segment has it on its right (judged only
  where that segment is nearer than the box's edge, and the point not within a metre of it nor nearest to a vertex).
  Every judged point must be inside the tile's osm-sea polygons exactly when it is sea.
"""
import argparse
import math
import random
import sys
import urllib.error
import urllib.request

import mapbox_vector_tile
import osmium
import shapely
import shapely.wkb
from shapely.geometry import Point, Polygon, box as shapely_box

EXTENT = 4096
BUFFER = 64
BUILDINGS_FROM = 13


def area_kind(tags):
    building = tags.get("building")
    if building is not None and building != "no":
        return "buildings"
    if tags.get("natural") == "water" or tags.get("waterway") == "riverbank" or tags.get("landuse") in ("reservoir", "basin"):
        return "water"
    return None


class Areas(osmium.SimpleHandler):
    """Water and building areas as libosmium assembles them, and the coastline's stretches of nodes the file has."""

    def __init__(self):
        super().__init__()
        self.factory = osmium.geom.WKBFactory()
        self.areas = {}  # id -> (layer, shapely geometry in degrees)
        self.coast = []  # lists of (lon, lat)

    def area(self, a):
        kind = area_kind({t.k: t.v for t in a.tags})
        if not kind:
            return
        try:
            geometry = shapely.wkb.loads(self.factory.create_multipolygon(a), hex=True)
        except (osmium.InvalidLocationError, RuntimeError):
            return
        ident = ("osm-w%d" if a.from_way() else "osm-r%d") % a.orig_id()
        self.areas[ident] = (kind, geometry)

    def way(self, w):
        if w.tags.get("natural") != "coastline":
            return
        piece = []
        for node in w.nodes:
            if node.location.valid():
                piece.append((node.location.lon, node.location.lat))
            else:
                if len(piece) >= 2:
                    self.coast.append(piece)
                piece = []
        if len(piece) >= 2:
            self.coast.append(piece)


def world(lon, lat):
    return (lon + 180.0) / 360.0, 0.5 - math.log(math.tan(math.pi / 4 + math.radians(lat) / 2)) / (2 * math.pi)


def to_tile(geometry, z, x, y):
    n = 2 ** z

    def project(coordinates):
        out = []
        for lon, lat in coordinates:
            wx, wy = world(lon, lat)
            out.append(((wx * n - x) * EXTENT, (wy * n - y) * EXTENT))
        return out

    return shapely.transform(geometry, project)


def tile_of(lat, lon, z):
    wx, wy = world(lon, lat)
    return int(wx * 2 ** z), int(wy * 2 ** z)


def fetch(base, z, x, y, cache):
    key = (z, x, y)
    if key not in cache:
        try:
            with urllib.request.urlopen("%s/tiles/base/%d/%d/%d.mvt" % (base, z, x, y), timeout=120) as response:
                body = response.read() if response.status == 200 else b""
        except urllib.error.HTTPError as error:
            raise SystemExit("areas: tile %d/%d/%d answered %d: %s" % (z, x, y, error.code, error.read()[:300]))
        cache[key] = mapbox_vector_tile.decode(body, default_options={"y_coord_down": True}) if body else {}
    return cache[key]


def polygon_of(feature):
    geometry = feature["geometry"]
    polygons = [geometry["coordinates"]] if geometry["type"] == "Polygon" else geometry["coordinates"]
    return shapely.union_all([Polygon(p[0], p[1:]) for p in polygons]).buffer(0)


def check_tile(base, z, x, y, oracle, cache, failures):
    layers = fetch(base, z, x, y, cache)
    frame = shapely_box(-BUFFER, -BUFFER, EXTENT + BUFFER, EXTENT + BUFFER)
    where = "base %d/%d/%d" % (z, x, y)
    checked = 0
    for layer in ("water", "buildings"):
        expected, unjudged = {}, set()
        for ident, (kind, geometry) in oracle.items():
            if kind != layer or (layer == "buildings" and z < BUILDINGS_FROM):
                continue
            clipped = to_tile(geometry, z, x, y).intersection(frame)
            if clipped.area >= 2:
                expected[ident] = clipped
            elif clipped.area >= 0.5:
                unjudged.add(ident)
        got = {}
        for feature in layers.get(layer, {}).get("features", []):
            ident = feature["properties"]["id"]
            if ident.startswith("osm-sea-") or ident in unjudged:
                continue
            if feature["geometry"]["type"] not in ("Polygon", "MultiPolygon"):
                failures.append("%s: %s is a %s" % (where, ident, feature["geometry"]["type"]))
                continue
            got[ident] = polygon_of(feature)
        if set(got) != set(expected):
            failures.append("%s %s: %d areas, libosmium %d; missing %s, extra %s" % (
                where, layer, len(got), len(expected), sorted(set(expected) - set(got))[:4], sorted(set(got) - set(expected))[:4]))
        for ident in set(got) & set(expected):
            difference = got[ident].symmetric_difference(expected[ident]).area
            allowed = 0.6 * expected[ident].length + 2
            if difference > allowed:
                failures.append("%s: %s differs from libosmium's by %.1f square units (allowed %.1f)" % (where, ident, difference, allowed))
            checked += 1
    return checked


def nearest_side(point, pieces, scale):
    """(distance, is_water) by the nearest coastline segment whose nearest point is inside it; None when the nearest
    point of all is a vertex (the side there is not the segment's)."""
    px, py = point[0] * scale, point[1]
    best = None
    for piece in pieces:
        for (ax, ay), (bx, by) in zip(piece, piece[1:]):
            ax, bx = ax * scale, bx * scale
            dx, dy = bx - ax, by - ay
            length2 = dx * dx + dy * dy
            if length2 == 0:
                continue
            t = ((px - ax) * dx + (py - ay) * dy) / length2
            inside = 0 < t < 1
            t = min(1.0, max(0.0, t))
            qx, qy = ax + t * dx, ay + t * dy
            distance = math.hypot(px - qx, py - qy)
            if best is None or distance < best[0]:
                # Right of a -> b (x east, y north) is where the cross product is negative: the water.
                best = (distance, inside, dx * (py - ay) - dy * (px - ax) < 0)
    if best is None or not best[1]:
        return None
    return best[0], best[2]


def check_sea(base, pieces, bounds, rng, count, cache, failures):
    west, south, east, north = bounds
    scale = math.cos(math.radians((south + north) / 2))
    judged = sea = 0
    for _ in range(count):
        lon, lat = rng.uniform(west, east), rng.uniform(south, north)
        side = nearest_side((lon, lat), pieces, scale)
        edge = min(north - lat, lat - south, (east - lon) * scale, (lon - west) * scale)
        if side is None or side[0] >= edge or side[0] < 1e-5:
            continue
        z = 15
        x, y = tile_of(lat, lon, z)
        layers = fetch(base, z, x, y, cache)
        wx, wy = world(lon, lat)
        here = Point((wx * 2 ** z - x) * EXTENT, (wy * 2 ** z - y) * EXTENT)
        inside = any(polygon_of(f).contains(here) for f in layers.get("water", {}).get("features", [])
                     if f["properties"]["id"].startswith("osm-sea-"))
        judged += 1
        sea += side[1]
        if inside != side[1]:
            failures.append("sea: %.6f, %.6f is %s by the coastline but %s an osm-sea polygon of tile 15/%d/%d" % (
                lat, lon, "sea" if side[1] else "land", "inside" if inside else "outside", x, y))
    return judged, sea


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", required=True)
    parser.add_argument("--pbf", required=True)
    parser.add_argument("--seed", type=int, default=random.randrange(1 << 32))
    parser.add_argument("--tiles", type=int, default=30)
    parser.add_argument("--points", type=int, default=400)
    args = parser.parse_args()
    base = args.base.rstrip("/")
    print("areas: seed %d (replay with --seed %d)" % (args.seed, args.seed))
    rng = random.Random(args.seed)
    handler = Areas()
    handler.apply_file(args.pbf, locations=True)
    header = osmium.io.Reader(args.pbf, osmium.osm.osm_entity_bits.NOTHING).header().box()
    bounds = (header.bottom_left.lon, header.bottom_left.lat, header.top_right.lon, header.top_right.lat)
    print("areas: libosmium built %d water and building areas; %d coastline stretches" % (len(handler.areas), len(handler.coast)))
    failures = []
    cache = {}
    checked = 0
    for _ in range(args.tiles):
        z = rng.randint(13, 17)
        x, y = tile_of(rng.uniform(bounds[1], bounds[3]), rng.uniform(bounds[0], bounds[2]), z)
        checked += check_tile(base, z, x, y, handler.areas, cache, failures)
    judged, sea = check_sea(base, handler.coast, bounds, rng, args.points, cache, failures)
    if failures:
        print("areas: %d problems" % len(failures))
        for failure in failures[:40]:
            print("  " + failure)
        sys.exit(1)
    if checked < 100 or judged < 50 or sea == 0 or sea == judged:
        print("areas: too little judged: %d areas, %d points of which %d sea" % (checked, judged, sea))
        sys.exit(1)
    print("ok: areas: %d areas in %d tiles equal libosmium's; %d points judged by the coastline (%d sea) agree with osm-sea"
          % (checked, args.tiles, judged, sea))


if __name__ == "__main__":
    main()
