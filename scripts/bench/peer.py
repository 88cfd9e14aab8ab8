#!/usr/bin/env python3
"""Run one benchmark phase of a Python ZV peer implementation.

Runs under either peer virtualenv; both install the package `zarr_vectors`:

* zarr-vectors 0.9.2 (PyPI, the "0.9" layout)        -> impl "zarr-vectors 0.9.2"
* the ZV 0.7.0 reference implementation (the wheel)  -> impl "reference 0.7.0"

Usage:
  PYTHON peer.py --inputs DIR --store PATH --phase PHASE
                 [--codecs none|default] [--api types|dataset] [--objects each|all]

PHASE is one of write_points, read_points, box, read_objects, write_polylines.
Inputs (DIR) are the files the Rust bench harness writes (see make_inputs.py).
STORE may be an object-store URL (s3://bucket/prefix, `zv bench object`): the
library opens it through its own backend (obstore, configured by the AWS_*
environment variables); the harness deletes it before a write.
params.json may also carry an optional "bin_shape" (not written by the
harness): it is passed to the writers as bin_shape=. Both readers answer a
box query wrongly on stores written with bin_shape < chunk_shape AND object
ids (they treat a fragment index as a bin index while the writer makes one
fragment per object per chunk); the box phase reports it (`wrong`).

Prints ONE JSON object on stdout: {"impl", "phase", "seconds", "count", ...}.
`seconds` covers only the library call(s) of the phase (perf_counter around
them); imports, loading the inputs, deleting an old store and every check are
outside it. `count` is the number of vertices written / returned. Extra keys
say what was done and whether the answer was right (`expected_count`,
`content_ok`, ...). An unsupported phase prints {"phase", "unsupported"} and
exits 0; any exception prints {"phase", "error"} and exits 1.

API used (each implementation's own, as a user would call it):
* writes: zarr_vectors.types.points.write_points / types.polylines.write_polylines
  (in 0.9.2 these are the very functions re-exported as zarr_vectors.building.*).
* reads with --api types (default, both): zarr_vectors.types.points.read_points
  (bbox=, object_ids=, attribute_names=).
* reads with --api dataset (0.9.2 only, its advertised data-oriented API):
  zv.open(path).level(0).read(...) / .select(bbox=...).read() / .objects[ids].
* --objects each (default): one read per object id; --objects all: one read
  with every id.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
import traceback

PHASES = ("write_points", "read_points", "box", "read_objects", "write_polylines")
ATTR = "intensity"

# stdout must carry only our one JSON object: a library print or warning
# goes to stderr instead.
_REAL_STDOUT = sys.stdout


def emit(obj: dict, code: int = 0) -> None:
    _REAL_STDOUT.write(json.dumps(obj) + "\n")
    _REAL_STDOUT.flush()
    sys.exit(code)


# ---------------------------------------------------------------------------
# inputs
# ---------------------------------------------------------------------------


def load_params(d: str) -> dict:
    with open(os.path.join(d, "params.json")) as f:
        return json.load(f)


def geometry_kwargs(params: dict) -> dict:
    """chunk_shape and bounds from params.json, plus bin_shape if it names one
    (optional key; absent means one bin per chunk, the writers' default)."""
    kw = dict(
        chunk_shape=tuple(float(c) for c in params["chunk_shape"]),
        bounds=(list(map(float, params["bounds"][0])), list(map(float, params["bounds"][1]))),
    )
    if params.get("bin_shape") is not None:
        kw["bin_shape"] = tuple(float(c) for c in params["bin_shape"])
    return kw


def shard_kwargs(params: dict) -> dict:
    """shard_shape= for the writers when params.json names one (zarr-vectors 0.9.x only;
    absent or null means one stored object per chunk)."""
    if params.get("shard_shape") is None:
        return {}
    return {"shard_shape": tuple(int(c) for c in params["shard_shape"])}


def load_points(d: str):
    import numpy as np

    pts = np.fromfile(os.path.join(d, "points.f32"), dtype="<f4").reshape(-1, 3)
    ids = np.fromfile(os.path.join(d, "object_ids.i64"), dtype="<i8")
    inten = np.fromfile(os.path.join(d, "intensity.f32"), dtype="<f4")
    if not (len(pts) == len(ids) == len(inten)):
        raise ValueError(
            f"inputs disagree: {len(pts)} points, {len(ids)} object ids, "
            f"{len(inten)} intensities"
        )
    # Native-endian copies: what a user would hand the library.
    return (
        np.ascontiguousarray(pts, dtype=np.float32),
        np.ascontiguousarray(ids, dtype=np.int64),
        np.ascontiguousarray(inten, dtype=np.float32),
    )


def load_polylines(d: str):
    import numpy as np

    verts = np.fromfile(os.path.join(d, "polylines.f32"), dtype="<f4").reshape(-1, 3)
    verts = np.ascontiguousarray(verts, dtype=np.float32)
    offs = np.fromfile(os.path.join(d, "polyline_offsets.i64"), dtype="<i8").astype(np.int64)
    if len(offs) < 2 or offs[0] != 0 or offs[-1] != len(verts) or np.any(np.diff(offs) < 1):
        raise ValueError("polyline_offsets.i64 is not 0 <= ... <= V, strictly increasing")
    return [verts[offs[i]:offs[i + 1]] for i in range(len(offs) - 1)], len(verts)


# ---------------------------------------------------------------------------
# implementation detection
# ---------------------------------------------------------------------------


def detect():
    """(label, version string, is_reference) from the installed package."""
    import zarr_vectors

    try:
        from importlib.metadata import version

        ver = version("zarr-vectors")
    except Exception:
        ver = getattr(zarr_vectors, "__version__", "0.0.0+unknown")
    major_minor = tuple(int(x) for x in ver.split(".")[:2] if x.isdigit())
    is_ref = major_minor == (0, 7)
    label = f"reference {ver}" if is_ref else f"zarr-vectors {ver}"
    return label, ver, is_ref


def codec_arg(codecs: str):
    """The `compressor=` value for the writers.

    Both implementations take compressor=None | "none" | "zstd" | "blosc" |
    list (encoding.compression.resolve_compressor). "none" asks for
    uncompressed chunks explicitly; "default" passes nothing, i.e. whatever
    the writer does when the caller says nothing.
    """
    return "none" if codecs == "none" else None


# Arrays holding the geometry itself (what --codecs is about); everything
# else (object_index manifests, ids) is bookkeeping.
_DATA_FAMILIES = ("vertices", "vertex_fragments", "vertex_attributes", "links",
                  "cross_chunk_links", "link_fragments")
_SERIALIZERS = {"bytes", "vlen-bytes", "vlen-utf8", "transpose", "crc32c"}


def is_url(store: str) -> bool:
    """An object-store URL (s3://...): the harness wipes it before a write, and the
    on-disk reports below are skipped."""
    return "://" in store


def codecs_on_disk(store: str) -> tuple[str, dict]:
    """What the store's array zarr.json files declare, by array family.

    Returns (summary, {family: "codec+codec"}). The summary is "none" when
    no array holding geometry declares a compressor, else the compressor
    names found there.
    """
    if is_url(store):
        return "n/a (object store)", {}
    fams: dict[str, set] = {}
    for root, _dirs, files in os.walk(store):
        if "zarr.json" not in files:
            continue
        try:
            with open(os.path.join(root, "zarr.json")) as f:
                meta = json.load(f)
        except Exception:
            continue
        if meta.get("node_type") != "array":
            continue
        rel = os.path.relpath(root, store).split(os.sep)
        # drop level and chunk-key components ("0", "3.4.5", "+1.0.-1" stays)
        parts = [x for x in rel if not x.replace(".", "").isdigit()]
        fam = "/".join(parts[:2]) if parts else "?"
        names: list[str] = []

        def walk(codecs):
            for c in codecs or []:
                if isinstance(c, dict):
                    names.append(c.get("name", "?"))
                    if c.get("name") == "sharding_indexed":
                        walk(c.get("configuration", {}).get("codecs"))

        walk(meta.get("codecs"))
        fam_key = fam.split("/")[0] if fam.split("/")[0] in ("links", "vertex_attributes") else fam
        fams.setdefault(fam_key, set()).add("+".join(names))
    detail = {k: " | ".join(sorted(v)) for k, v in sorted(fams.items())}
    comp = set()
    for fam, chains in fams.items():
        if fam.split("/")[0] in _DATA_FAMILIES:
            for ch in chains:
                comp.update(n for n in ch.split("+") if n and n not in _SERIALIZERS
                            and n != "sharding_indexed")
    summary = "+".join(sorted(comp)) if comp else "none"
    return summary, detail


def store_bytes(store: str) -> int:
    if is_url(store):
        return -1
    total = 0
    for root, _dirs, files in os.walk(store):
        for f in files:
            try:
                total += os.path.getsize(os.path.join(root, f))
            except OSError:
                pass
    return total


def remove_store(path: str) -> None:
    if is_url(path):
        return
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.remove(path)


def box_counts(pts, lo, hi):
    """True point counts for the closed box [lo, hi] and half-open [lo, hi),
    comparing the float32 coordinates exactly (in float64)."""
    import numpy as np

    p = pts.astype(np.float64)
    ge = np.all(p >= lo, axis=1)
    closed = ge & np.all(p <= hi, axis=1)
    half = ge & np.all(p < hi, axis=1)
    return closed, half


def sorted_equal(a, b) -> bool:
    import numpy as np

    a = np.sort(np.asarray(a).ravel())
    b = np.sort(np.asarray(b).ravel())
    return a.shape == b.shape and bool(np.array_equal(a, b))


def rows_equal(a, b) -> bool:
    """Same multiset of (x, y, z) rows."""
    import numpy as np

    a = np.asarray(a, dtype=np.float32).reshape(-1, 3)
    b = np.asarray(b, dtype=np.float32).reshape(-1, 3)
    if a.shape != b.shape:
        return False
    ka = a[np.lexsort(a.T[::-1])]
    kb = b[np.lexsort(b.T[::-1])]
    return bool(np.array_equal(ka, kb))


# ---------------------------------------------------------------------------
# phases
# ---------------------------------------------------------------------------


def phase_write_points(a, out: dict, is_ref: bool) -> None:
    import numpy as np
    from zarr_vectors.types.points import write_points

    params = load_params(a.inputs)
    pts, ids, inten = load_points(a.inputs)
    remove_store(a.store)
    kw = dict(
        **geometry_kwargs(params),
        vertex_attributes={ATTR: inten},
        object_ids=ids,
        dtype="float32",
        compressor=codec_arg(a.codecs),
        **shard_kwargs(params),
    )
    t0 = time.perf_counter()
    summary = write_points(a.store, pts, **kw)
    secs = time.perf_counter() - t0
    cod = codecs_on_disk(a.store)
    n = int(summary.get("vertex_count", -1)) if isinstance(summary, dict) else -1
    out.update(
        seconds=secs,
        count=n,
        expected_count=int(len(pts)),
        objects=int(len(np.unique(ids))),
        chunks=int(summary.get("chunk_count", -1)) if isinstance(summary, dict) else -1,
        codecs_requested=a.codecs,
        compressor_arg=kw["compressor"],
        codecs=cod[0],
        codecs_by_array=cod[1],
        store_bytes=store_bytes(a.store),
        chunk_shape=list(kw["chunk_shape"]),
        bin_shape=list(kw["bin_shape"]) if "bin_shape" in kw else None,
        api="zarr_vectors.types.points.write_points",
    )


def _check_store(a) -> None:
    if is_url(a.store):
        return
    if not os.path.isdir(a.store):
        raise FileNotFoundError(
            f"no store at {a.store}: run --phase write_points with this "
            f"implementation first"
        )


def phase_read_points(a, out: dict, is_ref: bool) -> None:
    _check_store(a)
    pts, _ids, inten = load_points(a.inputs)
    if a.api == "dataset":
        import zarr_vectors as zv

        t0 = time.perf_counter()
        res = zv.open(a.store).level(0).read(attributes=[ATTR])
        secs = time.perf_counter() - t0
        got_pos, got_attr = res.positions, res.attributes.get(ATTR)
        api = "zv.open(store).level(0).read(attributes=['intensity'])"
    else:
        from zarr_vectors.types.points import read_points

        t0 = time.perf_counter()
        res = read_points(a.store, attribute_names=[ATTR])
        secs = time.perf_counter() - t0
        got_pos, got_attr = res["positions"], res["vertex_attributes"].get(ATTR)
        api = "zarr_vectors.types.points.read_points(store, attribute_names=['intensity'])"
    out.update(
        seconds=secs,
        count=int(len(got_pos)),
        expected_count=int(len(pts)),
        attribute_returned=got_attr is not None,
        positions_ok=rows_equal(got_pos, pts),
        intensity_ok=got_attr is not None and sorted_equal(got_attr, inten),
        api=api,
    )


def phase_box(a, out: dict, is_ref: bool) -> None:
    import numpy as np

    _check_store(a)
    params = load_params(a.inputs)
    pts, _ids, inten = load_points(a.inputs)
    lo = np.asarray(params["box_lo"], dtype=np.float64)
    hi = np.asarray(params["box_hi"], dtype=np.float64)
    if a.api == "dataset":
        import zarr_vectors as zv

        t0 = time.perf_counter()
        res = zv.open(a.store).level(0).select(bbox=(lo, hi), attributes=[ATTR]).read()
        secs = time.perf_counter() - t0
        got_pos, got_attr = res.positions, res.attributes.get(ATTR)
        api = "zv.open(store).level(0).select(bbox=(lo, hi), attributes=['intensity']).read()"
    else:
        from zarr_vectors.types.points import read_points

        t0 = time.perf_counter()
        res = read_points(a.store, bbox=(lo, hi), attribute_names=[ATTR])
        secs = time.perf_counter() - t0
        got_pos, got_attr = res["positions"], res["vertex_attributes"].get(ATTR)
        api = "zarr_vectors.types.points.read_points(store, bbox=(lo, hi), attribute_names=['intensity'])"

    closed, half = box_counts(pts, lo, hi)
    got_pos = np.asarray(got_pos, dtype=np.float32).reshape(-1, 3)
    # Both readers filter with `(p >= lo) & (p <= hi)`: a closed box.
    rule = "closed"
    g = got_pos.astype(np.float64)
    want = closed
    outside = int(np.sum(~(np.all(g >= lo, axis=1) & np.all(g <= hi, axis=1)))) if len(g) else 0
    ok_pos = rows_equal(got_pos, pts[want])
    ok_attr = got_attr is not None and sorted_equal(got_attr, inten[want])
    out.update(
        seconds=secs,
        count=int(len(got_pos)),
        expected_count=int(want.sum()),
        expected_count_half_open=int(half.sum()),
        box_rule=rule,
        bin_shape=params.get("bin_shape"),
        box_lo=lo.tolist(),
        box_hi=hi.tolist(),
        returned_outside_box=outside,
        attribute_returned=got_attr is not None,
        attribute_count=int(len(got_attr)) if got_attr is not None else 0,
        content_ok=bool(ok_pos and ok_attr),
        api=api,
    )
    if out["count"] != out["expected_count"]:
        out["wrong"] = (
            f"returned {out['count']} points, {out['expected_count']} lie in the "
            f"closed box ({out['expected_count_half_open']} in the half-open one)"
        )


def phase_read_objects(a, out: dict, is_ref: bool) -> None:
    import numpy as np

    _check_store(a)
    pts, ids, inten = load_points(a.inputs)
    # The ids a user would iterate: the ones written. Outside the timing.
    want_ids = [int(x) for x in np.unique(ids)]
    per_obj: dict[int, int] = {}
    attr_parts = []
    pos_parts = []
    if a.api == "dataset":
        import zarr_vectors as zv

        if a.objects == "each":
            t0 = time.perf_counter()
            objs = zv.open(a.store).level(0).objects
            results = [objs[oid] for oid in want_ids]
            secs = time.perf_counter() - t0
        else:
            t0 = time.perf_counter()
            results = [zv.open(a.store).level(0).objects[want_ids]]
            secs = time.perf_counter() - t0
        for r in results:
            pos_parts.append(r.positions)
            attr_parts.append(r.attributes.get(ATTR))
            oids = r.object_ids if r.object_ids is not None else np.zeros(0, np.int64)
            for k, c in zip(*np.unique(oids, return_counts=True)):
                per_obj[int(k)] = per_obj.get(int(k), 0) + int(c)
        api = (
            "zv.open(store).level(0).objects[oid] per id" if a.objects == "each"
            else "zv.open(store).level(0).objects[all_ids]"
        )
    else:
        from zarr_vectors.types.points import read_points

        if a.objects == "each":
            t0 = time.perf_counter()
            results = [read_points(a.store, object_ids=[oid], attribute_names=[ATTR])
                       for oid in want_ids]
            secs = time.perf_counter() - t0
        else:
            t0 = time.perf_counter()
            results = [read_points(a.store, object_ids=want_ids, attribute_names=[ATTR])]
            secs = time.perf_counter() - t0
        for r in results:
            pos_parts.append(r["positions"])
            attr_parts.append(r.get("vertex_attributes", {}).get(ATTR))
            oids = r.get("object_ids")
            if oids is not None:
                for k, c in zip(*np.unique(np.asarray(oids), return_counts=True)):
                    per_obj[int(k)] = per_obj.get(int(k), 0) + int(c)
        api = (
            "zarr_vectors.types.points.read_points(store, object_ids=[oid], "
            "attribute_names=['intensity']) per id" if a.objects == "each"
            else "zarr_vectors.types.points.read_points(store, object_ids=all_ids, "
            "attribute_names=['intensity'])"
        )

    got_pos = np.concatenate([np.asarray(p).reshape(-1, 3) for p in pos_parts]) \
        if pos_parts else np.zeros((0, 3), np.float32)
    truth_ids, truth_counts = np.unique(ids, return_counts=True)
    truth = {int(k): int(c) for k, c in zip(truth_ids, truth_counts)}
    have_attr = all(p is not None for p in attr_parts) and bool(attr_parts)
    out.update(
        seconds=secs,
        count=int(len(got_pos)),
        expected_count=int(len(pts)),
        objects=len(want_ids),
        objects_mode=a.objects,
        calls=len(want_ids) if a.objects == "each" else 1,
        per_object_counts_ok=per_obj == truth,
        positions_ok=rows_equal(got_pos, pts),
        attribute_returned=have_attr,
        intensity_ok=have_attr and sorted_equal(np.concatenate(attr_parts), inten),
        api=api,
    )


def phase_write_polylines(a, out: dict, is_ref: bool) -> None:
    from zarr_vectors.types.polylines import write_polylines

    params = load_params(a.inputs)
    polys, nverts = load_polylines(a.inputs)
    remove_store(a.store)
    kw = dict(
        **geometry_kwargs(params),
        dtype="float32",
        compressor=codec_arg(a.codecs),
    )
    t0 = time.perf_counter()
    summary = write_polylines(a.store, polys, **kw)
    secs = time.perf_counter() - t0
    cod = codecs_on_disk(a.store)
    s = summary if isinstance(summary, dict) else {}
    out.update(
        seconds=secs,
        count=int(s.get("vertex_count", -1)),
        expected_count=int(nverts),
        polylines=int(s.get("polyline_count", -1)),
        expected_polylines=len(polys),
        chunks=int(s.get("chunk_count", -1)),
        cross_chunk_links=int(s.get("cross_chunk_link_count", -1)),
        geometry_type="streamline (the writer's default)",
        codecs_requested=a.codecs,
        compressor_arg=kw["compressor"],
        codecs=cod[0],
        codecs_by_array=cod[1],
        store_bytes=store_bytes(a.store),
        chunk_shape=list(kw["chunk_shape"]),
        bin_shape=list(kw["bin_shape"]) if "bin_shape" in kw else None,
        api="zarr_vectors.types.polylines.write_polylines",
    )


# ---------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    """Bad arguments are answered like any other failure: JSON, exit 1."""

    def error(self, message: str):  # type: ignore[override]
        phase = None
        argv = sys.argv[1:]
        for i, x in enumerate(argv):
            if x == "--phase" and i + 1 < len(argv):
                phase = argv[i + 1]
            elif x.startswith("--phase="):
                phase = x.split("=", 1)[1]
        self.print_usage(sys.stderr)
        emit({"phase": phase, "error": f"usage: {message}"}, 1)


def main() -> None:
    ap = _Parser(description="Run one benchmark phase of a Python ZV peer.")
    ap.add_argument("--inputs", required=True)
    ap.add_argument("--store", required=True)
    ap.add_argument("--phase", required=True, choices=PHASES)
    ap.add_argument("--codecs", choices=("none", "default"), default="default")
    ap.add_argument("--api", choices=("types", "dataset"), default="types",
                    help="reader API: types.points.read_points (both) or the "
                         "0.9 data-oriented zv.open(...) API (0.9.x only)")
    ap.add_argument("--objects", choices=("each", "all"), default="each",
                    help="read_objects: one read per id, or one read of all ids")
    a = ap.parse_args()

    out: dict = {"phase": a.phase}
    try:
        # Library chatter (warnings, prints) must not reach stdout.
        sys.stdout = sys.stderr
        import numpy  # noqa: F401  (fail early, as an error JSON)

        label, ver, is_ref = detect()
        out = {"impl": label, "phase": a.phase}
        if a.api == "dataset" and is_ref and a.phase in ("read_points", "box", "read_objects"):
            out["unsupported"] = (
                f"--api dataset: zarr_vectors {ver} has no zv.open() data API; "
                f"use --api types"
            )
            emit(out, 0)
        {
            "write_points": phase_write_points,
            "read_points": phase_read_points,
            "box": phase_box,
            "read_objects": phase_read_objects,
            "write_polylines": phase_write_polylines,
        }[a.phase](a, out, is_ref)
        out["store"] = a.store
    except SystemExit:
        raise
    except BaseException as e:  # noqa: BLE001 - everything becomes a JSON error
        out["error"] = f"{type(e).__name__}: {e}"
        out["traceback"] = traceback.format_exc(limit=6)
        emit(out, 1)
    emit(out, 0)


if __name__ == "__main__":
    main()
