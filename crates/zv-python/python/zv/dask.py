"""Writing one ZV store from a Dask collection, on the cluster, with one commit.

``write_points(path, data, …)`` runs zv's distributed write (``zv.prepare_parts`` and
friends) on Dask:

1. the client stages the write: one part per output partition (``parts``, by default the
   collection's partition count);
2. every input partition tags its rows with the part that owns their chunk
   (``zv.part_owners``) and with their place in the input (partition number, row);
3. Dask's own shuffle (``set_index`` on the part, with one division per part) sends each
   part's rows to one partition;
4. each output partition puts its rows back in input order and writes its part
   (``zv.write_part``) on the worker that holds it: the chunks, then the part's receipt;
5. the client commits (``zv.commit_parts``): the object index and documents, the root last.

The store is the one ``zv.write_points`` writes of the whole input in one process, file for
file. A task retried after its worker died rewrites the same bytes. A client that dies
before the commit leaves no store that opens; calling ``write_points`` again with the same
arguments resumes: the staged plan is reused, parts that finished are not written again
(``resume=True``), and the commit completes the store.

Point clouds with object ids and numeric attributes, the ZV 0.7 layout.

``read_points(path, level=0, box=None, …)`` reads a level into a dask DataFrame with one
partition per group of chunks (``chunks_per_partition``, in chunk key order): each partition
is read on a worker by ``Level.points(chunks=…)``; concatenated, the partitions are
``zv.open(path)[level].points(box)`` row for row.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, Mapping, Optional, Sequence, Tuple

import numpy as np

from . import _parts, _storage
from ._read import open as _open
from ._write import Arrays, PathLike

_PART = "_zv_part"
_SRC = "_zv_src"
_ROW = "_zv_row"


def _frame(data: Any, columns: Sequence[str]):
    """``data`` as a dask DataFrame (a dask array of shape ``(N, ndim)`` gets ``columns``)."""
    import dask.array as da
    import dask.dataframe as dd

    if isinstance(data, da.Array):
        if data.ndim != 2 or data.shape[1] != len(columns):
            raise ValueError(
                f"a dask array of positions must have shape (N, {len(columns)}), not {data.shape}"
            )
        return dd.from_dask_array(data.astype(np.float64), columns=list(columns))
    if isinstance(data, dd.DataFrame):
        return data
    raise TypeError(f"expected a dask DataFrame or a dask array, not {type(data).__name__}")


def write_points(
    path: PathLike,
    data: Any,
    *,
    chunk_shape: Sequence[float],
    columns: Sequence[str] = ("x", "y", "z"),
    object_id: Optional[str] = None,
    attributes: Sequence[str] = (),
    parts: Optional[int] = None,
    bin_shape: Optional[Sequence[float]] = None,
    bounds: Optional[Tuple[Sequence[float], Sequence[float]]] = None,
    dtype: str = "float32",
    compression: str = "spec-default",
    out_of_bounds: str = "raise",
    object_attributes: Arrays = None,
    groups: Optional[Mapping[int, Sequence[int]]] = None,
    group_attributes: Arrays = None,
    num_objects: int = 0,
    memory_budget: Optional[int] = None,
    commit: bool = True,
    resume: bool = True,
    on_part: Optional[Callable[[int], None]] = None,
    storage_options: Optional[Mapping[str, object]] = None,
) -> Dict[str, Any]:
    """Writes the points of a dask DataFrame (position ``columns``, an ``object_id`` column,
    numeric ``attributes`` columns) or a dask array ``(N, ndim)`` to a new store at ``path``
    (a directory or an object-store URL), one part per output partition, and commits it.

    ``commit=False`` stops after the parts (a later call commits). ``on_part(k)`` runs on
    the worker before part ``k`` is written (progress, metrics, fault injection in tests).
    Returns the commit's summary (``vertices``, ``chunks``, ``objects``, ``groups``) and
    ``parts``, the parts written by this call. ``storage_options`` configure object stores
    (``zv.set_storage_options``) on the client and on every worker task.
    """
    path = os.fspath(path)
    if storage_options is not None:
        _storage.set_storage_options(storage_options)
    columns = list(columns)
    ddf = _frame(data, columns)
    n = int(parts) if parts is not None else max(1, ddf.npartitions)
    _parts.prepare_parts(
        path,
        n,
        chunk_shape=chunk_shape,
        bin_shape=bin_shape,
        bounds=bounds,
        dtype=dtype,
        compression=compression,
        out_of_bounds=out_of_bounds,
    )
    todo = set(_parts.missing_parts(path)) if resume else set(range(n))
    written: list = []
    if todo:
        written = _write_parts(path, ddf, n, todo, columns, object_id, list(attributes),
                               memory_budget, on_part, storage_options)
    missing = _parts.missing_parts(path)
    if missing:
        raise RuntimeError(f"parts {missing} did not finish (run write_points again to resume)")
    summary: Dict[str, Any] = {"parts": sorted(written)}
    if commit:
        summary.update(
            _parts.commit_parts(
                path,
                object_attributes=object_attributes,
                groups=groups,
                group_attributes=group_attributes,
                num_objects=num_objects,
            )
        )
    return summary


def _write_parts(path, ddf, n, todo, columns, object_id, attributes, memory_budget, on_part,
                 storage_options):
    """Tags, shuffles and writes the parts in ``todo``; returns the parts written."""
    import pandas as pd

    keep = columns + ([object_id] if object_id else []) + attributes
    missing = [c for c in keep if c not in ddf.columns]
    if missing:
        raise KeyError(f"columns {missing} are not in the data (it has {list(ddf.columns)})")
    ddf = ddf[keep]

    def configure():
        if storage_options is not None:
            _storage.set_storage_options(storage_options)

    def tag(df, partition_info=None):
        configure()
        out = df.copy()
        pos = np.ascontiguousarray(df[columns].to_numpy(dtype=np.float64))
        out[_PART] = _parts.part_owners(path, pos).astype(np.int64)
        out[_SRC] = np.int64(partition_info["number"] if partition_info else 0)
        out[_ROW] = np.arange(len(df), dtype=np.int64)
        return out

    meta = ddf._meta.assign(**{_PART: np.int64(0), _SRC: np.int64(0), _ROW: np.int64(0)})
    tagged = ddf.map_partitions(tag, meta=meta)
    # one division per part: output partition k holds exactly the rows of part k
    shuffled = tagged.set_index(_PART, divisions=list(range(n)) + [n - 1])

    def write(df, partition_info=None):
        k = int(partition_info["number"]) if partition_info else 0
        if k not in todo:
            return pd.DataFrame({"part": np.array([], dtype=np.int64)})
        configure()
        if on_part is not None:
            on_part(k)
        df = df.sort_values([_SRC, _ROW])
        pos = np.ascontiguousarray(df[columns].to_numpy(dtype=np.float64)).reshape(-1, len(columns))
        ids = df[object_id].to_numpy(dtype=np.int64) if object_id else None
        attrs = {a: np.ascontiguousarray(df[a].to_numpy()) for a in attributes}
        _parts.write_part(path, k, pos, object_ids=ids, vertex_attributes=attrs,
                          owned_only=False, memory_budget=memory_budget)
        return pd.DataFrame({"part": np.array([k], dtype=np.int64)})

    done = shuffled.map_partitions(write, meta={"part": "i8"}).compute()
    return done["part"].tolist()


def _columns_of(pts, axes: Sequence[str], attributes: Sequence[str], object_ids: bool):
    """A pandas DataFrame of a ``Points`` result: one column per axis, ``object_id``, then
    each attribute (a multi-channel one as ``name_0``, ``name_1``, …)."""
    import pandas as pd

    cols: Dict[str, Any] = {}
    pos = pts.positions.reshape(-1, len(axes))
    for i, a in enumerate(axes):
        cols[a] = pos[:, i]
    if object_ids:
        ids = pts.object_ids
        cols["object_id"] = ids if ids is not None else np.full(len(pos), -1, dtype=np.int64)
    for name in attributes:
        v = pts.attributes.get(name)
        if v is None:
            continue
        if v.ndim == 1:
            cols[name] = v
        else:
            for c in range(v.shape[1]):
                cols[f"{name}_{c}"] = v[:, c]
    return pd.DataFrame(cols)


def read_points(
    path: PathLike,
    level: int = 0,
    box: Optional[Tuple[Sequence[float], Sequence[float]]] = None,
    *,
    attributes: Optional[Sequence[str]] = None,
    object_ids: bool = True,
    chunks_per_partition: int = 64,
    storage_options: Optional[Mapping[str, object]] = None,
):
    """The points of level ``level`` (or those inside ``box = (lo, hi)``, inclusive) as a
    dask DataFrame: columns named after the store's axes, ``object_id`` (-1 for a point no
    object names; with ``object_ids``), then the vertex ``attributes`` (``None``: all). One
    partition per ``chunks_per_partition`` chunks, read on the workers."""
    import dask.dataframe as dd

    path = os.fspath(path)
    if storage_options is not None:
        _storage.set_storage_options(storage_options)
    lv = _open(path)[level]
    axes = [a["name"] if isinstance(a, dict) else str(a) for a in _open(path).info()["axes"]]
    names = list(attributes) if attributes is not None else lv.vertex_attribute_names()
    keys = lv.chunk_keys()
    step = max(1, int(chunks_per_partition))
    groups = [keys[i:i + step] for i in range(0, len(keys), step)] or [[]]
    b = None if box is None else ([float(v) for v in box[0]], [float(v) for v in box[1]])

    def read(group, bbox=b, like=None):
        if storage_options is not None:
            _storage.set_storage_options(storage_options)
        pts = _open(path)[level].points(bbox, attributes=names, object_ids=object_ids,
                                        chunks=list(group))
        df = _columns_of(pts, axes, names, object_ids)
        if like is not None and list(df.columns) != list(like.columns):
            # no point read: no attribute column either; the partition keeps the schema
            df = df.reindex(columns=like.columns).astype(like.dtypes)
        return df

    # the columns and types of a real partition, read without the box (which may miss it)
    meta = read(groups[0], None).iloc[:0]
    return dd.from_map(read, groups, meta=meta, like=meta)
