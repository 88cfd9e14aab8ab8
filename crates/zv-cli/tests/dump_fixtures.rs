//! For every reference fixture, `zv dump NAME.zarr` compared with `NAME.expected.json` by
//! `../shared/tools/compare_dumps.py` is `equal`, with the default logical scope and with
//! `--scope all` (the physical layout too).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::Path;
use std::process::Command;

use zv_testkit::env::{fixtures_dir, shared_dir};

fn python() -> String {
    // compare_dumps.py needs only the standard library
    std::env::var("ZV_PYTHON").unwrap_or_else(|_| "python3".to_owned())
}

fn fixture_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(fixtures_dir())
        .expect("fixtures directory")
        .filter_map(|e| {
            e.ok()?
                .file_name()
                .to_str()?
                .strip_suffix(".expected.json")
                .map(str::to_owned)
        })
        .collect();
    names.sort();
    names
}

fn compare(expected: &Path, actual: &Path, scope: &str) -> (bool, String) {
    let out = Command::new(python())
        .arg(shared_dir().join("tools/compare_dumps.py"))
        .arg(expected)
        .arg(actual)
        .args(["--scope", scope])
        .output()
        .expect("run compare_dumps.py");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    (
        out.status.success() && text.trim_end().ends_with(&format!("equal (scope={scope})")),
        text,
    )
}

#[test]
fn every_fixture_dumps_equal_to_its_expected_content() {
    let names = fixture_names();
    assert_eq!(names.len(), 7, "expected the 7 reference fixtures");
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for name in &names {
        let store = fixtures_dir().join(format!("{name}.zarr"));
        let out = Command::new(env!("CARGO_BIN_EXE_zv"))
            .arg("dump")
            .arg(&store)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "zv dump {name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let actual = dir.path().join(format!("{name}.json"));
        std::fs::write(&actual, &out.stdout).unwrap();
        let expected = fixtures_dir().join(format!("{name}.expected.json"));
        for scope in ["logical", "all"] {
            let (ok, text) = compare(&expected, &actual, scope);
            if !ok {
                failures.push(format!("{name} ({scope}):\n{text}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn dump_errors_are_reported_not_panics() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        vec!["dump", dir.path().to_str().unwrap()],
        vec!["dump", "/nonexistent/zv/store"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_zv"))
            .args(&args)
            .output()
            .unwrap();
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("zarr.json"), "{err}");
    }
}
