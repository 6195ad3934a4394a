#!/usr/bin/env python3
"""Reliability trials against a real `poi serve`, bounded in time; prints a Markdown summary for RESULTS.md.

  durability  TRIALS times: 4 writers create pins as fast as they can; the server is killed with SIGKILL at a random
              moment; it is restarted on the same database and every create that was acknowledged (201) must be
              there. Reports acknowledged creates and how many were lost (must be 0).
  hostile     malformed, oversized, cut-short and slow requests on raw sockets; every answer must be a 4xx
              problem+json or a clean close, never a 5xx, and /health must still answer.
  flood       FLOOD idle sockets at once (more than --max-connections): /health must still get an answer (200 or a
              503 refusal, never a hang), the server's descriptors must stay under its cap, and once the request
              timeout has passed the idle sockets are closed by the server.
  soak        SOAK seconds of mixed reads and writes from 8 client threads; RSS sampled every 5 s; no 5xx.

Usage: benchmarks/reliability/run.py [--poi .build/release/poi] [--trials 20] [--flood 19000] [--cap 4096] [--soak 120]
"""
import argparse
import http.client
import json
import os
import random
import re
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Server:
    """poi serve on port 0; ready when its readiness line names the bound address."""

    def __init__(self, poi, db, extra=()):
        self.log = tempfile.NamedTemporaryFile(prefix="poi-rel-", suffix=".log", delete=False)
        self.proc = subprocess.Popen([poi, "serve", "--port", "0", "--db", db, *extra], stdout=subprocess.DEVNULL,
                                     stderr=self.log, cwd=ROOT)
        self.port = None
        while self.port is None:
            if self.proc.poll() is not None:
                raise RuntimeError("poi serve exited before it was ready:\n" + self.stderr())
            match = re.search(r"\] serving .* on http://[0-9.]+:(\d+)", self.stderr())
            if match:
                self.port = int(match.group(1))
            else:
                time.sleep(0.1)

    def stderr(self):
        with open(self.log.name, encoding="utf-8", errors="replace") as f:
            return f.read()

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait()

    def descriptors(self):
        return len(os.listdir(f"/proc/{self.proc.pid}/fd"))

    def rss_mb(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return 0


def request(port, method, path, body=None, timeout=30):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def empty_db(poi, directory, name):
    db = os.path.join(directory, name)
    empty = os.path.join(directory, "empty.jsonl")
    open(empty, "w").close()
    subprocess.run([poi, "import", empty, "--db", db], check=True, capture_output=True, cwd=ROOT)
    return db


def durability(poi, directory, trials, seed):
    rng = random.Random(seed)
    acknowledged_total = 0
    lost_total = 0
    for trial in range(trials):
        db = empty_db(poi, directory, f"durability-{trial}.sqlite")
        server = Server(poi, db)
        acknowledged = []
        lock = threading.Lock()
        stop = threading.Event()

        def writer(worker):
            i = 0
            while not stop.is_set():
                body = json.dumps({"uniqueKey": f"w{worker}", "firstName": f"n{i}", "lat": 60.17, "lon": 24.94})
                try:
                    status, data = request(server.port, "POST", "/v1/pins", body, timeout=5)
                except OSError:
                    return
                if status == 201:
                    with lock:
                        acknowledged.append(json.loads(data)["id"])
                i += 1

        threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
        for t in threads:
            t.start()
        time.sleep(rng.uniform(0.3, 2.0))
        server.kill9()
        stop.set()
        for t in threads:
            t.join()
        restarted = Server(poi, db)
        present = set()
        skip = 0
        while True:
            status, data = request(restarted.port, "GET", f"/v1/pins?limit=100&skip={skip}")
            page = json.loads(data)
            present.update(r["id"] for r in page["results"])
            if page["next"] is None:
                break
            skip = int(page["next"])
        restarted.stop()
        lost = [i for i in acknowledged if i not in present]
        acknowledged_total += len(acknowledged)
        lost_total += len(lost)
        print(f"  trial {trial + 1}/{trials}: {len(acknowledged)} acknowledged, {len(lost)} lost", file=sys.stderr)
    return {"trials": trials, "acknowledged": acknowledged_total, "lost": lost_total}


HOSTILE = [
    ("chunked garbage", b"POST /v1/pins HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzzz\r\n", False),
    ("chunked garbage (convert)", b"POST /v1/convert HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzzz\r\n", False),
    ("100 KB header", b"GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 100_000 + b"\r\n\r\n", False),
    ("10 MB Content-Length, no body", b"POST /v1/pins HTTP/1.1\r\nHost: x\r\nContent-Length: 10000000\r\n\r\n", False),
    ("body cut short", b"POST /v1/pins HTTP/1.1\r\nHost: x\r\nContent-Length: 2000\r\n\r\n{\"lat\":", True),
    ("body never sent", b"POST /v1/pins HTTP/1.1\r\nHost: x\r\nContent-Length: 2000\r\n\r\n{", False),
    ("half a head", b"GET /health HTTP/1.1\r\nHost: x\r\n", False),
    ("binary garbage", bytes(range(256)), False),
    ("bad method", b"FR\x00B / HTTP/1.1\r\n\r\n", False),
    ("bad version", b"GET / HTTP/9.9\r\n\r\n", False),
    ("negative Content-Length", b"POST /v1/pins HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", False),
    ("two Content-Lengths", b"POST /v1/pins HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}", False),
    ("trailing comma", b"POST /v1/pins HTTP/1.1\r\nHost: x\r\nContent-Length: 18\r\n\r\n{\"lat\":1,\"lon\":1,}", False),
    ("hex latitude", b"GET /v1/nearby?lat=0x10&lon=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", False),
    ("1e300 in EPSG:3857", b"GET /v1/convert?from=EPSG:3857&to=wgs84&lat=1e300&lon=1e300 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", False),
    ("bad percent-encoding", b"GET /v1/pois/%FF%FE HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", False),
    ("HTTP/1.0", b"GET /health HTTP/1.0\r\n\r\n", False),
]


def exchange(port, data, half_close, timeout=60):
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(timeout)
    try:
        s.sendall(data)
    except OSError:
        pass
    if half_close:
        s.shutdown(socket.SHUT_WR)
    out = b""
    closed = False
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                closed = True
                break
            out += chunk
    except socket.timeout:
        pass
    except ConnectionResetError:
        closed = True
    s.close()
    return out, closed


def hostile(poi, directory):
    db = empty_db(poi, directory, "hostile.sqlite")
    server = Server(poi, db, ["--request-timeout", "2"])
    rows = []
    server_errors = 0
    for name, data, half in HOSTILE:
        out, closed = exchange(server.port, data, half)
        status = out[9:12].decode() if out.startswith(b"HTTP/1.1 ") else "-"
        problem = b"application/problem+json" in out.lower()
        if status.startswith("5"):
            server_errors += 1
        rows.append((name, status, problem, closed))
    health, _ = request(server.port, "GET", "/health")
    logged = [line for line in server.stderr().splitlines() if "error" in line]
    server.stop()
    return {"rows": rows, "server_errors": server_errors, "health": health, "logged_errors": logged}


def flood(poi, directory, count, cap):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, count + 1024), hard))
    db = empty_db(poi, directory, "flood.sqlite")
    server = Server(poi, db, ["--max-connections", str(cap), "--request-timeout", "5"])
    sockets = []
    refused_at_connect = 0
    for _ in range(count):
        try:
            sockets.append(socket.create_connection(("127.0.0.1", server.port), timeout=5))
        except OSError:
            refused_at_connect += 1
    time.sleep(0.5)
    peak_fds = server.descriptors()
    started = time.time()
    try:
        health, _ = request(server.port, "GET", "/health", timeout=30)
    except OSError as error:
        health = f"no answer ({error})"
    health_seconds = time.time() - started
    # The server closes what it refused at once, and the idle ones after the request timeout (5 s).
    deadline = time.time() + 60
    while time.time() < deadline and server.descriptors() > 64:
        time.sleep(0.5)
    after_fds = server.descriptors()
    closed_by_server = 0
    for s in sockets:
        s.setblocking(False)
        try:
            if s.recv(4096) is not None:
                closed_by_server += 1
        except BlockingIOError:
            pass
        except OSError:
            closed_by_server += 1
        s.close()
    recovered, _ = request(server.port, "GET", "/health")
    logged = [line for line in server.stderr().splitlines() if "error" in line]
    server.stop()
    return {"sockets": count, "cap": cap, "refused_at_connect": refused_at_connect, "peak_fds": peak_fds,
            "health_during": health, "health_seconds": round(health_seconds, 3), "fds_after": after_fds,
            "closed_by_server": closed_by_server, "health_after": recovered, "logged_errors": logged}


