"""Vector tiles read by an independent decoder (PyPI mapbox-vector-tile) and compared, feature for feature, with
/v1/within over the tile's bounds, on a live server (scripts/compat/run).

    python3 scripts/compat/tiles_check.py --base http://HOST:PORT [--seed N] [--tiles 40]

For tiles drawn at random (seeded; the seed is printed) around the server's records at zooms 6 to 18:
- an unclustered tile (cluster=0) holds exactly the records /v1/within returns for the tile's box grown by the
  64-unit buffer, each at its Web Mercator position (computed here) rounded to a tile unit, with its id, name and
  category (POIs) or name, mapString and mediaURL (pins);
- a clustered tile's counts add up to /v1/within over the tile's own box, per 32 x 32 grid cell;
- with q or category, the same against /v1/within with the same filter;
- a base tile holds the street lines /v1/streets returns for its buffered box, each vertex a vertex of the street
  in tile units, with its id and name (its water and buildings are areas_check.py's: a tile with those and no
  street answers 200 without a `base` layer);
- gzip is a gzip member equal to the plain tile; If-None-Match answers 304; an empty tile is 204; a tile outside the
  pyramid a problem+json naming z, x or y; TileJSON has what the TileJSON 3.0.0 specification requires, and its
  tile URL answers.
"""
import argparse
import gzip
import json
import math
import random
import sys
import urllib.error
import urllib.parse
import urllib.request

import mapbox_vector_tile

EXTENT = 4096
BUFFER = 64
GRID = 32


def get(base, path, query=None, headers=None):
    url = base + path + ("?" + urllib.parse.urlencode(query) if query else "")
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def world(lat, lon):
    """Web Mercator world coordinates in [0, 1] (spherical, EPSG:3857 scaled)."""
    x = (lon + 180.0) / 360.0
    y = 0.5 - math.log(math.tan(math.pi / 4 + math.radians(lat) / 2)) / (2 * math.pi)
    return x, y


def lat_of(wy):
    return math.degrees(math.atan(math.sinh(math.pi * (1 - 2 * wy))))


def bounds(z, x, y, buffer):
    n = 2 ** z
    grow = buffer / EXTENT
    west = max(-180.0, ((x - grow) / n) * 360 - 180)
    east = min(180.0, ((x + 1 + grow) / n) * 360 - 180)
    north = lat_of((y - grow) / n)
    south = lat_of((y + 1 + grow) / n)
    return west, south, east, north


def tile_units(lat, lon, z, x, y):
    wx, wy = world(lat, lon)
    n = 2 ** z
    return (wx * n - x) * EXTENT, (wy * n - y) * EXTENT


def within(base, box, kind, filters):
    """Every record /v1/within returns for the box, paged."""
    records = []
    cursor = None
    while True:
        query = {"bbox": ",".join(repr(v) for v in box), "kind": kind, "limit": "100"}
        query.update(filters)
        if cursor:
            query["cursor"] = cursor
        status, _, body = get(base, "/v1/within", query)
        if status != 200:
            raise SystemExit("tiles: /v1/within %s answered %d: %s" % (query, status, body[:300]))
        page = json.loads(body)
        records += page["results"]
        cursor = page.get("next")
        if not cursor:
            return records


def decode(body):
    layers = mapbox_vector_tile.decode(body, default_options={"y_coord_down": True})
    return layers


def expected_properties(record, layer):
    if layer == "pois":
        return {"id": record["id"], "name": record["name"], "category": record["category"]}
    name = " ".join(part for part in (record.get("firstName", ""), record.get("lastName", "")) if part)
    out = {"id": record["id"], "name": name}
    if record.get("mapString"):
        out["mapString"] = record["mapString"]
    if record.get("mediaURL"):
        out["mediaURL"] = record["mediaURL"]
    return out


