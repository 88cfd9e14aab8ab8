"""Distributed writes: many workers write one store, one commit makes it a ZV store.

1. ``prepare_parts(path, n, chunk_shape=…)`` stages a write of ``n`` parts (nothing opens yet);
2. ``part_owners(path, positions)`` gives the part that owns each row (a fixed hash of its
   chunk), so a router (Dask's shuffle, a filter) sends every chunk's rows to one part;
3. ``write_part(path, k, positions, …)`` on any worker writes part ``k``'s chunks and stores
   its receipt (a retried part rewrites the same bytes);
4. ``commit_parts(path, …)`` merges the receipts, writes the root last and removes the plan.

The committed store is the one ``write_points`` makes of the same rows (byte for byte when
each chunk's rows reach their part in the input order). Polylines and streamlines
(``prepare_parts(…, geometry="streamline")``) go whole to every part owning one of their
chunks (``polyline_parts``), with their ids in the whole write; each part keeps its pieces
and the commit joins them (the store ``write_streamlines`` makes). Numeric attributes, the
0.7 layout. See docs/python.md."""

from __future__ import annotations

import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from . import _zv
from ._write import Arrays, PathLike, _columns, _ids


def prepare_parts(
    path: PathLike,
    parts: int,
    *,
    chunk_shape: Sequence[float],
    geometry: str = "point_cloud",
    bin_shape: Optional[Sequence[float]] = None,
    bounds: Optional[Tuple[Sequence[float], Sequence[float]]] = None,
    dtype: str = "float32",
    compression: str = "spec-default",
    out_of_bounds: str = "raise",
    format_version: str = "0.9",
    shard_shape: Optional[Sequence[int]] = None,
) -> Dict[str, Any]:
    """Stages a distributed write of ``parts`` parts of ``geometry`` (``point_cloud``,
    ``line``, ``polyline`` or ``streamline``) in the layout ``format_version`` (``"0.9"``
    with an optional ``shard_shape``, as ``zv.write_points``); returns ``{"run", "parts"}``.
    Preparing again with the same options returns the same run (a client resumes)."""
    return _zv._prepare_parts(
        os.fspath(path),
        int(parts),
        chunk_shape=[float(c) for c in chunk_shape],
        geometry=geometry,
        bin_shape=None if bin_shape is None else [float(b) for b in bin_shape],
        bounds=None if bounds is None else ([float(v) for v in bounds[0]], [float(v) for v in bounds[1]]),
        dtype=dtype,
        compression=compression,
        out_of_bounds=out_of_bounds,
        format_version=str(format_version),
        shard_shape=None if shard_shape is None else [int(s) for s in shard_shape],
    )


def _positions(positions: Any) -> np.ndarray:
    pos = np.ascontiguousarray(positions, dtype=np.float64)
    if pos.ndim != 2:
        raise _zv.InputError(f"positions must have shape (N, ndim), not {pos.shape}")
    return pos


def part_owners(path: PathLike, positions: Any) -> np.ndarray:
    """The part (``uint32``) that owns each row of ``positions`` in the staged write."""
    return _zv._part_owners(os.fspath(path), _positions(positions))


def polyline_parts(path: PathLike, positions: Any, offsets: Any) -> Tuple[np.ndarray, np.ndarray]:
    """The parts each polyline goes to in the staged write (flat ``positions`` cut by
    ``offsets``, ``P + 1``): ``(polyline, part)`` as two arrays, by polyline, each part once
    (the owners of its vertices' chunks; part 0 for a polyline without vertices)."""
    return _zv._polyline_parts(
        os.fspath(path), _positions(positions), np.ascontiguousarray(offsets, dtype=np.int64)
    )


def write_part(
    path: PathLike,
    part: int,
    positions: Any,
    *,
    object_ids: Any = None,
    vertex_attributes: Arrays = None,
    owned_only: bool = True,
    memory_budget: Optional[int] = None,
    offsets: Any = None,
    polyline_ids: Any = None,
) -> Dict[str, int]:
    """Writes part ``part``, then its receipt. Returns ``{"part", "vertices", "chunks"}``.

    Points: the rows it owns (``owned_only``; else a row of another part is an error).
    Polylines (``offsets``, ``P + 1``): whole polylines with their ids in the write
    (``polyline_ids``, increasing; default 0, 1, …); the part keeps the pieces in its
    chunks."""
    return _zv._write_part(
        os.fspath(path),
        int(part),
        _positions(positions),
        object_ids=_ids(object_ids),
        vertex_attributes=_columns(vertex_attributes),
        owned_only=owned_only,
        memory_budget=memory_budget,
        offsets=None if offsets is None else np.ascontiguousarray(offsets, dtype=np.int64),
        polyline_ids=None if polyline_ids is None else np.ascontiguousarray(polyline_ids, dtype=np.int64),
    )


def missing_parts(path: PathLike) -> List[int]:
    """The parts of the staged write that have not finished."""
    return _zv._missing_parts(os.fspath(path))


def commit_parts(
    path: PathLike,
    *,
    object_attributes: Arrays = None,
    groups: Optional[Mapping[int, Sequence[int]]] = None,
    group_attributes: Arrays = None,
    num_objects: int = 0,
) -> Dict[str, int]:
    """Commits the staged write once every part has finished (the error names the missing
    ones); the root ``zarr.json`` is written last."""
    return _zv._commit_parts(
        os.fspath(path),
        object_attributes=_columns(object_attributes),
        groups=None if groups is None else {int(g): [int(o) for o in m] for g, m in groups.items()},
        group_attributes=_columns(group_attributes),
        num_objects=int(num_objects),
    )
