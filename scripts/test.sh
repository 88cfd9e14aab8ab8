#!/usr/bin/env bash
# The whole zv test suite, on a fresh machine (Rust toolchain, gcc, Python 3.11 with pip).
# Creates the Python environments and emulators the interoperability tests use
# (scripts/setup-envs.sh: zarr-python 3, the reference zarr-vectors 0.7.0 from
# ../shared/reference/, bcolz, the file-format libraries, zarr-vectors 0.9.2, moto, the Python
# package's maturin/pytest/dask, fake-gcs-server and Azurite) in the background while the
# workspace compiles, then runs formatting and lint checks, dependency checks, every test of the
# workspace, the Python package's tests, the minimal-feature build and the fuzz smoke.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

# No incremental compilation data (about 1.2 GiB of target/debug on a fresh build, useless on a
# fresh checkout); set CARGO_INCREMENTAL=1 to keep it. The disk left is printed first: a CI run
# once ran out of disk linking the fuzz targets (scripts/fuzz.sh now builds them without debug
# information).
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
# Nor line tables in the debug builds (Cargo.toml keeps them for developers' backtraces): the
# workspace's hundred test binaries link faster without them (a test build about 25 s shorter
# on 2 cores). Panic messages still name the file and line; set CARGO_PROFILE_DEV_DEBUG to keep
# them.
export CARGO_PROFILE_DEV_DEBUG="${CARGO_PROFILE_DEV_DEBUG:-false}"
df -h . | awk 'NR == 2 { print "disk: " $4 " available of " $2 " (" $1 ")" }'

# The Python environments and emulators (scripts/setup-envs.sh) are created in the background
# while the workspace compiles below; the tests wait for them. Its output is printed when it is
# done; if it fails, the run stops there.
envs_log=$(mktemp)
envs_vars=$(mktemp)
scripts/setup-envs.sh --env-file "$envs_vars" >"$envs_log" 2>&1 &
envs_pid=$!
# The minimal build's test (zv-format with only the memory store and zstd: other features, so
# nearly every dependency is compiled again) is built in the background too, at the lowest
# priority (nice 19), in a target directory of its own (no lock shared with the builds below),
# and so are the fuzz targets (they need the nightly toolchain for libFuzzer; scripts/fuzz.sh
# builds them with plain cargo, so cargo-fuzz is not installed: 76 CPU-s saved) after it. They take the CPU the compilation and the tests leave idle (linking is
# mostly serial; the tests spend much of their time waiting on Python processes and local
# servers), and the steps at the end find them built.
minimal=(-p zv-format --no-default-features --features mem,zstd --locked)
minimal_target="${CARGO_TARGET_DIR:-target}/minimal"
minimal_log=$(mktemp)
CARGO_TARGET_DIR="$minimal_target" nice -n 19 cargo test "${minimal[@]}" --test features --no-run \
  >"$minimal_log" 2>&1 &
minimal_pid=$!
fuzz_log=$(mktemp)
fuzz_pid=""
test_tmp=""
if cargo +nightly --version >/dev/null 2>&1; then
  (
    # Built at opt-level 1, not fuzz/Cargo.toml's 3 (257 against 318 CPU-s): a smoke of a few
    # seconds needs no speed; scripts/fuzz.sh alone builds at 3 for real campaigns. The smoke
    # step below runs with the same setting, so it finds these builds.
    export CARGO_PROFILE_RELEASE_OPT_LEVEL=1
    # after the minimal build, whatever its outcome (its own step reports it)
    while kill -0 "$minimal_pid" 2>/dev/null; do sleep 2; done
    nice -n 19 scripts/fuzz.sh --build-only
  ) >"$fuzz_log" 2>&1 &
  fuzz_pid=$!
fi
cleanup() {
  for pid in "$envs_pid" "$minimal_pid" "$fuzz_pid"; do
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill "$pid" 2>/dev/null || true; fi
  done
  rm -f "$envs_log" "$envs_vars" "$minimal_log" "$fuzz_log"
  if [ -n "${test_tmp:-}" ]; then rm -rf "$test_tmp"; fi
}
trap cleanup EXIT

