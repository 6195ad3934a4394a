#!/usr/bin/env python3
"""geopy's Nominatim and Photon geocoders, unmodified but for their domain, against a live poi serve.

    python3 scripts/compat/geopy_check.py --base 127.0.0.1:PORT

Each check calls geopy as its users do and compares what geopy returns with the v1 API's own answer for the same
question (the oracle: the same engine through the native wire format). Exit status 0 when every check passes.
"""
import argparse
import json
import sys
import urllib.parse
import urllib.request

from geopy.geocoders import Nominatim, Photon

FAILURES = []


def expect(condition, message):
    if not condition:
        FAILURES.append(message)
        print(f"FAIL: {message}", file=sys.stderr)


def v1(base, path, **query):
    with urllib.request.urlopen(f"http://{base}{path}?{urllib.parse.urlencode(query)}") as response:
        return json.load(response)


def close(a, b, tolerance=1e-6):
    return abs(float(a) - float(b)) <= tolerance


def check_nominatim(base):
    geocoder = Nominatim(domain=f"{base}/nominatim", scheme="http", user_agent="poi-search-compat-test", timeout=30)
    # A city, exactly_one (limit=1), with the extras users ask for.
    berlin = geocoder.geocode("Berlin", addressdetails=True, extratags=True, language="en")
    expected = v1(base, "/v1/geocode", q="Berlin", limit=1)["results"][0]
    expect(berlin is not None, "Nominatim geocode('Berlin') found nothing")
    if berlin:
        expect(close(berlin.latitude, expected["lat"]) and close(berlin.longitude, expected["lon"]),
               f"Berlin at {berlin.latitude},{berlin.longitude}; v1 says {expected['lat']},{expected['lon']}")
        expect(berlin.raw["address"]["country_code"] == "de", f"Berlin's address: {berlin.raw.get('address')}")
        expect(isinstance(berlin.raw["lat"], str) and len(berlin.raw["lat"].split(".")[1]) == 7, "lat is a 7-decimal string")
        expect(len(berlin.raw["boundingbox"]) == 4 and all(isinstance(v, str) for v in berlin.raw["boundingbox"]), "boundingbox: 4 strings")
        expect("extratags" in berlin.raw, "extratags=True is a true flag")
    # Several answers, restricted to a country.
    springfields = geocoder.geocode("Springfield", exactly_one=False, limit=5, country_codes=["us"])
    expect(springfields and len(springfields) == 5, f"5 Springfields in the US: {springfields}")
    expect(all(s.raw["display_name"].endswith("United States") for s in springfields or []), "country_codes=us filters")
    # A POI name the gazetteer does not know falls back to the catalog.
    cafe = geocoder.geocode("Musiikkitalon kahvila")
    poi = v1(base, "/v1/search", q="Musiikkitalon kahvila", limit=1)["results"][0]
    expect(cafe is not None and close(cafe.latitude, poi["lat"]) and close(cafe.longitude, poi["lon"]),
           f"Nominatim geocode of a POI: {cafe and cafe.raw}")
    # A viewbox with bounded=1 keeps answers inside it.
    bounded = geocoder.geocode("Helsinki", exactly_one=False, viewbox=[(59.9, 24.5), (60.4, 25.3)], bounded=True)
    expect(bounded and all(59.9 <= b.latitude <= 60.4 and 24.5 <= b.longitude <= 25.3 for b in bounded), f"bounded viewbox: {bounded}")
    # Nothing found is None, not an error.
    expect(geocoder.geocode("Qqqzzx Xyzzyq Wqwq") is None, "an unknown name is None")
    # Reverse: the POI at a point, the city farther out, nothing at sea.
    station = geocoder.reverse((60.1700077, 24.9381846))
    nearest = v1(base, "/v1/nearby", lat=60.1700077, lon=24.9381846, limit=1)["results"][0]
    expect(station is not None and station.raw["name"] == nearest["name"], f"reverse at a POI: {station and station.raw}")
    town = geocoder.reverse((60.1699, 24.9384), zoom=10)
    expect(town is not None and town.raw["name"] == "Helsinki" and town.raw["address"]["country_code"] == "fi", f"reverse at zoom 10: {town and town.raw}")
    expect(geocoder.reverse((0.0, 0.0)) is None, "reverse in the open sea is None")
    print("ok: geopy Nominatim (geocode, limit, country_codes, viewbox/bounded, POI fallback, reverse, open sea)")


def check_photon(base):
    geocoder = Photon(domain=f"{base}/photon", scheme="http", timeout=30)
    berlin = geocoder.geocode("Berlin")
    expect(berlin is not None and berlin.raw["properties"]["countrycode"] == "DE", f"Photon geocode('Berlin'): {berlin and berlin.raw}")
    if berlin:
        expect("Berlin" in berlin.address and "Germany" in berlin.address, f"Photon address: {berlin.address}")
    # Location bias: with an origin in Helsinki, "kahvila" answers Helsinki cafes, nearest-favoured as v1 does.
    cafes = geocoder.geocode("kahvila", exactly_one=False, limit=5, location_bias=(60.1699, 24.9384))
    expected = v1(base, "/v1/search", q="kahvila", lat=60.1699, lon=24.9384, limit=5)["results"]
    expect(cafes and [c.raw["properties"]["name"] for c in cafes] == [e["name"] for e in expected],
           f"Photon kahvila with location bias: {[c.raw['properties']['name'] for c in cafes or []]} vs v1 {[e['name'] for e in expected]}")
    # osm_tag filters (key:value and negation), and a bbox.
    tagged = geocoder.geocode("Helsinki", exactly_one=False, limit=10, osm_tag=["place:city"])
    expect(tagged and all(t.raw["properties"]["osm_key"] == "place" for t in tagged), f"osm_tag=place:city: {tagged}")
    boxed = geocoder.geocode("kahvila", exactly_one=False, limit=10, bbox=[(60.16, 24.93), (60.18, 24.95)])
    expect(boxed and all(60.16 <= b.latitude <= 60.18 and 24.93 <= b.longitude <= 24.95 for b in boxed), f"bbox: {boxed}")
    # Reverse: the nearest POI within 1 km.
    here = geocoder.reverse((60.1700077, 24.9381846))
    nearest = v1(base, "/v1/nearby", lat=60.1700077, lon=24.9381846, limit=1)["results"][0]
    expect(here is not None and here.raw["properties"]["name"] == nearest["name"], f"Photon reverse: {here and here.raw}")
    expect(geocoder.geocode("Qqqzzx Xyzzyq Wqwq") is None, "Photon: an unknown name is None")
    print("ok: geopy Photon (geocode, location bias, osm_tag, bbox, reverse)")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", required=True, help="host:port of the server")
    args = parser.parse_args()
    check_nominatim(args.base)
    check_photon(args.base)
    if FAILURES:
        print(f"compat: {len(FAILURES)} failures", file=sys.stderr)
        return 1
    print("compat: geopy checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
