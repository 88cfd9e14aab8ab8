#!/usr/bin/env bash
# Sharded reads, zv against the zarrs crate (issue: sharding_indexed partial reads): builds
# bench/sharding/ (its own crate and Cargo.lock, outside the workspace, so the workspace never
# compiles zarrs) in release and runs it on each directory given, by default tmpfs (/dev/shm)
# and disk (/tmp) with a warm page cache, then disk again with the cache evicted before every
# measurement (--cold). Extra arguments go to the benchmark (see bench/sharding/src/main.rs):
#
#   scripts/bench-sharding.sh                       # /dev/shm, /tmp, /tmp --cold; 5 reps
#   scripts/bench-sharding.sh --reps 3 --codec zstd
#   DIRS="/mnt/nvme" scripts/bench-sharding.sh --cold
#
# Each array is 1 GiB of data (uint16 16384x32768, shards 4096x4096, inner chunks 512x512),
# written once per directory and inner codec by zarrs; free space for 2 GiB is needed.
set -euo pipefail
cd "$(dirname "$0")/../bench/sharding"
cargo build --release --locked
bin=target/release/zv-bench-sharding
if [ -n "${DIRS:-}" ]; then
  for d in $DIRS; do
    mkdir -p "$d/zv-bench-sharding"
    "$bin" --dir "$d/zv-bench-sharding" "$@"
  done
else
  for run in "/dev/shm" "/tmp" "/tmp --cold"; do
    d=${run%% *}
    extra=${run#"$d"}
    mkdir -p "$d/zv-bench-sharding"
    # shellcheck disable=SC2086
    "$bin" --dir "$d/zv-bench-sharding" $extra "$@"
  done
fi
