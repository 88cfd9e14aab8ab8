#!/usr/bin/env bash
# Peak memory of the streaming writer: 20 million points written in batches of 1 million
# (`zv bench stream-points`), measured with /usr/bin/time -v. Fails if the peak RSS reaches
# 1 GiB. Usage: scripts/memory-test.sh [POINTS] [BATCH]
set -euo pipefail
cd "$(dirname "$0")/.."
points=${1:-20000000}
batch=${2:-1000000}
if [ ! -x /usr/bin/time ]; then
  echo "error: /usr/bin/time is missing (Debian package \`time\`)" >&2
  exit 1
fi
cargo build --release -q -p zv-cli
store=$(mktemp -d)/points.zarr
trap 'rm -rf "$(dirname "$store")"' EXIT
log=$(mktemp)
/usr/bin/time -v ./target/release/zv bench stream-points "$store" --points "$points" --batch "$batch" 2>"$log"
grep -E "Elapsed|Maximum resident" "$log"
kb=$(sed -n 's/.*Maximum resident set size (kbytes): \([0-9]*\).*/\1/p' "$log")
echo "peak RSS: $((kb / 1024)) MiB for $points points in batches of $batch (limit 1024 MiB)"
test "$kb" -lt 1048576
