#!/usr/bin/env python3
"""Turns benchmarks/out/results.jsonl into results.md (tables with ratios to poi), results.json (the same data with
the date, machine and command) and the log-log growth plot.
Usage: report.py RESULTS.jsonl OUTDIR GROWTH.png [COMMAND]"""
import json
import os
import platform
import subprocess
import sys
from datetime import datetime, timezone


def machine():
    cpu = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    cores = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
    memory = ""
    try:
        kb = int(next(line for line in open("/proc/meminfo") if line.startswith("MemTotal")).split()[1])
        memory = f", {kb / 1024 / 1024:.0f} GiB"
    except (OSError, StopIteration, ValueError):
        pass
    return f"{cpu}, {cores} cores{memory}, {platform.system()} {platform.release()}"


def fmt_us(value):
    return "–" if value is None else (f"{value:,.1f}" if value >= 10 else f"{value:.2f}")


def in_process_rows(rows):
    """(measurement, poi label, peer label) pairs compared on the same records and queries."""
    by = {r["label"]: r for r in rows}
    pairs = [
        ("kNN k = 10", "poi knn", "cKDTree knn", "scipy cKDTree"),
        ("bbox 10 km square", "poi bbox 10km", "SQLite R*Tree bbox 10km", None),
        ("keyword + nearby (10 nearest matches within 5 km)", "poi keyword-nearby", "SQLite FTS5+R*Tree keyword-nearby", None),
        ("keyword + nearby (10 nearest matches within 5 km)", "poi keyword-nearby", "Tantivy keyword-nearby", None),
        ("keyword + nearby (10 nearest matches within 5 km)", "poi keyword-nearby", "Xapian keyword-nearby", None),
        ("keyword, ranked, limit 20", "poi keyword", "SQLite FTS5+R*Tree keyword", None),
        ("keyword, ranked, limit 20", "poi keyword", "Tantivy keyword", None),
        ("keyword, ranked, limit 20", "poi keyword", "Xapian keyword", None),
    ]
    out = ["| measurement | poi queries/s | poi µs/query mean (p50 / p99) | peer | peer queries/s | peer µs/query mean (p50 / p99) | poi is | mean results poi / peer |",
           "|---|---:|---:|---|---:|---:|---:|---:|"]
    table = []
    for title, ours_label, peer_label, peer_name in pairs:
        ours, peer = by.get(ours_label), by.get(peer_label)
        if not ours or not peer:
            continue
        ratio = peer["us_per_query"] / ours["us_per_query"]
        def cell(r):
            extra = f" ({fmt_us(r['p50_us'])} / {fmt_us(r['p99_us'])})" if "p50_us" in r else ""
            return fmt_us(r["us_per_query"]) + extra
        name = peer_name or peer.get("peer", peer_label)
        verdict = f"**{ratio:.2f}× faster**" if ratio >= 1 else f"**{1 / ratio:.2f}× slower**"
        out.append(f"| {title} | {round(1e6 / ours['us_per_query']):,} | {cell(ours)} | {name} | {round(1e6 / peer['us_per_query']):,} | "
                   f"{cell(peer)} | {verdict} | {ours.get('mean_results', '–')} / {peer.get('mean_results', '–')} |")
        table.append({"measurement": title, "poi": ours, "peer": peer, "speedup": round(ratio, 3)})
    return out, table


def http_rows(rows):
    everything = [r for r in rows if r["label"].startswith("http ")]
    http = [r for r in everything if "rps" in r]
    memory = [r for r in everything if "rss_kb" in r and "rps" not in r]
    if not http:
        return [], []
    ours = {r["scenario"]: r for r in http if r["system"] == "poi"}
    out = ["| system | scenario | requests/s | p50 ms | p99 ms | server CPU-s | requests per server CPU-second | poi's requests/s relative to it |",
           "|---|---|---:|---:|---:|---:|---:|---:|"]
    table = []
    for r in http:
        mine = ours.get(r["scenario"])
        ratio = mine["rps"] / r["rps"] if mine and r["system"] != "poi" else None
        name = "poi serve" if r["system"] == "poi" else r["system"]
        out.append(f"| {name} ({r['client']}, {r['connections']} connections) | {r['scenario']} | {r['rps']:,} | "
                   f"{r['p50_ms']:.2f} | {r['p99_ms']:.2f} | {r.get('server_cpu_s', '–')} | {r.get('requests_per_cpu_s') or 0:,} | "
                   f"{f'{ratio:.2f}×' if ratio else '–'} |")
        table.append(dict(r, poi_ratio=round(ratio, 3) if ratio else None))
    for r in memory:
        out.append(f"\n{r['system']} after the scenarios: RSS {r['rss_kb'] / 1024:,.0f} MB, of which {r['rss_anon_kb'] / 1024:,.0f} MB "
                   f"anonymous and {r['rss_file_kb'] / 1024:,.0f} MB file-backed (mapped snapshots, binaries).")
    return out, table


