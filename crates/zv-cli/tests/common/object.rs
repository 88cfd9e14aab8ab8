//! Running `zv` on object stores (the object-store tests): with storage options, checking it
//! succeeded; the keys of a directory store, to compare with a bucket's.

use std::path::Path;
use std::process::{Command, Output};

/// `zv --storage-option K=V … ARGS`.
pub fn zv_with(options: &[(String, String)], args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_zv"));
    for (k, v) in options {
        command.arg("--storage-option").arg(format!("{k}={v}"));
    }
    command.args(args).output().unwrap()
}

/// The standard output of `out`, which must have succeeded (`what` names it otherwise).
pub fn ok(out: Output, what: &str) -> Vec<u8> {
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The files under `dir` as keys (`a/b/zarr.json`), sorted.
pub fn local_keys(dir: &Path) -> Vec<String> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let path = e.unwrap().path();
            if path.is_dir() {
                walk(&path, root, out);
            } else {
                let rel = path.strip_prefix(root).unwrap();
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}
