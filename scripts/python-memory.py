#!/usr/bin/env python3
"""Peak memory of a numpy read with the Python package zv: 10 million points (float32
positions, int64 object ids, one float32 attribute) read whole by `level.points()`.

Run with the Python that has zv installed (a release build: `VIRTUAL_ENV=$PWD/.venv-py
.venv-py/bin/maturin develop --release -m crates/zv-python/Cargo.toml`):

    .venv-py/bin/python scripts/python-memory.py [--points N] [--dir DIR]

The store is written once (kept in DIR, default /tmp/zv-python-memory). The read runs in a
fresh subprocess, which reports its peak RSS (`VmHWM` of /proc/self/status: it sees Rust's
allocations, unlike tracemalloc, and unlike `ru_maxrss` it is not inherited across exec)
before and after the read; the increase is compared with the bytes of the
arrays returned. docs/python.md records the figures."""

import argparse
import json
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import json, sys, time
import zv

def hwm():
    # peak RSS of this address space (VmHWM): unlike ru_maxrss, not inherited across exec
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024

store = zv.open(sys.argv[1])
level = store[0]
before = hwm()
t = time.perf_counter()
pts = level.points()
seconds = time.perf_counter() - t
after = hwm()
arrays = pts.positions.nbytes + pts.object_ids.nbytes + sum(a.nbytes for a in pts.attributes.values())
print(json.dumps({"points": len(pts), "arrays_bytes": arrays, "rss_before": before,
                  "rss_after": after, "seconds": seconds}))
"""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--points", type=int, default=10_000_000)
    ap.add_argument("--dir", default="/tmp/zv-python-memory")
    args = ap.parse_args()
    store = Path(args.dir) / f"points-{args.points}.zarr"
    if not (store / "zarr.json").exists():
        import numpy as np

        import zv

        rng = np.random.default_rng(1)
        n = args.points
        positions = rng.random((n, 3), dtype=np.float32) * 1000
        ids = rng.integers(0, 1000, n)
        intensity = rng.random(n, dtype=np.float32)
        zv.write_points(store, positions, chunk_shape=(100, 100, 100), object_ids=ids,
                        vertex_attributes={"intensity": intensity}, compression="zstd:1")
        del positions, ids, intensity
    out = subprocess.run([sys.executable, "-c", CHILD, str(store)], capture_output=True,
                         text=True, check=True)
    r = json.loads(out.stdout)
    extra = r["rss_after"] - r["rss_before"]
    r["peak_over_arrays"] = extra / r["arrays_bytes"]
    print(json.dumps(r, indent=1))
    print(f"{r['points']} points: arrays {r['arrays_bytes'] / 2**20:.1f} MiB, peak RSS grew by "
          f"{extra / 2**20:.1f} MiB ({r['peak_over_arrays']:.2f}x) in {r['seconds']:.2f} s")
    return 0 if r["peak_over_arrays"] < 1.5 else 1


if __name__ == "__main__":
    sys.exit(main())