# The shared fixtures must be beside the checkout.
if [ ! -d ../shared/fixtures/zv-0.7 ] && [ -z "${ZV_FIXTURES:-}" ]; then
  echo "error: ../shared/fixtures/zv-0.7 not found (set ZV_FIXTURES)" >&2
  exit 1
fi

have() { cargo "$1" --version >/dev/null 2>&1 || rustup component add "$2" >/dev/null 2>&1; }

if have fmt rustfmt; then
  step "cargo fmt --check"
  cargo fmt --all -- --check
else
  echo "warning: rustfmt is not installed and could not be added; skipping the format check" >&2
fi

# Clippy lints the workspace while the test build below compiles it, instead of in a `cargo
# clippy` of its own (which checked every dependency and every workspace crate a second time:
# about 2 min 50 s on 2 cores): clippy-driver, the rustc that `cargo clippy` runs, is the
# wrapper of the workspace's crates (RUSTC_WORKSPACE_WRAPPER) with `cargo clippy`'s `-D
# warnings` (CLIPPY_ARGS, as cargo-clippy passes it), so a lint fails the build. `--all-targets`
# covers what `cargo clippy --all-targets` checks: libraries, binaries, tests, examples and
# benches. The variables are exported for the workspace's cargo runs up to the Python package
# (the doc tests and maturin then reuse the same builds) and unset before the minimal build and
# the fuzz targets, which were built without them.
lint_env=false
if have clippy clippy; then
  driver="$(rustc --print sysroot)/bin/clippy-driver"
  if [ -x "$driver" ]; then
    lint_env=true
  else
    echo "warning: $driver not found; skipping the lint check" >&2
  fi
else
  echo "warning: clippy is not installed and could not be added; skipping the lint check" >&2
fi

# `grep -q` on a captured output, not at the end of a pipe: under `pipefail` a `cargo tree`
# killed by SIGPIPE after an early match would make the pipeline fail and the check pass.
step "dependencies: no store, codec or legacy crate pulls zv-format (not even as a dev-dependency)"
for pkg in zv-core zv-codecs zv-store-fs zv-store-mem zv-store-object zv-testkit zv-codec-delta zv-legacy; do
  tree=$(cargo tree -p "$pkg" -e normal,dev,build --prefix none --locked)
  if grep -q '^zv-format ' <<<"$tree"; then
    echo "error: $pkg depends on zv-format (cargo tree -p $pkg -e normal,dev,build -i zv-format)" >&2
    exit 1
  fi
done

if $lint_env; then
  export RUSTC_WORKSPACE_WRAPPER="$driver" CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
  step "cargo test (workspace): compiling all targets, linted by clippy (warnings are errors)"
else
  step "cargo test (workspace): compiling all targets"
fi
# The JSON messages name the test binaries, which scripts/run-tests.py runs below.
target_dir="${CARGO_TARGET_DIR:-target}"
mkdir -p "$target_dir"
binaries="$target_dir/test-binaries.json"
cargo test --workspace --all-targets --locked --no-run --message-format=json >"$binaries"

step "Python environments and emulators (scripts/setup-envs.sh, run in the background)"
if ! wait "$envs_pid"; then
  cat "$envs_log"
  echo "error: scripts/setup-envs.sh failed (its output is above)" >&2
  exit 1
fi
cat "$envs_log"
# shellcheck disable=SC1090
source "$envs_vars"

# Temporary files on tmpfs: the tests create and delete many small stores, and on this machine
# kind's ext4 disk that costs more system time than the tests' own work (reader_corruption: 27 s
# on /tmp, 7 s on /dev/shm). ZV_TEST_TMPDIR chooses another parent; without 4 GiB free on
# /dev/shm the default temporary directory is kept.
tmp_parent="${ZV_TEST_TMPDIR:-}"
if [ -z "$tmp_parent" ] && [ -d /dev/shm ] && [ -w /dev/shm ] \
  && [ "$(df -Pk /dev/shm | awk 'NR == 2 { print $4 }')" -ge $((4 * 1024 * 1024)) ]; then
  tmp_parent=/dev/shm
fi
if [ -n "$tmp_parent" ]; then
  test_tmp=$(mktemp -d -p "$tmp_parent" zv-tests.XXXXXX)
  export TMPDIR="$test_tmp"
  echo "temporary files of the tests: $TMPDIR"
