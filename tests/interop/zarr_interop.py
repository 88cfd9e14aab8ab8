#!/usr/bin/env python3
"""zarr-python side of zv's Zarr v3 interoperability tests.

Driven by crates/zv-cli/tests/zarr_interop.rs, which owns the test matrix:

  write SPEC.json STORE_DIR   create every array of the spec with zarr-python, write its data,
                              then report what zarr-python reads (see `report`)
  read SPEC.json STORE_DIR    open every array of the spec (written by zv) with zarr-python and
                              report what it reads
  write-meta SPEC.json STORE_DIR
                              like write, but each case gives its whole zarr.json (`metadata`),
                              which is stored as is before zarr-python opens the array and
                              writes its data (for codecs such as sharding_indexed)
  vlen STORE_DIR              write variable_length_bytes arrays with zarr-python; print their
                              values (base64) as JSON
  walk STORE_DIR...           open every group and array below the root; print the group paths
                              and each array's bytes (hex) as JSON

A report is a JSON object {case name: interpretation}. For each case the array values that
zarr-python reads are also written, C order and little-endian, to STORE_DIR/NAME.zarrpy.bin.
"""
import base64
import json
import os
import sys
import warnings

import numpy as np
import zarr

warnings.filterwarnings("ignore")

NUMPY = {
    "bool": "|b1", "int8": "|i1", "int16": "<i2", "int32": "<i4", "int64": "<i8",
    "uint8": "|u1", "uint16": "<u2", "uint32": "<u4", "uint64": "<u8",
    "float16": "<f2", "float32": "<f4", "float64": "<f8",
    "complex64": "<c8", "complex128": "<c16",
}


def le_bytes(values, data_type):
    arr = np.asarray(values)
    return arr.astype(np.dtype(NUMPY[data_type]), copy=False).tobytes(order="C")


def fill_le_hex(meta, data_type):
    return np.asarray(meta.fill_value).astype(np.dtype(NUMPY[data_type])).tobytes().hex()


def jsonable(x):
    if isinstance(x, dict):
        return {k: jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, np.generic):
        return x.item()
    return x


def interpretation(arr, data_type):
    meta = arr.metadata
    d = meta.to_dict()
    return {
        "shape": list(arr.shape),
        "chunks": list(arr.chunks),
        "data_type": d["data_type"] if isinstance(d["data_type"], str) else d["data_type"]["name"],
        "fill_value_le_hex": fill_le_hex(meta, data_type),
        "codecs": jsonable(d["codecs"]),
        "chunk_key_encoding": jsonable(d["chunk_key_encoding"]),
        "dimension_names": jsonable(d.get("dimension_names")),
        "attributes": jsonable(d.get("attributes", {})),
    }


def read_report(spec, store_dir):
    report = {}
    for case in spec["cases"]:
        name = case["name"]
        arr = zarr.open_array(os.path.join(store_dir, name), mode="r")
        values = arr[...]
        with open(os.path.join(store_dir, name + ".zarrpy.bin"), "wb") as f:
            f.write(le_bytes(values, case["data_type"]))
        report[name] = interpretation(arr, case["data_type"])
    return report


def split_codecs(codecs):
    filters, serializer, compressors = [], None, []
    for c in codecs:
        if c["name"] == "transpose":
            filters.append(c)
        elif c["name"] in ("bytes", "vlen-bytes"):
            serializer = c
        else:
            compressors.append(c)
    return filters, serializer, compressors


def write(spec, store_dir):
    for case in spec["cases"]:
        name = case["name"]
        dt = np.dtype(NUMPY[case["data_type"]])
        shape = tuple(case["shape"])
        filters, serializer, compressors = split_codecs(case["codecs"])
        cke = case["chunk_key_encoding"]
        arr = zarr.create_array(
            store_dir,
            name=name,
            shape=shape,
            chunks=tuple(case["chunk_shape"]),
            dtype=dt,
            fill_value=None,
            filters=filters,
            serializer=serializer,
            compressors=compressors,
            chunk_key_encoding={"name": cke["name"], "separator": cke["configuration"]["separator"]},
            dimension_names=case.get("dimension_names"),
            attributes=case.get("attributes", {}),
            overwrite=True,
        )
        # Store the fill value in exactly the JSON form of the spec (NaN, Infinity, hex, ...).
        meta_path = os.path.join(store_dir, name, "zarr.json")
        with open(meta_path) as f:
            doc = json.load(f)
        doc["fill_value"] = case["fill_value"]
        with open(meta_path, "w") as f:
            json.dump(doc, f, indent=2)
        arr = zarr.open_array(os.path.join(store_dir, name), mode="r+")
        with open(case["expected"], "rb") as f:
            expected = np.frombuffer(f.read(), dtype=dt).reshape(shape)
        rows = case.get("written_rows")
        if len(shape) == 0:
            arr[...] = expected
        elif rows is None:
            arr[...] = expected
        elif rows > 0:
            arr[:rows] = expected[:rows]
    return read_report(spec, store_dir)


