"""Distributed writes from Python: parts written in any order (each from the rows routed to
it by ``part_owners``, or from the whole input with ``owned_only``) and a commit give the
store ``write_points`` makes of the same rows, file for file; before the commit nothing opens
and the commit names the missing parts."""

from pathlib import Path

import numpy as np
import pytest

import zv


def files(root: Path) -> dict:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def data(n=4000, seed=3):
    rng = np.random.default_rng(seed)
    pos = rng.random((n, 3)) * 100
    ids = rng.integers(0, 25, n)
    attrs = {"w": rng.random(n).astype(np.float32), "rg": rng.integers(0, 9, (n, 2)).astype(np.uint16)}
    return pos, ids, attrs


@pytest.mark.parametrize("routed", [True, False])
def test_parts_then_commit_is_the_single_write(tmp_path, routed):
    pos, ids, attrs = data()
    opts = dict(chunk_shape=(20, 20, 25), compression="zstd:1")
    zv.write_points(tmp_path / "one", pos, object_ids=ids, vertex_attributes=attrs,
                    object_attributes={"s": np.arange(25.0)}, **opts)
    store = tmp_path / "parts"
    plan = zv.prepare_parts(store, 3, **opts)
    assert plan["parts"] == 3
    owners = zv.part_owners(store, pos)
    assert owners.shape == (len(pos),) and set(owners.tolist()) == {0, 1, 2}
    written = 0
    for k in (2, 0):
        if routed:
            m = owners == k
            r = zv.write_part(store, k, pos[m], object_ids=ids[m],
                              vertex_attributes={n: a[m] for n, a in attrs.items()}, owned_only=False)
        else:
            r = zv.write_part(store, k, pos, object_ids=ids, vertex_attributes=attrs)
        assert r["vertices"] == int((owners == k).sum())
        written += r["vertices"]
    assert zv.missing_parts(store) == [1]
    with pytest.raises(zv.ZvError):
        zv.open(store)
    with pytest.raises(zv.InputError, match="1 of 3 parts"):
        zv.commit_parts(store, object_attributes={"s": np.arange(25.0)})
    zv.write_part(store, 1, pos, object_ids=ids, vertex_attributes=attrs)
    summary = zv.commit_parts(store, object_attributes={"s": np.arange(25.0)})
    assert summary["vertices"] == len(pos) and summary["objects"] == 25
    assert files(store) == files(tmp_path / "one")


def test_a_row_of_another_part_is_refused(tmp_path):
    pos, ids, _ = data(500)
    store = tmp_path / "s"
    zv.prepare_parts(store, 2, chunk_shape=(10, 10, 10))
    owners = zv.part_owners(store, pos)
    with pytest.raises(zv.InputError, match="not this part"):
        zv.write_part(store, 0, pos[owners == 1], object_ids=ids[owners == 1], owned_only=False)
    with pytest.raises(zv.ZvError, match="another distributed write"):
        zv.prepare_parts(store, 3, chunk_shape=(10, 10, 10))


def walks(n=300, seed=5):
    """``n`` random walks in ``[0, 100)^3`` crossing chunks of 20, flat with offsets."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(2, 40, n)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    steps = rng.uniform(-4, 4, (offsets[-1], 3))
    pos = np.empty_like(steps)
    for i in range(n):
        a, b = offsets[i], offsets[i + 1]
        pos[a:b] = np.clip(rng.random(3) * 100 + np.cumsum(steps[a:b], axis=0), 0, 99.9)
    return pos, offsets


def test_streamline_parts_from_routed_polylines_are_the_single_write(tmp_path):
    pos, offsets = walks()
    fa = np.arange(len(pos), dtype=np.float32)
    opts = dict(chunk_shape=(20, 20, 25), compression="zstd:1")
    zv.write_streamlines(tmp_path / "one", pos, offsets=offsets, vertex_attributes={"fa": fa}, **opts)
    store = tmp_path / "parts"
    zv.prepare_parts(store, 3, geometry="streamline", **opts)
    index, part = zv.polyline_parts(store, pos, offsets)
    assert (np.diff(index) >= 0).all() and set(part.tolist()) == {0, 1, 2}
    assert len(index) > len(offsets) - 1, "some streamlines go to two parts"
    for k in (1, 2, 0):
        mine = index[part == k]
        rows = np.concatenate([np.arange(offsets[i], offsets[i + 1]) for i in mine])
        lengths = offsets[mine + 1] - offsets[mine]
        offs = np.zeros(len(mine) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offs[1:])
        zv.write_part(store, k, pos[rows], offsets=offs, polyline_ids=mine,
                      vertex_attributes={"fa": fa[rows]})
    summary = zv.commit_parts(store)
    assert summary["objects"] == len(offsets) - 1
    assert files(store) == files(tmp_path / "one")


def test_a_streamline_withheld_from_a_part_is_named_by_the_commit(tmp_path):
    pos, offsets = walks(50, seed=8)
    store = tmp_path / "parts"
    zv.prepare_parts(store, 2, geometry="streamline", chunk_shape=(20, 20, 25))
    index, part = zv.polyline_parts(store, pos, offsets)
    both = [i for i in set(index.tolist()) if (index == i).sum() == 2]
    lost = both[0]
    for k in (0, 1):
        mine = index[(part == k) & ~((index == lost) & (k == 1))]
        rows = np.concatenate([np.arange(offsets[i], offsets[i + 1]) for i in mine])
        offs = np.zeros(len(mine) + 1, dtype=np.int64)
        np.cumsum(offsets[mine + 1] - offsets[mine], out=offs[1:])
        zv.write_part(store, k, pos[rows], offsets=offs, polyline_ids=mine)
    with pytest.raises(zv.InputError, match=f"polyline {lost}: piece .* is in no receipt"):
        zv.commit_parts(store)
    with pytest.raises(zv.ZvError):
        zv.open(store)
    with pytest.raises(zv.InputError, match="polyline_ids go with offsets"):
        zv.write_part(store, 0, pos, polyline_ids=[0])



@pytest.mark.parametrize("version", ["0.7", "0.9"])
def test_a_pyramid_built_with_a_tiny_memory_budget_is_the_same_store(tmp_path, version):
    # the coarse levels' writers spill their vertex records past the budget: the same files
    rng = np.random.default_rng(11)
    n = 3000
    pos, ids = rng.random((n, 3)) * 100, np.arange(n) % 40
    stores = []
    for name, budget in (("default", None), ("tiny", 4096)):
        path = tmp_path / f"{name}.zarr"
        zv.write_points(path, pos, object_ids=ids, chunk_shape=(20, 20, 20),
                        bin_shape=(5, 5, 5), compression="zstd:1", format_version=version)
        summary = zv.build_pyramid(path, "2;2", chunk_scale=[1, 2], memory_budget=budget)
        assert [s["level"] for s in summary] == [1, 2]
        stores.append(path)
    assert files(stores[0]) == files(stores[1])
    assert any(k.startswith("2/") for k in files(stores[0]))