def check_points(base, layer, z, x, y, filters, failures):
    kind = "poi" if layer == "pois" else "pin"
    query = dict(filters, cluster="0")
    status, headers, body = get(base, "/tiles/%s/%d/%d/%d.mvt" % (layer, z, x, y), query)
    records = within(base, bounds(z, x, y, BUFFER), kind, filters)
    where = "%s %d/%d/%d %s" % (layer, z, x, y, filters)
    if not records:
        if status != 204:
            failures.append("%s: /v1/within has nothing but the tile answered %d" % (where, status))
        return 0
    if status != 200:
        failures.append("%s: answered %d: %s" % (where, status, body[:200]))
        return 0
    decoded = decode(body)
    if list(decoded) != [layer]:
        failures.append("%s: layers %s" % (where, list(decoded)))
        return 0
    tile = decoded[layer]
    if tile["extent"] != EXTENT or tile.get("version") != 2:
        failures.append("%s: extent %s version %s" % (where, tile["extent"], tile.get("version")))
    features = {f["properties"]["id"]: f for f in tile["features"]}
    if len(features) != len(tile["features"]):
        failures.append("%s: a record twice" % where)
    expected = {r["id"]: r for r in records}
    if set(features) != set(expected):
        missing = sorted(set(expected) - set(features))[:5]
        extra = sorted(set(features) - set(expected))[:5]
        failures.append("%s: %d features, /v1/within %d; missing %s, extra %s" % (where, len(features), len(expected), missing, extra))
    for rid in set(features) & set(expected):
        feature, record = features[rid], expected[rid]
        if feature["geometry"]["type"] != "Point":
            failures.append("%s: %s is a %s" % (where, rid, feature["geometry"]["type"]))
            continue
        px, py = tile_units(record["lat"], record["lon"], z, x, y)
        gx, gy = feature["geometry"]["coordinates"]
        if abs(gx - px) > 0.5 + 1e-6 or abs(gy - py) > 0.5 + 1e-6:
            failures.append("%s: %s at (%d, %d), expected (%.2f, %.2f)" % (where, rid, gx, gy, px, py))
        if feature["properties"] != expected_properties(record, layer):
            failures.append("%s: %s has %s, expected %s" % (where, rid, feature["properties"], expected_properties(record, layer)))
    return len(features)


