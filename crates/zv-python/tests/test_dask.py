"""zv.dask on a real cluster (``distributed.LocalCluster``, 2 worker processes): 5M points with
object ids and an attribute in 16 partitions, and 20k streamlines with an attribute in 16
partitions, give the store one process writes, file for file; a worker killed inside a task
on its first attempt (the task is retried elsewhere) gives the same store; a client killed
before the commit leaves nothing that opens, and running the write again resumes and
completes it; the same on a local S3 server."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dask
import dask.bag as db
import dask.dataframe as dd  # installed by the README's test command: a missing one fails
import distributed

import zv
import zv.dask


def files(root: Path) -> dict:
    """The store's files by key, without the temporary files a killed write leaves
    (``.NAME.zv-tmp.PID.N``: the store never lists them)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".zv-tmp." not in p.name}


def points(n, seed=1):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "x": rng.random(n) * 1000, "y": rng.random(n) * 1000, "z": rng.random(n) * 1000,
        "cell": rng.integers(0, 1000, n), "w": rng.random(n).astype(np.float32),
    })


OPTS = dict(chunk_shape=(100, 100, 100), compression="none")


def single(tmp_path, df):
    one = tmp_path / "one.zarr"
    zv.write_points(one, df[["x", "y", "z"]].to_numpy(), object_ids=df["cell"].to_numpy(),
                    vertex_attributes={"w": df["w"].to_numpy()}, **OPTS)
    return files(one)


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as c:
        yield c


