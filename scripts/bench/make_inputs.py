#!/usr/bin/env python3
"""Write a small deterministic benchmark input directory for scripts/bench/peer.py.

Same file formats as the Rust benchmark harness writes:

  params.json            {"chunk_shape", "bounds", "box_lo", "box_hi"}
  points.f32             N x 3 float32, little-endian, C order
  object_ids.i64         N int64
  intensity.f32          N float32 (vertex attribute "intensity")
  polylines.f32          V x 3 float32 (all polyline vertices concatenated)
  polyline_offsets.i64   P + 1 int64 row offsets (0, ..., V)

Points are uniform in [0, 1000)^3 with object ids uniform in [0, objects);
polylines are random walks (step sd 10) that start uniform in [100, 900)^3
and are clamped to [0, 999.9]. Needs only numpy.

Usage: make_inputs.py --out DIR [--points N] [--polylines P] [--length L]
                      [--seed S] [--objects K] [--bin-shape B]
"""

from __future__ import annotations

import argparse
import json
import os

import numpy as np

EXTENT = 1000.0
PARAMS = {
    "chunk_shape": [100, 100, 100],
    "bounds": [[0, 0, 0], [1000, 1000, 1000]],
    "box_lo": [400, 400, 400],
    "box_hi": [615.44, 615.44, 615.44],
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="output directory (created)")
    ap.add_argument("--points", type=int, default=20_000)
    ap.add_argument("--polylines", type=int, default=200)
    ap.add_argument("--length", type=int, default=20, help="vertices per polyline")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--objects", type=int, default=100, help="object ids in [0, K)")
    ap.add_argument("--bin-shape", type=float, default=None, metavar="B",
                    help="also write params.json bin_shape [B, B, B] (optional key, "
                         "not written by the Rust harness; peer.py passes it to the writers)")
    a = ap.parse_args()
    if a.points < 1 or a.polylines < 1 or a.length < 2 or a.objects < 1:
        ap.error("need --points >= 1, --polylines >= 1, --length >= 2, --objects >= 1")

    rng = np.random.default_rng(a.seed)
    os.makedirs(a.out, exist_ok=True)

    pts = rng.uniform(0.0, EXTENT, size=(a.points, 3)).astype("<f4")
    # float32 rounding can turn 999.99997 into 1000.0: keep [0, 1000).
    np.minimum(pts, np.nextafter(np.float32(EXTENT), np.float32(0)), out=pts)
    ids = rng.integers(0, a.objects, size=a.points, dtype=np.int64).astype("<i8")
    inten = rng.random(a.points, dtype=np.float64).astype("<f4")

    starts = rng.uniform(100.0, 900.0, size=(a.polylines, 1, 3))
    steps = rng.normal(0.0, 10.0, size=(a.polylines, a.length - 1, 3))
    walks = np.concatenate([starts, starts + np.cumsum(steps, axis=1)], axis=1)
    walks = np.clip(walks, 0.0, EXTENT - 0.1).astype("<f4")
    poly = walks.reshape(-1, 3)
    offsets = (np.arange(a.polylines + 1, dtype=np.int64) * a.length).astype("<i8")

    pts.tofile(os.path.join(a.out, "points.f32"))
    ids.tofile(os.path.join(a.out, "object_ids.i64"))
    inten.tofile(os.path.join(a.out, "intensity.f32"))
    poly.tofile(os.path.join(a.out, "polylines.f32"))
    offsets.tofile(os.path.join(a.out, "polyline_offsets.i64"))
    params = dict(PARAMS)
    if a.bin_shape is not None:
        params["bin_shape"] = [a.bin_shape] * 3
    with open(os.path.join(a.out, "params.json"), "w") as f:
        json.dump(params, f, indent=1)
        f.write("\n")
    print(f"{a.out}: {a.points} points, {a.polylines} polylines x {a.length} vertices")


if __name__ == "__main__":
    main()
