//! Comparing what zv reads in a ZV 0.9 store with what zarr-vectors 0.9.2 reads: random
//! stores written by 0.9.2 (`tests/interop/zv09_make.py`), 0.9.2's dumps
//! (`tests/interop/zv09_dump.py`, with `--cross-level` its cross-level pairs), `zv dump`, the
//! dump comparison (`compare_dumps.py`) and the cross-level pairs each side reads.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};
use zv_format::ZvStore;
use zv_testkit::env::{
    shared_dir, workspace_root, zarr_python, zv09_python, LOGICAL_AND_LINK_ATTRIBUTES,
};

/// Writes random stores of `geometries` (the generators of `zv09_make.py`, both layouts)
/// with 0.9.2 into `dir`: (`<generator>-<layout>`, path). Graphs and skeletons carry link
/// attributes (`zv09_make.py`'s default).
pub fn make(dir: &Path, seed: u64, geometries: &[&str]) -> Vec<(String, PathBuf)> {
    make_with(dir, seed, geometries, None)
}

/// [`make`], link attributes on the geometries `link_attributes` names (comma-separated)
/// when given.
pub fn make_with(
    dir: &Path,
    seed: u64,
    geometries: &[&str],
    link_attributes: Option<&str>,
) -> Vec<(String, PathBuf)> {
    let mut cmd = Command::new(zv09_python());
    cmd.arg(workspace_root().join("tests/interop/zv09_make.py"))
        .arg(dir)
        .args([
            "--seed",
            &seed.to_string(),
            "--geometries",
            &geometries.join(","),
        ]);
    if let Some(l) = link_attributes {
        cmd.args(["--link-attributes", l]);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "zv09_make.py: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    list.iter()
        .map(|s| {
            let name = format!(
                "{}-{}",
                s["geometry"].as_str().unwrap(),
                s["layout"].as_str().unwrap()
            );
            (name, PathBuf::from(s["store"].as_str().unwrap()))
        })
        .collect()
}

/// Dumps `stores` with zarr-vectors 0.9.2's readers (one process) into `dir`, each store's
/// dump `dir/<stem>.expected.json`; with `cross_level`, each level's `cross_level_links`.
pub fn zv09_dump(stores: &[PathBuf], dir: &Path, cross_level: bool) {
    let mut cmd = Command::new(zv09_python());
    cmd.arg(workspace_root().join("tests/interop/zv09_dump.py"))
        .args(stores)
        .arg("--out-dir")
        .arg(dir);
    if cross_level {
        cmd.arg("--cross-level");
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "zv09_dump.py: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `zv dump STORE` into `out`.
pub fn zv_dump(store: &Path, out: &Path) {
    let o = super::zv(&["dump", store.to_str().unwrap()]);
    assert!(
        o.status.success(),
        "zv dump {}: {}",
        store.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    std::fs::write(out, &o.stdout).unwrap();
}

/// The comparison of two dumps in the logical scope, run by `python`: `None` when equal,
/// else the report. With `link_attributes`, the link attribute sections are compared too.
pub fn compare(
    python: &Path,
    expected: &Path,
    actual: &Path,
    ignore: &str,
    link_attributes: bool,
) -> Option<String> {
    let mut cmd = Command::new(python);
    cmd.arg(shared_dir().join("tools/compare_dumps.py"))
        .arg(expected)
        .arg(actual);
    let ignore = match (link_attributes, ignore.is_empty()) {
        (true, true) => LOGICAL_AND_LINK_ATTRIBUTES.to_owned(),
        (true, false) => format!("{ignore}|{LOGICAL_AND_LINK_ATTRIBUTES}"),
        (false, _) => ignore.to_owned(),
    };
    if link_attributes {
        cmd.args(["--scope", "all"]);
    }
    if !ignore.is_empty() {
        cmd.args(["--ignore", &ignore]);
    }
    let cmp = cmd.output().unwrap();
    let text = String::from_utf8_lossy(&cmp.stdout).into_owned();
    let scope = if link_attributes { "all" } else { "logical" };
    let equal = format!("equal (scope={scope})");
    (!(cmp.status.success() && text.trim_end().ends_with(&equal))).then_some(text)
}

/// The ignore pattern of the rulings of `table` — (store name or `*`, key pattern, why) —
/// that concern `name`.
pub fn ignores(table: &[(&str, &str, &str)], name: &str) -> String {
    table
        .iter()
        .filter(|(f, _, _)| *f == "*" || *f == name)
        .map(|(_, k, _)| *k)
        .collect::<Vec<_>>()
        .join("|")
}

/// The JSON document at `path`.
pub fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// `{level: {delta: pairs}}` of every level's cross-level pairs as zv reads them (each
/// vertex's [`ZvStore::linked`] vertices), pairs `[[chunk key, row], [chunk key, row]]`
/// sorted, as `zv09_dump.py --cross-level` gives 0.9.2's.
pub fn cross_level_pairs(store: &Path) -> Value {
    let zv = ZvStore::open_url(store.to_str().unwrap()).unwrap();
    let mut out = serde_json::Map::new();
    for &l in zv.level_ids() {
        let level = zv.level(l).unwrap();
        let mut deltas = level.link_deltas().unwrap();
        deltas.extend(level.cross_chunk_deltas().unwrap());
        deltas.retain(|&d| d != 0);
        deltas.sort_unstable();
        deltas.dedup();
        let mut per = serde_json::Map::new();
        for d in deltas {
            let mut pairs = Vec::new();
            for key in level.chunk_keys().unwrap() {
                let rows = level.chunk(&key).unwrap().unwrap().vertices.len() as u64;
                for r in 0..rows {
                    for (k, t) in zv.linked(l, d, &(key.clone(), r)).unwrap() {
                        pairs.push(json!([[key.to_string(), r], [k.to_string(), t]]));
                    }
                }
            }
            pairs.sort_by_key(Value::to_string);
            per.insert(zv_format::reader::delta_name(d), Value::Array(pairs));
        }
        out.insert(l.to_string(), Value::Object(per));
    }
    Value::Object(out)
}

/// The `cross_level_links` of every level of a `zv09_dump.py --cross-level` dump, pairs
/// sorted as [`cross_level_pairs`] sorts them.
pub fn zv09_cross_level(dump: &Value) -> Value {
    let mut out = serde_json::Map::new();
    for (l, level) in dump["levels"].as_object().unwrap() {
        let mut per = serde_json::Map::new();
        for (d, pairs) in level["cross_level_links"].as_object().unwrap() {
            let mut pairs = pairs.as_array().unwrap().clone();
            pairs.sort_by_key(Value::to_string);
            per.insert(d.clone(), Value::Array(pairs));
        }
        out.insert(l.clone(), Value::Object(per));
    }
    Value::Object(out)
}

/// Every level's object attributes: the same present rows (a mask of all ones and no mask
/// alike) and, in them, the same values (0.9 marks an absent row by its fill value, 0.7 by a
/// mask over any value). `None` when they agree.
pub fn present_object_attributes_agree(expected: &Value, actual: &Value) -> Option<String> {
    for (l, level) in expected["levels"].as_object().unwrap() {
        let Some(attrs) = level["object_attributes"].as_object() else {
            continue;
        };
        for (name, a) in attrs {
            let b = &actual["levels"][l]["object_attributes"][name];
            let values = a["values"].as_array().unwrap();
            let mask = |v: &Value| -> Vec<bool> {
                match v.as_array() {
                    Some(m) => m.iter().map(|x| x.as_u64() == Some(1)).collect(),
                    None => vec![true; values.len()],
                }
            };
            let (ma, mb) = (mask(&a["present_mask"]), mask(&b["present_mask"]));
            if ma != mb {
                return Some(format!("level {l} `{name}`: present rows {ma:?} vs {mb:?}"));
            }
            for (r, present) in ma.iter().enumerate() {
                let (x, y) = (&values[r], &b["values"][r]);
                if *present && x.as_f64() != y.as_f64() {
                    return Some(format!("level {l} `{name}` row {r}: {x} vs {y}"));
                }
            }
        }
    }
    None
}

/// Opens every node of every store in zarr-python 3 (one process) and reads every array: a
/// chunk-grid array every cell its `nonempty_chunks` lists, any other array whole. Returns
/// the number of nodes.
pub fn zarr_python_opens_every_node(stores: &[PathBuf]) -> u64 {
    let out = Command::new(zarr_python())
        .arg("-c")
        .arg(ZARR_WALK)
        .args(stores)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "zarr-python: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    report["nodes"].as_u64().unwrap()
}

const ZARR_WALK: &str = r#"
import json, sys, zarr
total = 0
for path in sys.argv[1:]:
    root = zarr.open_group(path, mode="r")
    stack = [root]
    while stack:
        g = stack.pop()
        for name, node in g.members():
            total += 1
            if isinstance(node, zarr.Group):
                stack.append(node)
            elif "nonempty_chunks" in node.attrs:
                origin = node.attrs["chunk_grid_origin"]
                for key in node.attrs["nonempty_chunks"]:
                    at = tuple(int(c) - o for c, o in zip(key.split("."), origin))
                    node[at]
            else:
                node[...]
print(json.dumps({"nodes": total}))
"#;
