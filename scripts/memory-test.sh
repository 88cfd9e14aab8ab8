#!/usr/bin/env bash
# Peak memory of the streaming writer: 20 million points written in batches of 1 million
# (`zv bench stream-points`) with a writer memory budget of 64 MiB (vertex records past it are
# spilled to temporary files), measured with /usr/bin/time -v. Fails if the peak RSS reaches
# 256 MiB. Usage: scripts/memory-test.sh [POINTS] [BATCH] [MEMORY_BUDGET_BYTES]
set -euo pipefail
cd "$(dirname "$0")/.."
points=${1:-20000000}
batch=${2:-1000000}
budget=${3:-67108864}
limit_mib=256
if [ ! -x /usr/bin/time ]; then
  echo "error: /usr/bin/time is missing (Debian package \`time\`)" >&2
  exit 1
fi
cargo build --release -q -p zv-cli
store=$(mktemp -d)/points.zarr
trap 'rm -rf "$(dirname "$store")"' EXIT
log=$(mktemp)
/usr/bin/time -v ./target/release/zv bench stream-points "$store" --points "$points" --batch "$batch" \
  --memory-budget "$budget" 2>"$log"
grep -E "Elapsed|Maximum resident" "$log"
kb=$(sed -n 's/.*Maximum resident set size (kbytes): \([0-9]*\).*/\1/p' "$log")
echo "peak RSS: $((kb / 1024)) MiB for $points points in batches of $batch, memory budget $((budget / 1048576)) MiB (limit $limit_mib MiB)"
test "$kb" -lt $((limit_mib * 1024))