def startup_rows(rows):
    """Start-up time and memory (benchmarks/startup/run.sh): poi first start and restarts, Redis RDB reloads."""
    starts = [r for r in rows if r["label"] == "startup"]
    if not starts:
        return []
    out = ["| n | system | start | to ready (s) | RSS (MB) | anonymous (MB) | file-backed (MB) | file on disk (MB) |",
           "|---:|---|---|---:|---:|---:|---:|---:|"]
    for r in starts:
        out.append(f"| {r['n']:,} | {r['system']} | {r['kind']} | {r['seconds']:.3f} | {r['rss_kb'] / 1024:,.0f} | "
                   f"{r['rss_anon_kb'] / 1024:,.0f} | {r['rss_file_kb'] / 1024:,.0f} | {r['file_bytes'] / 1e6:,.0f} |")
    return out


def growth_rows(rows, png):
    growth = [r for r in rows if r["label"] == "growth poi knn"]
    peers = {r["n"]: r for r in rows if r["label"] == "growth cKDTree knn"}
    if not growth:
        return []
    out = ["| n | poi build s | poi kNN µs | poi max RSS MB | cKDTree build s | cKDTree kNN µs |", "|---:|---:|---:|---:|---:|---:|"]
    for r in growth:
        p = peers.get(r["n"])
        tail = f"{p['build_seconds']:.3f} | {p['us_per_query']:.3f} |" if p else "– | – |"
        out.append(f"| {r['n']:,} | {r['build_seconds']:.3f} | {r['us_per_query']:.3f} | {r['max_rss_kb'] / 1024:.0f} | {tail}")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, axes = plt.subplots(1, 3, figsize=(13, 4))
        ns = [r["n"] for r in growth]
        axes[0].loglog(ns, [r["us_per_query"] for r in growth], "o-", label="poi R-tree")
        axes[1].loglog(ns, [r["build_seconds"] for r in growth], "o-", label="poi R-tree")
        axes[2].loglog(ns, [r["max_rss_kb"] / 1024 for r in growth], "o-", label="poi bench process")
        pn = sorted(peers)
        if pn:
            axes[0].loglog(pn, [peers[n]["us_per_query"] for n in pn], "s--", label="scipy cKDTree")
            axes[1].loglog(pn, [peers[n]["build_seconds"] for n in pn], "s--", label="scipy cKDTree")
        for ax, title in zip(axes, ["kNN k=10, µs per query", "bulk build, seconds", "max RSS, MB"]):
            ax.set_title(title)
            ax.set_xlabel("points")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend()
        fig.tight_layout()
        fig.savefig(png, dpi=90)
    except ImportError:
        out.append("\n(matplotlib missing: no plot)")
    return out


def main():
    rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
    outdir, png = sys.argv[2], sys.argv[3]
    command = sys.argv[4] if len(sys.argv) > 4 else "benchmarks/run"
    date = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    host = machine()
    out = [f"Run {date} on {host}; command `{command.strip()}`.\n"]
    in_process, in_process_table = in_process_rows(rows)
    if in_process:
        out += ["In-process, one thread, same records and queries (peers driven from Python; their time is the library "
                "call, measured around each query or batch):\n"] + in_process
    other = [r for r in rows if r["label"] in ("poi radius 1km",)]
    for r in other:
        out.append(f"\nAlso: {r['label']}: {fmt_us(r['us_per_query'])} µs/query, {r.get('mean_results', '–')} results on average.")
    http, http_table = http_rows(rows)
    if http:
        out += ["\nOver loopback (load generator and server share the machine's cores):\n"] + http
    startup = startup_rows(rows)
    if startup:
        out += ["\nStart-up (exec to the first 200 from /health, Redis to the first PONG; RSS 1 s after ready):\n"] + startup
    growth = growth_rows(rows, png)
    if growth:
        out += ["\nGrowth (kNN k = 10, one thread; RSS of the whole `poi bench` process):\n"] + growth
    open(os.path.join(outdir, "results.md"), "w").write("\n".join(out) + "\n")
    json.dump({"date": date, "machine": host, "command": command.strip(), "in_process": in_process_table, "http": http_table,
               "rows": rows}, open(os.path.join(outdir, "results.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
