//! Running `zv migrate` (the migration tests, `migrate.rs` and `migrate_cli.rs`).

use std::path::Path;
use std::process::{Command, Output};

/// `zv ARGS`.
pub fn zv(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_zv"))
        .args(args)
        .output()
        .unwrap()
}

/// `zv migrate FROM TO --to VERSION --quiet`.
pub fn migrate(from: &Path, to: &Path, version: &str) -> Output {
    zv(&[
        "migrate".as_ref(),
        from.as_os_str(),
        to.as_os_str(),
        "--to".as_ref(),
        version.as_ref(),
        "--quiet".as_ref(),
    ])
}

/// [`migrate`], which must succeed.
pub fn migrate_ok(from: &Path, to: &Path, version: &str) {
    let out = migrate(from, to, version);
    assert!(
        out.status.success(),
        "zv migrate {} --to {version}: {}",
        from.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Whether `dir` is missing or empty.
pub fn empty(dir: &Path) -> bool {
    std::fs::read_dir(dir).map_or(true, |mut d| d.next().is_none())
}
