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

``write_polylines(path, bag, …)`` (and ``write_streamlines``) does the same for polylines: a
dask Bag whose elements are polylines (an ``(k, ndim)`` array, or a mapping with
``"positions"`` and one value per vertex for each of ``attributes``), numbered in bag order.
Each input partition sends every polyline to each part owning one of its chunks
(``zv.polyline_parts``), whole; the shuffle gathers each part's polylines; the part keeps
the pieces in its own chunks; the commit joins the pieces and makes the cross-chunk records.
The store is the one ``zv.write_polylines`` writes of the whole input, file for file.

``build_pyramid(path, levels, …)`` adds a point cloud's coarser levels on the cluster, one
step after the other: each step is staged (``zv.prepare_pyramid_level``), its parts — one per
group of coarse chunks — run as tasks (``zv.write_pyramid_part``), and the client commits
it; the store is ``zv.build_pyramid``'s, byte for byte.

``read_points(path, level=0, box=None, …)`` reads a level into a dask DataFrame with one
partition per group of chunks (``chunks_per_partition``, in chunk key order): each partition
is read on a worker by ``Level.points(chunks=…)``; concatenated, the partitions are
``zv.open(path)[level].points(box)`` row for row.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, Mapping, Optional, Sequence, Tuple

import numpy as np

from . import _parts, _storage, _zv
from ._read import open as _open
from ._write import Arrays, PathLike

_PART = "_zv_part"
_SRC = "_zv_src"
_ROW = "_zv_row"
_LOCAL = "_zv_polyline"


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
    format_version: str = "0.9",
    shard_shape: Optional[Sequence[int]] = None,
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

    ``format_version`` and ``shard_shape`` choose the layout, as in ``zv.write_points``
    (``"0.9"``: the parts stage their cells and the commit places them in the level's chunk
    grid). ``commit=False`` stops after the parts (a later call commits). ``on_part(k)`` runs on
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
        format_version=format_version,
        shard_shape=shard_shape,
    )
    todo = set(_parts.missing_parts(path)) if resume else set(range(n))
    written: list = []
    if todo:
        written = _write_parts(path, ddf, n, todo, columns, object_id, list(attributes),
                               memory_budget, on_part, storage_options)
    return _finish(path, "write_points", written, commit, object_attributes, groups,
                   group_attributes, num_objects)


def _finish(path, call, written, commit, object_attributes, groups, group_attributes,
            num_objects) -> Dict[str, Any]:
    """Checks that every part finished (else an error telling to run ``call`` again), then
    commits when asked; returns the summary with ``parts``, the parts this call wrote."""
    missing = _parts.missing_parts(path)
    if missing:
        raise RuntimeError(f"parts {missing} did not finish (run {call} again to resume)")
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


def _axes(ndim: int) -> list:
    """The position columns of a polyline frame."""
    return [f"_zv_x{i}" for i in range(ndim)]


def _attribute_types(attributes: Any) -> Dict[str, np.dtype]:
    """``attributes`` as name → dtype (a sequence of names: float32 each)."""
    if isinstance(attributes, Mapping):
        return {str(k): np.dtype(v) for k, v in attributes.items()}
    return {str(k): np.dtype(np.float32) for k in attributes}


