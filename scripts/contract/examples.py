"""Examples of the OpenAPI document, taken from a real server and kept true.

    python3 scripts/contract/examples.py write URL KEY   -- asks a server on the bundled Helsinki data each example
                                                           request and stores the answers (lists cut to two items)
                                                           in Sources/API/OpenAPI/operations.json
    python3 scripts/contract/examples.py check URL KEY   -- (scripts/contract/run, in make test) every documented
                                                           example validates against its response schema, every
                                                           operation with a JSON answer has one, and the example
                                                           requests still answer with the documented status

Only the standard library and jsonschema (installed with schemathesis) are used.
"""
import json
import sys
import urllib.error
import urllib.parse
import urllib.request
import warnings

import jsonschema

# RefResolver resolves the document's "#/components/..." references simply; its successor needs a registry of URIs.
warnings.filterwarnings("ignore", category=DeprecationWarning)

OPERATIONS = "Sources/API/OpenAPI/operations.json"

POI = {"name": "Kahvila Esimerkki", "category": "food.cafe", "address": "Esplanadi 1", "city": "Helsinki",
       "country": "FI", "lat": 60.1675, "lon": 24.9505, "tags": {"opening_hours": "Mo-Fr 08:00-18:00"}}
PIN = {"uniqueKey": "u-1001", "firstName": "Aino", "lastName": "Virtanen", "mapString": "Helsinki, Finland",
       "mediaURL": "https://example.org/aino", "lat": 60.1699, "lon": 24.9384}

FENCE = {"id": "example-zone", "area": {"type": "circle", "lat": 60.1699, "lon": 24.9384, "radius": 500},
         "detect": ["enter", "exit"], "webhook": "https://example.org/hooks/zone"}


def requests(state):
    """(operationId, method, path, query, body): one example request per answer to document, in an order in which
    each can use what the earlier ones made (state: ids)."""
    yield "nearby", "GET", "/v1/nearby", {"lat": "60.1699", "lon": "24.9384", "limit": "2"}, None
    yield "nearby", "GET", "/v1/nearby", {"lat": "95", "lon": "24.9384"}, None
    yield "search", "GET", "/v1/search", {"q": "kahvila", "lat": "60.1699", "lon": "24.9384", "limit": "2"}, None
    yield "search", "GET", "/v1/search", {"q": " "}, None
    yield "within", "GET", "/v1/within", {"bbox": "24.93,60.16,24.96,60.175", "limit": "2"}, None
    yield "clusters", "GET", "/v1/clusters", {"bbox": "24.8,60.1,25.1,60.3", "precision": "4"}, None
    yield "tileJSON", "GET", "/tiles/pois.json", {}, None
    yield "tile", "GET", "/tiles/pois/14/9326/4740.mvt", {}, None
    yield "tile", "GET", "/tiles/pois/3/9/2.mvt", {}, None
    yield "tile", "GET", "/tiles/pois/25/0/0.mvt", {}, None
    yield "putPOI", "PUT", "/v1/pois/example-cafe-1", {}, POI
    yield "getPOI", "GET", "/v1/pois/example-cafe-1", {}, None
    yield "getPOI", "GET", "/v1/pois/no-such-poi", {}, None
    yield "deletePOI", "DELETE", "/v1/pois/example-cafe-1", {}, None
    yield "createPin", "POST", "/v1/pins", {}, PIN
    yield "listPins", "GET", "/v1/pins", {"limit": "2"}, None
    yield "getPin", "GET", "/v1/pins/{pin}", {}, None
    yield "updatePin", "PUT", "/v1/pins/{pin}", {}, dict(PIN, mapString="Kamppi, Helsinki", lat=60.1686, lon=24.9316)
    yield "deletePin", "DELETE", "/v1/pins/{pin}", {}, None
    yield "createFence", "POST", "/v1/fences", {}, FENCE
    yield "listFences", "GET", "/v1/fences", {}, None
    yield "getFence", "GET", "/v1/fences/example-zone", {}, None
    yield "deleteFence", "DELETE", "/v1/fences/example-zone", {}, None
    yield "geocode", "GET", "/v1/geocode", {"q": "Helsinki", "limit": "1"}, None
    yield "geocode", "GET", "/v1/geocode", {"q": "1600 Amphitheatre Parkway, Mountain View", "limit": "1"}, None
    yield "geocode", "GET", "/v1/geocode", {"q": "Mannerheimintie 13 a, Helsinki", "limit": "1"}, None
    yield "suggest", "GET", "/v1/suggest", {"q": "Mannerheimintie 1", "lat": "60.1699", "lon": "24.9384", "limit": "2"}, None
    yield "suggest", "GET", "/v1/suggest", {"q": "kahvila", "sources": "poi,park"}, None
    yield "reverse", "GET", "/v1/reverse", {"lat": "60.1699", "lon": "24.9384"}, None
    yield "streets", "GET", "/v1/streets", {"bbox": "24.938,60.168,24.940,60.169", "limit": "2"}, None
    yield "streets", "GET", "/v1/streets", {"bbox": "24.9,60.1"}, None
    yield "convert", "GET", "/v1/convert", {"from": "wgs84", "to": "gcj02", "lat": "39.9087", "lon": "116.3975"}, None
    yield "convert", "GET", "/v1/convert", {"from": "EPSG:3857", "to": "wgs84", "lat": "1e300", "lon": "1e300"}, None
    yield "convertBatch", "POST", "/v1/convert", {}, {"from": "wgs84", "to": "EPSG:3067", "points": [[24.9384, 60.1699], [23.7610, 61.4978]]}
    yield "health", "GET", "/health", {}, None
    yield "importRecords", "POST", "/v1/import", {"format": "jsonl", "name": "example.jsonl"}, \
        json.dumps(dict(POI, id="example-import-1")).encode() + b"\n"
    yield "importTask", "GET", "/v1/tasks/{task}", {}, None
    yield "importTasks", "GET", "/v1/tasks", {}, None
    yield "createBackup", "POST", "/v1/backups", {}, None
    yield "getBackup", "GET", "/v1/backups/{backup}", {}, None
    yield "listBackups", "GET", "/v1/backups", {}, None


