//! A corpus of broken stores, each a copy of a reference fixture with one defect: `zv
//! validate` reports each at the expected level, rule and key and exits 1 (0 for the
//! warning-only defects). Then the 0.7.0 reference's `validate` runs on the good fixtures
//! (both pass) and on the corpus: every defect it reports, zv reports too, and the defects it
//! misses are listed in [`REFERENCE_MISSES`].
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod defects_data;
mod defects_metadata;
mod store;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};
use zv_testkit::env::{fixtures_dir, reference_python};

use store::{copy_dir, make_source, set_f32, Store};

/// `(name, fixture, level, rule, key, break)`: one defect of the corpus.
pub(crate) type Defect = (
    &'static str,
    &'static str,
    u8,
    &'static str,
    &'static str,
    fn(&Store),
);

/// Every defect, levels 1–2 first.
fn corpus() -> Vec<&'static Defect> {
    defects_metadata::DEFECTS
        .iter()
        .chain(defects_data::DEFECTS)
        .collect()
}

/// The rules whose findings are warnings: those stores stay valid (exit 0).
const WARNINGS: &[&str] = &[
    "unknown-array",
    "capabilities",
    "point-cloud-links",
    "axes",
    "multiscale-token",
];

/// Builds every corpus store under `dir`; returns `(defect, store path)`.
fn build(dir: &Path) -> Vec<(&'static Defect, PathBuf)> {
    corpus()
        .into_iter()
        .map(|d| {
            let path = dir.join(format!("{}.zarr", d.0));
            make_source(&fixtures_dir(), d.1, &path);
            (d.5)(&Store(path.clone()));
            (d, path)
        })
        .collect()
}

#[test]
fn every_defect_is_reported_at_its_level_rule_and_key() {
    let errors = corpus()
        .into_iter()
        .filter(|d| !WARNINGS.contains(&d.3))
        .count();
    assert!(errors >= 40, "{errors} error defects");
    let rules: std::collections::BTreeSet<&str> = corpus().into_iter().map(|d| d.3).collect();
    let uncovered: Vec<&str> = zv_format::validate::RULES
        .iter()
        .map(|r| r.id)
        .filter(|id| !rules.contains(id))
        .collect();
    // every rule is broken by at least one defect
    assert!(
        uncovered.is_empty(),
        "rules without a defect: {uncovered:?}"
    );
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for (d, path) in build(dir.path()) {
        let (name, _, level, rule, key, _) = *d;
        let out = Command::new(env!("CARGO_BIN_EXE_zv"))
            .args(["validate", path.to_str().unwrap(), "--json"])
            .output()
            .unwrap();
        let want = if WARNINGS.contains(&rule) { 0 } else { 1 };
        let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        let found = report["findings"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|f| f["rule"] == rule && f["key"] == key && f["level"] == level);
        let rule_level = zv_format::validate::rule(rule).map(|r| r.level);
        if out.status.code() != Some(want) || !found || rule_level != Some(level) {
            failures.push(format!(
                "{name}: want {rule} L{level} at {key}, exit {want}; got exit {:?}:\n{}",
                out.status.code(),
                serde_json::to_string_pretty(&report["findings"]).unwrap()
            ));
        }
        // the library says the same
        let r = zv_format::validate::validate(
            zv_core::plugin::open_store(path.to_str().unwrap()).unwrap(),
            5,
        );
        assert_eq!(r.is_valid(), want == 0, "{name}");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn levels_are_cumulative_and_bad_arguments_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.zarr");
    copy_dir(&fixtures_dir().join("points_basic.zarr"), &path);
    let s = Store(path.clone());
    s.edit_blob("0/vertices/0.0.0", |b| set_f32(b, 1, f32::NAN));
    let p = path.to_str().unwrap();
    // a level-3 defect: invisible at level 2, an error at 3
    let r2 = zv_format::validate::validate(zv_core::plugin::open_store(p).unwrap(), 2);
    assert!(r2.is_valid() && r2.findings.is_empty(), "{r2}");
    let r3 = zv_format::validate::validate(zv_core::plugin::open_store(p).unwrap(), 3);
    assert_eq!(
        r3.errors().map(|f| f.rule).collect::<Vec<_>>(),
        ["non-finite"]
    );
    // a metadata error stops the run before level 3
    s.attrs("", |a| a["zarr_vectors"]["reduction_factor"] = json!(0));
    let r5 = zv_format::validate::validate(zv_core::plugin::open_store(p).unwrap(), 5);
    assert_eq!(r5.checked_level, 2);
    assert_eq!(
        r5.errors().map(|f| f.rule).collect::<Vec<_>>(),
        ["reduction-factor"]
    );
    let zv = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_zv"))
            .args(args)
            .output()
            .unwrap()
            .status
            .code()
    };
    assert_eq!(zv(&["validate", p, "--level", "6"]), Some(2));
    assert_eq!(zv(&["validate", p, "--level", "0"]), Some(2));
    assert_eq!(zv(&["validate", "memory://", "--bogus"]), Some(2));
    assert_eq!(zv(&["validate", p, "--level", "2"]), Some(1));
}

