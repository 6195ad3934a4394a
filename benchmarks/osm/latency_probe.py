# A one-thread latency probe: 8 keep-alive connections, one request outstanding on each, every request timed on its own
# (what wrk's closed loop on shared cores blurs with its own waits). Used for RESULTS.md "Read p99 while a feed is
# applied" (issue 57):
#
#   python3 benchmarks/osm/latency_probe.py PORT SECONDS PATHS_FILE OUT
#
# PATHS_FILE holds one request path a line (as benchmarks/osm/changes_run draws them); OUT gets "start_ms latency_ms"
# a request ("-": none); prints one JSON line: the count, p50, p99 and max in milliseconds.
import json, selectors, socket, sys, time
port, seconds, paths_file, out = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[4]
paths = [l.strip() for l in open(paths_file) if l.strip()]
sel = selectors.DefaultSelector()
conns = []
for i in range(8):
    s = socket.create_connection(("127.0.0.1", port)); s.setblocking(False)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    conns.append(s)
state = {}
k = 0
def send(s):
    global k
    p = paths[k % len(paths)]; k += 1
    s.sendall(f"GET {p} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    state[s] = [time.perf_counter_ns(), b""]
for s in conns:
    sel.register(s, selectors.EVENT_READ); send(s)
end = time.perf_counter_ns() + int(seconds * 1e9)
lat = []
start = time.perf_counter_ns()
while time.perf_counter_ns() < end:
    for key, _ in sel.select(1):
        s = key.fileobj
        data = s.recv(65536)
        st = state[s]; st[1] += data
        buf = st[1]
        h = buf.find(b"\r\n\r\n")
        if h < 0: continue
        head = buf[:h].decode()
        cl = 0
        for line in head.split("\r\n"):
            if line.lower().startswith("content-length:"): cl = int(line.split(":")[1])
        if len(buf) < h + 4 + cl: continue
        now = time.perf_counter_ns()
        lat.append(((st[0] - start) / 1e6, (now - st[0]) / 1e6))
        send(s)
if out != "-":
    with open(out, "w") as f:
        for t, l in lat: f.write(f"{t:.3f} {l:.3f}\n")
ls = sorted(l for _, l in lat)
print(json.dumps({"requests": len(ls), "p50_ms": ls[len(ls) // 2], "p99_ms": ls[int(len(ls) * 0.99)], "max_ms": ls[-1]}))
