#!/usr/bin/env bash
# Peak memory and time of the streaming writer: points written in batches of 1 million
# (`zv bench stream-points`) with a writer memory budget of 64 MiB (vertex records past it are
# spilled to temporary files), measured with /usr/bin/time -v, for each size given (default
# 5, 10 and 20 million, to show the time is linear in N). Fails if a peak RSS reaches 256 MiB.
#
# Usage: scripts/memory-test.sh [SIZES] [BATCH] [MEMORY_BUDGET_BYTES] [DIR]
#   SIZES: comma-separated point counts (default 5000000,10000000,20000000)
#   DIR:   where the stores are written (default: a temporary directory under $TMPDIR)
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=${1:-5000000,10000000,20000000}
batch=${2:-1000000}
budget=${3:-67108864}
dir=${4:-}
limit_mib=256
if [ ! -x /usr/bin/time ]; then
  echo "error: /usr/bin/time is missing (Debian package \`time\`)" >&2
  exit 1
fi
cargo build --release -q -p zv-cli
work=$(mktemp -d ${dir:+-p "$dir"})
trap 'rm -rf "$work"' EXIT
status=0
printf '%12s %10s %14s %10s\n' points seconds "s per 1M pts" "peak MiB"
IFS=, read -r -a list <<<"$sizes"
for points in "${list[@]}"; do
  store=$work/points-$points.zarr
  log=$work/time-$points.log
  /usr/bin/time -v ./target/release/zv bench stream-points "$store" --points "$points" \
    --batch "$batch" --memory-budget "$budget" >/dev/null 2>"$log"
  kb=$(sed -n 's/.*Maximum resident set size (kbytes): \([0-9]*\).*/\1/p' "$log")
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): \(.*\)/\1/p' "$log")
  secs=$(awk -v t="$wall" 'BEGIN { n = split(t, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s }')
  per=$(awk -v s="$secs" -v n="$points" 'BEGIN { printf "%.3f", s / (n / 1e6) }')
  printf '%12d %10.2f %14s %10d\n' "$points" "$secs" "$per" $((kb / 1024))
  if [ "$kb" -ge $((limit_mib * 1024)) ]; then
    echo "error: peak RSS $((kb / 1024)) MiB for $points points reaches the $limit_mib MiB limit" >&2
    status=1
  fi
  rm -rf "$store"
done
echo "batches of $batch points, writer memory budget $((budget / 1048576)) MiB, limit $limit_mib MiB"
exit $status
