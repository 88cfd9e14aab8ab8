#!/usr/bin/env python3
"""Dask write throughput and the commit's cost, measured in one run.

1. Throughput: N points (object ids below 1000, one float32 attribute, uniform in
   [0, 1000)^3, chunk 100^3) written by the single-process writer (`zv.write_points`) and by
   `zv.dask.write_points` on a LocalCluster of 1 and of 2 worker processes (the input
   persisted on the cluster first, so generating it is not timed). Prints min / median over
   the repetitions, points per second, and the scaling ratio (1 worker / 2 workers).
2. The commit model: for several part counts and point counts, the parts are written
   (`commit=False`), the receipts' total size is measured, then `zv.commit_parts` is timed.

Usage: dask_write.py --dir DIR [--points N] [--partitions P] [--reps R]
Prints a table, and the figures as JSON on the last line.
"""

import argparse
import json
import shutil
import statistics
import time
from pathlib import Path

import dask
import dask.dataframe as dd
import distributed
import numpy as np
import pandas as pd

import zv
import zv.dask

OPTS = dict(chunk_shape=(100, 100, 100), compression="none")


def part(seed, n):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "x": rng.random(n) * 1000, "y": rng.random(n) * 1000, "z": rng.random(n) * 1000,
        "cell": rng.integers(0, 1000, n), "w": rng.random(n).astype(np.float32),
    })


def frame(points, partitions):
    return dd.from_map(part, [1000 + i for i in range(partitions)], [points // partitions] * partitions)


def fresh(path: Path) -> Path:
    shutil.rmtree(path, ignore_errors=True)
    return path


def stats(xs):
    return {"min": min(xs), "median": statistics.median(xs)}


def throughput(a, d: Path) -> dict:
    n = (a.points // a.partitions) * a.partitions
    df = pd.concat([part(1000 + i, n // a.partitions) for i in range(a.partitions)], ignore_index=True)
    pos, ids, w = df[["x", "y", "z"]].to_numpy(), df["cell"].to_numpy(), df["w"].to_numpy()
    out = {"points": n, "single": []}
    for _ in range(a.reps):
        t = time.perf_counter()
        zv.write_points(fresh(d / "single.zarr"), pos, object_ids=ids, vertex_attributes={"w": w}, **OPTS)
        out["single"].append(time.perf_counter() - t)
    del df, pos, ids, w
    for workers in (1, 2):
        key = f"dask_{workers}"
        out[key] = []
        with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                      dashboard_address=None) as cluster, distributed.Client(cluster) as c:
            ddf = frame(n, a.partitions).persist()
            distributed.wait(ddf)
            for _ in range(a.reps):
                t = time.perf_counter()
                zv.dask.write_points(fresh(d / f"{key}.zarr"), ddf, object_id="cell", attributes=["w"], **OPTS)
                out[key].append(time.perf_counter() - t)
            del ddf
            c.cancel([])
    return out


def commit_model(a, d: Path) -> list:
    rows = []
    with dask.config.set(scheduler="threads"):
        for points, parts in [(a.points // 5, 4), (a.points // 5, 16), (a.points // 5, 64),
                              (a.points, 16), (a.points, 64)]:
            store = fresh(d / "model.zarr")
            zv.dask.write_points(store, frame(points, parts), object_id="cell", attributes=["w"],
                                 commit=False, **OPTS)
            receipts = sum(p.stat().st_size for p in (store / ".zv-parts").glob("part-*.json"))
            t = time.perf_counter()
            s = zv.commit_parts(store)
            secs = time.perf_counter() - t
            rows.append({"points": points, "parts": parts, "receipt_bytes": receipts,
                         "commit_s": secs, "chunks": s["chunks"], "objects": s["objects"]})
    return rows


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dir", required=True)
    p.add_argument("--points", type=int, default=5_000_000)
    p.add_argument("--partitions", type=int, default=16)
    p.add_argument("--reps", type=int, default=3)
    a = p.parse_args()
    d = Path(a.dir)
    d.mkdir(parents=True, exist_ok=True)
    t = throughput(a, d)
    n = t["points"]
    print(f"{'write ' + format(n, ',') + ' points':40} {'min s':>8} {'median s':>9} {'Mpoints/s':>10}")
    for key, label in (("single", "zv.write_points (1 process)"), ("dask_1", "zv.dask, 1 worker"),
                       ("dask_2", "zv.dask, 2 workers")):
        s = stats(t[key])
        print(f"{label:40} {s['min']:8.3f} {s['median']:9.3f} {n / s['min'] / 1e6:10.2f}")
    s1, s2 = stats(t["dask_1"]), stats(t["dask_2"])
    print(f"{'scaling, 1 worker / 2 workers':40} {s1['min'] / s2['min']:8.2f} {s1['median'] / s2['median']:9.2f}")
    model = commit_model(a, d)
    print(f"\n{'points':>10} {'parts':>6} {'chunks':>7} {'receipts MB':>12} {'B/point':>8} {'commit s':>9}")
    for r in model:
        print(f"{r['points']:10,} {r['parts']:6} {r['chunks']:7} {r['receipt_bytes'] / 1e6:12.2f} "
              f"{r['receipt_bytes'] / r['points']:8.2f} {r['commit_s']:9.3f}")
    print(json.dumps({"throughput": {k: stats(v) if isinstance(v, list) else v for k, v in t.items()},
                      "commit_model": model}))


if __name__ == "__main__":
    main()
