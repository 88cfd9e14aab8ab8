#!/usr/bin/env python3
"""Compares a line store zv wrote in ZV 0.9 with the store zarr-vectors 0.9.2's write_lines
writes from the same zv-geometry/1 document.

    python zv09_lines_layout.py DOC.json ZV_STORE WORK_DIR

Writes the document's lines (and vertex attributes) with ``write_lines`` into
``WORK_DIR/<stem>.py.zv``, then compares, cell by cell (cells keyed by absolute chunk
coordinates: the two grids may have other origins and shapes), ``vertices``,
``vertex_fragments`` and every ``vertex_attributes/<name>``, the object index's manifests
row by row, and which ``links/0/<offsets>`` cells exist. The contents of the link cells are
not compared: 0.9.2 stores an endpoint's fragment index where zv stores its row (see
docs/format-decisions.md, "Writing ZV 0.9"). Prints ``{"cells": N, "differences": [...]}``.

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
    """The non-empty cells of the chunk-grid array at ``path``, by absolute chunk key."""
    if not os.path.exists(os.path.join(path, "zarr.json")):
        return {}
    a = zarr.open_array(path, mode="r")
    origin = a.attrs.get("chunk_grid_origin", [0] * a.ndim)
    v = a[...]
    out = {}
    for idx in np.ndindex(v.shape):
        if len(v[idx]):
            out[".".join(str(int(i) + int(o)) for i, o in zip(idx, origin))] = bytes(v[idx])
    return out


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
    doc_path, zv_store, work = sys.argv[1:4]
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
    json.dump({"cells": compared, "differences": differences}, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