fi

step "cargo test (workspace): the test binaries and the doc tests, three at a time"
# scripts/run-tests.py runs the binaries cargo test would, from their package directories, three
# at a time (most of them wait on Python and local servers), printing each one's output whole
# when it ends; the longest start first (scripts/test-durations.json). Every binary runs even
# after a failure, as with --no-fail-fast. The doc tests are one more job.
python3 scripts/run-tests.py --jobs 3 "$binaries" --timings scripts/test-durations.json \
  --write-timings "$target_dir/test-durations.json" --command "cargo test --workspace --locked --doc"

step "Python package: maturin develop into .venv-py, then pytest (crates/zv-python/tests)"
VIRTUAL_ENV="$PWD/.venv-py" CARGO_TARGET_DIR="$PWD/target" \
  .venv-py/bin/maturin develop --quiet -m crates/zv-python/Cargo.toml --locked
(cd crates/zv-python && cargo fmt -- --check)
# maturin's build of the package's own crate was linted by clippy (the variables above); its
# crate has no other targets.
unset RUSTC_WORKSPACE_WRAPPER CLIPPY_ARGS
ZV_FIXTURES="${ZV_FIXTURES:-$PWD/../shared/fixtures/zv-0.7}" \
  .venv-py/bin/python -m pytest -q crates/zv-python/tests

step "minimal build: zv-format with only the memory store and zstd (no blosc; built in the background)"
if ! wait "$minimal_pid"; then
  cat "$minimal_log"
  echo "error: building the minimal build's test failed (the output is above)" >&2
  exit 1
fi
mcargo() { CARGO_TARGET_DIR="$minimal_target" cargo "$@"; }
mcargo test "${minimal[@]}" --test features
# A dev-dependency that turns zv-format's default features back on compiles the minimal
# build's own test out (and the default build's test in): the test list says which build ran.
tests=$(mcargo test "${minimal[@]}" --test features -- --list)
if ! grep -q '^minimal_build_resolves_zstd_and_refuses_blosc: test$' <<<"$tests"; then
  echo "error: the minimal build does not contain minimal_build_resolves_zstd_and_refuses_blosc;" >&2
  echo "       a dependency turns zv-format's default features back on (see" >&2
  echo "       cargo tree -p zv-format --no-default-features --features mem,zstd -e features,dev)." >&2
  echo "       Its test list:" >&2
  echo "$tests" >&2
  exit 1
fi
if grep -q '^default_build_has_both_stores: test$' <<<"$tests"; then
  echo "error: the minimal build contains default_build_has_both_stores (feature fs is on)" >&2
  exit 1
fi
tree=$(cargo tree "${minimal[@]}" -e normal,build)
if grep -q blosc <<<"$tree"; then
  echo "error: blosc is part of the minimal build" >&2
  exit 1
fi
# Nor does an HTTP stack: object stores are the feature `object`, off in zv-format's defaults.
for dep in zv-store-object object_store reqwest tokio rustls; do
  if grep -q "^$dep v" <<<"$(cargo tree "${minimal[@]}" -e normal,build --prefix none)"; then
    echo "error: $dep is part of the minimal build" >&2
    exit 1
  fi
done

# Coverage-guided fuzzing smoke: every fuzz target of fuzz/ for 3 s, two at a time
# (scripts/fuzz.sh; docs/robustness.md), on the targets built in the background above.
if [ -n "$fuzz_pid" ]; then
  step "fuzz targets: built in the background (scripts/fuzz.sh --build-only, nice 19)"
  if ! wait "$fuzz_pid"; then
    cat "$fuzz_log"
    echo "error: building the fuzz targets failed (the output is above)" >&2
    exit 1
  fi
  cat "$fuzz_log"
  step "fuzz smoke: every fuzz target for 3 s, two at a time (scripts/fuzz.sh --smoke)"
  CARGO_PROFILE_RELEASE_OPT_LEVEL=1 ZV_BIN="$PWD/target/debug/zv" scripts/fuzz.sh --smoke --jobs 2
else
  step "fuzz smoke SKIPPED: no nightly toolchain (cargo +nightly); install it to run scripts/fuzz.sh"
fi

step "all tests passed"
