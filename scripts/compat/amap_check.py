#!/usr/bin/env python3
"""AMap Web API clients from PyPI — amap-python-sdk 0.1.5 and amap-cli 0.1.4 — unmodified but for their base URL,
against a live poi serve holding the bundled Helsinki POIs and one Beijing POI.

    python3 scripts/compat/amap_check.py --base http://127.0.0.1:PORT --config-home DIR

Each answer is compared with the v1 API's (asked in GCJ-02 where AMap speaks GCJ-02), or with the product's own
datum conversion. Exit status 0 when every check passes.
"""
import argparse
import json
import os
import subprocess
import sys
import urllib.parse
import urllib.request

FAILURES = []


def expect(condition, message):
    if not condition:
        FAILURES.append(message)
        print(f"FAIL: {message}", file=sys.stderr)


def v1(base, path, **query):
    with urllib.request.urlopen(f"{base}{path}?{urllib.parse.urlencode(query)}") as response:
        return json.load(response)


def lnglat(text):
    lng, lat = text.split(",")
    return float(lng), float(lat)


def check_sdk(base):
    from amap import Amap, AmapAPIError

    Amap.BASE_URL = base  # the documented way to point the SDK elsewhere
    client = Amap("any-key")
    # v5 text: the page in AMap's shape, count = this page; the same records v1's search ranks first.
    text = client.place.text(keywords="kahvila", page_size=5)
    expected = v1(base, "/v1/search", q="kahvila", limit=5, coordsys="gcj02")["results"]
    expect(text["status"] == "1" and text["count"] == "5", f"v5 text envelope: {text.get('status')} {text.get('count')}")
    expect([p["id"] for p in text["pois"]] == [e["id"] for e in expected], "v5 text answers v1's ranking")
    expect(all(isinstance(p["location"], str) for p in text["pois"]), "location is a 'lng,lat' string")
    second = client.place.text(keywords="kahvila", page_size=5, page_num=2)
    page2 = v1(base, "/v1/search", q="kahvila", limit=5, offset=5)["results"]
    expect([p["id"] for p in second["pois"]] == [e["id"] for e in page2], "v5 page_num=2 is v1's offset 5")
    # v5 around, in GCJ-02: the Beijing POI, with its distance; the location matches v1 asked in GCJ-02.
    around = client.place.around(location=(116.3224, 39.9849), keywords="咖啡", radius=3000)
    pois = around["pois"]
    expect(len(pois) == 1 and pois[0]["id"] == "test-beijing", f"v5 around in Beijing: {pois}")
    if pois:
        record = v1(base, "/v1/pois/test-beijing", coordsys="gcj02")
        lng, lat = lnglat(pois[0]["location"])
        expect(abs(lng - record["lon"]) < 1e-6 and abs(lat - record["lat"]) < 1e-6, "around answers GCJ-02 locations")
        expect(pois[0]["pname"] == "北京市" and pois[0]["adname"] == "海淀区" and pois[0]["adcode"] == "110108", f"divisions: {pois[0]}")
        expect(pois[0]["typecode"] == "050500" and pois[0]["type"].startswith("餐饮服务;"), "type and typecode of a cafe")
        expect(pois[0]["distance"].isdigit(), "distance is a string of metres")
    # v5 polygon (closed ring) and detail.
    polygon = client.place.polygon((116.30, 39.97), (116.34, 39.97), (116.34, 40.0), (116.30, 40.0), (116.30, 39.97))
    expect([p["id"] for p in polygon["pois"]] == ["test-beijing"], f"v5 polygon: {polygon.get('pois')}")
    detail = client.place.detail("test-beijing")
    expect(detail["count"] == "1" and detail["pois"][0]["name"] == "星巴克咖啡(中关村店)", f"v5 detail: {detail}")
    # v3 geocode/geo and regeo.
    geo = client.georegeo.geo(address="北京市海淀区中关村南大街5号")
    expect(geo["geocodes"][0]["district"] == "海淀区" and geo["geocodes"][0]["adcode"] == "110108", f"geo: {geo}")
    gazetteer = v1(base, "/v1/geocode", q="北京市海淀区中关村南大街5号", limit=1, coordsys="gcj02")["results"][0]
    lng, lat = lnglat(geo["geocodes"][0]["location"])
    expect(abs(lng - gazetteer["lon"]) < 1e-6 and abs(lat - gazetteer["lat"]) < 1e-6, "geo location in GCJ-02, as v1 with coordsys=gcj02")
    regeo = client.georegeo.regeo(location=(116.3224, 39.9849), extensions="all")
    component = regeo["regeocode"]["addressComponent"]
    expect(component["province"] == "北京市" and component["district"] == "海淀区", f"regeo: {component}")
    expect([p["id"] for p in regeo["regeocode"]["pois"]] == ["test-beijing"], "regeo extensions=all lists the POIs around")
    # v3 convert: WGS-84 (gps) → GCJ-02, as v1's convert does it.
    converted = client.coordinate.convert([(116.3164, 39.9836)], coordsys="gps")
    reference = v1(base, "/v1/convert", **{"from": "wgs84", "to": "gcj02", "lat": 39.9836, "lon": 116.3164})["point"]
    lng, lat = lnglat(converted["locations"])
    expect(converted["info"] == "ok", "convert answers info 'ok' in lower case")
    expect(abs(lng - reference[0]) < 1e-9 and abs(lat - reference[1]) < 1e-9, f"convert: {converted} vs {reference}")
    # v3 input tips, as the search box calls them: pinyin initials near BIT find 肯德基, as v1's suggestions do.
    bit = (116.316502, 39.964381)  # BIT in GCJ-02
    for keywords in ("kdj", "kendeji", "肯de"):
        tips = client.inputtips.query(keywords, location=bit)
        suggested = v1(base, "/v1/suggest", q=keywords, lat=39.9631, lon=116.3104, limit=10)["results"]
        expect(tips["status"] == "1" and tips["count"] == str(len(tips["tips"])), f"inputtips {keywords} envelope: {tips}")
        expect([t["id"] for t in tips["tips"]][:2] == [r["id"] for r in suggested][:2], f"inputtips {keywords} answers v1's suggestions")
        expect(tips["tips"] and tips["tips"][0]["name"] == "肯德基(中关村店)", f"inputtips {keywords}: {tips['tips'][:1]}")
    typed = client.inputtips.query("bjlg", types="141201", city="北京", citylimit=True)
    expect([t["name"] for t in typed["tips"]] == ["北京理工大学"], f"inputtips types and citylimit: {typed}")
    first = typed["tips"][0] if typed["tips"] else {}
    record = v1(base, "/v1/pois/test-bit", coordsys="gcj02")
    if first.get("location"):
        lng, lat = lnglat(first["location"])
        expect(abs(lng - record["lon"]) < 1e-6 and abs(lat - record["lat"]) < 1e-6, "inputtips answers GCJ-02 locations")
    expect(first.get("district") == "北京市海淀区" and first.get("adcode") == "110108", f"inputtips district: {first}")
    # A business error is status "0", which the SDK raises as AmapAPIError.
    try:
        client.place.around(location=(200, 39.9), keywords="x")
        expect(False, "an invalid location raises AmapAPIError")
    except (AmapAPIError, ValueError):
        pass
    print("ok: amap-python-sdk (v5 text/around/polygon/detail, v3 geo/regeo/convert/inputtips, errors)")


