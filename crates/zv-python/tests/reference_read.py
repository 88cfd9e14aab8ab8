"""Run with the reference Python (zarr-vectors 0.7.0): reads a store with the reference's
high-level readers and prints what they return as JSON (numbers as float64 reprs of the
stored values). Usage: reference_read.py KIND STORE [OBJECTS] [GROUPS]."""

import json
import sys

import numpy as np
from zarr_vectors.types import graphs, meshes, points, polylines


def out(a):
    return np.asarray(a).astype(np.float64 if np.asarray(a).dtype.kind == "f" else np.int64).tolist()


def main():
    kind, store = sys.argv[1], sys.argv[2]
    n_objects = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    n_groups = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    r = {}
    if kind == "points":
        p = points.read_points(store, attribute_names=["intensity", "normal", "label"])
        r["positions"] = out(p["positions"])
        r["attributes"] = {k: out(v) for k, v in p["vertex_attributes"].items()}
        r["objects"] = [out(points.read_points(store, object_ids=[i])["positions"]) for i in range(n_objects)]
        r["groups"] = [out(points.read_points(store, group_ids=[g])["positions"]) for g in range(n_groups)]
    elif kind == "polylines":
        p = polylines.read_polylines(store)
        # each polyline comes as its pieces (one per chunk run): concatenated
        r["polylines"] = [
            out(np.concatenate([np.asarray(s).reshape(-1, 3) for s in x]) if isinstance(x, list) else x)
            for x in p["polylines"]
        ]
    elif kind == "graph":
        g = graphs.read_graph(store)
        r["positions"], r["edges"] = out(g["positions"]), out(g["edges"])
    elif kind == "mesh":
        m = meshes.read_mesh(store)
        r["vertices"], r["faces"] = out(m["vertices"]), out(m["faces"])
    print(json.dumps(r))


if __name__ == "__main__":
    main()
