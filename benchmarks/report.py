#!/usr/bin/env python3
"""Turns benchmarks/out/results.jsonl into a Markdown table and the log-log growth plot.
Usage: report.py RESULTS.jsonl OUT.md OUT.png"""
import json
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
    return f"{cpu}, {cores} cores, {platform.system()} {platform.release()}"


def main():
    rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
    out = []
    out.append(f"Run {datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')} on {machine()}.\n")
    out.append("| measurement | n | queries | build s | µs/query | queries/s | mean results | index B/point |")
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        if r["label"].startswith("growth"):
            continue
        out.append(f"| {r['label']} | {r['n']:,} | {r['queries']:,} | {r['build_seconds']:.3f} | {r['us_per_query']:.3f} | "
                   f"{r['qps']:,} | {r.get('mean_results', '')} | {r.get('index_bytes_per_point', '')} |")
    ours = next((r for r in rows if r["label"] == "poi knn"), None)
    peer = next((r for r in rows if r["label"] == "cKDTree knn"), None)
    if ours and peer:
        out.append(f"\nkNN (k = 10): poi is **{peer['us_per_query'] / ours['us_per_query']:.2f}×** the speed of scipy cKDTree "
                   f"({ours['us_per_query']:.2f} µs against {peer['us_per_query']:.2f} µs per query, one thread).")
    growth = [r for r in rows if r["label"] == "growth poi knn"]
    peers = {r["n"]: r for r in rows if r["label"] == "growth cKDTree knn"}
    if growth:
        out.append("\n| growth: n | poi build s | poi kNN µs | poi max RSS MB | cKDTree build s | cKDTree kNN µs |")
        out.append("|---:|---:|---:|---:|---:|---:|")
        for r in growth:
            p = peers.get(r["n"])
            out.append(f"| {r['n']:,} | {r['build_seconds']:.3f} | {r['us_per_query']:.3f} | {r['max_rss_kb'] / 1024:.0f} | "
                       f"{p['build_seconds']:.3f} | {p['us_per_query']:.3f} |" if p else
                       f"| {r['n']:,} | {r['build_seconds']:.3f} | {r['us_per_query']:.3f} | {r['max_rss_kb'] / 1024:.0f} | – | – |")
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
            fig.savefig(sys.argv[3], dpi=90)
        except ImportError:
            out.append("\n(matplotlib missing: no plot)")
    open(sys.argv[2], "w").write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
