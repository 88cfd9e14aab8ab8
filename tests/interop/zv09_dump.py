#!/usr/bin/env python3
"""The logical content of a ZV 0.9 store, as zarr-vectors 0.9.2's own readers see it.

    python zv09_dump.py STORE [-o OUT.json]
    python zv09_dump.py STORE... --out-dir DIR    # DIR/<name>.expected.json each

Prints a "zv-dump/1" document holding the logical sections that `zv dump`
prints and the dump comparison's logical scope compares: ``root_metadata``,
``level_ids`` and, per level, ``level_metadata``, ``objects`` (vertices and
vertex attributes in manifest order; links: the reader's links whose endpoints one
object alone holds, in its local indices), ``unassigned_links`` (the others, for
graphs, skeletons and meshes), ``object_attributes``, ``groups``, ``group_attributes``,
``canonical`` and ``reader`` (the high-level type readers' output), and the link attributes
in the shape of zv's dump sections of the same names (physical sections, compared when
asked): ``link_attributes`` (per attribute and delta, each chunk's rows of its intra-chunk
links, ``read_chunk_link_attributes``) and ``cross_chunk_link_attributes`` (the rows of the
records that cross chunks, in ``read_links``' order: ``read_link_attributes`` lists every
record's row in that order, the cross-chunk segments first). With
``--cross-level``, each level also gets ``cross_level_links``: per delta ≠ 0
present (``links/<delta>``), the pairs ``[[chunk key, row], [chunk key, row]]``
(this level first, the level at level + delta second) that 0.9.2's
``read_links`` reads, sorted; zv's dump has no such section (compare it
separately).

Everything is read through zarr-vectors 0.9.2 (``core.store``, ``core.arrays``,
``types.*.read_*``); nothing here decodes a byte itself. Fields 0.9.2 adds
that zv's model has no counterpart for are left out and listed under
``"omitted"`` (``attribute_specs`` when absent, ``fragments_tile``).

Runs in the virtualenv that has ``zarr-vectors==0.9.2`` (``.venv-zv09``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import warnings
from dataclasses import asdict
from typing import Any

import numpy as np
from zarr_vectors.core import arrays as A
from zarr_vectors.core.metadata import get_level_chunk_shape
from zarr_vectors.core.paths import intra_offsets, link_attributes_path
from zarr_vectors.core.store import (
    get_resolution_level,
    list_resolution_levels,
    open_store,
    read_level_metadata,
    read_root_metadata,
)

GEOM_LINKS = {"graph": "edges", "skeleton": "edges", "mesh": "faces"}


def fix(v: Any) -> Any:
    """JSON-ready values: numpy to Python, non-finite floats as strings."""
    if isinstance(v, np.ndarray):
        return fix(v.tolist())
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating, float)):
        f = float(v)
        if math.isnan(f):
            return "NaN"
        if math.isinf(f):
            return "Infinity" if f > 0 else "-Infinity"
        return f
    if isinstance(v, (list, tuple, range)):
        return [fix(x) for x in v]
    if isinstance(v, dict):
        return {str(k): fix(x) for k, x in v.items()}
    return v


def children(lg, name: str) -> list[str]:
    """The child names of the level's node `name` (arrays and groups), sorted."""
    if name not in lg:
        return []
    return sorted(lg[name].children())


def ckey(cc) -> str:
    return ".".join(str(int(c)) for c in cc)


