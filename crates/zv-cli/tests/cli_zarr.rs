//! `zv zarr info` and `zv zarr get` from the outside, including their errors.
#![allow(clippy::unwrap_used, missing_docs)]

use std::process::Command;

use serde_json::{json, Value};

fn zv(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_zv"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn write(dir: &std::path::Path, key: &str, value: &[u8]) {
    let path = dir.join(key);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, value).unwrap();
}

#[test]
fn info_and_get() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let doc = json!({"zarr_format": 3, "node_type": "array", "shape": [2, 3], "data_type": "int16",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2, 2]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": -1, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "attributes": {"k": "v"}});
    write(d, "grp/arr/zarr.json", doc.to_string().as_bytes());
    let chunk: Vec<u8> = [1i16, 2, 4, 5]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    write(d, "grp/arr/c/0/0", &chunk);
    let store = d.to_str().unwrap();

    let (ok, out, err) = zv(&["zarr", "info", store, "/grp/arr"]);
    assert!(ok, "{err}");
    let info: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(info["shape"], json!([2, 3]));
    assert_eq!(info["fill_value"], json!(-1));
    assert_eq!(info["attributes"], json!({"k": "v"}));

    // "grp" has no zarr.json: an implicit group with one child
    let (ok, out, _) = zv(&["zarr", "info", store, "grp", "--children"]);
    assert!(ok);
    let info: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(info["metadata"]["node_type"], json!("group"));
    assert_eq!(
        info["children"],
        json!([{"name": "arr", "node_type": "array"}])
    );

    // values: chunk (0,1) is missing and reads as the fill value
    let (ok, out, _) = zv(&["zarr", "get", store, "grp/arr"]);
    assert!(ok);
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap(),
        json!([[1, 2, -1], [4, 5, -1]])
    );
    let (ok, out, _) = zv(&["zarr", "get", store, "grp/arr", "--region", "1,1:3"]);
    assert!(ok);
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap(),
        json!([[5, -1]])
    );

    // errors: bad region, missing node, corrupt chunk; exit status 1 and a message
    for args in [
        vec!["zarr", "get", store, "grp/arr", "--region", "0:9,0:1"],
        vec!["zarr", "get", store, "grp/nothing"],
        vec!["zarr", "get", store, "../etc"],
        vec!["zarr", "info", store, "/nope"],
    ] {
        let (ok, _, err) = zv(&args);
        assert!(!ok, "{args:?} succeeded");
        assert!(err.starts_with("zv: error: "), "{err}");
    }
    write(d, "grp/arr/c/0/0", &chunk[..7]);
    let (ok, _, err) = zv(&["zarr", "get", store, "grp/arr"]);
    assert!(!ok);
    assert!(
        err.contains("grp/arr/c/0/0"),
        "error must name the chunk key: {err}"
    );
}

#[test]
fn demo_writes_a_zv_store_that_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("demo");
    let (ok, out, err) = zv(&["demo", target.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(out.contains("wrote 12 streamlines"), "{out}");
    assert!(!out.contains(" 0 vertices lie in the box"), "{out}");
    let (ok, out, _) = zv(&["dump", target.to_str().unwrap(), "--compact"]);
    assert!(ok);
    let dump: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(dump["levels"]["0"]["reader"]["polyline_count"], json!(12));
    // the arrays are Zarr v3 arrays the zarr commands read too (the ZV 0.9 layout: one
    // manifest per streamline)
    let (ok, out, _) = zv(&[
        "zarr",
        "info",
        target.to_str().unwrap(),
        "0/object_index/manifests",
    ]);
    assert!(ok);
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap()["shape"],
        json!([12])
    );
    // a second run refuses to overwrite
    let (ok, _, err) = zv(&["demo", target.to_str().unwrap()]);
    assert!(!ok && err.contains("not empty"), "{err}");
}
