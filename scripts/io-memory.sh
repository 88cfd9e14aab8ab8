#!/usr/bin/env bash
# Peak memory and throughput of `zv import` for large files: a binary PLY and a CSV of N points
# (default 10 million; x, y, z and one attribute), generated with numpy from .venv-io, imported
# with a writer memory budget of 64 MiB and measured with /usr/bin/time -v. Quotes the floor
# (reading the file alone: `cat` for PLY, `wc -l` for CSV, page cache warm) and the plain
# streaming-writer path (`zv bench stream-points`, same N). Fails if a peak RSS reaches 512 MiB.
#
# Usage: scripts/io-memory.sh [POINTS] [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
points=${1:-10000000}
dir=${2:-}
limit_mib=512
budget=67108864
python=${ZV_IO_PYTHON:-.venv-io/bin/python}
for tool in /usr/bin/time "$python"; do
  if [ ! -x "$tool" ]; then
    echo "error: $tool is missing (Debian package \`time\`; .venv-io from scripts/test.sh)" >&2
    exit 1
  fi
done
cargo build --release -q -p zv-cli
work=$(mktemp -d ${dir:+-p "$dir"})
trap 'rm -rf "$work"' EXIT
"$python" - "$work" "$points" <<'PY'
import sys, numpy as np
d, n = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(1)
with open(f"{d}/points.ply", "wb") as f:
    f.write(f"ply\nformat binary_little_endian 1.0\nelement vertex {n}\nproperty float x\n"
            f"property float y\nproperty float z\nproperty float intensity\nend_header\n".encode())
    step = 1_000_000
    for s in range(0, n, step):
        m = min(step, n - s)
        a = np.empty((m, 4), dtype="<f4")
        a[:, :3] = rng.uniform(0, 1000, (m, 3))
        a[:, 3] = rng.uniform(0, 1, m)
        f.write(a.tobytes())
with open(f"{d}/points.csv", "w") as f:
    f.write("x,y,z,intensity\n")
    step = 1_000_000
    for s in range(0, n, step):
        m = min(step, n - s)
        a = np.round(rng.uniform(0, 1000, (m, 4)), 3)
        np.savetxt(f, a, fmt="%.3f", delimiter=",")
PY
ls -l "$work"/points.ply "$work"/points.csv | awk '{printf "%s: %.0f MiB\n", $NF, $5/1048576}'
seconds() { /usr/bin/time -f %e "$@" 2>&1 >/dev/null | tail -1; }
status=0
printf '%-34s %9s %12s %9s\n' what seconds "M points/s" "peak MiB"
report() { # what seconds rss_kib
  local mps rss
  mps=$(awk -v n="$points" -v s="$2" 'BEGIN { printf "%.2f", (s > 0 ? n / s / 1e6 : 0) }')
  rss=${3:+$(( $3 / 1024 ))}
  printf '%-34s %9s %12s %9s\n' "$1" "$2" "$mps" "${rss:--}"
  if [ -n "$rss" ] && [ "$rss" -ge "$limit_mib" ]; then
    echo "error: $1: peak RSS $rss MiB reaches $limit_mib MiB" >&2
    status=1
  fi
}
cat "$work/points.ply" >/dev/null
report "read points.ply (cat, the floor)" "$(seconds cat "$work/points.ply")"
report "read points.csv (wc -l, the floor)" "$(seconds wc -l "$work/points.csv")"
run() { # what args...
  local what=$1 log=$work/time.log
  shift
  /usr/bin/time -v "$@" >/dev/null 2>"$log" || { cat "$log" >&2; exit 1; }
  local s rss
  s=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); v = 0; for (i = 1; i <= n; i++) v = v * 60 + t[i]; print v }' "$log")
  rss=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$log")
  report "$what" "$s" "$rss"
}
run "zv import points.ply" ./target/release/zv import "$work/points.ply" "$work/ply.zarr" --memory-budget "$budget" --chunk-shape 125,125,125
run "zv import points.csv" ./target/release/zv import "$work/points.csv" "$work/csv.zarr" --memory-budget "$budget" --chunk-shape 125,125,125
run "zv bench stream-points (writer)" ./target/release/zv bench stream-points "$work/bench.zarr" --points "$points" --chunk 125 --memory-budget "$budget"
exit $status
