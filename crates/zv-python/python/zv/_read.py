"""Reading: the store and level wrappers and the result classes (numpy columns)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _zv


@dataclass(frozen=True)
class Points:
    """Points as columns: ``positions`` ``(N, ndim)`` in the stored dtype, ``object_ids``
    (``(N,)`` int64, -1 for a point no object names; ``None`` without an object index) and
    ``attributes`` (vertex attribute name -> ``(N,)`` or ``(N, C)`` array)."""

    positions: np.ndarray
    object_ids: Optional[np.ndarray]
    attributes: Dict[str, np.ndarray]

    def __len__(self) -> int:
        return len(self.positions)


@dataclass(frozen=True)
class Object:
    """One object: ``positions`` in manifest order, ``links`` (``(M, k)`` int64 indices
    into ``positions``; ``None`` for point clouds), ``vertex_attributes`` row-aligned with
    ``positions`` and ``attributes`` (its object attribute values, ``None`` where absent)."""

    id: int
    positions: np.ndarray
    links: Optional[np.ndarray]
    vertex_attributes: Dict[str, np.ndarray]
    attributes: Dict[str, Any]


@dataclass(frozen=True)
class Polylines:
    """Polylines (or streamlines) as CSR: ``vertices`` ``(N, ndim)``, ``offsets`` (``P + 1``
    int64; polyline ``i`` is ``vertices[offsets[i]:offsets[i + 1]]``), ``object_ids``
    (``P``) and per-vertex ``attributes``. ``polylines[i]`` and ``to_list()`` give the
    polylines as separate arrays (views, no copy)."""

    vertices: np.ndarray
    offsets: np.ndarray
    object_ids: np.ndarray
    attributes: Dict[str, np.ndarray]

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, i: int) -> np.ndarray:
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"polyline {i} of {n}")
        return self.vertices[self.offsets[i] : self.offsets[i + 1]]

    def __iter__(self) -> Iterator[np.ndarray]:
        return (self[i] for i in range(len(self)))

    def to_list(self) -> List[np.ndarray]:
        """The polylines as a list of ``(n_i, ndim)`` views."""
        return list(self)


@dataclass(frozen=True)
class Graph:
    """A graph or skeleton, objects concatenated: ``positions`` ``(N, ndim)``, ``edges``
    ``(M, 2)`` int64 indices into them (skeletons: ``[child, parent]``), ``offsets``
    (``P + 1``: object ``object_ids[i]`` is ``positions[offsets[i]:offsets[i + 1]]``) and
    per-vertex ``attributes``."""

    positions: np.ndarray
    edges: np.ndarray
    offsets: np.ndarray
    object_ids: np.ndarray
    attributes: Dict[str, np.ndarray]

    def vertex_object_ids(self) -> np.ndarray:
        """Each vertex's object id, ``(N,)`` int64."""
        return np.repeat(self.object_ids, np.diff(self.offsets))


@dataclass(frozen=True)
class Mesh:
    """A mesh, objects concatenated: ``vertices`` ``(V, ndim)``, ``faces`` ``(F, k)`` int64
    indices into them, ``offsets``/``object_ids`` as for :class:`Graph`, and per-vertex
    ``attributes``."""

    vertices: np.ndarray
    faces: np.ndarray
    offsets: np.ndarray
    object_ids: np.ndarray
    attributes: Dict[str, np.ndarray]


Box = Tuple[Sequence[float], Sequence[float]]


