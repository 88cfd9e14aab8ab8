#!/usr/bin/env bash
# Pyramid build time, zv against the 0.7.0 reference's build_pyramid in the same run, and the
# peak RSS of a large zv pyramid build.
#
# 1. A 1M-point store (POINTS) (uniform in [0, 1000)^3, 1000 objects, a float32 attribute, chunks of
#    100, bins of 25; scripts/bench/make_inputs.py) is written once by the reference's
#    write_points (scripts/bench/peer.py) and copied; then, REPS times, alternating which goes
#    first, `zv pyramid COPY --levels 2` and the reference's
#    `build_pyramid(COPY, factors=[(2.0, 1.0)])` each build level 1 on a fresh copy (bins of
#    50, the same chunks, explicit ±1 cross-level links: the same work; one step, since the
#    reference's second step would not widen its bins cumulatively). zv's figure is the
#    process's wall time, the reference's the build_pyramid call alone.
# 2. `zv bench stream-points` writes BIG points (default 20M; chunks of 100), then
#    `zv pyramid --levels 2 --chunk-scale 2` runs under /usr/bin/time -v; fails if its peak
#    RSS reaches 512 MiB.
# 3. A level-of-detail box query: `zv bench stream-points` writes LOD points (default 10M;
#    chunks of 100, bins of 12.5), `zv pyramid --levels "2;2;2" --chunk-scale 2,2,2` adds three
#    levels, and `zv bench lod-bytes` runs the box [0, 500)^3 (1/8 of the volume) at every
#    level, counting the bytes read (zv_core::metered::MeteredStore); fails unless the coarsest
#    level reads at least 10x fewer bytes than level 0.
#
# Usage: scripts/bench-pyramid.sh [REPS] [BIG] [DIR] [POINTS] [LOD]
#   POINTS: the compared store's size (default 1000000)
#   LOD: the level-of-detail store's size (default 10000000)
#   REF_PYTHON: the reference's interpreter (default .venv-ref/bin/python)
#   DIR: where stores are written (default: a temporary directory under $TMPDIR)
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-3}
big=${2:-20000000}
dir=${3:-}
points=${4:-1000000}
lod=${5:-10000000}
ref_python=${REF_PYTHON:-.venv-ref/bin/python}
limit_mib=512
if [ ! -x /usr/bin/time ]; then
  echo "error: /usr/bin/time is missing (Debian package \`time\`)" >&2
  exit 1
fi
cargo build --release -q -p zv-cli
zv=./target/release/zv
work=$(mktemp -d ${dir:+-p "$dir"})
trap 'rm -rf "$work"' EXIT

wall() { # seconds of a /usr/bin/time -v log
  sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): \(.*\)/\1/p' "$1" |
    awk '{ n = split($0, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s }'
}
peak_mib() { # peak RSS in MiB of a /usr/bin/time -v log
  echo $(($(sed -n 's/.*Maximum resident set size (kbytes): \([0-9]*\).*/\1/p' "$1") / 1024))
}

"$ref_python" scripts/bench/make_inputs.py --out "$work/in" --points "$points" --objects 1000 \
  --polylines 1 --length 2 --bin-shape 25 >/dev/null
"$ref_python" scripts/bench/peer.py --inputs "$work/in" --store "$work/base.zarr" \
  --phase write_points >/dev/null
ref_build='
import sys, time
from zarr_vectors.multiresolution.coarsen import build_pyramid
t = time.perf_counter()
build_pyramid(sys.argv[1], factors=[(2.0, 1.0)], cross_level_storage="explicit")
print(time.perf_counter() - t)
'
zv_times=() ref_times=()
for ((i = 0; i < reps; i++)); do
  for who in $([ $((i % 2)) = 0 ] && echo "zv ref" || echo "ref zv"); do
    rm -rf "$work/copy.zarr"
    cp -r "$work/base.zarr" "$work/copy.zarr"
    if [ "$who" = zv ]; then
      /usr/bin/time -v "$zv" --quiet pyramid "$work/copy.zarr" --levels 2 >/dev/null 2>"$work/zv.log"
      zv_times+=("$(wall "$work/zv.log")")
      zv_rss=$(peak_mib "$work/zv.log")
      "$zv" validate "$work/copy.zarr" --level 5 >/dev/null
    else
      ref_times+=("$("$ref_python" -c "$ref_build" "$work/copy.zarr")")
    fi
  done
done
stats() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { printf "%.2f %.2f", v[1], v[int((NR + 1) / 2)] }'; }
read -r zmin zmed <<<"$(stats "${zv_times[@]}")"
read -r rmin rmed <<<"$(stats "${ref_times[@]}")"
printf '%d points, level 1 (bins 25 -> 50), %d repetitions\n' "$points" "$reps"
printf '%-28s %8s %8s\n' "" "min s" "median s"
printf '%-28s %8s %8s\n' "zv pyramid" "$zmin" "$zmed"
printf '%-28s %8s %8s\n' "reference build_pyramid" "$rmin" "$rmed"
awk -v a="$rmin" -v b="$zmin" -v c="$rmed" -v d="$zmed" \
  'BEGIN { printf "reference/zv: %.1f (min), %.1f (median); zv peak RSS '"$zv_rss"' MiB\n", a / b, c / d }'
rm -rf "$work/base.zarr" "$work/copy.zarr" "$work/in"

"$zv" --quiet bench stream-points "$work/big.zarr" --points "$big" >/dev/null
/usr/bin/time -v "$zv" --quiet pyramid "$work/big.zarr" --levels 2 --chunk-scale 2 \
  >/dev/null 2>"$work/big.log"
rss=$(peak_mib "$work/big.log")
printf '%d points, level 1: %.1f s, peak RSS %d MiB (limit %d MiB)\n' \
  "$big" "$(wall "$work/big.log")" "$rss" "$limit_mib"
if [ "$rss" -ge "$limit_mib" ]; then
  echo "error: peak RSS $rss MiB reaches the $limit_mib MiB limit" >&2
  exit 1
fi
rm -rf "$work/big.zarr"

"$zv" --quiet bench stream-points "$work/lod.zarr" --points "$lod" --bin 12.5 >/dev/null
"$zv" --quiet pyramid "$work/lod.zarr" --levels "2;2;2" --chunk-scale 2,2,2 >/dev/null
printf '%d points, the box [0, 500)^3 at every level:\n' "$lod"
"$zv" bench lod-bytes "$work/lod.zarr" --box 0,0,0,500,500,500 | tee "$work/lod.txt"
ratio=$(awk 'NR > 1 { r = $5 } END { print int(r) }' "$work/lod.txt")
if [ "$ratio" -lt 10 ]; then
  echo "error: the coarsest level read only ${ratio}x fewer bytes than level 0" >&2
  exit 1
fi
