//! Helpers shared by the crash-consistency and pyramid tests: running `zv`, killing it with SIGKILL at
//! moments spread over an uninterrupted run, reading a store's files, dumping a store; `zv09`:
//! comparing zv's reading of ZV 0.9 stores with zarr-vectors 0.9.2's.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::panic)]

#[cfg(feature = "legacy")]
pub mod legacy;
pub mod migrate;
pub mod object;
pub mod zv09;
pub mod zv09_docs;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// How many times each crash test kills its command.
pub const KILLS: usize = 200;

/// A scratch directory for a crash test: on the tmpfs `/dev/shm` where there is one (a kill
/// tests the death of a process, not the disk; a tmpfs keeps the run time independent of what
/// else the machine writes), else the default temporary directory.
pub fn scratch_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("zv-crash")
        .tempdir_in("/dev/shm")
        .or_else(|_| tempfile::tempdir())
        .unwrap()
}

/// Runs `zv` with `args` to completion.
pub fn zv(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_zv"))
        .args(args)
        .output()
        .unwrap()
}

/// Runs `zv` with `args`, which must succeed (stdout and stderr in the message if not); its
/// output.
pub fn zv_success(args: &[&str]) -> Output {
    let out = zv(args);
    assert!(
        out.status.success(),
        "zv {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Runs `zv` with `args`, which must succeed; how long it took.
pub fn zv_ok(args: &[&str]) -> Duration {
    let start = Instant::now();
    let out = zv(args);
    let took = start.elapsed();
    assert!(
        out.status.success(),
        "zv {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    took
}

/// `zv dump --compact`: the dump, or the error message.
pub fn dump(store: &Path) -> Result<Value, String> {
    let out = zv(&["dump", "--compact", store.to_str().unwrap()]);
    if out.status.success() {
        Ok(serde_json::from_slice(&out.stdout).unwrap())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// `zv validate` (level 5) passes.
pub fn assert_validates(store: &Path, what: &str) {
    let out = zv(&["validate", store.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{what}: the store does not validate: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Copies the directory tree `from` to `to`.
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// The values of a filesystem store: every file below `root` by its key (`a/b/c`), without
/// the temporary files of interrupted writes (`.NAME.zv-tmp.PID.N`, never listed by the
/// store). Empty if `root` does not exist.
pub fn tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(dir: &Path, prefix: &str, out: &mut BTreeMap<String, Vec<u8>>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries {
            let entry = entry.unwrap();
            let name = entry.file_name().into_string().unwrap();
            if name.contains(".zv-tmp.") {
                continue;
            }
            let key = format!("{prefix}{name}");
            if entry.file_type().unwrap().is_dir() {
                walk(&entry.path(), &format!("{key}/"), out);
            } else {
                out.insert(key, std::fs::read(entry.path()).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, "", &mut out);
    out
}

/// The entries of `dir` whose names contain `marker` (leftovers beside a store).
pub fn entries_with(dir: &Path, marker: &str) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().into_string().ok())
        .filter(|n| n.contains(marker))
        .collect()
}

/// [`kill_delays`], then, while `short()` says that no kill has come after the end of the
/// run yet, up to six more at 2, 4, … 64 × `took`: the timed run can be faster than the
/// killed ones on a loaded machine (the test binaries run three at a time), and a spread
/// that never reaches the end tests half of what it should.
pub fn kill_delays_reaching_the_end<'a>(
    took: Duration,
    short: impl Fn() -> bool + 'a,
) -> impl Iterator<Item = Duration> + 'a {
    kill_delays(took).chain(
        (1..=6u32)
            .map(move |j| took * (1 << j))
            .take_while(move |_| short()),
    )
}

/// Delays spread over `[0, 1.2 × took)`, deterministic (an LCG), one per kill.
pub fn kill_delays(took: Duration) -> impl Iterator<Item = Duration> {
    let mut lcg = 0x9E37_79B9u64;
    (0..KILLS).map(move |_| {
        lcg = lcg.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        let fraction = (lcg >> 33) as f64 / (1u64 << 31) as f64;
        took.mul_f64(1.2 * fraction)
    })
}

/// Starts `zv args`, kills it with SIGKILL after `delay` if it still runs; whether it
/// finished on its own (it must then have succeeded).
pub fn zv_killed_after(args: &[&str], delay: Duration) -> bool {
    let mut child = Command::new(env!("CARGO_BIN_EXE_zv"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while start.elapsed() < delay {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "zv {args:?} failed on its own");
            return true;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    let _ = child.kill(); // SIGKILL
    child.wait().unwrap().success()
}

/// A deterministic xorshift source of uniform numbers in [0, 1), for the test documents.
pub fn uniform() -> impl FnMut() -> f64 {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    }
}