/// The corpus defects the 0.7.0 reference's `validate(store, level=5)` does not report
/// (no error, no exception); zv reports every one.
const REFERENCE_MISSES: &[&str] = &[
    "no-level-0",
    "wrong-zv-array",
    "bad-chunk-key",
    "short-chunk-key",
    "old-version",
    "bad-version-string",
    "bounds-inverted",
    "bad-geometry-type",
    "bad-cross-level-storage",
    "depth-below-minus-one",
    "reduction-factor-1",
    "vertex-count-not-number",
    "level-number",
    "level-0-parent",
    "level-1-no-parent",
    "sparsity",
    "no-inherited",
    "int-vertices",
    "vertex-encoding",
    "links-delta",
    "fragment-past-rows",
    "attribute-missing",
    "orphan",
    "nan",
    "vertex-count",
    "attribute-short",
    "link-row-out-of-chunk",
    "link-fragments-magic",
    "link-attribute-short",
    "manifest-trailing",
    "shared-fragment",
    "ccl-length",
    "ccl-chunk",
    "ccl-row",
    "object-attribute-rows",
    "num-groups",
    "group-member",
    "group-attribute-rows",
    "cross-level-blob",
    "cross-level-target",
    "vertex-outside-chunk",
    "vertex-outside-bin",
    "bounds-shrunk",
    "level-chunk-shape",
    "level-bin-shape",
    "inherited-mismatch",
    "no-multiscale-token",
    "fragment-attribute-rows",
    "cross-chunk-attribute-rows",
    // ZV 0.9 stores: the 0.7.0 reference does not know their layout
    "grid-origin-outside",
    "segment-name",
    "listed-cell-deleted",
    "cell-not-listed",
    "link-attributes-cross-level-09",
    "link-attribute-cell-deleted-09",
    "cross-chunk-attribute-cell-deleted-09",
];

#[test]
fn the_reference_validator_agrees() {
    let dir = tempfile::tempdir().unwrap();
    let built = build(dir.path());
    let mut stores: Vec<String> = built
        .iter()
        .map(|(_, p)| p.to_str().unwrap().to_owned())
        .collect();
    for name in [
        "graph_basic",
        "mesh_basic",
        "points_basic",
        "points_binned",
        "pyramid_points",
        "skeleton_basic",
        "streamlines_basic",
    ] {
        stores.push(
            fixtures_dir()
                .join(format!("{name}.zarr"))
                .to_str()
                .unwrap()
                .to_owned(),
        );
    }
    let script = r#"
import json, sys, traceback
from zarr_vectors.validate import validate
out = []
for path in json.load(open(sys.argv[1])):
    try:
        v = validate(path, level=5)
        out.append({"errors": v.errors})
    except Exception:
        out.append({"raised": traceback.format_exc(limit=1)})
json.dump(out, open(sys.argv[2], "w"))
"#;
    let jobs = dir.path().join("jobs.json");
    let results = dir.path().join("results.json");
    std::fs::write(&jobs, serde_json::to_vec(&stores).unwrap()).unwrap();
    let status = Command::new(reference_python())
        .args(["-W", "ignore", "-c", script])
        .arg(&jobs)
        .arg(&results)
        .status()
        .unwrap();
    assert!(status.success());
    let results: Vec<Value> = serde_json::from_slice(&std::fs::read(&results).unwrap()).unwrap();
    let reported = |r: &Value| {
        r.get("raised").is_some() || r["errors"].as_array().is_some_and(|e| !e.is_empty())
    };
    for (r, s) in results[built.len()..].iter().zip(&stores[built.len()..]) {
        assert!(!reported(r), "the reference fails a good fixture {s}: {r}");
    }
    let mut misses = Vec::new();
    for ((d, path), r) in built.iter().zip(&results) {
        if WARNINGS.contains(&d.3) {
            continue;
        }
        let zv_reports = !zv_format::validate::validate(
            zv_core::plugin::open_store(path.to_str().unwrap()).unwrap(),
            5,
        )
        .is_valid();
        assert!(
            zv_reports || !reported(r),
            "{}: the reference reports it, zv does not",
            d.0
        );
        if !reported(r) {
            misses.push(d.0);
        }
    }
    assert_eq!(
        misses, REFERENCE_MISSES,
        "the defects the reference misses changed"
    );
}