def partition(i):
    """Partition ``i`` of the 5M-point input, made where it is needed (on a worker)."""
    return points(5_000_000 // 16, seed=100 + i)


def test_five_million_points_in_sixteen_partitions_on_two_workers(tmp_path, client):
    # each worker makes its partitions; the single process concatenates the same ones
    ddf = dd.from_map(partition, range(16))
    df = pd.concat([partition(i) for i in range(16)], ignore_index=True)
    out = tmp_path / "dask.zarr"
    summary = zv.dask.write_points(out, ddf, object_id="cell", attributes=["w"], **OPTS)
    assert summary["vertices"] == 5_000_000 and summary["objects"] == 1000
    assert summary["parts"] == list(range(16))
    assert files(out) == single(tmp_path, df)
    got = zv.open(out)[0].points()
    assert got.positions.shape == (5_000_000, 3)


@pytest.mark.parametrize("shard", [None, (2, 2, 2)])
def test_zero_nine_points_in_partitions_are_the_single_writers_store(tmp_path, client, shard):
    df = pd.concat([points(5_000, seed=300 + i) for i in range(4)], ignore_index=True)
    layout = dict(format_version="0.9", shard_shape=shard)
    one = tmp_path / "one.zarr"
    zv.write_points(one, df[["x", "y", "z"]].to_numpy(), object_ids=df["cell"].to_numpy(),
                    vertex_attributes={"w": df["w"].to_numpy()}, **OPTS, **layout)
    ddf = dd.from_pandas(df, npartitions=4, sort=False)
    store = tmp_path / "dask.zarr"
    zv.dask.write_points(store, ddf, object_id="cell", attributes=["w"], **OPTS, **layout)
    assert files(store) == files(one)
    assert zv.open(store).info()["zv_version"].startswith("0.9")


def test_a_worker_killed_in_a_task_is_retried_to_the_same_store(tmp_path, client):
    df = points(200_000, seed=2)
    ddf = dd.from_pandas(df, npartitions=8)
    marker = tmp_path / "killed-once"

    def kill_once(k, marker=str(marker)):
        if k == 3 and not os.path.exists(marker):
            open(marker, "w").close()
            os._exit(1)

    out = tmp_path / "dask.zarr"
    zv.dask.write_points(out, ddf, object_id="cell", attributes=["w"], on_part=kill_once, **OPTS)
    assert marker.exists(), "the worker was not killed"
    assert files(out) == single(tmp_path, df)


CLIENT = textwrap.dedent("""
    import sys, numpy as np, pandas as pd, dask, dask.dataframe as dd, zv.dask
    rng = np.random.default_rng(3)
    n = 300_000
    df = pd.DataFrame({"x": rng.random(n) * 1000, "y": rng.random(n) * 1000,
                       "z": rng.random(n) * 1000, "cell": rng.integers(0, 1000, n),
                       "w": rng.random(n).astype(np.float32)})
    with dask.config.set(scheduler="threads"):
        zv.dask.write_points(sys.argv[1], dd.from_pandas(df, npartitions=6), object_id="cell",
                             attributes=["w"], chunk_shape=(100, 100, 100), compression="none",
                             commit=sys.argv[2] == "commit")
""")


def test_a_client_killed_before_the_commit_leaves_no_store_and_a_rerun_completes_it(tmp_path):
    script = tmp_path / "client.py"
    script.write_text(CLIENT)
    out = tmp_path / "dask.zarr"
    # killed at some moment of its run, then a client that stops before the commit
    p = subprocess.Popen([sys.executable, str(script), str(out), "commit"])
    time.sleep(2.0)
    p.send_signal(signal.SIGKILL)
    p.wait()
    try:
        zv.open(out)
        finished = True  # it committed before the kill: whole, or it would not open
    except zv.ZvError:
        finished = False
    if finished:
        import shutil
        shutil.rmtree(out)
    subprocess.run([sys.executable, str(script), str(out), "stage"], check=True)
    with pytest.raises(zv.ZvError):
        zv.open(out)
    assert zv.missing_parts(out) == []
    # the rerun resumes: no part is written again, the commit completes the store
    subprocess.run([sys.executable, str(script), str(out), "commit"], check=True)
    rng = np.random.default_rng(3)
    n = 300_000
    df = pd.DataFrame({"x": rng.random(n) * 1000, "y": rng.random(n) * 1000,
                       "z": rng.random(n) * 1000, "cell": rng.integers(0, 1000, n),
                       "w": rng.random(n).astype(np.float32)})
    assert files(out) == single(tmp_path, df)


def test_zv_dask_writes_to_s3(tmp_path, client, s3_server):
    df = points(100_000, seed=4)
    ddf = dd.from_pandas(df, npartitions=5)
    url = "s3://zv-test/points.zarr"
    # 64 chunks: the local S3 server answers a few hundred requests a second
    opts = dict(OPTS, chunk_shape=(250, 250, 250))
    summary = zv.dask.write_points(url, ddf, object_id="cell", attributes=["w"],
                                   storage_options=s3_server, **opts)
    assert summary["vertices"] == 100_000
    zv.write_points(tmp_path / "one.zarr", df[["x", "y", "z"]].to_numpy(),
                    object_ids=df["cell"].to_numpy(), vertex_attributes={"w": df["w"].to_numpy()},
                    **opts)
    got, want = zv.open(url)[0].points(), zv.open(tmp_path / "one.zarr")[0].points()
    np.testing.assert_array_equal(got.positions, want.positions)
    np.testing.assert_array_equal(got.object_ids, want.object_ids)
    np.testing.assert_array_equal(got.attributes["w"], want.attributes["w"])
    assert zv.validate(url, 3)["errors"] == 0
    with pytest.raises(zv.ZvError):
        zv.missing_parts(url)  # the plan is gone with the commit


def test_read_points_partitions_are_the_level_read_row_for_row(tmp_path, client):
    rng = np.random.default_rng(6)
    pos = rng.random((60_000, 3)) * 1000
    ids = rng.integers(0, 50, 60_000)
    rg = rng.integers(0, 255, (60_000, 2)).astype(np.uint8)
    store = tmp_path / "r.zarr"
    zv.write_points(store, pos, object_ids=ids, vertex_attributes={"rg": rg, "w": pos[:, 0]},
                    chunk_shape=(100, 100, 100))
    box = ([100, 200, 300], [700, 650.5, 900])
    for b in (None, box):
        d = zv.dask.read_points(store, box=b, chunks_per_partition=37)
        assert d.npartitions == -(-len(zv.open(store)[0].chunk_keys()) // 37)
        assert list(d.columns) == ["x", "y", "z", "object_id", "rg_0", "rg_1", "w"]
        got = d.compute()
        want = zv.open(store)[0].points(b)
        np.testing.assert_array_equal(got[["x", "y", "z"]].to_numpy(), want.positions)
        np.testing.assert_array_equal(got["object_id"].to_numpy(), want.object_ids)
        np.testing.assert_array_equal(got[["rg_0", "rg_1"]].to_numpy(), want.attributes["rg"])
        np.testing.assert_array_equal(got["w"].to_numpy(), want.attributes["w"])
    assert len(got) < 60_000 / 4
    # a level's chunk subset: exactly those chunks' points
    keys = zv.open(store)[0].chunk_keys()
    some = zv.open(store)[0].points(chunks=keys[5:9], attributes=[])
    per_chunk = sum(len(zv.open(store)[0].points(chunks=[k], attributes=[]).positions) for k in keys[5:9])
    assert len(some.positions) == per_chunk > 0


def streamlines(i, n):
    """Input partition ``i``: ``n`` random-walk streamlines of 10 to 60 points in
    ``[0, 1000)^3`` (steps up to 8 per axis, so they cross chunks of 100), each with a
    per-point ``fa``; every 97th is empty."""
    rng = np.random.default_rng(1000 + i)
    out = []
    for j in range(n):
        k = 0 if (i * n + j) % 97 == 96 else int(rng.integers(10, 61))
        start = rng.random(3) * 1000
        walk = np.clip(start + np.cumsum(rng.uniform(-8, 8, (k, 3)), axis=0), 0, 999.9)
        out.append({"positions": walk, "fa": rng.random(k).astype(np.float32)})
    return out


def streamline_bag(partitions, per_partition):
    return db.from_delayed([dask.delayed(streamlines)(i, per_partition) for i in range(partitions)])


def single_streamlines(path, partitions, per_partition, **opts):
    lines = [s for i in range(partitions) for s in streamlines(i, per_partition)]
    zv.write_streamlines(path, [s["positions"] for s in lines],
                         vertex_attributes={"fa": [s["fa"] for s in lines]}, **opts)
    return lines


def test_twenty_thousand_streamlines_in_sixteen_partitions_on_two_workers(tmp_path, client):
    out = tmp_path / "dask.zarr"
    summary = zv.dask.write_streamlines(out, streamline_bag(16, 1250), attributes=["fa"], **OPTS)
    assert summary["objects"] == 20_000 and summary["parts"] == list(range(16))
    lines = single_streamlines(tmp_path / "one.zarr", 16, 1250, **OPTS)
    assert summary["vertices"] == sum(len(s["positions"]) for s in lines)
    want = files(tmp_path / "one.zarr")
    # the 0.9 layout files cross-chunk records in the offsets segments of links/0
    assert any("/links/0/" in k for k in want), "the streamlines cross chunks"
    assert files(out) == want
    # read back: streamline 7 (in manifest order) is the input's
    got = zv.open(out)[0].object(7)
    np.testing.assert_array_equal(got.positions, lines[7]["positions"].astype(np.float32))


def test_a_worker_killed_while_writing_streamlines_is_retried_to_the_same_store(tmp_path, client):
    marker = tmp_path / "killed-once"

    def kill_once(k, marker=str(marker)):
        if k == 2 and not os.path.exists(marker):
            open(marker, "w").close()
            os._exit(1)

    out = tmp_path / "dask.zarr"
    zv.dask.write_streamlines(out, streamline_bag(6, 400), attributes={"fa": "float32"},
                              parts=4, on_part=kill_once, **OPTS)
    assert marker.exists(), "the worker was not killed"
    single_streamlines(tmp_path / "one.zarr", 6, 400, **OPTS)
    assert files(out) == files(tmp_path / "one.zarr")


STREAMLINE_CLIENT = textwrap.dedent("""
    import sys, dask, zv.dask
    sys.path.insert(0, sys.argv[3])
    from test_dask import streamline_bag
    with dask.config.set(scheduler="threads"):
        zv.dask.write_streamlines(sys.argv[1], streamline_bag(6, 2000), attributes=["fa"],
                                  chunk_shape=(100, 100, 100), compression="none",
                                  commit=sys.argv[2] == "commit")
""")


def test_a_streamline_client_killed_before_the_commit_is_resumed(tmp_path):
    script = tmp_path / "client.py"
    script.write_text(STREAMLINE_CLIENT)
    out = tmp_path / "dask.zarr"
    here = str(Path(__file__).parent)
    p = subprocess.Popen([sys.executable, str(script), str(out), "commit", here])
    time.sleep(2.0)
    p.send_signal(signal.SIGKILL)
    p.wait()
    try:
        zv.open(out)
        finished = True
    except zv.ZvError:
        finished = False
    if finished:
        import shutil
        shutil.rmtree(out)
    subprocess.run([sys.executable, str(script), str(out), "stage", here], check=True)
    with pytest.raises(zv.ZvError):
        zv.open(out)
    assert zv.missing_parts(out) == []
    subprocess.run([sys.executable, str(script), str(out), "commit", here], check=True)
    single_streamlines(tmp_path / "one.zarr", 6, 2000, **OPTS)
    assert files(out) == files(tmp_path / "one.zarr")


def test_zv_dask_writes_streamlines_to_s3(tmp_path, client, s3_server):
    url = "s3://zv-test/streamlines.zarr"
    opts = dict(OPTS, chunk_shape=(250, 250, 250))
    zv.dask.write_streamlines(url, streamline_bag(4, 300), attributes=["fa"],
                              storage_options=s3_server, **opts)
    lines = single_streamlines(tmp_path / "one.zarr", 4, 300, **opts)
    got, want = zv.open(url)[0], zv.open(tmp_path / "one.zarr")[0]
    for i in (0, 1, 150, len(lines) - 1):
        np.testing.assert_array_equal(got.object(i).positions, want.object(i).positions)
    assert zv.validate(url, 3)["errors"] == 0


def pyramid_input(path, n=100_000, seed=9, chunk=(100, 100, 100)):
    # pyramids built in parts write the ZV 0.7 layout (a 0.9 pyramid is built in one run)
    rng = np.random.default_rng(seed)
    zv.write_points(path, rng.random((n, 3)) * 1000, object_ids=rng.integers(0, 500, n),
                    vertex_attributes={"w": rng.random(n).astype(np.float32)},
                    object_attributes={"size": np.arange(500.0)}, chunk_shape=chunk,
                    bin_shape=(25, 25, 25), compression="zstd:1", format_version="0.7")


def test_pyramid_levels_built_on_two_workers_are_build_pyramids(tmp_path, client):
    one, many = tmp_path / "one.zarr", tmp_path / "many.zarr"
    pyramid_input(one)
    pyramid_input(many)
    want = zv.build_pyramid(one, "2;2,2", compression="zstd:1")
    got = zv.dask.build_pyramid(many, "2;2,2", parts=6, compression="zstd:1")
    assert got == want and [s["level"] for s in got] == [1, 2]
    assert got[1]["objects_kept"] == 250
    assert files(many) == files(one)
    assert zv.open(many).levels == [0, 1, 2]
    assert zv.validate(many, 3)["errors"] == 0


def test_a_pyramid_part_that_fails_is_resumed_and_a_killed_worker_retried(tmp_path, client):
    one, many = tmp_path / "one.zarr", tmp_path / "many.zarr"
    pyramid_input(one, n=100_000)
    pyramid_input(many, n=100_000)
    zv.build_pyramid(one, "2;2", cross_level="implicit")
    marker = tmp_path / "killed-once"

    def fail_step_one(step, k):
        if step == 1 and k == 2:
            raise RuntimeError("part 2 of step 1 fails")

    with pytest.raises(RuntimeError, match="part 2 of step 1 fails"):
        zv.dask.build_pyramid(many, "2;2", parts=4, cross_level="implicit",
                              on_part=fail_step_one)
    # step 0 is committed; step 1 is staged, part 2 (and the tasks cancelled with it) missing
    assert zv.open(many)[1].vertex_count == zv.open(one)[1].vertex_count
    assert 2 in zv.missing_pyramid_parts(many)

    def kill_once(step, k, marker=str(marker)):
        if not os.path.exists(marker):
            open(marker, "w").close()
            os._exit(1)

    # the rerun resumes at step 1, part 2; its worker dies once and the task is retried
    zv.dask.build_pyramid(many, "2;2", parts=4, cross_level="implicit", on_part=kill_once)
    assert marker.exists()
    assert files(many) == files(one)


def test_zv_dask_builds_a_pyramid_in_s3(tmp_path, client, s3_server):
    url = "s3://zv-test/pyramid.zarr"
    zv.set_storage_options(s3_server)
    pyramid_input(url, n=50_000, chunk=(250, 250, 250))
    pyramid_input(tmp_path / "one.zarr", n=50_000, chunk=(250, 250, 250))
    want = zv.build_pyramid(tmp_path / "one.zarr", "2")
    got = zv.dask.build_pyramid(url, "2", parts=3, storage_options=s3_server)
    assert got == want
    a, b = zv.open(url)[1].points(), zv.open(tmp_path / "one.zarr")[1].points()
    np.testing.assert_array_equal(a.positions, b.positions)
    np.testing.assert_array_equal(a.object_ids, b.object_ids)
    assert zv.validate(url, 3)["errors"] == 0
