#!/usr/bin/env bash
# Coverage-guided fuzzing of zv's decoders (libFuzzer through libfuzzer-sys; needs `cargo
# +nightly`, not cargo-fuzz: the targets are built with cargo-fuzz's instrumentation flags by a
# plain `cargo +nightly build`, below). Builds every target of fuzz/ (debug assertions and overflow
# checks on through the release profile of fuzz/Cargo.toml, so integer overflow panics), seeds
# corpora from the fixtures when missing (scripts/fuzz-seeds.sh), runs
# each target, and fails on any finding: a crash or panic, a timeout (-timeout=10), or more
# than 512 MiB of RSS (-rss_limit_mb=512). The failing input is left in fuzz/artifacts/TARGET/.
#
#   scripts/fuzz.sh [--smoke] [--build-only] [--time SECONDS] [--runs N] [--jobs N] [TARGET...]
#
#   --build-only  build the targets and stop (scripts/test.sh builds them in the background,
#                 at the lowest priority, while the workspace's tests run)
#   --smoke       3 s per target (CI; scripts/test.sh runs it two targets at a time)
#   --time S      stop a target after S seconds (default 3600)
#   --runs N      stop a target after N executions (default 10000000; 0 = no limit)
#   --jobs N      run N targets at once (default 1)
#   --timeout S   libFuzzer's per-input timeout (default 10; raise it on a loaded machine,
#                 where a starved process can take seconds for an input that takes 0.1 s)
#   --debuginfo   keep line tables in the binaries (backtraces with file:line). By default
#                 they are built without debug information: 26 targets then take about
#                 0.8 GiB of fuzz/target instead of about 6 GiB (a CI run once ran out of disk
#                 linking them). Panic messages name file:line either way.
#   TARGET...     the targets to run (default: all: the [[bin]] targets of fuzz/Cargo.toml)
#
# Each run prints one line: executions, libFuzzer's final cov:/ft:, peak RSS and the verdict;
# logs are in fuzz/logs/TARGET.log. A target that dies without an artifact (a stack overflow:
# no handler runs on the exhausted stack) left its last input in the harness's scratch file,
# /dev/shm/zv-fuzz-io-PID/input.EXT for the io_* targets (docs/robustness.md, finding 9). Runs are niced and use one rayon thread per process.
set -euo pipefail
cd "$(dirname "$0")/.."

time_limit=3600
runs=10000000
jobs=1
timeout=10
debuginfo=0
build_only=0
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) time_limit=3; runs=0 ;;
    --build-only) build_only=1 ;;
    --time) time_limit="$2"; shift ;;
    --runs) runs="$2"; shift ;;
    --jobs) jobs="$2"; shift ;;
    --timeout) timeout="$2"; shift ;;
    --debuginfo) debuginfo=1 ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    -*) echo "error: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1") ;;
  esac
  shift
done

if ! cargo +nightly --version >/dev/null 2>&1; then
  echo "error: the nightly toolchain is needed (rustup toolchain install nightly)" >&2
  exit 1