def write_meta(spec, store_dir):
    for case in spec["cases"]:
        name = case["name"]
        os.makedirs(os.path.join(store_dir, name), exist_ok=True)
        with open(os.path.join(store_dir, name, "zarr.json"), "w") as f:
            json.dump(case["metadata"], f, indent=2)
        arr = zarr.open_array(os.path.join(store_dir, name), mode="r+")
        dt = np.dtype(NUMPY[case["data_type"]])
        shape = tuple(case["shape"])
        with open(case["expected"], "rb") as f:
            expected = np.frombuffer(f.read(), dtype=dt).reshape(shape)
        rows = case.get("written_rows")
        if rows is None or len(shape) == 0:
            arr[...] = expected
        elif rows > 0:
            arr[:rows] = expected[:rows]
    return read_report(spec, store_dir)


def vlen(store_dir):
    from zarr.core.dtype import VariableLengthBytes

    cases = {
        "vlen_1d": ((7,), (3,), [b"a", b"", b"xyz", b"\x00\xff\x10", b"q" * 40, b"end", b"\n"]),
        "vlen_2d": ((3, 4), (2, 3), [bytes([i]) * (i % 5) for i in range(12)]),
    }
    out = {}
    for name, (shape, chunks, values) in cases.items():
        arr = zarr.create_array(store_dir, name=name, shape=shape, chunks=chunks,
                                dtype=VariableLengthBytes(), fill_value=b"", overwrite=True)
        data = np.empty(len(values), dtype=object)
        data[:] = values
        arr[...] = data.reshape(shape)
        back = zarr.open_array(os.path.join(store_dir, name), mode="r")[...].reshape(-1)
        out[name] = {"shape": list(shape), "values": [base64.b64encode(v).decode() for v in back]}
    # a chunk left unwritten reads as the fill value
    arr = zarr.create_array(store_dir, name="vlen_partial", shape=(6,), chunks=(2,),
                            dtype=VariableLengthBytes(), fill_value=b"", overwrite=True)
    data = np.empty(2, dtype=object)
    data[:] = [b"x", b"yy"]
    arr[0:2] = data
    back = zarr.open_array(os.path.join(store_dir, "vlen_partial"), mode="r")[...]
    out["vlen_partial"] = {"shape": [6], "values": [base64.b64encode(v).decode() for v in back]}
    return out


def walk(store_dir):
    """Every group and array zarr-python finds below the root, with the arrays' bytes (hex)."""
    root = zarr.open_group(store_dir, mode="r")
    groups = [""]
    arrays = {}
    for path, node in root.members(max_depth=None):
        if isinstance(node, zarr.Group):
            groups.append(path)
        else:
            data = np.asarray(node[...])
            if data.dtype != np.uint8:
                raise SystemExit(f"{path}: unexpected dtype {data.dtype}")
            arrays[path] = data.tobytes().hex()
    return {"groups": sorted(groups), "arrays": arrays}


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    cmd = argv[1]
    if cmd == "vlen":
        report = vlen(argv[2])
    elif cmd == "walk":
        report = {d: walk(d) for d in argv[2:]}
    else:
        with open(argv[2]) as f:
            spec = json.load(f)
        if cmd == "write":
            report = write(spec, argv[3])
        elif cmd == "write-meta":
            report = write_meta(spec, argv[3])
        elif cmd == "read":
            report = read_report(spec, argv[3])
        else:
            print(__doc__, file=sys.stderr)
            return 2
    json.dump({"zarr_version": zarr.__version__, "report": report}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
