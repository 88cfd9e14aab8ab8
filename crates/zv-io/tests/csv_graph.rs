//! CSV graphs without Python: malformed edge lists give an error naming the edge file and the
//! line and leave the store empty; edges come back between the same nodes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::Path;
use std::sync::Arc;

use zv_core::key::StorePrefix;
use zv_core::store::ListableStore;
use zv_format::ZvStore;
use zv_io::{ExportOptions, Format, ImportOptions};

/// Text ids (the first row, which types the columns at batch 1, is `c`), numbers among them.
const NODES: &str = "id,x,y,z\nc,0,1,0\n10,0,0,0\n20,1,0,0\n";

/// Imports `nodes` with the edge list `edges`: the result, and whether the store stayed empty.
fn import(dir: &Path, nodes: &str, edges: &str) -> (zv_io::Result<ZvStore>, bool) {
    let (n, e) = (dir.join("nodes.csv"), dir.join("edges.csv"));
    std::fs::write(&n, nodes).unwrap();
    std::fs::write(&e, edges).unwrap();
    let store = Arc::new(zv_store_mem::MemoryStore::new());
    let opts = ImportOptions {
        edges: Some(e),
        batch: 1,
        ..Default::default()
    };
    let r = zv_io::import_file(&n, Format::Csv, store.clone(), &opts);
    let empty = store.list_prefix(&StorePrefix::root()).unwrap().is_empty();
    (r.map(|_| ZvStore::open(store).unwrap()), empty)
}

fn error(nodes: &str, edges: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let (r, empty) = import(dir.path(), nodes, edges);
    let e = r
        .err()
        .map(|e| e.to_string())
        .unwrap_or_else(|| panic!("imported: {edges}"));
    assert!(empty, "{e}: the store is not empty");
    e
}

#[test]
fn an_edge_naming_a_missing_node_names_the_file_and_line() {
    let e = error(NODES, "source,target\n10,20\n20,99\n");
    assert!(
        e.contains("edges.csv: line 3: target `99`: no node of"),
        "{e}"
    );
    assert!(e.contains("nodes.csv has this `id`"), "{e}");
    let e = error("x,y\n0,0\n1,1\n", "source,target\n0,1\n1,2\n");
    assert!(e.contains("edges.csv: line 3: target `2`: "), "{e}");
    assert!(e.contains("row index, 0 to 1"), "{e}");
}

#[test]
fn malformed_edge_lists_are_refused_by_line() {
    let e = error(NODES, "from,to\n10,20\n");
    assert!(e.contains("edges.csv: line 1: no column `source`"), "{e}");
    let e = error(NODES, "source,target\n10,10.0\n");
    assert!(
        e.contains("edges.csv: line 2: the edge links node `10` to itself"),
        "{e}"
    );
    let e = error(NODES, "source,target,w\n10,20,1\n20,c,heavy\n");
    assert!(
        e.contains("edges.csv: line 3: column `w`: `heavy` is not a number"),
        "{e}"
    );
    let e = error("id,x,y\n1,0,0\n1.0,1,1\n", "source,target\n");
    assert!(
        e.contains("nodes.csv: line 3: node id `1.0` is repeated"),
        "{e}"
    );
    let e = error("id,x,y\n1,0,0\n,1,1\n", "source,target\n");
    assert!(e.contains("nodes.csv: line 3: the node has no id"), "{e}");
}

#[test]
fn edges_export_between_the_same_nodes() {
    let dir = tempfile::tempdir().unwrap();
    let (r, _) = import(
        dir.path(),
        NODES,
        "source,target,w\n10,20,0.5\nc,10,\n20,c,2\n",
    );
    let zv = r.unwrap_or_else(|e| panic!("{e}"));
    let mut out = Vec::new();
    zv_io::csv::edges::export_edges(&zv, &mut out, "e.csv").unwrap();
    let text = String::from_utf8(out).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.remove(0), "source,target,w");
    lines.sort();
    assert_eq!(lines, ["10,20,0.5", "20,c,2", "c,10,"]);
    let mut nodes = Vec::new();
    zv_io::export(
        &zv,
        Format::Csv,
        &mut nodes,
        "n.csv",
        &ExportOptions::default(),
    )
    .unwrap();
    let nodes = String::from_utf8(nodes).unwrap();
    assert!(nodes.starts_with("x,y,z,id\n"), "{nodes}");
    // an edge list goes with CSV only
    let store = Arc::new(zv_store_mem::MemoryStore::new());
    let ply = dir.path().join("p.ply");
    std::fs::write(&ply, "ply\n").unwrap();
    let opts = ImportOptions {
        edges: Some(dir.path().join("edges.csv")),
        ..Default::default()
    };
    let e = zv_io::import_file(&ply, Format::Ply, store, &opts)
        .err()
        .map(|e| e.to_string());
    assert!(e.is_some_and(|e| e.contains("an edge list goes with a CSV file of nodes")));
}
