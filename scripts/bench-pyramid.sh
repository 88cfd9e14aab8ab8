#!/usr/bin/env bash
# Pyramid benchmarks (zv pyramid), in one run:
#   1. build time of `zv pyramid` against the 0.7.0 reference's `build_pyramid` on the same
#      store of POINTS random points (`zv bench stream-points`, bins of 25 in chunks of 100,
#      two steps of 2: bins 50 then 100), min and median of REPS runs each, the ratio, and the
#      vertex counts of both pyramids (which must agree);
#   2. peak RSS of a pyramid build on BIG points (default 20 million; /usr/bin/time -v), which
#      must stay under 512 MiB;
#   3. a level-of-detail box query (the box [0,500)^3, 1/8 of the volume) at every level of a
#      LOD-point pyramid (default 10 million, bins 12.5, three steps of 2, chunks doubled at
#      each step) through
#      `zv bench lod-bytes`: bytes read at the coarsest level against level 0 (at least 10×).
#
# Usage: scripts/bench-pyramid.sh [--points N] [--reps N] [--big N] [--lod N] [--dir DIR] [--no-ref]
# The reference runs from .venv-ref (scripts/test.sh creates it; ZV_REFERENCE_PYTHON overrides).
set -euo pipefail
cd "$(dirname "$0")/.."
points=1000000
reps=3
big=20000000
lod=10000000
dir=${TMPDIR:-/tmp}
with_ref=1
while [ $# -gt 0 ]; do
  case "$1" in
    --points) points="$2"; shift ;;
    --reps) reps="$2"; shift ;;
    --big) big="$2"; shift ;;
    --lod) lod="$2"; shift ;;
    --dir) dir="$2"; shift ;;
    --no-ref) with_ref=0 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "error: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
python=${ZV_REFERENCE_PYTHON:-.venv-ref/bin/python}
if [ ! -x /usr/bin/time ]; then
  echo "error: /usr/bin/time is missing (Debian package \`time\`)" >&2
  exit 1
fi
if [ "$with_ref" = 1 ] && [ ! -x "$python" ]; then
  echo "error: $python is missing (scripts/test.sh creates .venv-ref; or pass --no-ref)" >&2
  exit 1
fi
cargo build --release -q -p zv-cli
zv=target/release/zv
work=$(mktemp -d -p "$dir" zv-bench-pyramid.XXXXXX)
trap 'rm -rf "$work"' EXIT

now() { echo "$EPOCHREALTIME"; }
sub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
div() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a / b }'; }
stats() { # seconds... -> "min median"
  printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {m=(NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2; printf "%.2f %.2f", v[1], m}'
}
counts() { # STORE -> vertex counts of levels 1 and 2
  python3 - "$1" <<'PY'
import json, sys
print(" ".join(str(json.load(open(f"{sys.argv[1]}/{l}/zarr.json"))["attributes"]["zarr_vectors_level"]["vertex_count"]) for l in (1, 2)))
PY
}

echo "==> 1. build time, $points points, --levels \"2;2\", $reps runs each"
"$zv" -q bench stream-points "$work/src" --points "$points" --bin 25 >/dev/null
zv_times=(); ref_times=()
for _ in $(seq "$reps"); do
  rm -rf "$work/a" && cp -r "$work/src" "$work/a"
  t0=$(now); "$zv" -q pyramid "$work/a" --levels "2;2"; t1=$(now)
  zv_times+=("$(sub "$t0" "$t1")")
  if [ "$with_ref" = 1 ]; then
    rm -rf "$work/b" && cp -r "$work/src" "$work/b"
    t0=$(now)
    "$python" -c "import sys; from zarr_vectors.multiresolution.coarsen import build_pyramid; build_pyramid(sys.argv[1], factors=[(2.0, 1.0), (2.0, 1.0)])" "$work/b" >/dev/null
    t1=$(now)
    ref_times+=("$(sub "$t0" "$t1")")
  fi
done
read -r zmin zmed <<<"$(stats "${zv_times[@]}")"
echo "zv pyramid:               min $zmin s  median $zmed s   vertex counts (levels 1, 2): $(counts "$work/a")"
if [ "$with_ref" = 1 ]; then
  read -r rmin rmed <<<"$(stats "${ref_times[@]}")"
  echo "reference build_pyramid:  min $rmin s  median $rmed s   vertex counts (levels 1, 2): $(counts "$work/b")"
  echo "reference ÷ zv:           min $(div "$rmin" "$zmin")×  median $(div "$rmed" "$zmed")×"
  if [ "$(counts "$work/a")" != "$(counts "$work/b")" ]; then
    echo "error: zv and the reference made pyramids of different vertex counts" >&2
    exit 1
  fi
fi
rm -rf "$work/src" "$work/a" "$work/b"

echo "==> 2. peak RSS of a pyramid build, $big points"
"$zv" -q bench stream-points "$work/big" --points "$big" --bin 25 >/dev/null
/usr/bin/time -v "$zv" -q pyramid "$work/big" --levels "2;2" 2>"$work/time.txt"
rss_kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/time.txt")
secs=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/time.txt")
echo "zv pyramid of $big points: $secs (m:ss), peak RSS $((rss_kb / 1024)) MiB"
rm -rf "$work/big"
if [ "$rss_kb" -ge $((512 * 1024)) ]; then
  echo "error: peak RSS reached 512 MiB" >&2
  exit 1
fi

echo "==> 3. a level-of-detail box query, $lod points, --levels \"2;2;2\""
"$zv" -q bench stream-points "$work/lod" --points "$lod" --bin 12.5 >/dev/null
"$zv" -q pyramid "$work/lod" --levels "2;2;2" --chunk-scale 2,2,2
"$zv" bench lod-bytes "$work/lod" --box 0,0,0,500,500,500 | tee "$work/lod.txt"
ratio=$(awk 'NR > 1 {r = $5} END {print int(r)}' "$work/lod.txt")
if [ "$ratio" -lt 10 ]; then
  echo "error: the coarsest level read only ${ratio}× fewer bytes than level 0" >&2
  exit 1
fi
