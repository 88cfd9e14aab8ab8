"""zv: Zarr Vectors (ZV) stores to and from numpy.

Reading::

    import zv
    store = zv.open("cells.zarr")
    pts = store[0].points(box=([0, 0, 0], [50, 50, 50]))
    pts.positions        # (N, ndim) array in the stored dtype
    pts.object_ids       # (N,) int64, or None
    pts.attributes       # {name: array}

Writing::

    zv.write_points("new.zarr", positions, chunk_shape=(50, 50, 50), object_ids=ids)

Reads and writes run in Rust with the GIL released; errors are ``zv.ZvError`` subclasses
carrying the store ``key`` (or writer input ``item``) at fault. See docs/python.md.
"""

from ._zv import (
    FormatError,
    InputError,
    MissingError,
    StoreIOError,
    UnsupportedError,
    ZvError,
)
from ._read import Graph, Level, Mesh, Object, Points, Polylines, Store, open, validate
from ._storage import set_storage_options
from ._parts import (
    commit_parts,
    missing_parts,
    part_owners,
    polyline_parts,
    prepare_parts,
    write_part,
)
from ._pyramid import (
    build_pyramid,
    commit_pyramid_level,
    missing_pyramid_parts,
    prepare_pyramid_level,
    write_pyramid_part,
)
from ._write import (
    write_graph,
    write_mesh,
    write_points,
    write_polylines,
    write_skeleton,
    write_streamlines,
)

__version__ = "0.1.0"

__all__ = [
    "open",
    "validate",
    "Store",
    "Level",
    "Points",
    "Object",
    "Polylines",
    "Graph",
    "Mesh",
    "write_points",
    "write_polylines",
    "write_streamlines",
    "write_graph",
    "write_skeleton",
    "write_mesh",
    "prepare_parts",
    "part_owners",
    "polyline_parts",
    "write_part",
    "missing_parts",
    "commit_parts",
    "build_pyramid",
    "prepare_pyramid_level",
    "write_pyramid_part",
    "missing_pyramid_parts",
    "commit_pyramid_level",
    "set_storage_options",
    "ZvError",
    "StoreIOError",
    "FormatError",
    "MissingError",
    "UnsupportedError",
    "InputError",
]
