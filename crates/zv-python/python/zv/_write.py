"""Writing new stores from numpy arrays, through zv's streaming writer (one call, GIL
released). The store must be empty or absent; nothing opens as ZV unless the write
completes. Options are the CLI's (``zv import``): ``chunk_shape``, ``bin_shape``,
``bounds``, ``dtype`` (stored vertex type), ``compression`` (``spec-default``, ``none``,
``zstd[:LEVEL]``, ``blosc-lz4``, ``gzip[:LEVEL]``, each optionally ``+crc32c``),
``format_version`` (``"0.9"``, the default, or ``"0.7"`` for the 0.7.0 reference), ``shard_shape`` (0.9 only: the cells of every
chunk-grid array packed that many chunks per dimension in ``sharding_indexed`` shards, as
zarr-vectors' ``shard_shape=``), ``out_of_bounds`` (``raise``, ``ignore``,
``expand``) and ``memory_budget`` (bytes held before spilling to temporary files)."""

from __future__ import annotations

import os
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _zv

PathLike = Union[str, "os.PathLike[str]"]
Arrays = Optional[Mapping[str, Any]]


def _columns(attrs: Arrays) -> Optional[Dict[str, np.ndarray]]:
    if attrs is None:
        return None
    out = {}
    for name, a in attrs.items():
        a = np.asarray(a)
        if a.dtype.byteorder == ">":
            a = a.astype(a.dtype.newbyteorder("<"))
        out[str(name)] = np.ascontiguousarray(a)
    return out


def _ids(a: Any) -> Optional[np.ndarray]:
    return None if a is None else np.ascontiguousarray(a, dtype=np.int64)


def _write(
    path: PathLike,
    geometry: str,
    positions: Any,
    *,
    chunk_shape: Sequence[float],
    offsets: Any = None,
    object_ids: Any = None,
    links: Any = None,
    vertex_attributes: Arrays = None,
    link_attributes: Arrays = None,
    object_attributes: Arrays = None,
    groups: Optional[Mapping[int, Sequence[int]]] = None,
    group_attributes: Arrays = None,
    bin_shape: Optional[Sequence[float]] = None,
    bounds: Optional[Tuple[Sequence[float], Sequence[float]]] = None,
    dtype: str = "float32",
    compression: str = "spec-default",
    format_version: str = "0.9",
    out_of_bounds: str = "raise",
    memory_budget: Optional[int] = None,
    shard_shape: Optional[Sequence[int]] = None,
) -> Dict[str, int]:
    pos = np.ascontiguousarray(positions, dtype=np.float64)
    if pos.ndim != 2:
        raise _zv.InputError(f"positions must have shape (N, ndim), not {pos.shape}")
    if links is not None:
        links = np.ascontiguousarray(links, dtype=np.int64)
        if links.ndim != 2:
            raise _zv.InputError(f"links must have shape (M, k), not {links.shape}")
    return _zv._write(
        os.fspath(path),
        geometry,
        pos,
        chunk_shape=[float(c) for c in chunk_shape],
        offsets=_ids(offsets),
        object_ids=_ids(object_ids),
        links=links,
        vertex_attributes=_columns(vertex_attributes),
        link_attributes=_columns(link_attributes),
        object_attributes=_columns(object_attributes),
        groups=None if groups is None else {int(g): [int(o) for o in m] for g, m in groups.items()},
        group_attributes=_columns(group_attributes),
        bin_shape=None if bin_shape is None else [float(b) for b in bin_shape],
        bounds=None if bounds is None else ([float(x) for x in bounds[0]], [float(x) for x in bounds[1]]),
        dtype=str(np.dtype(dtype)),
        compression=compression,
        format_version=str(format_version),
        out_of_bounds=out_of_bounds,
        memory_budget=memory_budget,
        shard_shape=None if shard_shape is None else [int(s) for s in shard_shape],
    )


def write_points(
    store_path: PathLike,
    positions: Any,
    *,
    chunk_shape: Sequence[float],
    object_ids: Any = None,
    vertex_attributes: Arrays = None,
    attributes: Arrays = None,
    object_attributes: Arrays = None,
    groups: Optional[Mapping[int, Sequence[int]]] = None,
    group_attributes: Arrays = None,
    **options: Any,
) -> Dict[str, int]:
    """Writes a point cloud: ``positions`` ``(N, ndim)``, optional ``object_ids`` ``(N,)``,
    per-vertex ``vertex_attributes`` (alias ``attributes``), per-object
    ``object_attributes``, ``groups`` (group id -> object ids) and ``group_attributes``.
    Returns the write summary (``vertices``, ``chunks``, ``objects``, …)."""
    if attributes is not None and vertex_attributes is not None:
        raise TypeError("pass vertex_attributes or attributes, not both")
    return _write(
        store_path,
        "point_cloud",
        positions,
        chunk_shape=chunk_shape,
        object_ids=object_ids,
        vertex_attributes=vertex_attributes if attributes is None else attributes,
        object_attributes=object_attributes,
        groups=groups,
        group_attributes=group_attributes,
        **options,
    )


