"""The reference side of crates/zv-cli/tests/reference_reads_zv.rs (its `DRIVER`): run by the
0.7.0 reference's Python over half of the store matrix; see the test for the protocol."""
import contextlib, importlib.util, io, json, sys, traceback
import numpy as np

def load(name):
    spec = importlib.util.spec_from_file_location(name, f"{sys.argv[1]}/{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

dump_store, compare_dumps = load("dump_store"), load("compare_dumps")
import zarr_vectors.validate.conformance as conformance
import zarr_vectors.validate.consistency as consistency
from zarr_vectors.validate import validate
read_ccl = consistency.read_cross_chunk_links
read_vertices = consistency.read_chunk_vertices

def endpoint_pairs(*args, **kwargs):
    return [pair for rec in read_ccl(*args, **kwargs) for pair in zip(rec, rec[1:])]

def store_dtype(level_group, chunk_coords, dtype=None, ndim=3):
    dtype = np.dtype(level_group.read_array_meta("vertices").get("dtype", "float32"))
    return read_vertices(level_group, chunk_coords, dtype=dtype, ndim=ndim)

STEP_AROUNDS = {
    "mesh_records": [(consistency, "read_cross_chunk_links", endpoint_pairs)],
    "vertex_dtype": [(consistency, "read_chunk_vertices", store_dtype),
                     (conformance, "read_chunk_vertices", store_dtype)],
}

def run_validate(job, names):
    saved = []
    for name in names:
        for module, attr, f in STEP_AROUNDS[name]:
            saved.append((module, attr, getattr(module, attr)))
            setattr(module, attr, f)
    try:
        v = validate(job["store"], level=job["level"])
        return {"errors": v.errors, "warnings": v.warnings, "passed": len(v.passed)}
    except Exception:
        return {"raised": traceback.format_exc()}
    finally:
        for module, attr, f in reversed(saved):
            setattr(module, attr, f)

def compare(job, groups):
    argv = [job["zv_dump"], job["ref_dump"], "--scope", "logical", "--max", "200"]
    argv += ["--ignore=" + p for g in groups for p in g]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = compare_dumps.main(argv)
    return [status, out.getvalue()]

results = []
for job in json.load(open(sys.argv[2])):
    r = {}
    try:
        dump_store.main([job["store"], "-o", job["ref_dump"]])
        groups = job["ignores"]
        r["compare"] = compare(job, groups)
        r["needed"] = [compare(job, groups[:i] + groups[i + 1:])[0] != 0
                       for i in range(len(groups))]
    except Exception:
        r["dump_error"] = traceback.format_exc()
    names = job["step_arounds"]
    r["validate"] = run_validate(job, names)
    r["step_around_needed"] = {}
    for name in names:
        v = run_validate(job, [n for n in names if n != name])
        r["step_around_needed"][name] = "raised" in v or bool(v["errors"])
    results.append(r)
json.dump(results, open(sys.argv[3], "w"))
