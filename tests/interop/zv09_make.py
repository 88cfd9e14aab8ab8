#!/usr/bin/env python3
"""Random ZV 0.9 stores written by zarr-vectors 0.9.2's own writers.

    python zv09_make.py OUT_DIR [--seed N] [--geometries point_cloud,polyline,...]
                        [--link-attributes graph,skeleton]

Writes, for every geometry 0.9.2 writes and every layout (default cells,
sharded cells), one store ``OUT_DIR/<geometry>-<layout>.zv`` with random
content: object ids, vertex and object attributes, groups (point clouds and
polylines), lines inside one chunk and across chunks, link attributes (graphs and
skeletons, or the geometries ``--link-attributes`` names: a float32 and an int32 one;
0.9.2's ``write_mesh`` takes none), several chunks on both sides of the origin (negative
chunk coordinates, so ``chunk_grid_origin`` is not zero). The ``pyramid_*``
generators (point clouds, polylines, graphs, meshes) write the same stores with
bins inside the chunks and add levels 1 and 2 with 0.9.2's own pyramid builder
and its cross-level links (see ``_pyramid``). Prints a JSON list of the stores
written with what each holds.

Runs in the virtualenv that has ``zarr-vectors==0.9.2`` (``.venv-zv09``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys

import numpy as np

CHUNK = (10.0, 10.0, 10.0)
BOUNDS = ([-20.0, -20.0, -20.0], [30.0, 30.0, 30.0])
LAYOUTS = {"default": None, "sharded": (2, 2, 2)}


def _points(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.uniform(-19.5, 29.5, (n, 3)).astype(np.float32)


def point_cloud(path: str, rng: np.random.Generator, shard, bin_shape=None) -> dict:
    from zarr_vectors.types.points import write_points

    n = int(rng.integers(20, 80))
    n_obj = int(rng.integers(2, 7))
    ids = rng.integers(0, n_obj, n)
    ids[:n_obj] = np.arange(n_obj)  # every object has a vertex
    if shard is not None:
        ids = ids * 3 + 1  # sparse ids: object_index/object_ids is not the identity
    write_points(
        path,
        _points(rng, n),
        chunk_shape=CHUNK,
        bin_shape=bin_shape,
        bounds=BOUNDS,
        vertex_attributes={
            "intensity": rng.random(n).astype(np.float32),
            "label": rng.integers(-5, 5, n).astype(np.int32),
        },
        object_ids=ids,
        object_attributes={"score": rng.random(n_obj)},
        groups={0: [int(ids[0]), int(ids[1])], 1: sorted({int(i) for i in ids[1:n_obj]})},
        group_attributes={"weight": np.array([3, 4], dtype=np.int32)},
        shard_shape=shard,
    )
    return {"vertices": n, "objects": n_obj}


def _walk(rng: np.random.Generator, n: int) -> np.ndarray:
    start = rng.uniform(-15.0, 25.0, 3)
    steps = rng.normal(0.0, 3.0, (n, 3))
    return np.clip(start + np.cumsum(steps, axis=0), -19.5, 29.5).astype(np.float32)


def polyline(
    path: str, rng: np.random.Generator, shard, geometry: str = "polyline", bin_shape=None
) -> dict:
    from zarr_vectors.types.polylines import write_polylines

    k = int(rng.integers(2, 6))
    lines = [_walk(rng, int(rng.integers(2, 12))) for _ in range(k)]
    write_polylines(
        path,
        lines,
        chunk_shape=CHUNK,
        bin_shape=bin_shape,
        bounds=BOUNDS,
        vertex_attributes={"radius": [rng.random(len(p)).astype(np.float32) for p in lines]},
        object_attributes={"length": rng.random(k)},
        groups={0: list(range(k))},
        geometry_type=geometry,
        shard_shape=shard,
    )
    return {"vertices": sum(len(p) for p in lines), "objects": k}


def streamline(path: str, rng: np.random.Generator, shard) -> dict:
    return polyline(path, rng, shard, geometry="streamline")


LINK_ATTRIBUTES = {"graph", "skeleton"}


def graph(path: str, rng: np.random.Generator, shard, kind: str = "graph", bin_shape=None) -> dict:
    from zarr_vectors.types.graphs import write_graph

    n = int(rng.integers(10, 40))
    # a walk: neighbouring vertices share chunks, so there are intra- and cross-chunk links
    pos = _walk(rng, n)
    if kind == "skeleton":
        # [child, parent]: mostly the previous vertex, some branches
        edges = np.array(
            [[i, i - 1 if rng.random() < 0.7 else int(rng.integers(0, i))] for i in range(1, n)],
            dtype=np.int64,
        )
        ids = np.zeros(n, dtype=np.int64)
    else:
        near = [[i, i + 1] for i in range(n - 1)]
        far = rng.integers(0, n, (int(rng.integers(1, n)), 2)).tolist()
        edges = np.array(near + far, dtype=np.int64)
        edges = edges[edges[:, 0] != edges[:, 1]]
        ids = np.sort(rng.integers(0, 3, n)).astype(np.int64)
    m = len(edges)
    write_graph(
        path,
        pos,
        edges,
        chunk_shape=CHUNK,
        bin_shape=bin_shape,
        bounds=BOUNDS,
        kind=kind,
        vertex_attributes={"diameter": rng.random(n).astype(np.float32)},
        # one row per edge, filed by 0.9.2 with its record (a skeleton stores the rows of the
        # edges it stores: not the implicit previous-vertex parents)
        link_attributes={
            "weight": rng.random(m).astype(np.float32),
            "kind": rng.integers(-50, 50, m).astype(np.int32),
        } if kind in LINK_ATTRIBUTES else None,
        object_ids=ids,
        shard_shape=shard,
    )
    return {"vertices": n, "links": int(len(edges))}


def skeleton(path: str, rng: np.random.Generator, shard) -> dict:
    return graph(path, rng, shard, kind="skeleton")


def mesh(path: str, rng: np.random.Generator, shard, bin_shape=None) -> dict:
    from zarr_vectors.types.meshes import write_mesh

    n = int(rng.integers(8, 30))
    verts = _walk(rng, n)
    # strips of neighbouring vertices (mostly inside one chunk) and some random faces
    strip = [[i, i + 1, i + 2] for i in range(n - 2)]
    rand = [rng.choice(n, 3, replace=False).tolist() for _ in range(int(rng.integers(1, n)))]
    faces = np.array(strip + rand, dtype=np.int64)
    write_mesh(
        path, verts, faces, chunk_shape=CHUNK, bin_shape=bin_shape, bounds=BOUNDS, shard_shape=shard
    )
    return {"vertices": n, "links": int(len(faces))}


def line(path: str, rng: np.random.Generator, shard) -> dict:
    from zarr_vectors.types.lines import write_lines

    k = int(rng.integers(4, 16))
    # short lines (mostly inside one chunk) and long ones (across chunk boundaries)
    start = rng.uniform(-19.5, 29.5, (k, 3))
    reach = np.where(rng.random((k, 1)) < 0.5, 2.0, 25.0)
    end = np.clip(start + rng.uniform(-1.0, 1.0, (k, 3)) * reach, -19.5, 29.5)
    endpoints = np.stack([start, end], axis=1).astype(np.float32)
    write_lines(
        path,
        endpoints,
        chunk_shape=CHUNK,
        bounds=BOUNDS,
        vertex_attributes={"radius": rng.random((k, 2)).astype(np.float32)},
        object_attributes={"length": rng.random(k)},
        shard_shape=shard,
    )
    return {"vertices": 2 * k, "objects": k}


PYRAMID_BIN = (5.0, 5.0, 5.0)


def _pyramid(write):
    """A generator of stores written by ``write`` with bins of 5 (inside the chunks of 10)
    and then given two coarser levels by 0.9.2's own ``build_pyramid``: bins coarsened by 2
    each step, the chunks kept then doubled (chunk scales 1 and 2), every object kept at
    level 1 and about half at level 2 (sparsity 2, seeded), cross-level links explicit
    (``+k`` at the finer level, ``-k`` mirrored at the coarser) to depth 2. The builder
    carries positions, objects and object attributes (metavertices shared between objects);
    the coarse levels of linked geometries have no links."""

    def make(path: str, rng: np.random.Generator, shard) -> dict:
        from zarr_vectors.multiresolution.coarsen import build_pyramid

        info = write(path, rng, shard, bin_shape=PYRAMID_BIN)
        build_pyramid(
            path,
            factors=[(2.0, 1.0), (2.0, 2.0)],
            chunk_scale_factors=[1, 2],
            sparsity_seed=int(rng.integers(0, 1 << 30)),
            cross_level_depth=2,
            cross_level_storage="explicit",
        )
        return {**info, "levels": 3}

    return make


GEOMETRIES = {
    "point_cloud": point_cloud,
    "polyline": polyline,
    "streamline": streamline,
    "graph": graph,
    "skeleton": skeleton,
    "mesh": mesh,
    "line": line,
    "pyramid_points": _pyramid(point_cloud),
    "pyramid_polyline": _pyramid(polyline),
    "pyramid_graph": _pyramid(graph),
    "pyramid_mesh": _pyramid(mesh),
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--geometries", default=",".join(GEOMETRIES))
    ap.add_argument("--layouts", default=",".join(LAYOUTS))
    ap.add_argument("--link-attributes", default="graph,skeleton",
                    help="the geometries (of graph, skeleton) given link attributes")
    a = ap.parse_args()
    LINK_ATTRIBUTES.clear()
    LINK_ATTRIBUTES.update(g for g in a.link_attributes.split(",") if g)
    os.makedirs(a.out, exist_ok=True)
    written = []
    for g in a.geometries.split(","):
        for layout in a.layouts.split(","):
            rng = np.random.default_rng([a.seed, list(GEOMETRIES).index(g), list(LAYOUTS).index(layout)])
            path = os.path.join(a.out, f"{g}-{layout}.zv")
            shutil.rmtree(path, ignore_errors=True)
            info = GEOMETRIES[g](path, rng, LAYOUTS[layout])
            written.append({"store": path, "geometry": g, "layout": layout, **info})
    json.dump(written, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
