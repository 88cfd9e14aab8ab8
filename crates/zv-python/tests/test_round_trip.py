"""zv reads back what it wrote from numpy, for every geometry and both layouts, with the
writer options of the CLI; reads return numpy arrays that own zv's buffers."""

import numpy as np
import pytest

import zv


@pytest.mark.parametrize("version", ["0.7", "0.9"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_points_round_trip(tmp_path, version, dtype):
    rng = np.random.default_rng(5)
    pos = rng.random((500, 3)) * 40 - 20
    ids = rng.integers(0, 4, 500)
    store = tmp_path / "p.zarr"
    zv.write_points(store, pos, chunk_shape=(10, 10, 10), object_ids=ids, dtype=dtype,
                    vertex_attributes={"w": rng.random((500, 2))}, format_version=version,
                    compression="zstd:3+crc32c", object_attributes={"s": np.arange(4.0)})
    s = zv.open(store)
    assert s.info()["zv_version"].startswith(version)
    got = s[0].points()
    assert got.positions.dtype == np.dtype(dtype)
    stored = pos.astype(dtype)
    order = {tuple(p): i for i, p in enumerate(stored.tolist())}
    back = np.array([order[tuple(p)] for p in got.positions.tolist()])
    assert sorted(back.tolist()) == list(range(500))
    np.testing.assert_array_equal(got.object_ids, ids[back])
    assert got.attributes["w"].shape == (500, 2)
    np.testing.assert_array_equal(s[0].object_attributes()["s"], np.arange(4.0))
    assert got.positions.base is not None  # a view of the buffer zv filled, not a copy


def test_sharded_0_9_store(tmp_path):
    rng = np.random.default_rng(9)
    pos = rng.random((400, 3)) * 60 - 30
    store = tmp_path / "s.zarr"
    zv.write_points(store, pos, chunk_shape=(10, 10, 10), format_version="0.9",
                    shard_shape=(2, 2, 2), vertex_attributes={"w": np.arange(400.0)})
    meta = __import__("json").loads((store / "0" / "vertices" / "zarr.json").read_text())
    assert meta["codecs"][0]["name"] == "sharding_indexed"
    assert meta["chunk_grid"]["configuration"]["chunk_shape"] == [2, 2, 2]
    got = zv.open(store)[0].points()
    stored = pos.astype(np.float32)
    order = {tuple(p): i for i, p in enumerate(stored.tolist())}
    back = np.array([order[tuple(p)] for p in got.positions.tolist()])
    assert sorted(back.tolist()) == list(range(400))
    np.testing.assert_array_equal(got.attributes["w"], back.astype(np.float64))
    with pytest.raises(zv.InputError, match="shard_shape"):
        zv.write_points(tmp_path / "bad", pos, chunk_shape=(10, 10, 10), shard_shape=(2, 2, 2),
                        format_version="0.7")


def test_polylines_flat_and_offsets(tmp_path):
    flat = np.array([[1, 1], [2, 2], [15, 3], [4, 4], [5, 5]], dtype=np.float64)
    offsets = np.array([0, 3, 5])
    zv.write_polylines(tmp_path / "l", flat, offsets=offsets, chunk_shape=(10, 10),
                       vertex_attributes={"t": np.arange(5, dtype=np.int16)})
    pl = zv.open(tmp_path / "l")[0].polylines()
    np.testing.assert_array_equal(pl.offsets, offsets)
    np.testing.assert_array_equal(pl.vertices, flat.astype(np.float32))
    np.testing.assert_array_equal(pl.attributes["t"], np.arange(5, dtype=np.int16))
    assert [x.tolist() for x in pl.to_list()] == [flat[:3].tolist(), flat[3:].tolist()]


def test_skeleton_round_trip(tmp_path):
    pos = np.array([[0, 0, 0], [5, 0, 0], [15, 0, 0], [5, 12, 0], [5, 25, 3]], dtype=np.float32)
    edges = np.array([[1, 0], [2, 1], [3, 1], [4, 3]])  # [child, parent]
    zv.write_skeleton(tmp_path / "k", pos, edges, chunk_shape=(10, 10, 10),
                      vertex_attributes={"radius": np.arange(5, dtype=np.float32)})
    g = zv.open(tmp_path / "k")[0].skeleton()
    got = sorted(map(tuple, g.positions[g.edges].reshape(-1, 6).tolist()))
    assert got == sorted(map(tuple, pos[edges].reshape(-1, 6).tolist()))
    o = zv.open(tmp_path / "k")[0].object(0)
    assert o.links.shape == (4, 2) and o.vertex_attributes["radius"].shape == (5,)


def test_points_box_reads_the_box_only(tmp_path):
    pos = np.array([[1, 1, 1], [11, 1, 1], [25, 25, 25]], dtype=np.float64)
    zv.write_points(tmp_path / "p", pos, chunk_shape=(10, 10, 10))
    hits = zv.open(tmp_path / "p")[0].points(box=([0, 0, 0], [12, 5, 5]))
    assert hits.positions.tolist() == [[1, 1, 1], [11, 1, 1]]
    assert hits.object_ids is None and hits.attributes == {}
