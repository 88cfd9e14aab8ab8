#!/usr/bin/env python3
"""Times the Python package zv reading the point store of `zv bench suite` into numpy: every
point with `intensity`, and the suite's 1% box (params.json of the peer inputs), each without
object ids (`object_ids=False`: what zarr-vectors 0.9.2's `read_points(store, bbox=…,
attribute_names=…)` returns, positions and attributes, so the like-for-like figure) and with
them (zv's extra: each point's object, found through the object index). Each repetition opens the store afresh; the time covers open +
read, as the peers' `read_points` and `box` phases do. Prints one JSON object:
{"read_points": [s, ...], "box": [...], "read_points_no_ids": [...], "box_no_ids": [...],
"count_points", "count_box"}.

Usage: python_reads.py --store DIR/zv-points.zarr --inputs DIR/inputs --reps N
"""

import argparse
import json
import time

import zv


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--store", required=True)
    p.add_argument("--inputs", required=True)
    p.add_argument("--reps", type=int, default=5)
    a = p.parse_args()
    params = json.load(open(f"{a.inputs}/params.json"))
    lo, hi = params["box_lo"], params["box_hi"]
    out = {"read_points": [], "box": [], "read_points_no_ids": [], "box_no_ids": []}
    for _ in range(a.reps):
        for ids, suffix in ((True, ""), (False, "_no_ids")):
            t = time.perf_counter()
            pts = zv.open(a.store)[0].points(attributes=["intensity"], object_ids=ids)
            out["read_points" + suffix].append(time.perf_counter() - t)
            out["count_points"] = int(pts.positions.shape[0])
            assert (pts.object_ids is not None) == ids and "intensity" in pts.attributes
            t = time.perf_counter()
            hits = zv.open(a.store)[0].points(box=(lo, hi), attributes=["intensity"], object_ids=ids)
            out["box" + suffix].append(time.perf_counter() - t)
            out["count_box"] = int(hits.positions.shape[0])
    print(json.dumps(out))


if __name__ == "__main__":
    main()
