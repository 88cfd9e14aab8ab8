#!/usr/bin/env python3
"""Prints pipeline/raw time ratios from the criterion results of the `pipeline` benchmark.

Run `cargo bench -p zv-codecs --bench pipeline` first. A ratio of 1.00 means the zv pipeline
costs the same as calling the library directly; 1.05 is 5% slower.
"""
import json
import pathlib
import sys

root = pathlib.Path(__file__).resolve().parent.parent / "target" / "criterion" / "chunk4MiB"
if not root.is_dir():
    sys.exit(f"no criterion results at {root}; run cargo bench -p zv-codecs --bench pipeline")


def mean_ns(op, label):
    est = root / op / label / "new" / "estimates.json"
    data = json.loads(est.read_text())
    return data["mean"]["point_estimate"], data["median"]["point_estimate"]


labels = sorted(p.name for p in (root / "encode-raw").iterdir() if p.is_dir())
print(f"{'codec':24} {'op':7} {'raw ms':>8} {'zv ms':>8} {'ratio':>6} {'MiB/s zv':>9}")
worst = 0.0
for label in labels:
    for op in ("encode", "decode"):
        raw, _ = mean_ns(f"{op}-raw", label)
        zv, _ = mean_ns(f"{op}-pipeline", label)
        ratio = zv / raw
        worst = max(worst, ratio)
        print(f"{label:24} {op:7} {raw / 1e6:8.3f} {zv / 1e6:8.3f} {ratio:6.3f} {4 / (zv / 1e9):9.0f}")
print(f"worst ratio (criterion, separate time windows): {worst:.3f}")

paired = root.parent / "paired-ratios.json"
if paired.is_file():
    rows = json.loads(paired.read_text())
    print("\npaired measurement (raw and pipeline timed back to back, median of per-round ratios)")
    print(f"{'codec':24} {'op':7} {'raw ms':>8} {'zv ms':>8} {'ratio':>6}")
    for r in rows:
        print(f"{r['codec']:24} {r['op']:7} {r['raw_ms']:8.3f} {r['zv_ms']:8.3f} {r['ratio']:6.3f}")
    print(f"worst paired ratio: {max(r['ratio'] for r in rows):.3f}")