def call(base, key, method, path, query, body, state):
    path = path.replace("{pin}", state.get("pin", "none")).replace("{task}", state.get("task", "none"))
    path = path.replace("{backup}", state.get("backup", "none"))
    url = base + path + ("?" + urllib.parse.urlencode(query) if query else "")
    headers = {"Authorization": "Bearer " + key}
    data = None
    if isinstance(body, bytes):
        data = body
        headers["Content-Type"] = "application/x-ndjson"
    elif body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            status, ctype, raw = response.status, response.headers.get("Content-Type", ""), response.read()
    except urllib.error.HTTPError as error:
        status, ctype, raw = error.code, error.headers.get("Content-Type", ""), error.read()
    value = json.loads(raw) if raw and "json" in ctype else None
    if path == "/v1/pins" and method == "POST" and value:
        state["pin"] = value["id"]
    if path == "/v1/import" and value:
        state["task"] = value["id"]
        wait_for_task(base, key, value["id"])
    if path == "/v1/backups" and method == "POST" and value:
        state["backup"] = value["id"]
        wait_for_task(base, key, value["id"], "/v1/backups/")
    return status, ctype.split(";")[0], value


def wait_for_task(base, key, task, prefix="/v1/tasks/"):
    import time
    for _ in range(600):
        with urllib.request.urlopen(urllib.request.Request(base + prefix + task, headers={"Authorization": "Bearer " + key})) as r:
            if json.loads(r.read())["status"] in ("succeeded", "failed"):
                return
        time.sleep(0.1)
    raise SystemExit("examples: import task %s never finished" % task)


def shortened(value):
    """Lists of results cut to two items, so that examples stay readable."""
    if isinstance(value, dict):
        return {k: (v[:2] if k in ("results", "features", "points", "tasks") and isinstance(v, list) else shortened(v)) for k, v in value.items()}
    return value


def write(base, key):
    operations = json.load(open(OPERATIONS))
    state = {}
    for op, method, path, query, body in requests(state):
        status, ctype, value = call(base, key, method, path, query, body, state)
        operation = operations[op]
        response = operation["responses"].get(str(status))
        if response is None:
            raise SystemExit("examples: %s %s answered %d, which %s does not document" % (method, path, status, op))
        if body is not None and not isinstance(body, bytes):
            operation["requestBody"]["content"]["application/json"]["example"] = body
        if value is None:
            continue
        example = shortened(value)
        if "$ref" in response:
            continue  # a shared answer (problem+json), whose example is in components
        content = response.setdefault("content", {}).setdefault(ctype, {})
        content["example"] = example
        content["x-example-request"] = describe(method, path, query)
    with open(OPERATIONS, "w") as out:
        json.dump(operations, out, indent=1, ensure_ascii=False)
        out.write("\n")


def describe(method, path, query):
    return method + " " + path + ("?" + urllib.parse.urlencode(query) if query else "")


def check(base, key):
    with urllib.request.urlopen(base + "/openapi.json") as r:
        document = json.loads(r.read())
    failures = []
    registry_root = document

    def validator(schema):
        resolver = jsonschema.RefResolver.from_schema(registry_root)
        return jsonschema.Draft202012Validator(schema, resolver=resolver)

    for path, item in document["paths"].items():
        for method, operation in item.items():
            op = operation["operationId"]
            has_json_example = False
            for status, response in operation["responses"].items():
                for ctype, content in response.get("content", {}).items():
                    if "example" not in content:
                        continue
                    has_json_example = True
                    for error in validator(content.get("schema", {})).iter_errors(content["example"]):
                        failures.append("%s %s example: %s at %s" % (op, status, error.message, list(error.path)))
            json_answers = [s for s, r in operation["responses"].items() if s.startswith("2") and any("json" in c for c in r.get("content", {}))]
            if json_answers and not has_json_example and op != "openapi":
                failures.append("%s has no example of its JSON answer" % op)
    # The example requests still answer as documented.
    state = {}
    for op, method, path, query, body in requests(state):
        status, _, _ = call(base, key, method, path, query, body, state)
        if str(status) not in document_operation(document, op)["responses"]:
            failures.append("%s %s answered %d, not documented" % (method, path, status))
    if failures:
        print("examples: %d problems" % len(failures))
        for failure in failures:
            print("  " + failure)
        raise SystemExit(1)
    print("examples: every example validates against its schema and every example request answers as documented")



def document_operation(document, op):
    for item in document["paths"].values():
        for operation in item.values():
            if operation["operationId"] == op:
                return operation
    raise KeyError(op)


if __name__ == "__main__":
    mode, base, key = sys.argv[1], sys.argv[2].rstrip("/"), sys.argv[3]
    {"write": write, "check": check}[mode](base, key)
