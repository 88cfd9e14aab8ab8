"""laspy (PyPI, with lazrs) for the LAS/LAZ tests of zv-io (crates/zv-io/tests/las_interop.rs).

    write PATH VERSION FORMAT   writes a LAS (or, for PATH ending .laz, LAZ) file with every
                                dimension of the point format filled with varied values, and
                                prints its content as JSON
    read PATH                   prints the content of a LAS/LAZ file as JSON

The content: version, point format, scale, offset, the scaled positions x, y, z (laspy's
float64 `las.x`, printed by repr, so exactly) and every other dimension by laspy's name.
"""
import json
import sys

import laspy
import numpy as np


def content(las):
    h = las.header
    dims = {}
    for name in las.point_format.dimension_names:
        if name in ("X", "Y", "Z"):
            continue
        a = np.asarray(las[name])
        dims[name] = [float(v) for v in a.astype(np.float64)]
    return {
        "version": f"{h.version.major}.{h.version.minor}",
        "point_format": int(h.point_format.id),
        "compressed": bool(h.are_points_compressed) if hasattr(h, "are_points_compressed") else None,
        "scale": [float(s) for s in h.scales],
        "offset": [float(o) for o in h.offsets],
        "x": [float(v) for v in np.asarray(las.x)],
        "y": [float(v) for v in np.asarray(las.y)],
        "z": [float(v) for v in np.asarray(las.z)],
        "dims": dims,
    }


def write(path, version, fmt):
    n = 400
    rng = np.random.default_rng(7 + fmt)
    header = laspy.LasHeader(point_format=fmt, version=version)
    header.scales = np.array([0.01, 0.001, 0.0001])
    header.offsets = np.array([1000.5, -200.0, 3.0])
    header.system_identifier = "zv test"
    las = laspy.LasData(header)
    las.x = 1000.5 + rng.uniform(-500, 500, n)
    las.y = -200.0 + rng.uniform(-50, 50, n)
    las.z = 3.0 + rng.uniform(-10, 10, n)
    extended = fmt >= 6
    for name in las.point_format.dimension_names:
        if name in ("X", "Y", "Z"):
            continue
        kind = las.point_format.dimension_by_name(name)
        if name == "gps_time":
            las[name] = rng.uniform(0, 1e9, n)
        elif name == "return_number":
            # LAS before 1.4 counts returns 1 to 5 in its header
            las[name] = rng.integers(0, 16 if extended else 6, n)
        elif name == "number_of_returns":
            las[name] = rng.integers(0, 16 if extended else 8, n)
        elif name == "classification":
            las[name] = rng.integers(0, 256 if extended else 32, n)
        elif name == "scanner_channel":
            las[name] = rng.integers(0, 4, n)
        elif name in ("scan_direction_flag", "edge_of_flight_line", "synthetic", "key_point",
                      "withheld", "overlap"):
            las[name] = rng.integers(0, 2, n).astype(bool)
        elif name == "scan_angle_rank":
            las[name] = rng.integers(-90, 91, n)
        elif name == "scan_angle":
            las[name] = rng.integers(-30000, 30001, n)
        else:
            info = np.iinfo(kind.dtype)
            las[name] = rng.integers(info.min, int(info.max) + 1, n).astype(kind.dtype)
    las.write(path)
    return content(laspy.read(path))


def main():
    cmd = sys.argv[1]
    if cmd == "write":
        out = write(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif cmd == "read":
        out = content(laspy.read(sys.argv[2]))
    else:
        raise SystemExit(f"unknown command {cmd}")
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
