"""Writes bcolz 1.x stores with the real bcolz (PyPI bcolz-zipline) for the zv-legacy tests.

usage: make_bcolz.py OUT_DIR

OUT_DIR/stores/NAME is a carray or ctable; OUT_DIR/NAME.bin (or NAME.COLUMN.bin) the values
bcolz reads back, C order, little-endian; OUT_DIR/manifest.json describes every case.
"""
import os
import sys

import bcolz
import numpy as np

from common import save_manifest, to_json, values, write_expected

out = sys.argv[1]
stores = os.path.join(out, "stores")
os.makedirs(stores, exist_ok=True)
manifest = []

# Complex types are left out: bcolz cannot write them to disk (its `meta/storage` holds the
# default value as JSON, which has no complex numbers; `bcolz.carray(..., rootdir=...)` raises).
DTYPES = ["|b1", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8",
          "<f2", "<f4", "<f8", "|S7", ">i2", ">i4", ">u8", ">f4", ">f8"]
CNAMES = ["blosclz", "lz4", "lz4hc", "zlib", "zstd"]


def carray(name, data, chunklen, dflt=None, cname="lz4", shuffle=1, clevel=5, attrs=None):
    root = os.path.join(stores, name)
    kwargs = {}
    if dflt is not None:
        kwargs["dflt"] = dflt
    c = bcolz.carray(data, rootdir=root, mode="w", chunklen=chunklen,
                     cparams=bcolz.cparams(clevel=clevel, shuffle=shuffle, cname=cname),
                     **kwargs)
    for k, v in (attrs or {}).items():
        c.attrs[k] = v
    c.flush()
    back = bcolz.open(root, mode="r")
    read = back[:]
    assert read.dtype == data.dtype, (read.dtype, data.dtype)
    write_expected(out, name, read, {
        "kind": "carray", "chunklen": chunklen, "cname": cname, "shuffle": shuffle,
        "attrs": dict(back.attrs), "fill": to_json(back.dflt),
        "chunks": len(os.listdir(os.path.join(root, "data"))),
    }, manifest)


# Every numeric dtype and fixed-size bytes, lengths that are and are not multiples of chunklen.
for i, dt in enumerate(DTYPES):
    tag = dt.replace("<", "le_").replace(">", "be_").replace("|", "")
    carray("dtype_%s_multiple" % tag, values(dt, (48,), i), chunklen=8)
    carray("dtype_%s_leftover" % tag, values(dt, (45,), 100 + i), chunklen=8)

# Every cname × shuffle.
for cname in CNAMES:
    for shuffle in (0, 1, 2):
        carray("codec_%s_%d" % (cname, shuffle), values("<f8", (1000,), 7), chunklen=128,
               cname=cname, shuffle=shuffle, clevel=3)

# Defaults (dflt), attributes, a length shorter than one chunk, an empty carray.
carray("dflt_i4", values("<i4", (30,), 3), chunklen=16, dflt=-7, attrs={"unit": "m", "n": 3})
carray("dflt_f8", values("<f8", (30,), 4), chunklen=16, dflt=2.5, attrs={"nested": {"a": [1, 2]}})
carray("short", values("<i2", (5,), 5), chunklen=64)
carray("empty", np.zeros(0, dtype="<i4"), chunklen=4)

# 2-D and 3-D carrays (rows of dtype(shape[1:])).
carray("nd_2d", values("<f4", (21, 3), 8), chunklen=4, dflt=1.5)
carray("nd_3d", values(">i8", (10, 2, 3), 9), chunklen=3)
carray("nd_2d_multiple", values("<u2", (16, 5), 10), chunklen=8, cname="zstd", shuffle=2)

# ctables.
for name, n, chunklen in (("table_leftover", 50, 16), ("table_multiple", 32, 8)):
    cols = [values("<i8", (n,), 11), values("<f8", (n,), 12), values("|S5", (n,), 13),
            values("|b1", (n,), 14)]
    root = os.path.join(stores, name)
    t = bcolz.ctable(columns=cols, names=["id", "price", "tag", "flag"], rootdir=root,
                     mode="w", chunklen=chunklen)
    t.attrs["source"] = "bcolz-zipline"
    t.attrs["version"] = 1
    t.flush()
    back = bcolz.open(root, mode="r")
    columns = []
    for col in back.names:
        a = back[col]
        write_expected(out, "%s.%s" % (name, col), a[:], {"kind": "column", "fill": to_json(a.dflt),
                       "attrs": dict(a.attrs)}, columns)
    manifest.append({"name": name, "kind": "ctable", "attrs": dict(back.attrs),
                     "columns": columns, "shape": [n]})

save_manifest(out, manifest)
print(len(manifest), "cases")