fi
# the [[bin]] targets of fuzz/Cargo.toml (what `cargo fuzz list` prints)
all=$(awk '/^\[\[bin\]\]/ { b = 1; next } /^\[/ { b = 0 }
  b && /^[[:space:]]*name[[:space:]]*=/ && match($0, /"[^"]*"/) { print substr($0, RSTART + 1, RLENGTH - 2) }' \
  fuzz/Cargo.toml)
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets <<<"$all"
fi
for t in "${targets[@]}"; do
  if ! grep -qx "$t" <<<"$all"; then
    echo "error: no fuzz target $t (targets: $(tr '\n' ' ' <<<"$all"))" >&2
    exit 2
  fi
done

host=$(rustc +nightly -vV | sed -n 's/^host: //p')
echo "==> building the fuzz targets (cargo +nightly build --release with libFuzzer's instrumentation; debug assertions from fuzz/Cargo.toml)"
mkdir -p fuzz/logs
# The flags `cargo fuzz build -O --sanitizer none` (cargo-fuzz 0.13) passes: SanitizerCoverage
# (8-bit counters, PC table, comparison tracing, stack depth) for libFuzzer's feedback, `--cfg
# fuzzing`, and no branch folding; `--target` keeps them away from build scripts. cargo-fuzz
# also forces one codegen unit in release builds (faster binaries, slower builds): kept for
# campaigns, not for the smoke's opt-level 1 build (CARGO_PROFILE_RELEASE_OPT_LEVEL=1, set by
# scripts/test.sh), whose few seconds a target need no speed. Installing cargo-fuzz itself (a
# release build of about 60 crates) is then not needed.
rustflags="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4"
rustflags="$rustflags -Cllvm-args=-sanitizer-coverage-inline-8bit-counters"
rustflags="$rustflags -Cllvm-args=-sanitizer-coverage-pc-table"
rustflags="$rustflags -Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing"
rustflags="$rustflags -Cllvm-args=-simplifycfg-branch-fold-threshold=0"
case "$host" in *-linux-*) rustflags="$rustflags -Cllvm-args=-sanitizer-coverage-stack-depth" ;; esac
rustflags="$rustflags -Ccodegen-units=1"
rustflags="$rustflags ${RUSTFLAGS:-}"
# later -C options win over the profile's debug setting
[ "$debuginfo" = 1 ] || rustflags="$rustflags -Cdebuginfo=0 -Cstrip=debuginfo"
if ! RUSTFLAGS="$rustflags" nice -n 10 cargo +nightly build --manifest-path fuzz/Cargo.toml \
  --target "$host" --release --bins --config 'profile.release.debug="line-tables-only"' \
  >fuzz/logs/build.log 2>&1; then
  cat fuzz/logs/build.log >&2
  echo "error: building the fuzz targets failed" >&2
  exit 1
fi
bin_dir="fuzz/target/$host/release"
if [ "$build_only" = 1 ]; then
  echo "==> built: ${#targets[@]} targets in $bin_dir"
  exit 0
fi

missing=0
for t in "${targets[@]}"; do
  [ -n "$(ls -A "fuzz/corpus/$t" 2>/dev/null)" ] || missing=1
done
if [ "$missing" = 1 ]; then
  echo "==> seeding fuzz/corpus from the fixtures (scripts/fuzz-seeds.sh)"
  scripts/fuzz-seeds.sh >/dev/null
fi

run_one() {
  local t=$1 log="fuzz/logs/$1.log"
  mkdir -p "fuzz/artifacts/$t" "fuzz/corpus/$t"
  local args=(-rss_limit_mb=512 -timeout="$timeout" -max_total_time="$time_limit" -print_final_stats=1
    -artifact_prefix="fuzz/artifacts/$t/")
  [ "$runs" != 0 ] && args+=(-runs="$runs")
  local status=0
  RAYON_NUM_THREADS=1 nice -n 10 "$bin_dir/$t" "${args[@]}" "fuzz/corpus/$t" >"$log" 2>&1 || status=$?
  local execs cov ft rss verdict
  # (a crash on the first input leaves no cov: line: the greps may match nothing)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
  cov=$( (grep -o 'cov: [0-9]*' "$log" || true) | tail -1 | cut -d' ' -f2)
  ft=$( (grep -o 'ft: [0-9]*' "$log" || true) | tail -1 | cut -d' ' -f2)
  if [ "$status" = 0 ]; then verdict=ok; else verdict="FINDING (exit $status; see $log, fuzz/artifacts/$t/)"; fi
  printf '%-20s execs %10s  cov %5s  ft %6s  peak RSS %4s MiB  %s\n' \
    "$t" "${execs:-?}" "${cov:-?}" "${ft:-?}" "${rss:-?}" "$verdict"
  return "$status"
}

echo "==> fuzzing: ${#targets[@]} targets, ${time_limit}s or $( [ "$runs" = 0 ] && echo 'unlimited' || echo "$runs") executions each, $jobs at a time"
failed=0
running=0
for t in "${targets[@]}"; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n || failed=1
    running=$((running - 1))
  fi
  run_one "$t" &
  running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
  wait -n || failed=1
  running=$((running - 1))
done

if [ "$failed" != 0 ]; then
  echo "error: fuzzing found a crash, a timeout or an out-of-memory (see above)" >&2
  exit 1
fi
echo "==> fuzzing: no findings"
