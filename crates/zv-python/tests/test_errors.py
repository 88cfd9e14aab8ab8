"""Errors are `zv.ZvError` subclasses carrying the key (or input item) at fault; a refused
write leaves nothing that opens as a store."""

import numpy as np
import pytest

import zv


def test_missing_store_names_the_root_document(tmp_path):
    with pytest.raises(zv.MissingError) as e:
        zv.open(tmp_path / "nothing")
    assert e.value.key == "zarr.json"
    assert isinstance(e.value, zv.ZvError)


def test_missing_level_names_its_document(tmp_path):
    store = tmp_path / "s.zarr"
    zv.write_points(store, np.zeros((3, 3)), chunk_shape=(10, 10, 10))
    with pytest.raises(zv.MissingError) as e:
        zv.open(store)[4]
    assert e.value.key == "4/zarr.json"


def test_corrupt_blob_names_its_key(tmp_path):
    store = tmp_path / "s.zarr"
    zv.write_points(store, np.arange(30, dtype=np.float64).reshape(10, 3),
                    chunk_shape=(100, 100, 100), compression="none", format_version="0.7")
    chunk = next((store / "0" / "vertices").glob("*/c/0"))
    chunk.write_bytes(chunk.read_bytes()[:-5])
    with pytest.raises(zv.FormatError) as e:
        zv.open(store)[0].points()
    assert e.value.key is not None and "vertices" in e.value.key


def test_writer_input_error_names_the_item(tmp_path):
    store = tmp_path / "s.zarr"
    pos = np.zeros((4, 3))
    pos[2, 1] = np.nan
    with pytest.raises(zv.InputError) as e:
        zv.write_points(store, pos, chunk_shape=(10, 10, 10))
    assert e.value.item == "vertex 2"
    with pytest.raises(zv.MissingError):
        zv.open(store)


def test_writer_refuses_bad_options_and_nonempty_targets(tmp_path):
    with pytest.raises(zv.InputError) as e:
        zv.write_points(tmp_path / "a", np.zeros((2, 3)), chunk_shape=(1, 1, 1), compression="lzma")
    assert "codecs" in str(e.value) or e.value.item is not None
    zv.write_points(tmp_path / "b", np.zeros((2, 3)), chunk_shape=(1, 1, 1))
    with pytest.raises(zv.InputError):
        zv.write_points(tmp_path / "b", np.zeros((2, 3)), chunk_shape=(1, 1, 1))
    with pytest.raises(zv.InputError):
        zv.write_points(tmp_path / "c", np.zeros((2, 3)), chunk_shape=(1, 1))
    with pytest.raises(zv.InputError):
        zv.open(tmp_path / "b")[0].points(box=([0, 0, 0], [-1, 0, 0]))