def reader_section(store: str, gt: str, level: int, attr_names: list[str]) -> dict[str, Any]:
    res: dict[str, Any] = {"geometry_type": gt}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if gt == "point_cloud":
            from zarr_vectors.types.points import read_points

            r = read_points(store, level=level, attribute_names=attr_names or None)
            res.update(function="read_points", vertex_count=int(r["vertex_count"]),
                       positions=fix(r["positions"]),
                       vertex_attributes={k: fix(v) for k, v in r.get("vertex_attributes", {}).items()})
        elif gt in ("polyline", "streamline"):
            from zarr_vectors.types.polylines import read_polylines

            r = read_polylines(store, level=level)
            res.update(function="read_polylines", polyline_count=int(r["polyline_count"]),
                       vertex_count=int(r["vertex_count"]),
                       polylines=[fix(np.concatenate(p, axis=0)) for p in r["polylines"]])
        elif gt in ("graph", "skeleton"):
            from zarr_vectors.types.graphs import read_graph

            r = read_graph(store, level=level)
            res.update(function="read_graph", node_count=int(r["node_count"]),
                       edge_count=int(r["edge_count"]), positions=fix(r["positions"]),
                       edges=fix(np.asarray(r["edges"], dtype=np.int64)))
        elif gt == "line":
            from zarr_vectors.types.lines import read_lines

            r = read_lines(store, level=level)
            res.update(function="read_lines", line_count=int(r["line_count"]),
                       endpoints=fix(r["endpoints"]),
                       vertex_attributes={k: fix(v) for k, v in r.get("vertex_attributes", {}).items()})
        elif gt == "mesh":
            from zarr_vectors.types.meshes import read_mesh

            r = read_mesh(store, level=level)
            res.update(function="read_mesh", vertex_count=int(r["vertex_count"]),
                       face_count=int(r["face_count"]), vertices=fix(r["vertices"]),
                       faces=fix(np.asarray(r["faces"], dtype=np.int64)))
    return res


def assign_links(objects, manifests, starts, links, mesh: bool) -> list:
    """Gives each object (in ``objects`` order) the reader's links whose endpoints it alone
    holds, in its local vertex indices (a mesh face starting at its smallest index), sorted;
    returns the other links, sorted. The global index of a vertex is its place in the
    reader's output (the chunks' fragments in order)."""
    owners: dict[int, list[tuple[int, int]]] = {}
    for pos, oid in enumerate(sorted(manifests)):
        local = 0
        for cc, f in manifests[oid]:
            start, n = starts[(tuple(cc), int(f))]
            for r in range(n):
                entry = owners.setdefault(start + r, [])
                if not any(o == pos for o, _ in entry):
                    entry.append((pos, local))
                local += 1
    per_object: list[list[list[int]]] = [[] for _ in objects]
    unassigned = []
    for link in links:
        cands = None
        for gi in link:
            here = [o for o, _ in owners.get(int(gi), [])]
            cands = here if cands is None else [o for o in cands if o in here]
        if cands is None or len(cands) != 1:
            unassigned.append(list(link))
            continue
        o = cands[0]
        local = [next(li for oo, li in owners[int(gi)] if oo == o) for gi in link]
        if mesh:
            k = local.index(min(local))
            local = local[k:] + local[:k]
        per_object[o].append(local)
    for obj, ls in zip(objects, per_object):
        obj["links"] = sorted(ls)
    return sorted(unassigned)


def link_attribute_sections(lg, chunk_keys, ndim: int) -> tuple[dict, dict]:
    """The ``link_attributes`` and ``cross_chunk_link_attributes`` sections of a level."""
    per_chunk: dict[str, Any] = {}
    cross: dict[str, Any] = {}
    names = children(lg, "link_attributes")
    if not names:
        return per_chunk, cross
    fam = lg.read_array_meta("links/0") or {}
    width = int(fam.get("link_width", 2))
    n_cross = len(A.read_links(lg, include_intra=False))
    n_all = len(A.read_links(lg))
    for n in names:
        per_chunk[n], cross[n] = {}, {}
        for d in A.list_link_attribute_deltas(lg, n):
            if d != 0:
                raise SystemExit(f"link attribute {n}: delta {d} is not dumped")
            rows = A.read_link_attributes(lg, n, delta=d)
            if len(rows) != n_all:
                raise SystemExit(f"link attribute {n}: {len(rows)} rows for {n_all} records")
            intra = link_attributes_path(n, d, intra_offsets(ndim, width))
            chunks = {}
            for cc in chunk_keys:
                if lg.chunk_exists(intra, A._chunk_key(cc)):
                    groups = A.read_chunk_link_attributes(lg, n, tuple(cc), delta=d)
                    chunks[ckey(cc)] = fix(np.concatenate(groups)) if groups else []
            per_chunk[n]["0"] = {"dtype": str(rows.dtype), "chunks": chunks}
            cross[n]["0"] = {"dtype": str(rows.dtype), "values": fix(rows[:n_cross])}
    return per_chunk, cross