def check_clusters(base, layer, z, x, y, filters, failures):
    kind = "poi" if layer == "pois" else "pin"
    status, _, body = get(base, "/tiles/%s/%d/%d/%d.mvt" % (layer, z, x, y), dict(filters, cluster="25"))
    records = within(base, bounds(z, x, y, 0), kind, filters)
    where = "%s %d/%d/%d clustered %s" % (layer, z, x, y, filters)
    cells = {}
    for r in records:
        px, py = tile_units(r["lat"], r["lon"], z, x, y)
        column = min(GRID - 1, max(0, int(round(px)) * GRID // EXTENT))
        row = min(GRID - 1, max(0, int(round(py)) * GRID // EXTENT))
        cells[(column, row)] = cells.get((column, row), 0) + 1
    if not records:
        if status != 204:
            failures.append("%s: /v1/within has nothing but the tile answered %d" % (where, status))
        return 0
    if status != 200:
        failures.append("%s: answered %d" % (where, status))
        return 0
    features = decode(body)[layer]["features"]
    got = {}
    for f in features:
        gx, gy = f["geometry"]["coordinates"]
        cell = (min(GRID - 1, gx * GRID // EXTENT), min(GRID - 1, gy * GRID // EXTENT))
        count = f["properties"]["count"]
        got[cell] = got.get(cell, 0) + count
        if (count == 1) != ("id" in f["properties"]):
            failures.append("%s: a cluster of %d with properties %s" % (where, count, f["properties"]))
    if got != cells:
        diff = {c: (got.get(c), cells.get(c)) for c in set(got) | set(cells) if got.get(c) != cells.get(c)}
        failures.append("%s: cells differ from /v1/within (tile, within): %s" % (where, dict(list(diff.items())[:5])))
    return sum(got.values())


def check_base(base, z, x, y, failures):
    """A base tile holds the street lines /v1/streets returns for its buffered box, every vertex in tile units with
    consecutive repeats dropped, lines of one vertex left out."""
    status, _, body = get(base, "/tiles/base/%d/%d/%d.mvt" % (z, x, y))
    box = bounds(z, x, y, BUFFER)
    s_status, _, s_body = get(base, "/v1/streets", {"bbox": ",".join(repr(v) for v in box), "limit": "5000"})
    where = "base %d/%d/%d" % (z, x, y)
    if s_status != 200:
        failures.append("%s: /v1/streets answered %d" % (where, s_status))
        return 0
    expected = {}
    unjudged = set()
    for feature in json.loads(s_body)["features"]:
        coords = feature["geometry"]["coordinates"]
        vertices = []
        for lon, lat in coords:
            px, py = tile_units(lat, lon, z, x, y)
            vertices.append((px, py))
        # /v1/streets rounds to 1e-7 degrees (0.15 units at zoom 17): a line spanning less than 2 units may round to
        # one vertex on one side and two on the other, and is not judged; one under 0.4 units must be left out.
        span = max(max(abs(px - vertices[0][0]), abs(py - vertices[0][1])) for px, py in vertices)
        if span >= 2:
            expected[feature["id"]] = (vertices, feature["properties"].get("name"))
        elif span >= 0.4:
            unjudged.add(feature["id"])
    if not expected:
        # No street: an empty tile (204), or one with only water and buildings (those are areas_check.py's).
        streets = decode(body).get("base", {}).get("features", []) if status == 200 else []
        if not unjudged and (status not in (200, 204) or streets):
            failures.append("%s: no street but the tile answered %d with %d lines" % (where, status, len(streets)))
        return 0
    if status != 200:
        failures.append("%s: answered %d" % (where, status))
        return 0
    layer = decode(body)["base"]
    got = {f["properties"]["id"]: f for f in layer["features"] if f["properties"]["id"] not in unjudged}
    if set(got) != set(expected):
        failures.append("%s: lines %d, /v1/streets %d; missing %s extra %s" % (where, len(got), len(expected),
                        sorted(set(expected) - set(got))[:3], sorted(set(got) - set(expected))[:3]))
    for lid in set(got) & set(expected):
        feature = got[lid]
        vertices, name = expected[lid]
        if feature["geometry"]["type"] != "LineString":
            failures.append("%s: %s is a %s" % (where, lid, feature["geometry"]["type"]))
            continue
        coords = feature["geometry"]["coordinates"]
        # Every vertex drawn is a vertex of the street, within half a unit, in order.
        j = 0
        for gx, gy in coords:
            while j < len(vertices) and (abs(vertices[j][0] - gx) > 0.7 or abs(vertices[j][1] - gy) > 0.7):
                j += 1
            if j == len(vertices):
                failures.append("%s: %s has a vertex (%d, %d) not on the street in order" % (where, lid, gx, gy))
                break
        if feature["properties"].get("name") != name:
            failures.append("%s: %s is named %r, /v1/streets %r" % (where, lid, feature["properties"].get("name"), name))
    return len(got)


def tile_of(lat, lon, z):
    wx, wy = world(lat, lon)
    n = 2 ** z
    return min(n - 1, max(0, int(wx * n))), min(n - 1, max(0, int(wy * n)))


def check_http(base, sample, failures):
    z, x, y = sample
    path = "/tiles/pois/%d/%d/%d.mvt" % (z, x, y)
    status, plain_headers, plain = get(base, path)
    status_gz, headers, packed = get(base, path, headers={"Accept-Encoding": "gzip"})
    if headers.get("Content-Encoding") != "gzip" or packed[:2] != b"\x1f\x8b" or gzip.decompress(packed) != plain:
        failures.append("gzip: %s answered %s with Content-Encoding %s" % (path, status_gz, headers.get("Content-Encoding")))
    tag = plain_headers.get("ETag")
    status, _, body = get(base, path, headers={"If-None-Match": tag or '"none"'})
    if not tag or status != 304 or body:
        failures.append("ETag: %s with If-None-Match %s answered %d" % (path, tag, status))
    status, _, body = get(base, "/tiles/pois/14/0/8191.mvt")
    if status != 204 or body:
        failures.append("an empty tile answered %d with %d bytes" % (status, len(body)))
    for bad, parameter in (("/tiles/pois/25/0/0.mvt", "z"), ("/tiles/pois/2/4/0.mvt", "x"), ("/tiles/pois/2/0/x.mvt", "y")):
        status, headers, body = get(base, bad)
        detail = json.loads(body).get("detail", "") if status == 400 else ""
        if status != 400 or not headers.get("Content-Type", "").startswith("application/problem+json") or not detail.startswith(parameter + " "):
            failures.append("%s answered %d %s" % (bad, status, body[:200]))
    for layer in ("pois", "pins"):
        status, _, body = get(base, "/tiles/%s.json" % layer, {"q": "kahvila"} if layer == "pois" else None)
        document = json.loads(body)
        for field, kind in (("tilejson", str), ("tiles", list), ("vector_layers", list)):
            if not isinstance(document.get(field), kind):
                failures.append("TileJSON %s: %s is %r" % (layer, field, document.get(field)))
        if not all(isinstance(l.get("id"), str) and isinstance(l.get("fields"), dict) for l in document.get("vector_layers", [])):
            failures.append("TileJSON %s: a vector layer without id or fields" % layer)
        url = document["tiles"][0].replace("{z}", str(z)).replace("{x}", str(x)).replace("{y}", str(y))
        parsed = urllib.parse.urlsplit(url)
        status, _, _ = get(base, parsed.path + ("?" + parsed.query if parsed.query else ""))
        if status not in (200, 204):
            failures.append("TileJSON %s: its tile URL %s answered %d" % (layer, url, status))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", required=True)
    parser.add_argument("--seed", type=int, default=random.randrange(1 << 32))
    parser.add_argument("--tiles", type=int, default=40)
    parser.add_argument("--pins", type=int, default=300, help="pins to place first, around the POIs")
    args = parser.parse_args()
    base = args.base.rstrip("/")
    print("tiles: seed %d (replay with --seed %d)" % (args.seed, args.seed))
    rng = random.Random(args.seed)
    failures = []
    checked = 0
    # Pins around the POIs (the server is open for writes on loopback), some with mapString and mediaURL empty.
    status, _, body = get(base, "/tiles/pois.json")
    west, south, east, north = json.loads(body)["bounds"]
    pois = within(base, (west, south, east, north), "poi", {})
    for i in range(args.pins):
        near = rng.choice(pois)
        pin = {"uniqueKey": "tiles-%d" % i, "firstName": rng.choice(("Aino", "Eero", "", "Li")), "lastName": rng.choice(("Virtanen", "Wang", "")),
               "mapString": rng.choice(("Helsinki", "", "Kallio, Helsinki")), "mediaURL": rng.choice(("", "https://example.org/%d" % i)),
               "lat": near["lat"] + rng.uniform(-0.01, 0.01), "lon": near["lon"] + rng.uniform(-0.01, 0.01)}
        request = urllib.request.Request(base + "/v1/pins", data=json.dumps(pin).encode(), method="POST", headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as response:
            if response.status != 201:
                raise SystemExit("tiles: POST /v1/pins answered %d" % response.status)
    busiest = tile_of(pois[0]["lat"], pois[0]["lon"], 15)
    # Tiles are drawn around the records themselves.
    for layer, kind in (("pois", "poi"), ("pins", "pin")):
        status, _, body = get(base, "/tiles/%s.json" % layer)
        sample = pois if layer == "pois" else within(base, tuple(json.loads(body)["bounds"]), kind, {})
        if not sample:
            failures.append("%s: no records to draw tiles around" % layer)
            continue
        for i in range(args.tiles):
            record = rng.choice(sample)
            z = rng.randint(6, 18)
            x, y = tile_of(record["lat"], record["lon"], z)
            x = min(2 ** z - 1, max(0, x + rng.choice((-1, 0, 0, 1))))
            filters = {}
            if layer == "pois" and i % 4 == 1:
                filters["category"] = record["category"].split(".")[0]
            if layer == "pois" and i % 4 == 2:
                filters["q"] = rng.choice(("kahvila", "ravintola", "bar", "museo", "pizza"))
            if z >= 12:
                checked += check_points(base, layer, z, x, y, filters, failures)
            checked += check_clusters(base, layer, z, x, y, filters, failures)
    check_http(base, (15,) + busiest, failures)
    # The base layer around the POIs (streets at street and city scale).
    for i in range(args.tiles // 2):
        record = rng.choice(pois)
        z = rng.randint(12, 17)
        x, y = tile_of(record["lat"], record["lon"], z)
        checked += check_base(base, z, x, y, failures)
    if failures:
        print("tiles: %d problems" % len(failures))
        for failure in failures[:40]:
            print("  " + failure)
        sys.exit(1)
    if checked < 200:
        print("tiles: only %d features checked; the drawn tiles were nearly empty" % checked)
        sys.exit(1)
    print("tiles: %d features in %d tiles matched /v1/within and /v1/streets, gzip, ETag, 204, problems and TileJSON as specified"
          % (checked, 4 * args.tiles + args.tiles // 2))


if __name__ == "__main__":
    main()