def _polyline_frame(path, items, src, ndim, types, storage_options):
    """Input partition ``src`` (polylines) as vertex rows, each polyline repeated for every
    part it goes to: the part, the partition, the polyline's index in it, the vertex row
    (-1: the one row of a polyline without vertices), the positions and attributes. Also
    returns the partition's polyline count."""
    import pandas as pd

    if storage_options is not None:
        _storage.set_storage_options(storage_options)
    items = list(items)
    pos, attrs = [], {a: [] for a in types}
    for i, item in enumerate(items):
        is_map = isinstance(item, Mapping)
        p = np.asarray(item["positions"] if is_map else item, dtype=np.float64)
        if p.size == 0:
            p = p.reshape(0, ndim)
        if p.ndim != 2 or p.shape[1] != ndim:
            raise ValueError(f"polyline {i} of partition {src} has shape {p.shape}, not (k, {ndim})")
        pos.append(p)
        for a, t in types.items():
            if not is_map or a not in item:
                raise KeyError(f"polyline {i} of partition {src} has no attribute {a!r}")
            v = np.asarray(item[a], dtype=t)
            if v.shape != (len(p),):
                raise ValueError(f"attribute {a!r} of polyline {i} of partition {src} has shape "
                                 f"{v.shape}, not ({len(p)},)")
            attrs[a].append(v)
    lengths = np.array([len(p) for p in pos], dtype=np.int64)
    offsets = np.zeros(len(pos) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    flat = np.concatenate(pos) if pos else np.zeros((0, ndim))
    index, part = _parts.polyline_parts(path, flat, offsets) if pos else (
        np.zeros(0, np.int64), np.zeros(0, np.uint32))
    # each (polyline, part) pair gives the polyline's rows; an empty polyline one marker row
    n = lengths[index]
    reps = np.maximum(n, 1)
    first = np.zeros(len(reps) + 1, dtype=np.int64)
    np.cumsum(reps, out=first[1:])
    step = np.arange(first[-1], dtype=np.int64) - np.repeat(first[:-1], reps)
    rows = np.repeat(offsets[index], reps) + step
    empty = np.repeat(n == 0, reps)
    take = np.where(empty, 0, rows)
    cols: Dict[str, Any] = {
        _PART: np.repeat(part.astype(np.int64), reps),
        _SRC: np.full(len(rows), src, dtype=np.int64),
        _LOCAL: np.repeat(index, reps),
        _ROW: np.where(empty, -1, rows),
    }
    src_pos = flat if len(flat) else np.zeros((1, ndim))
    for i, c in enumerate(_axes(ndim)):
        cols[c] = src_pos[take, i] if len(rows) else np.zeros(0)
    for a, t in types.items():
        v = np.concatenate(attrs[a]) if attrs[a] and len(flat) else np.zeros(1, dtype=t)
        cols[a] = v[take] if len(rows) else np.zeros(0, dtype=t)
    return pd.DataFrame(cols), len(items)


def _bases(*counts):
    """Each input partition's first polyline id, and the total (the last value)."""
    out = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(np.asarray(counts, dtype=np.int64), out=out[1:])
    return out


def write_polylines(
    path: PathLike,
    data: Any,
    *,
    chunk_shape: Sequence[float],
    geometry: str = "polyline",
    attributes: Any = (),
    parts: Optional[int] = None,
    bin_shape: Optional[Sequence[float]] = None,
    bounds: Optional[Tuple[Sequence[float], Sequence[float]]] = None,
    dtype: str = "float32",
    compression: str = "spec-default",
    out_of_bounds: str = "raise",
    format_version: str = "0.9",
    shard_shape: Optional[Sequence[int]] = None,
    object_attributes: Arrays = None,
    groups: Optional[Mapping[int, Sequence[int]]] = None,
    group_attributes: Arrays = None,
    memory_budget: Optional[int] = None,
    commit: bool = True,
    resume: bool = True,
    on_part: Optional[Callable[[int], None]] = None,
    storage_options: Optional[Mapping[str, object]] = None,
) -> Dict[str, Any]:
    """Writes the polylines of a dask Bag (elements: ``(k, ndim)`` arrays, or mappings with
    ``"positions"`` and the ``attributes``, one value per vertex) to a new store at
    ``path``, polyline ``i`` of the bag (in partition order) being object ``i``, and
    commits it. ``attributes``: names (float32) or a mapping name → dtype. ``parts``
    defaults to the bag's partition count. Other arguments as ``write_points``; returns the
    commit's summary (``vertices``, ``chunks``, ``objects``, ``groups``) and ``parts``."""
    import dask
    import dask.dataframe as dd
    import pandas as pd

    path = os.fspath(path)
    if storage_options is not None:
        _storage.set_storage_options(storage_options)
    if not hasattr(data, "to_delayed"):
        raise TypeError(f"expected a dask Bag of polylines, not {type(data).__name__}")
    ndim = len(chunk_shape)
    types = _attribute_types(attributes)
    inputs = data.to_delayed()
    n = int(parts) if parts is not None else max(1, len(inputs))
    _parts.prepare_parts(path, n, chunk_shape=chunk_shape, geometry=geometry,
                         bin_shape=bin_shape, bounds=bounds, dtype=dtype,
                         compression=compression, out_of_bounds=out_of_bounds,
                         format_version=format_version, shard_shape=shard_shape)
    todo = set(_parts.missing_parts(path)) if resume else set(range(n))
    written: list = []
    total = 0
    if todo:
        made = [dask.delayed(_polyline_frame, nout=2)(path, items, i, ndim, types, storage_options)
                for i, items in enumerate(inputs)]
        bases = dask.delayed(_bases)(*[m[1] for m in made])
        meta = pd.DataFrame({
            _PART: np.zeros(0, np.int64), _SRC: np.zeros(0, np.int64),
            _LOCAL: np.zeros(0, np.int64), _ROW: np.zeros(0, np.int64),
            **{c: np.zeros(0) for c in _axes(ndim)},
            **{a: np.zeros(0, dtype=t) for a, t in types.items()},
        })
        frame = dd.from_delayed([m[0] for m in made], meta=meta)
        shuffled = frame.set_index(_PART, divisions=list(range(n)) + [n - 1])

        def write(df, bases, partition_info=None):
            k = int(partition_info["number"]) if partition_info else 0
            done = pd.DataFrame({"part": np.array([k], dtype=np.int64),
                                 "total": np.array([bases[-1]], dtype=np.int64)})
            if k not in todo:
                return done.iloc[:0]
            if storage_options is not None:
                _storage.set_storage_options(storage_options)
            if on_part is not None:
                on_part(k)
            df = df.sort_values([_SRC, _LOCAL, _ROW])
            ids = bases[df[_SRC].to_numpy()] + df[_LOCAL].to_numpy()
            starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]]) if len(ids) else np.zeros(0, np.int64)
            real = df[_ROW].to_numpy() >= 0
            counts = np.add.reduceat(real.astype(np.int64), starts) if len(ids) else np.zeros(0, np.int64)
            offsets = np.zeros(len(starts) + 1, dtype=np.int64)
            np.cumsum(counts, out=offsets[1:])
            pos = np.ascontiguousarray(df[_axes(ndim)].to_numpy(dtype=np.float64)[real])
            attrs = {a: np.ascontiguousarray(df[a].to_numpy()[real]) for a in types}
            _parts.write_part(path, k, pos.reshape(-1, ndim), vertex_attributes=attrs,
                              offsets=offsets, polyline_ids=ids[starts],
                              memory_budget=memory_budget)
            return done

        out = shuffled.map_partitions(write, bases, meta={"part": "i8", "total": "i8"}).compute()
        written = out["part"].tolist()
        total = int(out["total"].max()) if len(out) else 0
    return _finish(path, "write_polylines", written, commit, object_attributes, groups,
                   group_attributes, total)