def soak(poi, directory, seconds):
    db = os.path.join(directory, "soak.sqlite")
    subprocess.run([poi, "import", os.path.join(ROOT, "data", "Helsinki.osm.pbf"), "--db", db], check=True,
                   capture_output=True, cwd=ROOT)
    server = Server(poi, db)
    stop = threading.Event()
    counts = {}
    lock = threading.Lock()
    paths = ["/v1/nearby?lat=60.17&lon=24.94&limit=10", "/v1/search?q=kahvila&limit=10", "/v1/within?bbox=24.9,60.15,25,60.2",
             "/v1/clusters?bbox=24,59,26,61&precision=5", "/v1/reverse?lat=60.17&lon=24.94", "/v1/geocode?q=Helsinki",
             "/v1/convert?from=wgs84&to=gcj02&lat=39.9&lon=116.4", "/v1/nearby?lat=95&lon=0"]

    def client(worker):
        rng = random.Random(worker)
        while not stop.is_set():
            if rng.random() < 0.1:
                body = json.dumps({"firstName": "soak", "lat": 60 + rng.random(), "lon": 24 + rng.random()})
                status, _ = request(server.port, "POST", "/v1/pins", body)
            else:
                status, _ = request(server.port, "GET", rng.choice(paths))
            with lock:
                counts[status] = counts.get(status, 0) + 1

    threads = [threading.Thread(target=client, args=(w,)) for w in range(8)]
    for t in threads:
        t.start()
    samples = []
    started = time.time()
    while time.time() - started < seconds:
        samples.append(round(server.rss_mb(), 1))
        time.sleep(5)
    stop.set()
    for t in threads:
        t.join()
    samples.append(round(server.rss_mb(), 1))
    logged = [line for line in server.stderr().splitlines() if "error" in line]
    server.stop()
    return {"seconds": seconds, "requests": sum(counts.values()), "statuses": counts, "rss_mb": samples, "logged_errors": logged}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--poi", default=os.path.join(ROOT, ".build/release/poi"))
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--flood", type=int, default=19000)
    parser.add_argument("--cap", type=int, default=4096, help="the server's --max-connections in the flood")
    parser.add_argument("--soak", type=int, default=120)
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()
    failures = []
    with tempfile.TemporaryDirectory(prefix="poi-reliability-") as directory:
        print("durability (kill -9 under 4 writers)…", file=sys.stderr)
        d = durability(args.poi, directory, args.trials, args.seed)
        print("hostile requests…", file=sys.stderr)
        h = hostile(args.poi, directory)
        print(f"flood of {args.flood} idle sockets…", file=sys.stderr)
        f = flood(args.poi, directory, args.flood, args.cap)
        print(f"soak for {args.soak} s…", file=sys.stderr)
        s = soak(args.poi, directory, args.soak)

    print(f"### Durability: {d['trials']} kill -9 trials under 4 concurrent writers")
    print(f"{d['acknowledged']} creates acknowledged with 201, **{d['lost']} lost** after restart.\n")
    if d["lost"]:
        failures.append("acknowledged writes lost")
    print("### Hostile requests (raw sockets, request timeout 2 s)")
    print("| request | status | problem+json | closed |\n|---|---|---|---|")
    for name, status, problem, closed in h["rows"]:
        print(f"| {name} | {status} | {'yes' if problem else 'no'} | {'yes' if closed else 'no'} |")
    print(f"\n5xx answers: **{h['server_errors']}**; /health afterwards: {h['health']}; errors logged: {len(h['logged_errors'])}.\n")
    if h["server_errors"] or h["health"] != 200 or h["logged_errors"]:
        failures.append("hostile requests")
    print(f"### Flood: {f['sockets']} idle sockets against --max-connections {f['cap']}")
    print(f"Peak server descriptors {f['peak_fds']}; /health during the flood: {f['health_during']} in {f['health_seconds']} s; "
          f"descriptors after the request timeout: {f['fds_after']}; sockets closed by the server: {f['closed_by_server']}; "
          f"/health after: {f['health_after']}; errors logged: {len(f['logged_errors'])}.\n")
    if f["health_during"] not in (200, 503) or f["health_after"] != 200 or f["logged_errors"]:
        failures.append("flood")
    print(f"### Soak: {s['seconds']} s of mixed reads and 10 % writes from 8 clients")
    print(f"{s['requests']} requests; statuses {dict(sorted(s['statuses'].items()))}; RSS (MB, every 5 s): "
          f"{s['rss_mb'][0]} → {max(s['rss_mb'])} max → {s['rss_mb'][-1]} at the end; errors logged: {len(s['logged_errors'])}.\n")
    if any(code >= 500 for code in s["statuses"]) or s["logged_errors"]:
        failures.append("soak")
    if failures:
        print("FAILED: " + ", ".join(failures), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
