"""Stores written from numpy in the ZV 0.7 layout are read by the reference implementation (zarr-vectors 0.7.0,
run as a subprocess) with exactly the content written: points with their attributes,
objects and groups; streamlines; a graph; a mesh."""

import json
import subprocess
from pathlib import Path

import numpy as np

import zv

HERE = Path(__file__).resolve().parent


def reference(python: str, kind: str, store: Path, *extra: int) -> dict:
    cmd = [python, str(HERE / "reference_read.py"), kind, str(store), *map(str, extra)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def rows(a) -> list:
    return sorted(map(tuple, np.asarray(a, dtype=np.float64).tolist()))


def test_reference_reads_points(tmp_path, reference_python):
    rng = np.random.default_rng(7)
    n = 2000
    pos = (rng.random((n, 3)) * 100).astype(np.float32)
    ids = rng.integers(0, 9, n)
    attrs = {
        "intensity": rng.random(n).astype(np.float32),
        "normal": rng.random((n, 3)).astype(np.float32),
        "label": rng.integers(-5, 5, n).astype(np.int32),
    }
    groups = {0: [0, 1, 2], 1: [5], 2: [3, 8]}
    store = tmp_path / "points.zarr"
    summary = zv.write_points(store, pos, chunk_shape=(25, 25, 25), object_ids=ids,
                              vertex_attributes=attrs, groups=groups, format_version="0.7")
    assert summary["vertices"] == n and summary["objects"] == 9
    ref = reference(reference_python, "points", store, 9, 3)
    # the reference reads the points in zv's order, with the same attributes
    got = zv.open(store)[0].points()
    assert rows(ref["positions"]) == rows(pos)
    np.testing.assert_array_equal(np.asarray(ref["positions"], np.float32), got.positions)
    for name, a in got.attributes.items():
        np.testing.assert_array_equal(np.asarray(ref["attributes"][name]).astype(a.dtype), a)
    # per point, the attributes written travel with the point
    order = {tuple(p): i for i, p in enumerate(pos.tolist())}
    back = np.array([order[tuple(p)] for p in got.positions.tolist()])
    for name, a in attrs.items():
        np.testing.assert_array_equal(got.attributes[name], a[back])
    np.testing.assert_array_equal(got.object_ids, ids[back])
    for i in range(9):
        assert rows(ref["objects"][i]) == rows(pos[ids == i]), i
    for g, members in groups.items():
        assert rows(ref["groups"][g]) == rows(pos[np.isin(ids, members)]), g


def test_reference_reads_streamlines(tmp_path, reference_python):
    rng = np.random.default_rng(11)
    lines = [np.cumsum(rng.normal(0, 3, (int(k), 3)), axis=0) + 50 for k in rng.integers(2, 40, 25)]
    lines = [l.astype(np.float32) for l in lines]
    store = tmp_path / "streamlines.zarr"
    zv.write_streamlines(store, lines, chunk_shape=(20, 20, 20), bounds=([-100] * 3, [200] * 3), format_version="0.7")
    ref = reference(reference_python, "polylines", store)
    assert len(ref["polylines"]) == len(lines)
    for theirs, mine in zip(ref["polylines"], lines):
        np.testing.assert_array_equal(np.asarray(theirs, np.float32), mine)
    pl = zv.open(store)[0].streamlines()
    assert [len(x) for x in pl] == [len(x) for x in lines]


def test_reference_reads_a_graph(tmp_path, reference_python):
    rng = np.random.default_rng(3)
    pos = (rng.random((300, 3)) * 100).astype(np.float32)
    edges = np.stack([rng.integers(0, 300, 500), rng.integers(0, 300, 500)], axis=1)
    edges = edges[edges[:, 0] != edges[:, 1]]
    store = tmp_path / "graph.zarr"
    zv.write_graph(store, pos, edges, chunk_shape=(40, 40, 40), format_version="0.7")
    ref = reference(reference_python, "graph", store)
    xyz = np.asarray(ref["positions"])[np.asarray(ref["edges"])]
    assert sorted(xyz.tolist()) == sorted(pos.astype(np.float64)[edges].tolist())
    g = zv.open(store)[0].graph()
    assert sorted(g.positions.astype(np.float64)[g.edges].tolist()) == sorted(xyz.tolist())


def test_reference_reads_a_mesh(tmp_path, reference_python):
    # a grid of quads split into triangles, over several chunks
    n = 12
    xs, ys = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    verts = np.stack([xs.ravel() * 7.0, ys.ravel() * 7.0, (xs * ys).ravel() * 0.3], axis=1)
    verts = verts.astype(np.float32)
    faces = []
    for i in range(n - 1):
        for j in range(n - 1):
            a, b, c, d = i * n + j, (i + 1) * n + j, (i + 1) * n + j + 1, i * n + j + 1
            faces += [[a, b, c], [a, c, d]]
    faces = np.array(faces)
    store = tmp_path / "mesh.zarr"
    zv.write_mesh(store, verts, faces, chunk_shape=(30, 30, 30), format_version="0.7")
    ref = reference(reference_python, "mesh", store)

    def canon(xyz):
        out = []
        for f in xyz.tolist():
            i = f.index(min(f))
            out.append(f[i:] + f[:i])
        return sorted(out)

    theirs = canon(np.asarray(ref["vertices"])[np.asarray(ref["faces"])])
    assert theirs == canon(verts.astype(np.float64)[faces])
    m = zv.open(store)[0].mesh()
    assert canon(m.vertices.astype(np.float64)[m.faces]) == theirs