def cross_level_links(lg) -> dict[str, Any]:
    """The cross-level pairs of every delta ≠ 0 of the level, as 0.9.2's ``read_links``
    reads them (its anchoring of the other level's chunk included), sorted."""
    out: dict[str, Any] = {}
    for d in children(lg, "links"):
        if d == "0":
            continue
        recs = A.read_links(lg, delta=int(d))
        out[d] = sorted([[ckey(c), int(v)] for c, v in rec] for rec in recs)
    return out


def dump_level(store: str, root, rm, level: int, with_cross_level: bool) -> dict[str, Any]:
    lg = get_resolution_level(root, level)
    lm = read_level_metadata(root, level)
    lmd = asdict(lm)
    lmd.pop("fragments_tile", None)
    lmd["effective_chunk_shape"] = [float(c) for c in get_level_chunk_shape(rm, lm)]
    out: dict[str, Any] = {"level_metadata": lmd}
    if with_cross_level:
        out["cross_level_links"] = cross_level_links(lg)
    ndim = rm.sid_ndim
    vdtype = A.vertices_dtype(lg)
    chunk_keys = A.list_chunk_keys(lg)
    attr_names = children(lg, "vertex_attributes")

    frag_verts: dict[tuple, list[np.ndarray]] = {}
    frag_attrs: dict[tuple, dict[str, list[np.ndarray]]] = {}
    all_rows = []
    for cc in chunk_keys:
        cc = tuple(cc)
        frag_verts[cc] = A.read_chunk_vertices(lg, cc, dtype=vdtype, ndim=ndim)
        all_rows.extend(frag_verts[cc])
        frag_attrs[cc] = {n: A.read_chunk_attributes(lg, n, cc) for n in attr_names}

    objects = None
    if lg.array_exists("object_index"):
        manifests = A.read_object_manifests(lg)
        objects = []
        for oid in sorted(manifests):
            verts, attrs = [], {n: [] for n in attr_names}
            for cc, f in manifests[oid]:
                verts.append(frag_verts[tuple(cc)][f])
                for n in attr_names:
                    attrs[n].append(frag_attrs[tuple(cc)][n][f])
            v = np.concatenate(verts) if verts else np.zeros((0, ndim), vdtype)
            o: dict[str, Any] = {"id": int(oid), "vertex_count": int(len(v)), "vertices": fix(v)}
            if attr_names:
                o["vertex_attributes"] = {
                    n: fix(np.concatenate(attrs[n])) if attrs[n] else [] for n in attr_names
                }
            objects.append(o)
    out["objects"] = objects

    oattrs = {}
    for n in children(lg, "object_attributes"):
        vals = A.read_object_attributes(lg, n)
        mask = A.read_object_attribute_present_mask(lg, n)
        oattrs[n] = {"dtype": str(vals.dtype), "shape": list(vals.shape), "values": fix(vals),
                     "present_mask": None if mask is None else fix(mask)}
    out["object_attributes"] = oattrs
    out["groups"] = fix(A.read_all_groupings(lg)) if lg.array_exists("groups") else None
    gattrs = {}
    for n in children(lg, "group_attributes"):
        vals = A.read_groupings_attributes(lg, n)
        gattrs[n] = {"dtype": str(vals.dtype), "shape": list(vals.shape), "values": fix(vals)}
    out["group_attributes"] = gattrs
    out["link_attributes"], out["cross_chunk_link_attributes"] = link_attribute_sections(
        lg, chunk_keys, ndim)

    allv = np.concatenate(all_rows) if all_rows else np.zeros((0, ndim), vdtype)
    canon: dict[str, Any] = {"vertex_count": int(len(allv)), "vertices_sorted": sorted(fix(allv))}
    gt = rm.geometry_types[0] if rm.geometry_types else "point_cloud"
    reader = reader_section(store, gt, level, attr_names)
    out["reader"] = reader
    if gt in GEOM_LINKS:
        pos = reader["vertices" if gt == "mesh" else "positions"]
        recs = []
        for row in reader[GEOM_LINKS[gt]]:
            pts = [pos[int(i)] for i in row]
            if gt == "mesh":
                k = min(range(len(pts)), key=lambda j: pts[j])
                pts = pts[k:] + pts[:k]
            recs.append(pts)
        canon["faces_xyz_sorted" if gt == "mesh" else "edges_xyz_sorted"] = sorted(recs)
    out["canonical"] = canon
    if gt in GEOM_LINKS:
        if len(allv) != len(reader["vertices" if gt == "mesh" else "positions"]):
            raise SystemExit("the reader's vertices are not the chunks' fragments in order")
        starts, g = {}, 0
        for cc in chunk_keys:
            for f, rows in enumerate(frag_verts[tuple(cc)]):
                starts[(tuple(cc), f)] = (g, len(rows))
                g += len(rows)
        links = reader[GEOM_LINKS[gt]]
        if objects is None:
            out["unassigned_links"] = sorted(links)
        else:
            out["unassigned_links"] = assign_links(
                objects, A.read_object_manifests(lg), starts, links, gt == "mesh")
    if objects is not None and gt in ("polyline", "streamline"):
        for o in objects:
            o["links"] = [[i, i + 1] for i in range(max(0, o["vertex_count"] - 1))]
    return out


