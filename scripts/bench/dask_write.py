#!/usr/bin/env python3
"""Dask write throughput and the commit's cost, measured in one run.

1. Throughput: N points (object ids below 1000, one float32 attribute, uniform in
   [0, 1000)^3, chunk 100^3) written by the single-process writer (`zv.write_points`) and by
   `zv.dask.write_points` on a LocalCluster of 1 and of 2 worker processes (the input
   persisted on the cluster first, so generating it is not timed). Prints min / median over
   the repetitions, points per second, and the scaling ratio (1 worker / 2 workers).
2. The commit model: for several part counts and point counts, the parts are written
   (`commit=False`), the receipts' total size is measured, then `zv.commit_parts` is timed.
3. The same for streamlines (`zv.dask.write_streamlines`, random walks of 10 to 60 points
   with steps up to 8 per axis in [0, 1000)^3, chunk 100^3): receipt bytes per piece, commit.
4. Pyramids (`--pyramid`): levels "2;2" of the N points (bins of 25) built by
   `zv.build_pyramid` in one process and by `zv.dask.build_pyramid` (16 parts) on 1 and 2
   workers, each on a fresh copy of the level-0 store (copied outside the timing).

Usage: dask_write.py --dir DIR [--points N] [--partitions P] [--reps R] [--streamlines S]
                     [--streamlines-only] [--pyramid]
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


def walks(seed, n):
    """``n`` random-walk streamlines (10 to 60 points, steps up to 8) in [0, 1000)^3."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        k = int(rng.integers(10, 61))
        out.append(np.clip(rng.random(3) * 1000 + np.cumsum(rng.uniform(-8, 8, (k, 3)), axis=0), 0, 999.9))
    return out


def streamline_model(a, d: Path) -> list:
    import dask.bag as db

    rows = []
    with dask.config.set(scheduler="threads"):
        for lines, parts in [(a.streamlines, 4), (a.streamlines, 16), (a.streamlines, 64),
                             (a.streamlines * 5, 16), (a.streamlines * 5, 64)]:
            store = fresh(d / "lines.zarr")
            per = lines // 16
            bag = db.from_delayed([dask.delayed(walks)(2000 + i, per) for i in range(16)])
            zv.dask.write_streamlines(store, bag, parts=parts, commit=False, **OPTS)
            files = list((store / ".zv-parts").glob("part-*.json"))
            receipts = sum(p.stat().st_size for p in files)
            pieces = sum(len(json.loads(p.read_bytes()).get("pieces", [])) for p in files)
            t = time.perf_counter()
            s = zv.commit_parts(store)
            secs = time.perf_counter() - t
            rows.append({"streamlines": per * 16, "parts": parts, "vertices": s["vertices"],
                         "pieces": pieces, "receipt_bytes": receipts, "commit_s": secs,
                         "chunks": s["chunks"]})
    return rows


def pyramid_throughput(a, d: Path) -> dict:
    base = fresh(d / "pyramid-base.zarr")
    n = a.points
    rng = np.random.default_rng(5)
    zv.write_points(base, rng.random((n, 3)) * 1000, object_ids=rng.integers(0, 1000, n),
                    vertex_attributes={"w": rng.random(n).astype(np.float32)},
                    chunk_shape=(100, 100, 100), bin_shape=(25, 25, 25), compression="none")
    out = {"points": n, "single": []}

    def copy():
        target = fresh(d / "pyramid.zarr")
        shutil.copytree(base, target)
        return target

    for _ in range(a.reps):
        target = copy()
        t = time.perf_counter()
        zv.build_pyramid(target, "2;2", compression="none")
        out["single"].append(time.perf_counter() - t)
    for workers in (1, 2):
        key = f"dask_{workers}"
        out[key] = []
        with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                      dashboard_address=None) as cluster, distributed.Client(cluster):
            for _ in range(a.reps):
                target = copy()
                t = time.perf_counter()
                zv.dask.build_pyramid(target, "2;2", parts=16, compression="none")
                out[key].append(time.perf_counter() - t)
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dir", required=True)
    p.add_argument("--points", type=int, default=5_000_000)
    p.add_argument("--partitions", type=int, default=16)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--streamlines", type=int, default=20_000)
    p.add_argument("--streamlines-only", action="store_true",
                   help="only the streamline commit model (3.)")
    p.add_argument("--pyramid", action="store_true", help="only the pyramid figures (4.)")
    a = p.parse_args()
    d = Path(a.dir)
    d.mkdir(parents=True, exist_ok=True)
    if a.pyramid:
        t = pyramid_throughput(a, d)
        print(f"{'pyramid 2;2 of ' + format(t['points'], ',') + ' points':40} {'min s':>8} {'median s':>9}")
        for key, label in (("single", "zv.build_pyramid (1 process)"),
                           ("dask_1", "zv.dask.build_pyramid, 1 worker"),
                           ("dask_2", "zv.dask.build_pyramid, 2 workers")):
            s = stats(t[key])
            print(f"{label:40} {s['min']:8.3f} {s['median']:9.3f}")
        s1, s2 = stats(t["dask_1"]), stats(t["dask_2"])
        print(f"{'scaling, 1 worker / 2 workers':40} {s1['min'] / s2['min']:8.2f} "
              f"{s1['median'] / s2['median']:9.2f}")
        print(json.dumps({"pyramid": {k: stats(v) if isinstance(v, list) else v for k, v in t.items()}}))
        return
    if a.streamlines_only:
        t, model = {}, []
    else:
        t, model = points_figures(a, d)
    lines = streamline_model(a, d)
    print(f"\n{'streamlines':>11} {'parts':>6} {'vertices':>10} {'pieces':>9} {'receipts MB':>12} "
          f"{'B/piece':>8} {'commit s':>9}")
    for r in lines:
        print(f"{r['streamlines']:11,} {r['parts']:6} {r['vertices']:10,} {r['pieces']:9,} "
              f"{r['receipt_bytes'] / 1e6:12.2f} {r['receipt_bytes'] / max(r['pieces'], 1):8.1f} "
              f"{r['commit_s']:9.3f}")
    print(json.dumps({"throughput": {k: stats(v) if isinstance(v, list) else v for k, v in t.items()},
                      "commit_model": model, "streamline_model": lines}))


def points_figures(a, d: Path):
    """Parts 1 and 2 (throughput, the points' commit model), printed; returns both."""
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
    return t, model


if __name__ == "__main__":
    main()
