"""Assembles zarr 0.4 stores exactly as zarr's 0.4 persistence document describes, with real
c-blosc frames from PyPI `blosc` (zarr 0.4.0 itself no longer installs), for the zv-legacy
tests.

usage: make_zarr04.py OUT_DIR

OUT_DIR/stores/NAME holds `__zmeta__`, `__zattr__` and `__zdata__/i.j.blosc` (edge chunks at
the full chunk shape, padded with junk that must not be read; some chunks left out, which read
as the fill value); OUT_DIR/NAME.bin the values a reader must return, C order, little-endian.
"""
import itertools
import json
import os
import sys

import blosc
import numpy as np

from common import save_manifest, to_json, values, write_expected

out = sys.argv[1]
stores = os.path.join(out, "stores")
os.makedirs(stores, exist_ok=True)
manifest = []


def write(name, data, chunks, fill_value, cname="lz4", clevel=5, shuffle=1, attrs=None,
          missing=()):
    root = os.path.join(stores, name)
    os.makedirs(os.path.join(root, "__zdata__"), exist_ok=True)
    dt = data.dtype
    meta = {"chunks": list(chunks), "clevel": clevel, "cname": cname, "dtype": dt.str,
            "fill_value": fill_value, "shape": list(data.shape), "shuffle": shuffle}
    with open(os.path.join(root, "__zmeta__"), "w") as f:
        json.dump(meta, f, indent=4, sort_keys=True)  # NaN is written bare, as zarr 0.4 did
    if attrs is not None:
        with open(os.path.join(root, "__zattr__"), "w") as f:
            json.dump(attrs, f, indent=4, sort_keys=True)
    if fill_value is None:
        fill = np.zeros((), dtype=dt)
    elif dt.kind == "c":
        fill = np.array(complex(*fill_value), dtype=dt)
    elif dt.kind == "S":
        fill = np.array(fill_value.encode(), dtype=dt)
    else:
        fill = np.array(fill_value, dtype=dt)
    expected = data.copy()
    grid = [-(-s // c) for s, c in zip(data.shape, chunks)]
    junk = values(dt.str, tuple(chunks), 999)
    for idx in itertools.product(*[range(g) for g in grid]):
        sl = tuple(slice(i * c, min((i + 1) * c, s)) for i, c, s in zip(idx, chunks, data.shape))
        if idx in missing:
            expected[sl] = fill
            continue
        block = junk.copy()  # full chunk shape; the part outside the array is junk
        block[tuple(slice(0, s.stop - s.start) for s in sl)] = data[sl]
        frame = blosc.compress(np.ascontiguousarray(block).tobytes(), typesize=dt.itemsize,
                               clevel=clevel, shuffle=shuffle, cname=cname)
        with open(os.path.join(root, "__zdata__", ".".join(map(str, idx)) + ".blosc"), "wb") as f:
            f.write(frame)
    write_expected(out, name, expected, {
        "kind": "zarr04", "chunks": list(chunks), "fill": to_json(fill[()]),
        "attrs": attrs or {}, "missing": [list(m) for m in missing],
        "stored": int(np.prod(grid)) - len(missing),
    }, manifest)


DTYPES = ["|b1", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8", "<f2", "<f4", "<f8",
          "<c8", "<c16", "|S12", ">i2", ">i4", ">u8", ">f4", ">f8", ">c8", ">c16"]
FILLS = {"b": True, "i": -3, "u": 9, "f": 1.5, "c": [1.0, -2.0], "S": "fill"}

# Every dtype: partial edge chunks, two missing chunks, a non-zero fill value.
for i, dt in enumerate(DTYPES):
    tag = dt.replace("<", "le_").replace(">", "be_").replace("|", "")
    fv = FILLS[np.dtype(dt).kind]
    write("dtype_%s" % tag, values(dt, (13, 7), i), (4, 3), fv, missing={(1, 1), (3, 2)},
          attrs={"dtype": dt})

# Each shuffle with each compressor.
for cname in ["blosclz", "lz4", "lz4hc", "zlib", "zstd"]:
    for shuffle in (0, 1, 2):
        write("codec_%s_%d" % (cname, shuffle), values("<f8", (300,), 5), (64,), 0.0,
              cname=cname, shuffle=shuffle, clevel=4)

# Fill values: null, NaN (written bare by Python's json), and the seed's example.
write("fill_null", values("<i4", (10, 10), 1), (3, 4), None, missing={(0, 0)})
write("fill_nan", values("<f4", (10,), 2), (4,), float("nan"), missing={(1,)})
write("seed_example", values("<i4", (100, 30), 3), (10, 10), 42, cname="lz4", clevel=3,
      shuffle=1, attrs={"bar": 4.2, "baz": "quux", "foo": 42})
# 1-D without edge, 3-D with edges, a store with no chunk written at all.
write("one_d_exact", values("<u2", (64,), 4), (16,), 0)
write("three_d", values(">f8", (5, 6, 7), 6), (2, 4, 3), -1.0, missing={(2, 1, 2)})
write("all_missing", values("<i8", (9, 4), 7), (5, 5), 7,
      missing={(0, 0), (1, 0)})

save_manifest(out, manifest)
print(len(manifest), "cases")
