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
