//! Running `zv` on object stores (the object-store tests): with storage options, checking it
//! succeeded.

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
