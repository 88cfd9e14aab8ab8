"""numpy reads of every reference fixture equal the content the fixture's expected file
records (the reference's own reading, "zv-dump/1"): points and their vertex attributes in
the reference reader's order, each object's vertices, attributes and links, each point's
object, polylines, graph edges and mesh faces by coordinates, object and group attributes,
groups."""

import numpy as np
import pytest

import zv
from conftest import expected, fixture_names, fixtures_dir

FIXTURES = fixture_names()


def test_there_are_fixtures():
    assert len(FIXTURES) >= 7, FIXTURES


def as_stored(values, like: np.ndarray) -> np.ndarray:
    """Expected JSON numbers as an array of `like`'s dtype (float32 values are exact)."""
    return np.asarray(values, dtype=np.float64).astype(like.dtype).reshape(like.shape)


def rows(a: np.ndarray) -> list:
    return sorted(map(tuple, np.asarray(a, dtype=np.float64).tolist()))


def levels():
    for name in FIXTURES:
        for k in expected(name)["level_ids"]:
            yield name, k


@pytest.mark.parametrize("name,k", list(levels()))
def test_points_equal_expected(name, k):
    exp = expected(name)["levels"][str(k)]
    level = zv.open(fixtures_dir() / f"{name}.zarr")[k]
    pts = level.points()
    assert pts.positions.shape == (exp["canonical"]["vertex_count"], level.ndim)
    assert pts.positions.dtype == level.dtype
    assert rows(pts.positions) == [tuple(r) for r in exp["canonical"]["vertices_sorted"]]
    reader = exp["reader"]
    if reader.get("function") == "read_points":
        # same order as the reference reader: chunks in key order, rows in order
        np.testing.assert_array_equal(pts.positions, as_stored(reader["positions"], pts.positions))
        for a, values in reader["vertex_attributes"].items():
            np.testing.assert_array_equal(pts.attributes[a], as_stored(values, pts.attributes[a]))
        assert set(pts.attributes) == set(reader["vertex_attributes"])


@pytest.mark.parametrize("name,k", list(levels()))
def test_objects_equal_expected(name, k):
    exp = expected(name)["levels"][str(k)]
    level = zv.open(fixtures_dir() / f"{name}.zarr")[k]
    if exp["objects"] is None:
        assert level.object_ids() is None
        return
    geometry = level.geometry
    for o in exp["objects"]:
        got = level.object(o["id"])
        assert got.positions.shape[0] == o["vertex_count"]
        if o["vertex_count"]:
            np.testing.assert_array_equal(got.positions, as_stored(o["vertices"], got.positions))
        for a, values in o.get("vertex_attributes", {}).items():
            np.testing.assert_array_equal(
                got.vertex_attributes[a], as_stored(values, got.vertex_attributes[a])
            )
        if "links" in o:
            links = got.links.tolist()
            if geometry == "mesh":
                links = [f[f.index(min(f)) :] + f[: f.index(min(f))] for f in links]
            assert sorted(links) == sorted(o["links"]), o["id"]


@pytest.mark.parametrize("name,k", list(levels()))
def test_each_points_object_is_its_manifest(name, k):
    """`points().object_ids` assigns every point to the object whose manifest names it."""
    exp = expected(name)["levels"][str(k)]
    level = zv.open(fixtures_dir() / f"{name}.zarr")[k]
    pts = level.points()
    if exp["objects"] is None:
        assert pts.object_ids is None
        return
    assert pts.object_ids.dtype == np.int64 and pts.object_ids.shape == (len(pts),)
    members = {o["id"]: set(map(tuple, o["vertices"])) for o in exp["objects"]}
    # every point lies in the object it is given (the lowest id naming it)
    for p, oid in zip(pts.positions.astype(np.float64).tolist(), pts.object_ids.tolist()):
        assert tuple(p) in members[oid], (p, oid)
    if sum(o["vertex_count"] for o in exp["objects"]) == len(pts):
        # no vertex shared by two objects: each object is exactly its points
        for o in exp["objects"]:
            mine = pts.positions[pts.object_ids == o["id"]]
            assert rows(mine) == sorted(tuple(v) for v in o["vertices"]), o["id"]


