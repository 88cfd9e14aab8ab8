"""Reads the Zarr v3 copies zv made of legacy stores with zarr-python 3 and compares them
with what the legacy reader (bcolz, or the assembled zarr 0.4 values) returned.

usage: check_v3.py V3_DIR EXPECTED_DIR

V3_DIR/NAME is the converted store of case NAME of EXPECTED_DIR/manifest.json. Prints a JSON
report {"checked": [...], "failures": [...]}; exits 1 if anything differs.
"""
import json
import os
import sys

import numpy as np
import zarr

v3_dir, expected_dir = sys.argv[1], sys.argv[2]
with open(os.path.join(expected_dir, "manifest.json")) as f:
    manifest = json.load(f)

checked, failures = [], []


def expected_fill(dtype, fill):
    if dtype.kind == "c":
        return np.array(complex(*fill), dtype=dtype)[()]
    if dtype.kind == "S":
        return np.array(fill.encode("latin-1"), dtype=dtype)[()]
    return np.array(fill, dtype=dtype)[()]


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind in "fc":
        return a.shape == b.shape and bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))
    return a.shape == b.shape and bool(np.all(a == b))


def bytes_endian(path):
    with open(os.path.join(path, "zarr.json")) as f:
        codecs = json.load(f)["codecs"]
    return next((c.get("configuration", {}).get("endian") for c in codecs if c["name"] == "bytes"), None)


def check(label, arr, entry, path):
    dtype = np.dtype(entry["dtype"])
    raw = open(os.path.join(expected_dir, entry["name"] + ".bin"), "rb").read()
    want = np.frombuffer(raw, dtype=dtype.newbyteorder("<") if dtype.byteorder == ">" else dtype)
    want = want.reshape(entry["shape"])
    problems = []
    # A Zarr v3 data type has no byte order: the `bytes` codec keeps the stored one, and
    # zarr-python hands out native-order arrays.
    if arr.dtype != dtype.newbyteorder("="):
        problems.append("dtype %s, expected %s" % (arr.dtype.str, dtype.str))
    endian = {">": "big", "<": "little", "|": None, "=": "little"}[dtype.byteorder]
    if bytes_endian(path) != endian:
        problems.append("bytes codec endian %s, expected %s" % (bytes_endian(path), endian))
    if list(arr.shape) != list(entry["shape"]):
        problems.append("shape %s, expected %s" % (arr.shape, entry["shape"]))
    else:
        got = arr[...]
        if not same(got.astype(want.dtype), want):
            problems.append("values differ")
    fill = expected_fill(dtype, entry["fill"])
    if not same(arr.fill_value, fill):
        problems.append("fill value %r, expected %r" % (arr.fill_value, fill))
    if dict(arr.attrs) != entry.get("attrs", {}):
        problems.append("attributes %r, expected %r" % (dict(arr.attrs), entry.get("attrs")))
    if problems:
        failures.append({"case": label, "problems": problems})
    else:
        checked.append(label)


for entry in manifest:
    path = os.path.join(v3_dir, entry["name"])
    try:
        if entry["kind"] == "ctable":
            group = zarr.open_group(path, mode="r")
            if dict(group.attrs) != entry["attrs"]:
                failures.append({"case": entry["name"], "problems": ["group attributes %r" % dict(group.attrs)]})
            for col in entry["columns"]:
                colname = col["name"].split(".", 1)[1]
                check(col["name"], group[colname], col, os.path.join(path, colname))
        else:
            check(entry["name"], zarr.open_array(path, mode="r"), entry, path)
    except Exception as e:  # noqa: BLE001 - every failure is reported
        failures.append({"case": entry["name"], "problems": ["%s: %s" % (type(e).__name__, e)]})

print(json.dumps({"checked": checked, "failures": failures}, indent=1))
sys.exit(1 if failures else 0)
