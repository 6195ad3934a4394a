#!/usr/bin/env python3
"""amap-sdk 0.1.0 (PyPI), unmodified but for its base URL, asks a live poi serve for input tips as a search box does.

    PYTHONPATH=DIR python3 scripts/compat/amap_sdk_check.py --base http://127.0.0.1:PORT

amap-sdk installs a module named `amap`, as amap-python-sdk does: scripts/setup.sh installs it into a directory of its
own (DIR), which only this script puts on its path. Each answer is compared with v1's suggestions for the same text.
Exit status 0 when every check passes.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from amap_check import FAILURES, expect, v1  # noqa: E402  (amap_check imports no `amap` at module level)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", required=True)
    args = parser.parse_args()
    import amap.client
    from amap import AmapClient

    if not hasattr(amap.client, "AmapClient"):
        print("amap-sdk is not the `amap` module on the path (amap-python-sdk is?)", file=sys.stderr)
        return 1
    amap.client.BASE_URL = args.base  # the module's one base URL
    client = AmapClient(api_key="any-key")
    bit = "116.316502,39.964381"  # BIT in GCJ-02
    for keywords in ("kdj", "kendeji", "ken de ji", "kend", "肯de"):
        tips = client.inputtips.suggest(keywords, location=bit)
        suggested = v1(args.base, "/v1/suggest", q=keywords, lat=39.9631, lon=116.3104, limit=10)["results"]
        expect(tips.get("status") == "1", f"{keywords}: {tips}")
        # The POIs in v1's order (a place's tip carries no id, as AMap's do not).
        pois = [t["id"] for t in tips.get("tips", []) if t["id"]]
        expect(pois == [r["id"] for r in suggested if r["kind"] == "poi"][: len(pois)], f"{keywords}: {tips} vs {suggested}")
        expect(tips.get("tips") and tips["tips"][0]["name"] == "肯德基(中关村店)", f"{keywords} finds 肯德基 first: {tips.get('tips', [])[:1]}")
    bus = client.inputtips.suggest("wgc", datatype="bus")
    expect([t["name"] for t in bus.get("tips", [])] == ["魏公村"], f"datatype=bus: {bus}")
    typed = client.inputtips.suggest("bjlg", type="141201", city="110108", citylimit=True)
    expect([t["name"] for t in typed.get("tips", [])] == ["北京理工大学"], f"type and citylimit: {typed}")
    try:
        client.inputtips.suggest("")
        expect(False, "an empty keyword is refused")
    except Exception as error:  # amap-sdk raises its AmapAPIError for status "0"
        expect(type(error).__name__ == "AmapAPIError", f"an empty keyword raises AmapAPIError, not {type(error).__name__}")
    if FAILURES:
        print(f"compat: {len(FAILURES)} amap-sdk failures", file=sys.stderr)
        return 1
    print("ok: amap-sdk (inputtips: full pinyin, initials, as typed, mixed, datatype, type, citylimit, errors)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