def _flatten(polylines: Any, offsets: Any) -> Tuple[np.ndarray, np.ndarray]:
    if offsets is not None:
        return np.asarray(polylines), np.asarray(offsets, dtype=np.int64)
    parts = [np.asarray(p, dtype=np.float64) for p in polylines]
    lengths = [len(p) for p in parts]
    offs = np.zeros(len(parts) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offs[1:])
    ndim = parts[0].shape[1] if parts else 0
    flat = np.concatenate(parts) if parts else np.zeros((0, ndim))
    return flat, offs


def _flatten_attributes(attrs: Arrays, per_polyline: bool) -> Arrays:
    if attrs is None or not per_polyline:
        return attrs
    return {k: np.concatenate([np.asarray(x) for x in v]) for k, v in attrs.items()}


def write_polylines(
    store_path: PathLike,
    polylines: Any,
    *,
    chunk_shape: Sequence[float],
    offsets: Any = None,
    vertex_attributes: Arrays = None,
    object_attributes: Arrays = None,
    groups: Optional[Mapping[int, Sequence[int]]] = None,
    group_attributes: Arrays = None,
    geometry_type: str = "polyline",
    **options: Any,
) -> Dict[str, int]:
    """Writes polylines, each its own object: either a list of ``(n_i, ndim)`` arrays, or
    flat vertices ``(N, ndim)`` with ``offsets`` (``P + 1``). ``vertex_attributes`` are flat
    ``(N,)``/``(N, C)`` arrays with ``offsets``, or lists of per-polyline arrays without.
    ``geometry_type`` is ``"polyline"`` or ``"streamline"``."""
    flat, offs = _flatten(polylines, offsets)
    return _write(
        store_path,
        geometry_type,
        flat,
        chunk_shape=chunk_shape,
        offsets=offs,
        vertex_attributes=_flatten_attributes(vertex_attributes, offsets is None),
        object_attributes=object_attributes,
        groups=groups,
        group_attributes=group_attributes,
        **options,
    )


def write_streamlines(store_path: PathLike, polylines: Any, **kw: Any) -> Dict[str, int]:
    """:func:`write_polylines` with ``geometry_type="streamline"``."""
    return write_polylines(store_path, polylines, geometry_type="streamline", **kw)


def write_graph(
    store_path: PathLike,
    positions: Any,
    edges: Any,
    *,
    chunk_shape: Sequence[float],
    kind: str = "graph",
    object_ids: Any = None,
    vertex_attributes: Arrays = None,
    link_attributes: Arrays = None,
    object_attributes: Arrays = None,
    groups: Optional[Mapping[int, Sequence[int]]] = None,
    group_attributes: Arrays = None,
    **options: Any,
) -> Dict[str, int]:
    """Writes a graph (``kind="graph"``, edges ``[source, target]``) or a skeleton
    (``kind="skeleton"``, edges ``[child, parent]``): ``positions`` ``(N, ndim)``, ``edges``
    ``(M, 2)`` indices into them, ``object_ids`` ``(N,)`` (default: all object 0), per-edge
    ``link_attributes`` (graphs only)."""
    if kind not in ("graph", "skeleton"):
        raise _zv.InputError(f"kind `{kind}` (expected graph or skeleton)")
    return _write(
        store_path,
        kind,
        positions,
        chunk_shape=chunk_shape,
        object_ids=object_ids,
        links=edges,
        vertex_attributes=vertex_attributes,
        link_attributes=link_attributes,
        object_attributes=object_attributes,
        groups=groups,
        group_attributes=group_attributes,
        **options,
    )


def write_skeleton(store_path: PathLike, positions: Any, edges: Any, **kw: Any) -> Dict[str, int]:
    """:func:`write_graph` with ``kind="skeleton"`` (edges are ``[child, parent]``)."""
    return write_graph(store_path, positions, edges, kind="skeleton", **kw)


def write_mesh(
    store_path: PathLike,
    vertices: Any,
    faces: Any,
    *,
    chunk_shape: Sequence[float],
    object_ids: Any = None,
    vertex_attributes: Arrays = None,
    link_attributes: Arrays = None,
    object_attributes: Arrays = None,
    groups: Optional[Mapping[int, Sequence[int]]] = None,
    group_attributes: Arrays = None,
    **options: Any,
) -> Dict[str, int]:
    """Writes a mesh: ``vertices`` ``(V, ndim)``, ``faces`` ``(F, 3)`` or ``(F, 4)`` indices
    into them, ``object_ids`` ``(V,)`` (default: all object 0), per-face
    ``link_attributes``."""
    return _write(
        store_path,
        "mesh",
        vertices,
        chunk_shape=chunk_shape,
        object_ids=object_ids,
        links=faces,
        vertex_attributes=vertex_attributes,
        link_attributes=link_attributes,
        object_attributes=object_attributes,
        groups=groups,
        group_attributes=group_attributes,
        **options,
    )