def check_cli(base, config_home):
    environment = dict(os.environ, XDG_CONFIG_HOME=config_home)

    def cli(*arguments):
        result = subprocess.run(["amap-cli", *arguments], capture_output=True, text=True, env=environment, timeout=120)
        expect(result.returncode == 0, f"amap-cli {' '.join(arguments)} exited {result.returncode}: {result.stderr}")
        return json.loads(result.stdout) if result.returncode == 0 else {}

    cli("config", "set", "--key", "any-key", "--base-url", base)
    keyword = cli("search-poi", "--keyword", "kahvila", "--pageSize", "3")
    expected = v1(base, "/v1/search", q="kahvila", limit=3)["results"]
    expect([p["id"] for p in keyword.get("data", {}).get("pois", [])] == [e["id"] for e in expected], f"amap-cli keyword search: {keyword}")
    total = v1(base, "/v1/search", q="kahvila", limit=1)["total"]
    expect(keyword.get("data", {}).get("state", {}).get("resultCount") == total, "amap-cli reads v3 count as the total")
    around = cli("search-poi", "--keyword", "咖啡", "--center", "116.3224,39.9849", "--radius", "3000")
    pois = around.get("data", {}).get("pois", [])
    expect(len(pois) == 1 and pois[0]["id"] == "test-beijing" and pois[0]["distance"] == 10, f"amap-cli around: {pois}")
    geocode = cli("geocode", "--address", "北京市海淀区中关村南大街5号")
    expect(geocode.get("data", {}).get("geocode", {}).get("formattedAddress", "").startswith("北京市海淀区"), f"amap-cli geocode: {geocode}")
    print("ok: amap-cli (search-poi by keyword and around, geocode)")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", required=True)
    parser.add_argument("--config-home", required=True)
    args = parser.parse_args()
    check_sdk(args.base)
    check_cli(args.base, args.config_home)
    if FAILURES:
        print(f"compat: {len(FAILURES)} failures", file=sys.stderr)
        return 1
    print("compat: AMap client checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