def dump(store: str, with_cross_level: bool = False) -> dict[str, Any]:
    root = open_store(store, mode="r")
    rm = read_root_metadata(root)
    rmd = asdict(rm)
    omitted = []
    if rmd.get("attribute_specs") is None:
        rmd.pop("attribute_specs", None)
        omitted.append("root_metadata.attribute_specs")
    rmd["chunk_shape"] = list(rmd["chunk_shape"])
    rmd["bounds"] = [list(b) for b in rmd["bounds"]]
    rmd["sid_ndim"] = rm.sid_ndim
    rmd["effective_bin_shape"] = list(rm.effective_bin_shape)
    rmd["bins_per_chunk"] = list(rm.bins_per_chunk)
    levels = list_resolution_levels(root)
    omitted.append("level_metadata.fragments_tile")
    return fix({
        "dump_format": "zv-dump/1",
        "omitted": omitted,
        "root_metadata": rmd,
        "level_ids": levels,
        "levels": {str(l): dump_level(store, root, rm, l, with_cross_level) for l in levels},
    })


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("stores", nargs="+")
    ap.add_argument("-o", "--output", help="the dump of the one store given")
    ap.add_argument("--out-dir", help="write each store's dump to OUT_DIR/<name>.expected.json")
    ap.add_argument("--cross-level", action="store_true",
                    help="add each level's cross-level pairs (`cross_level_links`)")
    a = ap.parse_args()
    if a.output and len(a.stores) != 1:
        ap.error("-o takes one store; use --out-dir for several")
    for store in a.stores:
        text = json.dumps(dump(store, a.cross_level), sort_keys=True)
        out = a.output
        if a.out_dir:
            name = os.path.basename(os.path.normpath(store))
            out = os.path.join(a.out_dir, f"{os.path.splitext(name)[0]}.expected.json")
        if out:
            with open(out, "w", encoding="ascii") as f:
                f.write(text)
        else:
            sys.stdout.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
