#!/usr/bin/env bash
# Peak memory and time of `zv export` for a large streamline store and a large mesh: S
# streamlines of 20 points (default 1 million; random walks written as a TCK file with numpy
# from .venv-io) exported to TRK, TCK and OBJ, and an N x N grid mesh (default 1500: 2.25M
# vertices, 4.5M triangles; a binary PLY) exported to OBJ, STL and PLY, and a point cloud of
# P points (default 5 million, uniform in [0, 1000)^3 with a uint16 intensity; a binary PLY)
# exported to LAS and LAZ. All are imported
# first (`zv import`, writer budget 64 MiB). Prints each store's size on disk and, per export,
# the output size, seconds and peak RSS (/usr/bin/time -v). Fails if a peak RSS reaches
# 1 GiB (the figures and what the memory holds: docs/cli.md, `zv export`).
#
# Usage: scripts/export-memory.sh [STREAMLINES] [GRID] [DIR] [POINTS]
set -euo pipefail
cd "$(dirname "$0")/.."
streamlines=${1:-1000000}
grid=${2:-1500}
dir=${3:-}
points=${4:-5000000}
limit_mib=1024
budget=67108864
python=${ZV_IO_PYTHON:-.venv-io/bin/python}
for tool in /usr/bin/time "$python"; do
  if [ ! -x "$tool" ]; then
    echo "error: $tool is missing (Debian package \`time\`; .venv-io from scripts/test.sh)" >&2
    exit 1
  fi
done
cargo build --release -q -p zv-cli
zv=./target/release/zv
work=$(mktemp -d ${dir:+-p "$dir"})
trap 'rm -rf "$work"' EXIT
"$python" - "$work" "$streamlines" "$grid" "$points" <<'PY'
import sys, numpy as np
d, n, g, p = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rng = np.random.default_rng(1)
# streamlines: random walks of 20 points, a NaN triplet after each, an infinite one at the end
head = "mrtrix tracks\ndatatype: Float32LE\ncount: %010d\n" % n
offset = len(head) + len("file: . \nEND\n")
while len(head + "file: . %d\nEND\n" % offset) != offset:
    offset = len(head + "file: . %d\nEND\n" % offset)
with open(f"{d}/lines.tck", "wb") as f:
    f.write((head + "file: . %d\nEND\n" % offset).encode())
    step = 100_000
    for s in range(0, n, step):
        m = min(step, n - s)
        a = np.empty((m, 21, 3), dtype="<f4")
        start = rng.uniform(0, 200, (m, 1, 3))
        a[:, :20] = start + np.cumsum(rng.normal(0, 1, (m, 20, 3)), axis=1)
        a[:, 20] = np.nan
        f.write(a.tobytes())
    f.write(np.full(3, np.inf, dtype="<f4").tobytes())
# mesh: a g x g grid of vertices, two triangles per cell
with open(f"{d}/mesh.ply", "wb") as f:
    f.write(f"ply\nformat binary_little_endian 1.0\nelement vertex {g * g}\nproperty float x\n"
            f"property float y\nproperty float z\nelement face {2 * (g - 1) ** 2}\n"
            f"property list uchar int vertex_indices\nend_header\n".encode())
    y, x = np.mgrid[0:g, 0:g].astype("<f4")
    z = np.sin(x / 50) * np.cos(y / 50) * 20
    f.write(np.stack([x, y, z], axis=-1).reshape(-1, 3).astype("<f4").tobytes())
    face = np.dtype([("n", "u1"), ("v", "<i4", 3)])
    for r in range(g - 1):
        c = np.arange(g - 1) + r * g
        t = np.empty(2 * (g - 1), dtype=face)
        t["n"] = 3
        t["v"][0::2] = np.stack([c, c + 1, c + g], axis=-1)
        t["v"][1::2] = np.stack([c + 1, c + g + 1, c + g], axis=-1)
        f.write(t.tobytes())
# points: uniform in [0, 1000)^3, float32, with a uint16 intensity
with open(f"{d}/points.ply", "wb") as f:
    f.write(f"ply\nformat binary_little_endian 1.0\nelement vertex {p}\nproperty float x\n"
            f"property float y\nproperty float z\nproperty ushort intensity\nend_header\n".encode())
    rec = np.dtype([("xyz", "<f4", 3), ("intensity", "<u2")])
    step = 1_000_000
    for s in range(0, p, step):
        m = min(step, p - s)
        a = np.empty(m, dtype=rec)
        a["xyz"] = rng.uniform(0, 1000, (m, 3))
        a["intensity"] = rng.integers(0, 65536, m)
        f.write(a.tobytes())
PY
status=0
mib() { awk -v b="$1" 'BEGIN { printf "%.0f", b / 1048576 }'; }
printf '%-28s %10s %9s %9s\n' what "out MiB" seconds "peak MiB"
run() { # what output args...
  local what=$1 output=$2 log=$work/time.log
  shift 2
  /usr/bin/time -v "$@" >/dev/null 2>"$log" || { cat "$log" >&2; exit 1; }
  local s rss size
  s=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); v = 0; for (i = 1; i <= n; i++) v = v * 60 + t[i]; print v }' "$log")
  rss=$(( $(awk -F': ' '/Maximum resident set size/ { print $2 }' "$log") / 1024 ))
  size=-
  if [ -n "$output" ]; then size=$(mib "$(stat -c %s "$output")"); rm -f "$output"; fi
  printf '%-28s %10s %9s %9s\n' "$what" "$size" "$s" "$rss"
  if [ "$rss" -ge "$limit_mib" ]; then
    echo "error: $what: peak RSS $rss MiB reaches $limit_mib MiB" >&2
    status=1
  fi
}
run "zv import lines.tck" "" $zv --quiet import "$work/lines.tck" "$work/lines.zarr" --memory-budget "$budget"
run "zv import mesh.ply" "" $zv --quiet import "$work/mesh.ply" "$work/mesh.zarr" --memory-budget "$budget"
run "zv import points.ply" "" $zv --quiet import "$work/points.ply" "$work/points.zarr" --memory-budget "$budget" --chunk-shape 100,100,100
echo "lines.zarr: $(mib "$(du -sb "$work/lines.zarr" | cut -f1)") MiB ($streamlines streamlines, $((streamlines * 20)) points; lines.tck $(mib "$(stat -c %s "$work/lines.tck")") MiB)"
echo "mesh.zarr: $(mib "$(du -sb "$work/mesh.zarr" | cut -f1)") MiB ($((grid * grid)) vertices, $((2 * (grid - 1) ** 2)) triangles; mesh.ply $(mib "$(stat -c %s "$work/mesh.ply")") MiB)"
for ext in trk tck obj; do
  run "zv export lines.zarr -> $ext" "$work/out.$ext" $zv --quiet export "$work/lines.zarr" "$work/out.$ext"
done
echo "points.zarr: $(mib "$(du -sb "$work/points.zarr" | cut -f1)") MiB ($points points; points.ply $(mib "$(stat -c %s "$work/points.ply")") MiB)"
for ext in obj stl ply; do
  run "zv export mesh.zarr -> $ext" "$work/out.$ext" $zv --quiet export "$work/mesh.zarr" "$work/out.$ext"
done
for ext in las laz; do
  run "zv export points.zarr -> $ext" "$work/out.$ext" $zv --quiet export "$work/points.zarr" "$work/out.$ext"
done
exit $status