@pytest.mark.parametrize("name,k", list(levels()))
def test_dense_attributes_and_groups_equal_expected(name, k):
    exp = expected(name)["levels"][str(k)]
    level = zv.open(fixtures_dir() / f"{name}.zarr")[k]
    oa = level.object_attributes()
    assert set(oa) == set(exp["object_attributes"])
    masks = level.object_attribute_masks()
    for a, e in exp["object_attributes"].items():
        assert list(oa[a].shape) == e["shape"]
        np.testing.assert_array_equal(oa[a], as_stored(e["values"], oa[a]))
        if e["present_mask"] is None:
            assert a not in masks
        else:
            assert masks[a].tolist() == [bool(x) for x in e["present_mask"]]
    ga = level.group_attributes()
    assert set(ga) == set(exp["group_attributes"])
    for a, e in exp["group_attributes"].items():
        np.testing.assert_array_equal(ga[a], as_stored(e["values"], ga[a]))
    groups = level.groups()
    if exp["groups"] is None:
        assert groups is None
    else:
        assert [g.tolist() for g in groups] == exp["groups"]


@pytest.mark.parametrize("name", [n for n in FIXTURES if expected(n)["levels"]["0"]["reader"].get("function") == "read_polylines"])
def test_polylines_equal_expected(name):
    exp = expected(name)["levels"]["0"]
    pl = zv.open(fixtures_dir() / f"{name}.zarr")[0].polylines()
    assert len(pl) == len(exp["reader"]["polylines"])
    for mine, theirs in zip(pl.to_list(), exp["reader"]["polylines"]):
        np.testing.assert_array_equal(mine, as_stored(theirs, mine))
    assert pl.offsets[0] == 0 and pl.offsets[-1] == len(pl.vertices)
    assert pl[-1].base is not None  # a view of the flat vertices


@pytest.mark.parametrize("name", [n for n in FIXTURES if "edges_xyz_sorted" in expected(n)["levels"]["0"]["canonical"]])
def test_graph_edges_equal_expected(name):
    exp = expected(name)["levels"]["0"]["canonical"]["edges_xyz_sorted"]
    g = zv.open(fixtures_dir() / f"{name}.zarr")[0].graph()
    assert g.edges.shape == (len(exp), 2)
    xyz = g.positions.astype(np.float64)[g.edges].tolist()
    assert sorted(xyz) == exp
    assert g.vertex_object_ids().shape == (len(g.positions),)


@pytest.mark.parametrize("name", [n for n in FIXTURES if "faces_xyz_sorted" in expected(n)["levels"]["0"]["canonical"]])
def test_mesh_faces_equal_expected(name):
    exp = expected(name)["levels"]["0"]["canonical"]["faces_xyz_sorted"]
    m = zv.open(fixtures_dir() / f"{name}.zarr")[0].mesh()
    faces = []
    for f in m.vertices.astype(np.float64)[m.faces].tolist():
        i = f.index(min(f))
        faces.append(f[i:] + f[:i])
    assert sorted(faces) == exp


@pytest.mark.parametrize("name", FIXTURES)
def test_box_query_equals_filtering_every_point(name):
    level = zv.open(fixtures_dir() / f"{name}.zarr")[0]
    every = level.points()
    p = every.positions.astype(np.float64)
    lo = p.min(axis=0)
    hi = p.max(axis=0)
    lo[0], hi[0] = np.quantile(p[:, 0], 0.2), np.quantile(p[:, 0], 0.7)  # a slab in x
    inside = np.all((every.positions >= lo) & (every.positions <= hi), axis=1)
    hits = level.points(box=(lo, hi))
    assert 0 < len(hits) < len(every)
    assert rows(hits.positions) == rows(every.positions[inside])
    for a in every.attributes:
        assert len(hits.attributes[a]) == len(hits)
    if every.object_ids is not None:
        mine = sorted(zip(map(tuple, hits.positions.tolist()), hits.object_ids.tolist()))
        theirs = sorted(zip(map(tuple, every.positions[inside].tolist()), every.object_ids[inside].tolist()))
        assert mine == theirs


@pytest.mark.parametrize("name", FIXTURES)
def test_fixtures_validate(name):
    report = zv.validate(fixtures_dir() / f"{name}.zarr", 3)
    assert report["level"] == 3 and "findings" in report
