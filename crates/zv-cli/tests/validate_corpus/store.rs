//! Copies of fixtures to break: JSON edits, blobs read through zv and rewritten raw, the
//! object index rewritten as `data` + `offsets`.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use zv_format::layout::manifest::{encode_stream, Manifest};

/// A copy of a fixture to break.
pub(crate) struct Store(pub PathBuf);

impl Store {
    pub(crate) fn path(&self, rel: &str) -> PathBuf {
        self.0.join(rel)
    }

    pub(crate) fn edit_json(&self, rel: &str, f: impl FnOnce(&mut Value)) {
        let p = self.path(rel);
        let mut v: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        f(&mut v);
        std::fs::write(&p, serde_json::to_vec(&v).unwrap()).unwrap();
    }

    /// Edits the attributes of the group document at `node`.
    pub(crate) fn attrs(&self, node: &str, f: impl FnOnce(&mut Value)) {
        let rel = if node.is_empty() {
            "zarr.json".to_owned()
        } else {
            format!("{node}/zarr.json")
        };
        self.edit_json(&rel, |v| f(&mut v["attributes"]));
    }

    pub(crate) fn remove(&self, rel: &str) {
        let p = self.path(rel);
        if p.is_dir() {
            std::fs::remove_dir_all(p).unwrap();
        } else {
            std::fs::remove_file(p).unwrap();
        }
    }

    /// The decoded payload of the blob at `node` (any codecs).
    pub(crate) fn blob(&self, node: &str) -> Vec<u8> {
        let store = zv_core::plugin::open_store(self.0.to_str().unwrap()).unwrap();
        zv_format::blob::Blobs::new(store)
            .read_bytes(node)
            .unwrap()
            .unwrap()
    }

    /// Rewrites the blob at `node` as an uncompressed 1-D uint8 array holding `bytes`.
    pub(crate) fn set_blob(&self, node: &str, bytes: &[u8]) {
        let n = bytes.len();
        let doc = json!({"shape": [n], "data_type": "uint8",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [n.max(1)]}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": 0, "codecs": [{"name": "bytes"}], "attributes": {},
            "zarr_format": 3, "node_type": "array"});
        std::fs::create_dir_all(self.path(&format!("{node}/c"))).unwrap();
        std::fs::write(self.path(&format!("{node}/zarr.json")), doc.to_string()).unwrap();
        std::fs::write(self.path(&format!("{node}/c/0")), bytes).unwrap();
    }

    pub(crate) fn edit_blob(&self, node: &str, f: impl FnOnce(&mut Vec<u8>)) {
        let mut b = self.blob(node);
        f(&mut b);
        self.set_blob(node, &b);
    }

    /// Replaces level 0's object index by `data` + `offsets` holding the manifests `f` makes
    /// of the stored ones.
    pub(crate) fn edit_manifests(&self, f: impl FnOnce(&mut Vec<Manifest>)) {
        let zs = zv_format::ZvStore::open_url(self.0.to_str().unwrap()).unwrap();
        let mut ms = zs
            .level(0)
            .unwrap()
            .object_index()
            .unwrap()
            .unwrap()
            .manifests;
        f(&mut ms);
        let (data, offsets) = encode_stream(&ms, 3).unwrap();
        self.remove("0/object_index/manifests");
        self.set_blob("0/object_index/data", &data);
        self.set_blob("0/object_index/offsets", &offsets);
        let n = ms.len();
        self.attrs("0/object_index", |a| {
            a.as_object_mut().unwrap().remove("layout");
            a["num_objects"] = json!(n);
        });
    }
}

pub(crate) fn set_f32(b: &mut [u8], i: usize, v: f32) {
    b[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes());
}

pub(crate) fn get_f32(b: &[u8], i: usize) -> f32 {
    f32::from_le_bytes(b[4 * i..4 * i + 4].try_into().unwrap())
}

pub(crate) fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// The zv-written sources of the corpus (`zv:NAME` in a defect, `zv09:NAME` for the store
/// written in the ZV 0.9 layout), for what no fixture has: `(name, zv-geometry/1 document)`.
const ZV_SOURCES: &[(&str, &str)] = &[
    (
        // two objects of two chunks each, a fragment attribute, and a link attribute on edges
        // that cross chunks (so both `fragment_attributes/` and `cross_chunk_link_attributes/`)
        "graph_attributes",
        r#"{"format": "zv-geometry/1", "geometry": "graph", "chunk_shape": [10, 10, 10],
        "vertices": [[1, 1, 1], [2, 2, 2], [12, 1, 1], [13, 2, 2], [1, 12, 1], [12, 12, 1]],
        "object_ids": [0, 0, 0, 1, 1, 1],
        "edges": [[0, 1], [1, 2], [3, 4], [4, 5]],
        "link_attributes": {"weight": {"dtype": "float32", "values": [1, 2, 3, 4]}},
        "fragment_attributes": {"tag": {"dtype": "int32", "values": [7, 8]}}}"#,
    ),
    (
        // the same graph in the ZV 0.9 layout: chunks 0.0.0, 1.0.0, 0.1.0 and 1.1.0 of a grid
        // with origin 0.0.0, cross-chunk segments `+1.0.0` (edges 1-2 and 4-5) and `+1.-1.0`
        // (edge 3-4), the link attribute's family mirroring them (edge 0-1 in chunk 0.0.0)
        "graph_09",
        r#"{"format": "zv-geometry/1", "geometry": "graph", "chunk_shape": [10, 10, 10],
        "vertices": [[1, 1, 1], [2, 2, 2], [12, 1, 1], [13, 2, 2], [1, 12, 1], [12, 12, 1]],
        "object_ids": [0, 0, 0, 1, 1, 1],
        "edges": [[0, 1], [1, 2], [3, 4], [4, 5]],
        "link_attributes": {"weight": {"dtype": "float32", "values": [1, 2, 3, 4]}}}"#,
    ),
];

/// Makes the source of a defect at `to`: a copy of fixture `source`, or for `zv:NAME` the
/// store `zv import` writes from [`ZV_SOURCES`].
pub(crate) fn make_source(fixtures: &Path, source: &str, to: &Path) {
    let (name, version) = match (source.strip_prefix("zv:"), source.strip_prefix("zv09:")) {
        (Some(name), _) => (name, "0.7"),
        (_, Some(name)) => (name, "0.9"),
        _ => {
            copy_dir(&fixtures.join(format!("{source}.zarr")), to);
            return;
        }
    };
    let doc = ZV_SOURCES
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no zv source {name}"))
        .1;
    let file = to.with_extension("json");
    std::fs::write(&file, doc).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_zv"))
        .args(["import", file.to_str().unwrap(), to.to_str().unwrap()])
        .args(["--format-version", version])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "zv import {name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
