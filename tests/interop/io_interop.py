"""Files written and read by widely used Python libraries, for zv-io's tests.

    io_interop.py write-ply DIR     plyfile point clouds (ascii, binary LE, binary BE) and a
                                    trimesh mesh, with the expected content as JSON
    io_interop.py write-csv DIR     a pandas point cloud CSV, with the expected content
    io_interop.py read-ply FILE     what plyfile (and trimesh, for meshes) read, as JSON
    io_interop.py read-csv FILE     what pandas reads, as JSON
    io_interop.py write-stl DIR     a trimesh mesh as binary and ascii STL and as OBJ, with the
                                    expected content
    io_interop.py read-mesh FILE    what trimesh reads (any mesh format), as JSON
    io_interop.py write-graph DIR   a pandas graph: nodes.csv (with an `id` column, or without
                                    for DIR ending `-noid`) and edges.csv
    io_interop.py read-graph FILE [EDGES]
                                    what pandas reads of FILE and EDGES (default FILE's
                                    `.edges.csv`), as JSON

Floats are printed as Python floats (float32 values widened exactly), so comparisons are
bit for bit.
"""
import json
import os
import sys

import numpy as np


def write_ply(d):
    from plyfile import PlyData, PlyElement
    import trimesh

    rng = np.random.default_rng(7)
    n = 500
    v = np.zeros(n, dtype=[("x", "f4"), ("y", "f4"), ("z", "f4"), ("red", "u1"),
                           ("intensity", "f8"), ("s", "i2")])
    v["x"] = rng.uniform(-50, 50, n)
    v["y"] = rng.uniform(0, 10, n)
    v["z"] = rng.uniform(-1, 1, n)
    v["red"] = rng.integers(0, 256, n)
    v["intensity"] = rng.normal(size=n)
    v["s"] = rng.integers(-30000, 30000, n)
    el = PlyElement.describe(v, "vertex")
    PlyData([el], text=True).write(os.path.join(d, "points_ascii.ply"))
    PlyData([el], byte_order="<").write(os.path.join(d, "points_le.ply"))
    PlyData([el], byte_order=">").write(os.path.join(d, "points_be.ply"))
    rows = [[float(r[k]) for k in ("x", "y", "z", "red", "intensity", "s")] for r in v]
    mesh = trimesh.creation.icosphere(subdivisions=2, radius=3.0)
    mesh.export(os.path.join(d, "mesh.ply"))
    quads = np.array([[0, 1, 2, 3], [1, 4, 5, 2]], dtype="i4")
    qv = np.array([(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0), (2, 0, 0), (2, 1, 0)],
                  dtype=[("x", "f8"), ("y", "f8"), ("z", "f8")])
    qf = np.empty(2, dtype=[("vertex_indices", "i4", (4,)), ("quality", "f4")])
    qf["vertex_indices"] = quads
    qf["quality"] = [0.5, 0.25]
    PlyData([PlyElement.describe(qv, "vertex"), PlyElement.describe(qf, "face")],
            byte_order=">").write(os.path.join(d, "quads_be.ply"))
    # what plyfile stored (it writes the scalar after a list in native order: read it back)
    quality = PlyData.read(os.path.join(d, "quads_be.ply"))["face"]["quality"].tolist()
    json.dump({
        "points": rows,
        # trimesh writes float32 positions: the expected ones are what it wrote
        "mesh": {"vertices": mesh.vertices.astype("f4").astype("f8").tolist(),
                 "faces": mesh.faces.tolist()},
        "quads": {"vertices": [list(map(float, r)) for r in qv], "faces": quads.tolist(),
                  "quality": quality},
    }, open(os.path.join(d, "expected.json"), "w"))


def write_csv(d):
    import pandas as pd

    rng = np.random.default_rng(11)
    n = 300
    df = pd.DataFrame({
        "x": rng.uniform(-1e3, 1e3, n), "y": rng.uniform(0, 1, n), "z": rng.normal(size=n),
        "label": rng.choice(["axon", "dendrite", "soma"], n),
        "value": rng.normal(size=n) * 1e-7,
        "object_id": rng.integers(0, 20, n),
    })
    df.to_csv(os.path.join(d, "points.csv"), index=False)
    json.dump({c: df[c].tolist() for c in df.columns}, open(os.path.join(d, "expected.json"), "w"))


