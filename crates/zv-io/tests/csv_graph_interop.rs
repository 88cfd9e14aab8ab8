//! CSV graphs against pandas (PyPI): a nodes file and an edge list pandas writes import as a
//! graph (nodes named by an `id` column, or by row index without one), and the nodes and
//! `.edges.csv` files zv exports read back in pandas equal: the same nodes, the same edges
//! between them, the same edge attributes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;
use zv_format::ZvStore;
use zv_io::{ExportOptions, Format, ImportOptions};
use zv_testkit::env::io_script;

fn python(args: &[&str]) -> Value {
    io_script("io_interop.py", args)
}

fn numbers(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

/// A graph as pandas reads it: each node's name → its row (bit patterns, in `cols` order), and
/// the edges as sorted (source row, target row, edge attribute bits).
type Graph = (Vec<Vec<u64>>, Vec<(Vec<u64>, Vec<u64>, Vec<u64>)>);

/// Nodes keyed by their full row (`id` included when there is one), so that a node is the
/// same node after zv reorders the rows; edges by the rows of their ends.
fn graph(nodes: &Value, edges: &Value, node_cols: &[&str], edge_cols: &[&str]) -> Graph {
    let cols: Vec<Vec<f64>> = node_cols.iter().map(|c| numbers(&nodes[c])).collect();
    let n = cols[0].len();
    let row = |i: usize| -> Vec<u64> { cols.iter().map(|c| c[i].to_bits()).collect() };
    let has_id = node_cols.contains(&"id");
    let index_of = |name: f64| -> usize {
        if has_id {
            cols[0].iter().position(|v| *v == name).unwrap()
        } else {
            name as usize
        }
    };
    let mut rows: Vec<Vec<u64>> = (0..n).map(row).collect();
    rows.sort();
    let src = numbers(&edges["source"]);
    let dst = numbers(&edges["target"]);
    let attrs: Vec<Vec<f64>> = edge_cols.iter().map(|c| numbers(&edges[c])).collect();
    let mut e: Vec<_> = (0..src.len())
        .map(|k| {
            (
                row(index_of(src[k])),
                row(index_of(dst[k])),
                attrs.iter().map(|a| a[k].to_bits()).collect(),
            )
        })
        .collect();
    e.sort();
    (rows, e)
}

fn round_trip(dir: &Path, node_cols: &[&str]) {
    python(&["write-graph", dir.to_str().unwrap()]);
    let original = python(&[
        "read-graph",
        dir.join("nodes.csv").to_str().unwrap(),
        dir.join("edges.csv").to_str().unwrap(),
    ]);
    let store = Arc::new(zv_store_mem::MemoryStore::new());
    let opts = ImportOptions {
        edges: Some(dir.join("edges.csv")),
        batch: 64,
        ..Default::default()
    };
    zv_io::import_file(&dir.join("nodes.csv"), Format::Csv, store.clone(), &opts)
        .unwrap_or_else(|e| panic!("{e}"));
    let zv = ZvStore::open(store).unwrap();
    assert_eq!(zv.geometry(), zv_format::Geometry::Graph);
    let out = dir.join("zv.csv");
    let mut nodes = Vec::new();
    zv_io::export(
        &zv,
        Format::Csv,
        &mut nodes,
        "zv.csv",
        &ExportOptions::default(),
    )
    .unwrap();
    std::fs::write(&out, nodes).unwrap();
    let mut edges = Vec::new();
    zv_io::csv::edges::export_edges(&zv, &mut edges, "zv.edges.csv").unwrap();
    std::fs::write(dir.join("zv.edges.csv"), edges).unwrap();
    let back = python(&["read-graph", out.to_str().unwrap()]);
    // the same columns, in pandas' reading
    let keys = |v: &Value| -> Vec<String> {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(keys(&back["nodes"]), keys(&original["nodes"]));
    assert_eq!(keys(&back["edges"]), keys(&original["edges"]));
    let edge_cols = ["length", "capacity"];
    let want = graph(
        &original["nodes"],
        &original["edges"],
        node_cols,
        &edge_cols,
    );
    let got = graph(&back["nodes"], &back["edges"], node_cols, &edge_cols);
    assert_eq!(got.0, want.0, "the nodes");
    assert_eq!(got.1.len(), 500);
    assert_eq!(got.1, want.1, "the edges");
}

#[test]
fn pandas_graph_with_node_ids_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    round_trip(dir.path(), &["id", "x", "y", "z", "weight"]);
}

#[test]
fn pandas_graph_named_by_row_index_round_trips() {
    let base = tempfile::tempdir().unwrap();
    let dir = base.path().join("g-noid");
    std::fs::create_dir(&dir).unwrap();
    round_trip(&dir, &["x", "y", "z", "weight"]);
}
