//! Crash consistency of `zv convert legacy`: killed with SIGKILL at 200 moments spread over
//! an uninterrupted run (half converting a zarr 0.4 array, half a bcolz ctable, both built
//! here without Python; one run in four with `--overwrite` over a complete store), the
//! target afterwards either holds nothing — opening it is a clear error, and converting
//! again works and removes the shadow the killed run left beside it — or files equal byte
//! for byte to the uninterrupted run's, whose arrays read (`zv zarr get`, every tenth) as the
//! legacy source does. A replaced store is never lost.
#![cfg(feature = "legacy")]
#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{
    copy_tree, entries_with, kill_delays, scratch_dir, tree, zv, zv_killed_after, zv_ok, KILLS,
};

/// One legacy input: its path, the arrays to compare, the uninterrupted run's files.
struct Input {
    src: PathBuf,
    arrays: Vec<&'static str>,
    expected: BTreeMap<String, Vec<u8>>,
    took: Duration,
}

fn get(store: &Path, array: &str) -> String {
    let out = zv(&["zarr", "get", store.to_str().unwrap(), array]);
    assert!(
        out.status.success(),
        "zv zarr get {store:?} {array}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn input(dir: &Path, src: PathBuf, arrays: Vec<&'static str>) -> Input {
    let dst = dir.join(format!(
        "{}.whole",
        src.file_name().unwrap().to_str().unwrap()
    ));
    let took = zv_ok(&[
        "convert",
        "legacy",
        src.to_str().unwrap(),
        dst.to_str().unwrap(),
    ]);
    for a in &arrays {
        assert_eq!(get(&dst, a), get(&src, a), "{a}");
    }
    Input {
        src,
        arrays,
        expected: tree(&dst),
        took,
    }
}

fn convert_args<'a>(src: &'a Path, dst: &'a Path, overwrite: bool) -> Vec<&'a str> {
    let mut args = vec![
        "convert",
        "legacy",
        src.to_str().unwrap(),
        dst.to_str().unwrap(),
        "--quiet",
    ];
    if overwrite {
        args.push("--overwrite");
    }
    args
}

#[test]
fn killed_conversions_leave_no_store_or_a_complete_one() {
    let dir = scratch_dir();
    let inputs = [
        input(
            dir.path(),
            common::legacy::zarr04(dir.path(), [400, 400], [10, 10], &[(3, 4), (7, 7)]),
            vec!["/"],
        ),
        input(
            dir.path(),
            common::legacy::ctable(dir.path(), 40050, 100, &["a", "b", "c"]),
            vec!["/a", "/b", "/c"],
        ),
    ];
    let (mut absent, mut complete, mut finished, mut reruns) = (0, 0, 0, 0);
    let (mut overwrites, mut leftovers) = (0, 0);
    let delays: Vec<Duration> = kill_delays(Duration::from_secs(1)).collect();
    for (k, fraction) in delays.into_iter().enumerate() {
        let input = &inputs[k % 2];
        let delay = input.took.mul_f64(fraction.as_secs_f64());
        let name = format!("d{k}.zarr");
        let dst = dir.path().join(&name);
        // one run in four replaces a complete store
        let overwrite = k % 4 == 3;
        if overwrite {
            let whole = dir.path().join(format!(
                "{}.whole",
                input.src.file_name().unwrap().to_str().unwrap()
            ));
            copy_tree(&whole, &dst);
            overwrites += 1;
        }
        if zv_killed_after(&convert_args(&input.src, &dst, overwrite), delay) {
            finished += 1;
        }
        let found = tree(&dst);
        let shadows = entries_with(dir.path(), &format!(".{name}.zv-shadow."));
        leftovers += usize::from(!shadows.is_empty());
        if !found.is_empty() {
            assert!(
                found == input.expected,
                "kill {k} after {delay:?}: partial content"
            );
            complete += 1;
            if k % 10 == 0 {
                for a in &input.arrays {
                    assert_eq!(get(&dst, a), get(&input.src, a), "kill {k}: {a}");
                }
            }
        } else {
            assert!(!overwrite, "kill {k}: the replaced store is gone");
            absent += 1;
            let out = zv(&["zarr", "info", dst.to_str().unwrap()]);
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                !out.status.success() && err.contains("zarr.json"),
                "kill {k}: opening what is left is not a clear error: {err}"
            );
            if k % 10 == 0 || !shadows.is_empty() && reruns < 20 {
                // converting again works and removes what the killed run left
                zv_ok(&convert_args(&input.src, &dst, false));
                assert!(tree(&dst) == input.expected, "kill {k}: the rerun");
                assert!(
                    entries_with(dir.path(), &format!(".{name}.")).is_empty(),
                    "kill {k}: a shadow is left after the rerun"
                );
                reruns += 1;
            }
        }
        for leftover in entries_with(dir.path(), &format!(".{name}.")) {
            std::fs::remove_dir_all(dir.path().join(leftover)).unwrap();
        }
        let _ = std::fs::remove_dir_all(&dst);
    }
    eprintln!(
        "zv convert legacy: {KILLS} kills over {:?} (zarr 0.4) and {:?} (ctable): {absent} left no store, {complete} a complete one ({finished} had finished, {overwrites} replaced a complete store); {leftovers} left a shadow beside the target; {reruns} reruns",
        inputs[0].took, inputs[1].took
    );
    assert!(
        absent > 0 && complete > 0,
        "the kills did not spread over the run"
    );
}
