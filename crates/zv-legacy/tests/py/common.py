"""Helpers shared by the scripts that write legacy stores for the zv-legacy tests."""
import json
import os

import numpy as np


def values(dtype, shape, seed):
    """Deterministic, compressible values of `dtype` and `shape`."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape)) if shape else 1
    dt = np.dtype(dtype)
    if dt.kind == "b":
        v = rng.integers(0, 2, n).astype(bool)
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        lo, hi = max(int(info.min), -1000), min(int(info.max), 1000)
        v = (np.arange(n) % 17 + rng.integers(lo, hi, n) // 50).clip(info.min, info.max)
    elif dt.kind == "f":
        v = np.round(rng.normal(0, 100, n), 2)
    elif dt.kind == "c":
        v = np.round(rng.normal(0, 10, n), 1) + 1j * np.round(rng.normal(0, 10, n), 1)
    elif dt.kind == "S":
        v = np.array([("w%d" % (i % 1000)).encode()[: dt.itemsize] for i in range(n)])
    else:
        raise ValueError(dtype)
    return np.asarray(v).astype(dt).reshape(shape)


def to_json(x):
    """A numpy scalar as JSON (complex as [re, im], bytes as latin-1 text)."""
    if isinstance(x, (bytes, np.bytes_)):
        return bytes(x).decode("latin-1")
    if isinstance(x, (complex, np.complexfloating)):
        return [float(x.real), float(x.imag)]
    if isinstance(x, (np.bool_, bool)):
        return bool(x)
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating, float)):
        return float(x)
    return x


def native_bytes(arr):
    """C-order bytes in native (here little-endian) order, as zv reads them."""
    a = np.ascontiguousarray(arr)
    if a.dtype.byteorder == ">" or (a.dtype.byteorder == "=" and np.little_endian is False):
        a = a.astype(a.dtype.newbyteorder("<"))
    return a.tobytes()


def write_expected(out, name, arr, entry, manifest):
    """Saves the expected values of case `name` and its manifest entry."""
    with open(os.path.join(out, name + ".bin"), "wb") as f:
        f.write(native_bytes(arr))
    entry = dict(entry)
    entry["name"] = name
    entry["dtype"] = arr.dtype.str
    entry["shape"] = list(arr.shape)
    manifest.append(entry)


def save_manifest(out, manifest):
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