class Level:
    """One level of a store (``store[k]``)."""

    def __init__(self, native: Any) -> None:
        self._n = native

    index = property(lambda self: self._n.index, doc="The level number.")
    geometry = property(lambda self: self._n.geometry, doc="The geometry name.")
    dtype = property(lambda self: np.dtype(self._n.dtype), doc="The stored vertex dtype.")
    ndim = property(lambda self: self._n.ndim, doc="The number of spatial dimensions.")
    vertex_count = property(lambda self: self._n.vertex_count, doc="Vertices in the level.")
    chunk_shape = property(lambda self: tuple(self._n.chunk_shape), doc="The chunk shape.")

    def vertex_attribute_names(self) -> List[str]:
        """The vertex attribute names."""
        return self._n.vertex_attribute_names()

    def object_ids(self) -> Optional[np.ndarray]:
        """The ids of the level's objects (int64), or ``None`` without an object index."""
        return self._n.object_ids()

    def points(
        self,
        box: Optional[Box] = None,
        *,
        attributes: Optional[Sequence[str]] = None,
        object_ids: bool = True,
        chunks: Optional[Sequence[Sequence[int]]] = None,
    ) -> Points:
        """Every point of the level, or those inside ``box = (lo, hi)`` (inclusive; only
        the chunks and bins that meet it are read), with the vertex ``attributes`` named
        (``None``: all) and each point's object. ``chunks`` (coordinate tuples, as
        ``chunk_keys()`` gives them) reads those chunks only, in that order. Points are in
        chunk key order, rows in stored order; no Python object is made per point."""
        b = None if box is None else (list(map(float, box[0])), list(map(float, box[1])))
        names = None if attributes is None else list(attributes)
        c = None if chunks is None else [[int(x) for x in k] for k in chunks]
        d = self._n._points(b, names, object_ids, c)
        return Points(d["positions"], d["object_ids"], d["attributes"])

    def chunk_keys(self) -> List[Tuple[int, ...]]:
        """The coordinates of the level's chunks, in key order."""
        return [tuple(k) for k in self._n.chunk_keys()]

    def object(self, id: int) -> Object:
        """Object ``id`` read through its manifest."""
        d = self._n._object(int(id))
        return Object(d["id"], d["positions"], d["links"], d["vertex_attributes"], d["attributes"])

    def polylines(self, ids: Optional[Sequence[int]] = None) -> Polylines:
        """The polylines (objects ``ids``, default all) as CSR columns."""
        d = self._objects(ids)
        return Polylines(d["positions"], d["offsets"], d["object_ids"], d["attributes"])

    streamlines = polylines

    def graph(self, ids: Optional[Sequence[int]] = None) -> Graph:
        """The graph or skeleton (objects ``ids``, default all), edges as ``(M, 2)``."""
        d = self._objects(ids)
        if "links" not in d:
            raise _zv.InputError(f"a {self.geometry} level has no edges")
        return Graph(d["positions"], d["links"], d["offsets"], d["object_ids"], d["attributes"])

    skeleton = graph

    def mesh(self, ids: Optional[Sequence[int]] = None) -> Mesh:
        """The mesh (objects ``ids``, default all), faces as ``(F, k)``."""
        d = self._objects(ids)
        if "links" not in d or self.geometry != "mesh":
            raise _zv.InputError(f"a {self.geometry} level has no faces")
        return Mesh(d["positions"], d["links"], d["offsets"], d["object_ids"], d["attributes"])

    def _objects(self, ids: Optional[Sequence[int]]) -> Dict[str, Any]:
        return self._n._objects(None if ids is None else [int(i) for i in ids])

    def groups(self) -> Optional[List[np.ndarray]]:
        """The groups: one int64 array of object ids per group id, or ``None``."""
        return self._n.groups()

    def object_attributes(self) -> Dict[str, np.ndarray]:
        """Object attributes: name -> array with one row per object id."""
        return {k: v for k, (v, _) in self._n._object_attributes().items()}

    def object_attribute_masks(self) -> Dict[str, np.ndarray]:
        """For object attributes stored with a ``present_mask``: name -> bool array."""
        return {k: m for k, (_, m) in self._n._object_attributes().items() if m is not None}

    def group_attributes(self) -> Dict[str, np.ndarray]:
        """Group attributes: name -> array with one row per group id."""
        return {k: v for k, (v, _) in self._n._group_attributes().items()}

    def __repr__(self) -> str:
        return repr(self._n)


class Store:
    """An opened ZV store: ``store.levels``, ``store[k]``, ``store.info()``."""

    def __init__(self, native: Any) -> None:
        self._n = native

    levels = property(lambda self: list(self._n.levels), doc="The level numbers, ascending.")
    geometry = property(lambda self: self._n.geometry, doc="The geometry name.")
    ndim = property(lambda self: self._n.ndim, doc="The number of spatial dimensions.")
    path = property(lambda self: self._n.path, doc="The path the store was opened from.")

    def info(self) -> Dict[str, Any]:
        """The root metadata and each level's vertex count, chunk shape and dtype."""
        return self._n.info()

    def level(self, k: int = 0) -> Level:
        """Level ``k``."""
        return Level(self._n[int(k)])

    def __getitem__(self, k: int) -> Level:
        return self.level(k)

    def __len__(self) -> int:
        return len(self._n)

    def __iter__(self) -> Iterator[Level]:
        return (self.level(k) for k in self.levels)

    def __repr__(self) -> str:
        return repr(self._n)


def open(path: Union[str, "os.PathLike[str]"]) -> Store:
    """Opens the ZV store (0.7 or 0.9 layout) at ``path`` (a path or ``file://`` URL)."""
    return Store(_zv.open(os.fspath(path)))


def validate(path: Union[str, "os.PathLike[str]"], level: int = 3) -> Dict[str, Any]:
    """Validates the store at ``path`` up to conformance level ``level`` (1-5): the report
    as a dict (``valid``, ``errors``, ``warnings``, ``findings``: each with ``rule``,
    ``severity``, ``key`` and ``message``)."""
    return _zv.validate(os.fspath(path), int(level))