def write_graph(d):
    """Nodes (with an `id` column, or, for DIR ending `-noid`, without) and an edge list."""
    import pandas as pd

    rng = np.random.default_rng(13)
    n, m = 200, 500
    with_id = not d.endswith("-noid")
    nodes = pd.DataFrame({
        "x": rng.uniform(-1e3, 1e3, n), "y": rng.uniform(0, 1, n), "z": rng.normal(size=n),
        "weight": rng.normal(size=n),
    })
    if with_id:
        nodes.insert(0, "id", rng.permutation(np.arange(1000, 1000 + 7 * n, 7)))
    ids = nodes["id"].to_numpy() if with_id else np.arange(n)
    pairs = set()
    while len(pairs) < m:
        s, t = rng.integers(0, n, 2)
        if s != t:
            pairs.add((int(s), int(t)))
    pairs = sorted(pairs)
    edges = pd.DataFrame({
        "source": [ids[s] for s, _ in pairs], "target": [ids[t] for _, t in pairs],
        "length": rng.uniform(0, 10, m), "capacity": rng.integers(0, 100, m),
    })
    nodes.to_csv(os.path.join(d, "nodes.csv"), index=False)
    edges.to_csv(os.path.join(d, "edges.csv"), index=False)


def read_graph(path, edges_path=None):
    """The nodes at PATH and the edges at EDGES (default PATH's `.edges.csv`), as pandas
    reads them."""
    import pandas as pd

    nodes = pd.read_csv(path)
    edges = pd.read_csv(edges_path or path[: -len(".csv")] + ".edges.csv")
    print(json.dumps({"nodes": {c: nodes[c].tolist() for c in nodes.columns},
                      "edges": {c: edges[c].tolist() for c in edges.columns}}))


def read_ply(path):
    from plyfile import PlyData
    import trimesh

    ply = PlyData.read(path)
    out = {"text": ply.text, "byte_order": ply.byte_order, "elements": {}}
    for el in ply.elements:
        props = {}
        for p in el.properties:
            col = el.data[p.name]
            props[p.name] = [list(map(int, r)) for r in col] if col.dtype == object else col.tolist()
        out["elements"][el.name] = {"count": el.count, "dtypes": {p.name: str(el.data[p.name].dtype) for p in el.properties}, "properties": props}
    if "face" in out["elements"]:
        m = trimesh.load(path, process=False)
        out["trimesh"] = {"vertices": m.vertices.tolist(), "faces": m.faces.tolist()}
    print(json.dumps(out))


def write_stl(d):
    import trimesh

    mesh = trimesh.creation.icosphere(subdivisions=2, radius=2.5)
    mesh.apply_translation([10.0, -3.0, 0.5])
    with open(os.path.join(d, "mesh.stl"), "wb") as f:
        f.write(trimesh.exchange.stl.export_stl(mesh))
    with open(os.path.join(d, "mesh_ascii.stl"), "w") as f:
        f.write(trimesh.exchange.stl.export_stl_ascii(mesh))
    with open(os.path.join(d, "mesh.obj"), "w") as f:
        f.write(trimesh.exchange.obj.export_obj(mesh, include_normals=True, digits=17))
    v = mesh.vertices.astype("f4").astype("f8")
    json.dump({"vertices": mesh.vertices.tolist(), "faces": mesh.faces.tolist()},
              open(os.path.join(d, "expected_obj.json"), "w"))
    json.dump({"vertices": v.tolist(), "faces": mesh.faces.tolist()},
              open(os.path.join(d, "expected.json"), "w"))


def read_mesh(path):
    import trimesh

    m = trimesh.load(path, process=False)
    print(json.dumps({"vertices": m.vertices.tolist(), "faces": m.faces.tolist()}))


def read_csv(path):
    import pandas as pd

    df = pd.read_csv(path)
    print(json.dumps({"columns": {c: df[c].tolist() for c in df.columns},
                      "dtypes": {c: str(df[c].dtype) for c in df.columns}}))


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    {"write-ply": write_ply, "write-csv": write_csv, "write-stl": write_stl, "read-mesh": read_mesh, "read-ply": read_ply, "read-csv": read_csv,
     "write-graph": write_graph, "read-graph": read_graph}[cmd](*args)
