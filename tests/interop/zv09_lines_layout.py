#!/usr/bin/env python3
"""Compares a line store zv wrote in ZV 0.9 with the store zarr-vectors 0.9.2's write_lines
writes from the same zv-geometry/1 document.

    python zv09_lines_layout.py WORK_DIR DOC.json ZV_STORE [DOC.json ZV_STORE ...]

For each document (one interpreter for all: importing zarr costs a second or more), writes the document's lines (and vertex attributes) with ``write_lines`` into
``WORK_DIR/<stem>.py.zv``, then compares, cell by cell (cells keyed by absolute chunk
coordinates: the two grids may have other origins and shapes), ``vertices``,
``vertex_fragments`` and every ``vertex_attributes/<name>``, the object index's manifests
row by row, and which ``links/0/<offsets>`` cells exist. The contents of the link cells are
not compared: 0.9.2 stores an endpoint's fragment index where zv stores its row (see
docs/format-decisions.md, "Writing ZV 0.9"). Prints one line per document, in argument order:
``{"document": DOC.json, "cells": N, "differences": [...]}``.

Runs in the virtualenv that has ``zarr-vectors==0.9.2`` (``.venv-zv09``).
"""

from __future__ import annotations

import json
import os
import shutil
import sys

import numpy as np
import zarr


def cells(path: str) -> dict[str, bytes]:
    """The non-empty cells of the chunk-grid array at ``path``, by absolute chunk key.

    Only the box of the stored chunks is read (the files under ``c/``): a link family's
    offsets segment spans the level's whole grid and stores one or two of its cells, and
    reading every absent cell of every segment cost most of this test's time."""
    if not os.path.exists(os.path.join(path, "zarr.json")):
        return {}
    a = zarr.open_array(path, mode="r")
    origin = a.attrs.get("chunk_grid_origin", [0] * a.ndim)
    stored = stored_chunks(path, a.ndim)
    if stored is None:
        lo, v = (0,) * a.ndim, a[...]
    elif not stored:
        return {}
    else:
        per = a.shards or a.chunks
        lo = tuple(min(c[d] for c in stored) * per[d] for d in range(a.ndim))
        hi = tuple(min((max(c[d] for c in stored) + 1) * per[d], a.shape[d]) for d in range(a.ndim))
        v = a[tuple(slice(l, h) for l, h in zip(lo, hi))]
    out = {}
    for idx in np.ndindex(v.shape):
        if len(v[idx]):
            out[".".join(str(int(i) + int(l) + int(o)) for i, l, o in zip(idx, lo, origin))] = bytes(
                v[idx]
            )
    return out


def stored_chunks(path: str, ndim: int) -> list[tuple[int, ...]] | None:
    """The coordinates of the stored chunks (or shards) of the array at ``path``, from its
    files ``c/<i>/<j>/…``; ``None`` when they are not laid out so (then every cell is read)."""
    base = os.path.join(path, "c")
    if not os.path.isdir(base):
        return None if any(f != "zarr.json" for f in os.listdir(path)) else []
    found = []
    for root, _dirs, files in os.walk(base):
        for f in files:
            parts = os.path.relpath(os.path.join(root, f), base).split(os.sep)
            if len(parts) != ndim or not all(p.isdigit() for p in parts):
                return None
            found.append(tuple(int(p) for p in parts))
    return found


def link_cells(level: str) -> set[str]:
    """``<offsets>/<chunk key>`` of every non-empty cell of the ``links/0`` family."""
    fam = os.path.join(level, "links", "0")
    if not os.path.isdir(fam):
        return set()
    return {
        f"{seg}/{key}"
        for seg in sorted(os.listdir(fam))
        if os.path.isdir(os.path.join(fam, seg))
        for key in cells(os.path.join(fam, seg))
    }


def main() -> int:
    work, pairs = sys.argv[1], sys.argv[2:]
    if not pairs or len(pairs) % 2:
        sys.exit("usage: zv09_lines_layout.py WORK_DIR DOC.json ZV_STORE [DOC.json ZV_STORE ...]")
    for doc_path, zv_store in zip(pairs[0::2], pairs[1::2]):
        report = compare(doc_path, zv_store, work)
        json.dump(report, sys.stdout)
        sys.stdout.write("\n")
    return 0


def compare(doc_path: str, zv_store: str, work: str) -> dict:
    """The comparison of one document's two stores (see the module's docs)."""
    doc = json.load(open(doc_path))
    ndim = len(doc["chunk_shape"])
    dtype = doc.get("vertex_dtype", "float32")
    endpoints = np.asarray(doc["polylines"], dtype=dtype).reshape(-1, 2, ndim)
    attrs = {
        n: np.asarray(a["values"], dtype=a["dtype"])
        for n, a in doc.get("vertex_attributes", {}).items()
    }
    ours = os.path.join(work, os.path.splitext(os.path.basename(doc_path))[0] + ".py.zv")
    shutil.rmtree(ours, ignore_errors=True)
    from zarr_vectors.types.lines import write_lines

    write_lines(
        ours,
        endpoints,
        chunk_shape=tuple(float(c) for c in doc["chunk_shape"]),
        bin_shape=tuple(float(b) for b in doc["bin_shape"]) if doc.get("bin_shape") else None,
        vertex_attributes=attrs or None,
        dtype=dtype,
    )
    differences = []
    compared = 0
    names = ["vertices", "vertex_fragments"] + [f"vertex_attributes/{n}" for n in sorted(attrs)]
    for name in names:
        a, b = cells(os.path.join(ours, "0", name)), cells(os.path.join(zv_store, "0", name))
        compared += len(a)
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                differences.append(f"{name} cell {key}: 0.9.2 {a.get(key)!r}, zv {b.get(key)!r}")
    rows = [
        zarr.open_array(os.path.join(s, "0", "object_index", "manifests"), mode="r")[...].tolist()
        for s in (ours, zv_store)
    ]
    if rows[0] != rows[1]:
        differences.append(f"object_index/manifests: 0.9.2 {rows[0]!r}, zv {rows[1]!r}")
    la, lb = link_cells(os.path.join(ours, "0")), link_cells(os.path.join(zv_store, "0"))
    if la != lb:
        differences.append(f"links/0 cells: 0.9.2 {sorted(la)}, zv {sorted(lb)}")
    return {"document": doc_path, "cells": compared, "differences": differences}


if __name__ == "__main__":
    sys.exit(main())
