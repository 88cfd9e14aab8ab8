//! zv writes ZV 0.9 line stores that zarr-vectors 0.9.2 reads with exactly the content zv
//! wrote: random line documents (2 and 3 dimensions, chunks of 4 to 10, short and long lines,
//! bins, vertex and object attributes) and the geometry strategy's line documents are read
//! back by 0.9.2 (its `read_lines` giving the lines and endpoint attributes written) and by
//! zv with the content of the 0.7 store of the same document, every node opens in
//! zarr-python 3, and zv lays them out in the cells 0.9.2's `write_lines` writes for them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::process::Command;

mod common;

use common::zv09_docs::{check_documents_with, import, Rng};
use serde_json::{json, Value};
use zv_testkit::env::{workspace_root, zv09_python};

/// Random line documents per run.
const LINE_DOCUMENTS: u64 = 12;

/// A random line document (seeded): 2 or 3 dimensions, chunk shapes 4 to 10 over
/// coordinates in ±24 (negative chunks), short lines (mostly inside one chunk) and long ones
/// (across chunk boundaries), sometimes a bin shape finer than the chunks, a scalar and a
/// multi-channel vertex attribute, an object attribute with absent rows.
fn line_document(seed: u64) -> Value {
    let mut r = Rng(seed);
    let ndim = 2 + r.below(2) as usize;
    let chunk = [4.0, 5.0, 10.0][r.below(3) as usize];
    let k = 1 + r.below(40) as usize;
    let lines: Vec<Vec<Vec<f64>>> = (0..k)
        .map(|_| {
            let reach = if r.below(2) == 0 { 1 } else { 12 };
            let a: Vec<f64> = (0..ndim).map(|_| r.coord(24)).collect();
            let b = a
                .iter()
                .map(|&x| (x + r.coord(reach)).clamp(-24.0, 24.0))
                .collect();
            vec![a, b]
        })
        .collect();
    let per_line = |r: &mut Rng, f: &mut dyn FnMut(&mut Rng) -> Value| -> Vec<Value> {
        (0..k).map(|_| json!([f(r), f(r)])).collect()
    };
    let radius = per_line(&mut r, &mut |r| json!(r.below(64) as f64 / 8.0));
    let rgb = per_line(&mut r, &mut |r| {
        json!([r.below(256), r.below(256), r.below(256)])
    });
    let length: Vec<Value> = (0..k)
        .map(|i| {
            if r.below(5) == 0 {
                Value::Null
            } else {
                json!(i as f64 * 0.25)
            }
        })
        .collect();
    let dtype = ["float32", "float64"][r.below(2) as usize];
    let mut doc = json!({
        "format": "zv-geometry/1", "geometry": "line",
        "chunk_shape": vec![chunk; ndim],
        "vertex_dtype": dtype,
        "polylines": lines,
        "vertex_attributes": {
            "radius": {"dtype": "float32", "values": radius},
            "rgb": {"dtype": "uint8", "channel_names": ["r", "g", "b"], "values": rgb},
        },
        "object_attributes": {"length": {"dtype": "float64", "values": length}},
    });
    if r.below(3) == 0 {
        doc["bin_shape"] = json!(vec![chunk / 2.0; ndim]);
    }
    doc
}

/// Line documents from the geometry strategy.
const STRATEGY_LINES: usize = 6;

#[test]
fn zarr_vectors_0_9_2_reads_lines_zv_writes_in_0_9() {
    let mut docs: Vec<(String, Value)> = (0..LINE_DOCUMENTS)
        .map(|seed| (format!("lines{seed}"), line_document(seed)))
        .collect();
    let written: std::collections::BTreeMap<String, Value> = docs.iter().cloned().collect();
    docs.extend(zv_testkit_geometry::strategy::v09_documents(
        &["line"],
        STRATEGY_LINES,
    ));
    let mut read = 0;
    // 0.9.2's `write_lines` list of arrays (vertex attributes included), 0.7.0's without them
    let checked = check_documents_with(
        &docs,
        "^/root_metadata/zv_version|/level_metadata/arrays_present",
        |name, dump| {
            // 0.9.2's read_lines gives the document's lines and endpoint attributes
            let Some(doc) = written.get(name) else { return };
            let reader = &dump["levels"]["0"]["reader"];
            assert_eq!(reader["function"], "read_lines", "{name}");
            assert_eq!(reader["endpoints"], doc["polylines"], "{name}");
            for attr in ["radius", "rgb"] {
                let flat: Vec<Value> = doc["vertex_attributes"][attr]["values"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .flat_map(|pair| pair.as_array().unwrap().clone())
                    .collect();
                assert_eq!(
                    reader["vertex_attributes"][attr],
                    json!(flat),
                    "{name} {attr}"
                );
            }
            read += 1;
        },
    );
    assert_eq!(read, LINE_DOCUMENTS);
    assert!(checked.nodes >= 4 * docs.len() as u64);
    // lines cross chunks: cross-chunk segments were written and read
    assert!(
        checked.segments >= docs.len(),
        "{} cross-chunk segments",
        checked.segments
    );
}

#[test]
fn lines_are_laid_out_as_zarr_vectors_0_9_2_lays_them_out() {
    // the same lines written by zv in 0.9 and by 0.9.2's write_lines: the same cells
    // (tests/interop/zv09_lines_layout.py; bins included: both split at chunks only)
    let dir = tempfile::tempdir().unwrap();
    let mut docs: Vec<(String, Value)> = (0..LINE_DOCUMENTS)
        .map(|seed| (format!("lines{seed}"), line_document(seed)))
        .collect();
    docs.extend(zv_testkit_geometry::strategy::v09_documents(
        &["line"],
        STRATEGY_LINES,
    ));
    // 0.9.2 writes no store of no lines with vertex attributes
    docs.retain(|(_, d)| d["polylines"].as_array().is_some_and(|p| !p.is_empty()));
    let mut script = Command::new(zv09_python());
    script
        .arg(workspace_root().join("tests/interop/zv09_lines_layout.py"))
        .arg(dir.path());
    let mut binned = 0;
    for (name, doc) in &docs {
        let store = import(dir.path(), name, doc, "0.9");
        binned += usize::from(doc.get("bin_shape").is_some_and(|b| !b.is_null()));
        script
            .arg(dir.path().join(format!("{name}.json")))
            .arg(&store);
    }
    // one interpreter for every document
    let out = script.output().unwrap();

    assert!(
        out.status.success(),
        "zv09_lines_layout.py: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reports: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(reports.len(), docs.len(), "one report per document");
    let mut cells = 0;
    for ((name, _), report) in docs.iter().zip(&reports) {
        let want = dir.path().join(format!("{name}.json"));
        assert_eq!(report["document"], json!(want.to_str().unwrap()), "{name}");
        assert_eq!(report["differences"], json!([]), "{name}");
        cells += report["cells"].as_u64().unwrap();
    }
    assert!(cells >= 2 * docs.len() as u64, "{cells} cells compared");
    assert!(binned > 0, "no document with a bin shape");
}