def write_streamlines(path: PathLike, data: Any, **kw: Any) -> Dict[str, Any]:
    """``write_polylines`` with ``geometry="streamline"``."""
    return write_polylines(path, data, geometry="streamline", **kw)


def build_pyramid(
    path: PathLike,
    levels: str,
    *,
    parts: int = 16,
    chunk_scale: Optional[Sequence[int]] = None,
    sparsity: str = "random",
    seed: int = 0,
    cross_level: str = "explicit",
    depth: int = 1,
    compression: str = "spec-default",
    on_part: Optional[Callable[[int, int], None]] = None,
    storage_options: Optional[Mapping[str, object]] = None,
) -> list:
    """Adds levels 1..N to the point cloud at ``path`` (level 0 only, or the levels a
    stopped call committed: it resumes) on the Dask cluster, ``parts`` tasks a step, each
    writing the coarse chunks it owns. ``on_part(step, k)`` runs on the worker before part
    ``k`` of step ``step``. Returns each new level's summary, as ``zv.build_pyramid``."""
    import dask

    from . import _pyramid

    path = os.fspath(path)
    if storage_options is not None:
        _storage.set_storage_options(storage_options)
    options = dict(levels=levels, chunk_scale=chunk_scale, sparsity=sparsity, seed=seed,
                   cross_level=cross_level, depth=depth, compression=compression)
    steps = len([s for s in str(levels).split(";") if s.strip()])
    staged = _zv._pyramid_staged_step(path)
    first = staged if staged is not None else len(_open(path).levels) - 1
    summaries = []
    for step in range(first, steps):
        _pyramid.prepare_pyramid_level(path, step, parts, **options)
        todo = _pyramid.missing_pyramid_parts(path)

        def run(k, step=step):
            if storage_options is not None:
                _storage.set_storage_options(storage_options)
            if on_part is not None:
                on_part(step, k)
            return _pyramid.write_pyramid_part(path, k)

        dask.compute(*[dask.delayed(run)(k) for k in todo])
        missing = _pyramid.missing_pyramid_parts(path)
        if missing:
            raise RuntimeError(f"parts {missing} of step {step} did not finish (run again)")
        summaries.append(_pyramid.commit_pyramid_level(path))
    return summaries
