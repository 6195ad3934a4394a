#!/usr/bin/env python3
"""The map page in a real headless Chromium, driven over the DevTools protocol, checked against the API.

    python3 scripts/browser/check.py --base http://127.0.0.1:PORT --screenshots DIR [--chromium chromium]

Each check loads the page as a user would (URL state, typing, keys, mouse clicks), waits for what it awaits
(never a fixed sleep), and compares what the page renders (`data-poi-id` of list items and markers) with what the
HTTP API answers for the same query. Screenshots of each state are saved for a person to look at. Any JavaScript
exception on the page fails the run. Exit status 0 when every check passes.
"""
import argparse
import base64
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

import websocket

WAIT_SECONDS = 60  # an upper bound for one awaited condition on a cold, shared 2-core machine


class Failure(Exception):
    pass


class Browser:
    """One headless Chromium and one page, over the DevTools protocol (JSON over a WebSocket)."""

    def __init__(self, executable):
        self.profile = tempfile.mkdtemp(prefix="poi-chromium-")
        self.process = subprocess.Popen(
            [executable, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
             "--hide-scrollbars", "--window-size=1280,800", f"--user-data-dir={self.profile}",
             "--remote-debugging-port=0", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            # Its own process group, so that close() ends its renderer and utility processes too: they wrote into
            # the profile after the main process was gone, and left the directory behind.
            start_new_session=True)
        port = None
        self.stderr = []
        deadline = time.monotonic() + WAIT_SECONDS
        while port is None:
            line = self.process.stderr.readline()
            if not line:
                raise Failure("chromium exited before it listened for DevTools:\n" + "".join(self.stderr))
            self.stderr.append(line)
            match = re.search(r"DevTools listening on (ws://[^:]+:(\d+)/\S*)", line)
            if match:
                self.browser_endpoint = match.group(1)
                port = int(match.group(2))
            elif time.monotonic() > deadline:
                raise Failure("chromium did not print its DevTools address:\n" + "".join(self.stderr))
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list"))
        page = next(t for t in targets if t["type"] == "page")
        self.socket = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=WAIT_SECONDS, suppress_origin=True)
        self.next_id = 0
        self.exceptions = []
        self.console_errors = []
        for domain in ["Page", "Runtime", "Log"]:
            self.call(f"{domain}.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=1280, height=800, deviceScaleFactor=1, mobile=False)

    def close(self):
        try:
            self.socket.close()
            # Chromium's own shutdown (Browser.close, on the browser's endpoint: a page's cannot) removes the
            # singleton directory it makes in /tmp; killed, it leaves it behind.
            browser = websocket.create_connection(self.browser_endpoint, timeout=WAIT_SECONDS, suppress_origin=True)
            try:
                browser.send(json.dumps({"id": 1, "method": "Browser.close"}))
                browser.recv()
            finally:
                browser.close()
            self.process.wait(timeout=WAIT_SECONDS)
        except (OSError, websocket.WebSocketException, subprocess.TimeoutExpired):
            pass  # the kill below ends it
        finally:
            # Whatever of its process group is left (all of it, if the close above failed).
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.process.wait()
            shutil.rmtree(self.profile, ignore_errors=True)

    def _event(self, message):
        if message.get("method") == "Runtime.exceptionThrown":
            details = message["params"]["exceptionDetails"]
            self.exceptions.append(details.get("exception", {}).get("description") or details.get("text"))
        elif message.get("method") == "Log.entryAdded" and message["params"]["entry"]["level"] == "error":
            entry = message["params"]["entry"]
            self.console_errors.append(f'{entry.get("url", "")}: {entry["text"]}')

    def call(self, method, **params):
        self.next_id += 1
        ident = self.next_id
        self.socket.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("id") == ident:
                if "error" in message:
                    raise Failure(f"{method}: {message['error']}")
                return message.get("result", {})
            self._event(message)

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise Failure(f"evaluating {expression[:80]}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, what, expression):
        """Polls `expression` until it is truthy; fails naming `what` after WAIT_SECONDS."""
        deadline = time.monotonic() + WAIT_SECONDS
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if self.exceptions:
                raise Failure(f"while waiting for {what}, the page threw: {self.exceptions}")
            if time.monotonic() > deadline:
                raise Failure(f"timed out after {WAIT_SECONDS} s waiting for {what} ({expression})")
            time.sleep(0.05)

    def open(self, url):
        self.call("Page.navigate", url=url)
        self.wait_for(f"{url} to be ready", "document.readyState === 'complete' && document.body && document.body.dataset.ready === 'true'")

    def click_element(self, selector):
        box = self.evaluate(f"""(() => {{ const r = document.querySelector({json.dumps(selector)}).getBoundingClientRect();
            return [r.left + r.width / 2, r.top + r.height / 2]; }})()""")
        self.click_at(*box)

    def click_at(self, x, y):
        for kind in ["mouseMoved", "mousePressed", "mouseReleased"]:
            self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    def type_text(self, selector, text):
        self.click_element(selector)
        self.call("Input.insertText", text=text)

    def key(self, key, code, key_code):
        for kind in ["rawKeyDown", "keyUp"]:
            self.call("Input.dispatchKeyEvent", type=kind, key=key, code=code, windowsVirtualKeyCode=key_code)

    def screenshot(self, path):
        data = self.call("Page.captureScreenshot", format="png")["data"]
        with open(path, "wb") as out:
            out.write(base64.b64decode(data))
        print(f"  screenshot: {path}")


def api(base, path, **query):
    url = f"{base}{path}?{urllib.parse.urlencode({k: v for k, v in query.items() if v is not None})}"
    with urllib.request.urlopen(url) as response:
        return json.load(response)


def expect(condition, message):
    if not condition:
        raise Failure(message)


RESULT_IDS = "Array.from(document.querySelectorAll('#results [data-poi-id]')).map(e => e.dataset.poiId)"
MARKER_IDS = "Array.from(document.querySelectorAll('#map .result-marker[data-poi-id]')).map(e => e.dataset.poiId)"


def check_search_from_url(browser, base, shots):
    browser.open(f"{base}/?q=kahvila")
    ids = browser.evaluate(RESULT_IDS)
    expected = [r["id"] for r in api(base, "/v1/search", q="kahvila", limit=20)["results"]]
    expect(len(expected) == 20, f"the API found {len(expected)} kahvila records; the bundled data has more")
    expect(ids == expected, f"rendered results {ids} differ from the API's {expected}")
    expect(sorted(browser.evaluate(MARKER_IDS)) == sorted(expected), "every result has a marker carrying its data-poi-id")
    status = browser.evaluate("document.getElementById('status').textContent")
    total = api(base, "/v1/search", q="kahvila", limit=1)["total"]
    expect(f"{total} matches" in status, f"the status names the total {total}: {status!r}")
    href = browser.evaluate("location.href")
    query = urllib.parse.parse_qs(urllib.parse.urlparse(href).query)
    expect(query.get("q") == ["kahvila"] and "lat" in query and "lon" in query and "z" in query, f"the view is in the URL: {href}")
    browser.screenshot(os.path.join(shots, "search-kahvila.png"))
    # The shared link opens the same view, and the search favours its centre.
    browser.open(href)
    center = browser.evaluate("(() => { const c = poi.map.getCenter(); return [c.lat, c.lng, poi.map.getZoom()]; })()")
    expect(abs(center[0] - float(query["lat"][0])) < 1e-4 and abs(center[1] - float(query["lon"][0])) < 1e-4
           and center[2] == int(query["z"][0]), f"the shared link {href} reopens at {center}")
    expected = [r["id"] for r in api(base, "/v1/search", q="kahvila", limit=20, lat=f"{center[0]:.6f}",
                                     lon=f"{center[1]:.6f}")["results"]]
    ids = browser.evaluate(RESULT_IDS)
    expect(ids == expected, f"the shared link renders {ids}; the API with its centre as origin answers {expected}")
    print("ok: search from the URL, markers, total, shareable state")


def check_autocomplete(browser, base, shots):
    browser.open(f"{base}/?lat=60.1699&lon=24.9384&z=15")
    browser.type_text("#q", "rautatie")
    browser.wait_for("autocomplete suggestions", "!document.getElementById('suggestions').hidden && "
                     "document.querySelectorAll('#suggestions [data-poi-id]').length > 0")
    suggested = browser.evaluate("Array.from(document.querySelectorAll('#suggestions [data-poi-id]')).map(e => e.dataset.poiId)")
    center = browser.evaluate("(() => { const c = poi.map.getCenter(); return [c.lat, c.lng]; })()")
    answer = api(base, "/v1/suggest", q="rautatie", limit=8, lat=f"{center[0]:.6f}", lon=f"{center[1]:.6f}")["results"]
    expected = [r["id"] for r in answer if r["kind"] == "poi"]
    expect(suggested == expected, f"suggestions {suggested} differ from the API's suggestions {expected}")
    browser.screenshot(os.path.join(shots, "autocomplete.png"))
    # Down to the first POI suggested (a street or place may come before it), then Enter.
    first_poi = next(i for i, r in enumerate(answer) if r["kind"] == "poi")
    for _ in range(first_poi + 1):
        browser.key("ArrowDown", "ArrowDown", 40)
    browser.key("Enter", "Enter", 13)
    browser.wait_for("the chosen suggestion as the only result", f"JSON.stringify({RESULT_IDS}) === {json.dumps(json.dumps([expected[0]]))}")
    expect(browser.evaluate("document.getElementById('suggestions').hidden"), "the suggestions close after a choice")
    print("ok: autocomplete (typed, arrow key, enter) matches the API's suggestions")


def check_pinyin_and_address_suggestions(browser, base, shots):
    # Near BIT in Beijing, the initials of 肯德基 suggest it first.
    browser.open(f"{base}/?lat=39.9631&lon=116.3104&z=15")
    browser.type_text("#q", "kdj")
    browser.wait_for("suggestions for kdj", "!document.getElementById('suggestions').hidden && "
                     "document.querySelectorAll('#suggestions [data-poi-id]').length > 0")
    first = browser.evaluate("document.querySelector('#suggestions li').dataset.poiId")
    name = browser.evaluate("document.querySelector('#suggestions li div').textContent")
    expect(first == "test-kfc" and name == "肯德基(中关村店)", f"kdj suggests {first} {name} first, not 肯德基(中关村店)")
    browser.screenshot(os.path.join(shots, "suggest-kdj.png"))
    # A house number begun on a Helsinki street: its houses, as typed.
    browser.open(f"{base}/?lat=60.1699&lon=24.9384&z=15")
    browser.type_text("#q", "Mannerheimintie 1")
    browser.wait_for("house suggestions", "document.querySelectorAll('#suggestions [data-kind=address]').length > 0")
    shown = browser.evaluate("Array.from(document.querySelectorAll('#suggestions [data-kind=address] div:first-child')).map(e => e.textContent)")
    expected = [r["name"] for r in api(base, "/v1/suggest", q="Mannerheimintie 1", limit=8, lat="60.169900", lon="24.938400")["results"]
                if r["kind"] == "address"]
    expect(shown == expected and shown[0] == "Mannerheimintie 1", f"house suggestions {shown}, the API's {expected}")
    browser.screenshot(os.path.join(shots, "suggest-houses.png"))
    print("ok: suggestions by pinyin initials (kdj → 肯德基) and houses as typed (Mannerheimintie 1 → 1, 1A, 10 …)")


def check_nearby_click(browser, base, shots):
    browser.open(f"{base}/?lat=60.1699&lon=24.9384&z=16")
    box = browser.evaluate("(() => { const r = document.getElementById('map').getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()")
    browser.click_at(box[0] + box[2] * 0.6, box[1] + box[3] * 0.4)
    browser.wait_for("nearby results after a click on the map", "poi.state.near !== null && /nearest/.test(document.getElementById('status').textContent)")
    near = browser.evaluate("[poi.state.near.lat, poi.state.near.lon]")
    ids = browser.evaluate(RESULT_IDS)
    expected = [r["id"] for r in api(base, "/v1/nearby", lat=f"{near[0]:.6f}", lon=f"{near[1]:.6f}", limit=20)["results"]]
    expect(ids == expected, f"nearby after a click renders {ids}; the API answers {expected}")
    expect("near=" in browser.evaluate("location.href"), "the clicked point is in the URL")
    browser.screenshot(os.path.join(shots, "nearby-click.png"))
    print("ok: a click on the map lists what is nearest, as the API does")


def check_streets_and_addresses(browser, base, shots):
    """Below city scale the imported streets are the base layer (those /v1/streets answers for the view), and a click
    says the address there (/v1/reverse)."""
    browser.open(f"{base}/?lat=60.1683&lon=24.9414&z=17")
    browser.wait_for("the streets layer", "poi.streetsLayer.ids && poi.streetsLayer.ids.length > 0")
    bbox, drawn = browser.evaluate("[poi.streetsLayer.bbox, poi.streetsLayer.ids]")
    expected = [f["id"] for f in api(base, "/v1/streets", bbox=bbox, limit=3000)["features"]]
    expect(drawn == expected, f"the page draws {len(drawn)} streets; /v1/streets answers {len(expected)} for {bbox}")
    expect(browser.evaluate("document.querySelectorAll('.leaflet-base-pane path').length") >= len(expected), "every street is a path in the base pane")
    box = browser.evaluate("(() => { const r = document.getElementById('map').getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()")
    browser.click_at(box[0] + box[2] * 0.5, box[1] + box[3] * 0.5)
    browser.wait_for("an address popup after a click", "!!(poi.lastAddress && document.querySelector('.address-popup'))")
    shown = browser.evaluate("poi.lastAddress")
    answer = api(base, "/v1/reverse", lat=shown["lat"], lon=shown["lon"])
    expect(answer["address"] is not None, f"/v1/reverse finds an address at {shown}")
    wanted = ", ".join(answer["address"]["displayName"].split(", ")[:2])
    expect(shown["shown"] == wanted, f"the popup says {shown['shown']!r}; /v1/reverse says {wanted!r}")
    browser.screenshot(os.path.join(shots, "streets-address.png"))
    print(f"ok: {len(drawn)} streets drawn as /v1/streets answers; a click shows {wanted}")


def tile_of(z, lat, lon):
    n = 2 ** z
    y = (1 - math.log(math.tan(math.radians(lat)) + 1 / math.cos(math.radians(lat))) / math.pi) / 2 * n
    return z, int((lon + 180) / 360 * n), int(y)


def check_base_tiles(browser, base, shots):
    """The map's base is the service's own vector tiles (/tiles/base) at every zoom from 11: each tile is decoded by
    the page's own reader and drawn on a canvas. The tile at the centre, as the page decoded it, has the streets, the
    names, the water and the buildings PyPI's mapbox-vector-tile reads from the same bytes. At zooms 13 and 16 (by
    Töölönlahti) the page draws water (pixels of the water's colour in the tile). Screenshots at zooms 11, 13, 15, 16, 17."""
    import mapbox_vector_tile
    views = [(11, 60.1699, 24.9384), (13, 60.1699, 24.9384), (15, 60.1699, 24.9384), (16, 60.1783, 24.9415), (17, 60.1699, 24.9384)]
    for zoom, lat, lon in views:
        browser.open(f"{base}/?lat={lat}&lon={lon}&z={zoom}")
        key = "/".join(map(str, tile_of(zoom, lat, lon)))
        browser.wait_for(f"the base tiles in view at zoom {zoom}", f"poi.baseLoaded === {zoom} && poi.baseTiles.has('{key}')")
        drawn = browser.evaluate(f"poi.baseTiles.get('{key}')")
        with urllib.request.urlopen(f"{base}/tiles/base/{key}.mvt") as response:
            data = response.read() if response.status == 200 else b""
        layers = mapbox_vector_tile.decode(data) if data else {}
        features = layers.get("base", {}).get("features", [])
        named = sum(1 for feature in features if feature["properties"].get("name"))
        water = len(layers.get("water", {}).get("features", []))
        buildings = len(layers.get("buildings", {}).get("features", []))
        counts = {"features": drawn["features"], "named": drawn["named"], "water": drawn["water"], "buildings": drawn["buildings"]}
        expect(counts == {"features": len(features), "named": named, "water": water, "buildings": buildings},
               f"tile {key}: the page drew {counts}; mapbox-vector-tile reads {len(features)} streets ({named} named), "
               f"{water} water areas, {buildings} buildings")
        if zoom >= 13:
            expect(len(features) > 0, f"tile {key} in the centre of Helsinki has streets")
        if zoom in (13, 16):
            # The import is 1 x 1.7 km: at zoom 13 its water is a few dozen pixels of the tile.
            expect(water > 0 and drawn["waterPixels"] > (20 if zoom == 13 else 2000),
                   f"tile {key} by Töölönlahti draws water: {water} water areas, {drawn['waterPixels']} pixels of its colour")
        browser.screenshot(os.path.join(shots, f"base-z{zoom}.png"))
        print(f"ok: base tiles at zoom {zoom}: the tile {key} drawn with {len(features)} streets ({named} named), "
              f"{water} water areas ({drawn['waterPixels']} pixels), {buildings} buildings")


def check_clusters(browser, base, shots, pois):
    browser.open(f"{base}/?lat=45&lon=70&z=2")  # the whole world but the Americas: Helsinki and Beijing
    browser.wait_for("clusters", "document.querySelectorAll('.cluster').length > 0")
    counts = browser.evaluate("Array.from(document.querySelectorAll('.cluster')).map(e => Number(e.textContent))")
    expect(sum(counts) == pois, f"zoomed out, the clusters count {sum(counts)} records; the server holds {pois}")
    browser.screenshot(os.path.join(shots, "clusters.png"))
    print(f"ok: clusters when zoomed out ({len(counts)} clusters, {sum(counts)} records)")


def check_pins(browser, base, shots):
    browser.open(f"{base}/?tab=pins&lat=61.0&lon=24.5&z=7")
    browser.type_text("#pin-form [name=firstName]", "Ada")
    browser.type_text("#pin-form [name=lastName]", "Lovelace")
    browser.type_text("#pin-form [name=mapString]", "Tampere")
    browser.type_text("#pin-form [name=mediaURL]", "https://example.org/ada")
    browser.click_element("#pin-form button[type=submit]")
    browser.wait_for("the new pin in the list", "document.querySelectorAll('#pins [data-poi-id]').length === 1")
    pins = api(base, "/v1/pins")["results"]
    expect(len(pins) == 1, f"one pin was created through the page: {pins}")
    pin = pins[0]
    place = api(base, "/v1/geocode", q="Tampere", limit=1)["results"][0]
    expect(pin["firstName"] == "Ada" and pin["lastName"] == "Lovelace" and pin["mapString"] == "Tampere"
           and pin["mediaURL"] == "https://example.org/ada", f"the pin keeps what was typed: {pin}")
    expect(abs(pin["lat"] - place["lat"]) < 1e-6 and abs(pin["lon"] - place["lon"]) < 1e-6,
           f"the pin stands where the address geocodes: {pin} vs {place}")
    expect(browser.evaluate("document.querySelector('#pins [data-poi-id]').dataset.poiId") == pin["id"], "the list shows the pin's id")
    browser.screenshot(os.path.join(shots, "pins.png"))
    print("ok: a pin added with a geocoded address, listed and mapped")


def check_coordsys(browser, base, shots):
    # The test server holds one Beijing POI (added by scripts/browser/run); in GCJ-02 it is drawn where AMap draws it.
    answer = api(base, "/v1/search", q="Zhongguancun", limit=1, coordsys="gcj02")["results"]
    expect(len(answer) == 1, f"the Beijing test POI is searchable: {answer}")
    browser.open(f"{base}/?q=Zhongguancun&coordsys=gcj02")
    expect(browser.evaluate("document.getElementById('coordsys').value") == "gcj02", "the switch shows GCJ-02 from the URL")
    position = browser.evaluate("(() => { const m = poi.resultsLayer.getLayers()[0].getLatLng(); return [m.lat, m.lng]; })()")
    expect(abs(position[0] - answer[0]["lat"]) < 1e-9 and abs(position[1] - answer[0]["lon"]) < 1e-9,
           f"the marker stands at the GCJ-02 answer {answer[0]['lat']},{answer[0]['lon']}: {position}")
    wgs = api(base, "/v1/search", q="Zhongguancun", limit=1)["results"][0]
    browser.evaluate("(() => { const s = document.getElementById('coordsys'); s.value = 'wgs84'; s.dispatchEvent(new Event('change')); })()")
    browser.wait_for("the marker to move to WGS-84",
                     f"Math.abs(poi.resultsLayer.getLayers()[0].getLatLng().lat - {wgs['lat']}) < 1e-9")
    expect("coordsys" not in browser.evaluate("location.href"), "WGS-84 is the default and leaves the URL")
    print("ok: the WGS-84/GCJ-02 switch asks and draws in the chosen datum")


def check_docs(browser, base, shots):
    browser.open(f"{base}/docs")
    document = api(base, "/openapi.json")
    operations = sum(1 for ops in document["paths"].values() for op in ops.values() if isinstance(op, dict) and "responses" in op)
    rendered = browser.evaluate("document.querySelectorAll('.operation').length")
    expect(rendered == operations, f"the docs page shows {rendered} operations; the document has {operations}")
    browser.screenshot(os.path.join(shots, "docs.png"))
    print(f"ok: the API docs page lists all {operations} operations")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", required=True)
    parser.add_argument("--screenshots", required=True)
    parser.add_argument("--chromium", default="chromium")
    args = parser.parse_args()
    os.makedirs(args.screenshots, exist_ok=True)
    pois = api(args.base, "/health")["pois"]
    browser = Browser(args.chromium)
    try:
        for check in [check_search_from_url, check_autocomplete, check_pinyin_and_address_suggestions, check_nearby_click, check_streets_and_addresses, check_base_tiles, check_pins, check_coordsys, check_docs]:
            check(browser, args.base, args.screenshots)
        check_clusters(browser, args.base, args.screenshots, pois)
        expect(not browser.exceptions, f"the page threw: {browser.exceptions}")
        expect(not browser.console_errors, f"the browser logged errors: {browser.console_errors}")
    except Failure as failure:
        print(f"browser: FAILED: {failure}", file=sys.stderr)
        if browser.exceptions:
            print(f"page exceptions: {browser.exceptions}", file=sys.stderr)
        try:
            browser.screenshot(os.path.join(args.screenshots, "failure.png"))
        except Exception:
            pass
        return 1
    finally:
        browser.close()
    print("browser: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
