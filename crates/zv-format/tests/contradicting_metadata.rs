//! Metadata that contradicts the geometry or the layout (issue 14, defect 5): each case edits
//! one `zarr.json` of a copy of a reference fixture, then reads the whole store (`zv dump`'s
//! reading). Every case is an error naming the edited document (or, for vertices outside
//! their chunk, the vertex blob), never silently wrong content. The pristine copies read.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use zv_format::reader::ZvStore;
use zv_testkit::env::fixtures_dir;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::write(&target, std::fs::read(e.path()).unwrap()).unwrap();
        }
    }
}

fn read_all(dir: &Path) -> Result<Value, String> {
    let store = ZvStore::open_url(dir.to_str().unwrap()).map_err(|e| e.to_string())?;
    zv_format::dump::dump(&store).map_err(|e| e.to_string())
}

/// A copy of fixture `name` whose `doc` (a `zarr.json` path in the store) has its attributes
/// changed by `edit`.
fn edited(tmp: &Path, name: &str, doc: &str, edit: impl FnOnce(&mut Value)) -> PathBuf {
    let to = tmp.join(format!("{name}-{}.zarr", doc.replace('/', "_")));
    let _ = std::fs::remove_dir_all(&to);
    copy_dir(&fixtures_dir().join(format!("{name}.zarr")), &to);
    let path = to.join(doc);
    let mut v: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    edit(&mut v["attributes"]);
    std::fs::write(&path, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
    to
}

/// Edits `doc` of fixture `name` and checks that reading the copy fails with an error that
/// contains `key` and every one of `words`.
fn refused(name: &str, doc: &str, edit: impl FnOnce(&mut Value), key: &str, words: &[&str]) {
    let tmp = tempfile::tempdir().unwrap();
    let copy = edited(tmp.path(), name, doc, edit);
    let err = read_all(&copy).expect_err(&format!("{name}: the edit of {doc} was accepted"));
    assert!(
        err.contains(key),
        "{name}: error does not name `{key}`: {err}"
    );
    for w in words {
        assert!(err.contains(w), "{name}: error lacks `{w}`: {err}");
    }
}

#[test]
fn the_fixtures_read_unedited() {
    for name in [
        "points_basic",
        "points_binned",
        "graph_basic",
        "mesh_basic",
        "skeleton_basic",
        "streamlines_basic",
        "pyramid_points",
    ] {
        let dump = read_all(&fixtures_dir().join(format!("{name}.zarr"))).unwrap();
        assert!(
            dump["levels"].is_object() || dump["levels"].is_array(),
            "{name}"
        );
    }
}

#[test]
fn a_link_width_the_geometry_forbids() {
    // a mesh's faces read as one-vertex "faces"
    let doc = "0/links/0/zarr.json";
    let set = |w: u64| move |a: &mut Value| a["link_width"] = json!(w);
    refused("mesh_basic", doc, set(1), doc, &["link_width", "mesh"]);
    refused("mesh_basic", doc, set(2), doc, &["link_width"]);
    refused("graph_basic", doc, set(3), doc, &["link_width", "graph"]);
    refused("skeleton_basic", doc, set(3), doc, &["link_width"]);
    // cross-chunk records too
    let doc = "0/cross_chunk_links/0/zarr.json";
    refused("mesh_basic", doc, set(2), doc, &["link_width"]);
    refused("streamlines_basic", doc, set(3), doc, &["link_width"]);
}

#[test]
fn an_unknown_encoding_or_layout() {
    let foo = |k: &'static str| move |a: &mut Value| a[k] = json!("foo");
    for name in ["graph_basic", "points_binned"] {
        let doc = "0/vertex_fragments/zarr.json";
        refused(name, doc, foo("encoding"), doc, &["encoding", "foo"]);
    }
    let doc = "0/link_fragments/zarr.json";
    refused(
        "graph_basic",
        doc,
        foo("encoding"),
        doc,
        &["encoding", "foo"],
    );
    let doc = "0/vertices/zarr.json";
    refused(
        "points_basic",
        doc,
        foo("encoding"),
        doc,
        &["encoding", "foo"],
    );
    let doc = "0/object_index/zarr.json";
    refused("graph_basic", doc, foo("layout"), doc, &["layout", "foo"]);
    let doc = "0/links/0/zarr.json";
    let int32 = |a: &mut Value| a["dtype"] = json!("int32");
    refused("graph_basic", doc, int32, doc, &["int64"]);
}

#[test]
fn unknown_root_enumerations() {
    for field in [
        "links_convention",
        "object_index_convention",
        "cross_chunk_strategy",
        "cross_level_storage",
    ] {
        let edit = |a: &mut Value| a["zarr_vectors"][field] = json!("foo");
        refused(
            "graph_basic",
            "zarr.json",
            edit,
            "zarr.json",
            &[field, "foo"],
        );
    }
}

#[test]
fn a_level_delta_that_contradicts_the_folder() {
    let plus_one = |a: &mut Value| a["level_delta"] = json!(1);
    for doc in ["2/links/-1/zarr.json", "2/cross_chunk_links/-1/zarr.json"] {
        refused("pyramid_points", doc, plus_one, doc, &["level_delta"]);
    }
    let minus_one = |a: &mut Value| a["level_delta"] = json!(-1);
    let doc = "0/links/0/zarr.json";
    refused("graph_basic", doc, minus_one, doc, &["level_delta"]);
    let doc = "0/link_attributes/weight/0/zarr.json";
    refused("graph_basic", doc, minus_one, doc, &["level_delta"]);
}

#[test]
fn a_chunk_shape_that_no_longer_contains_the_vertices() {
    // chunk 0.0.1 holds z in [50, 100); with chunk_shape 100 its box is [100, 200)
    let edit = |a: &mut Value| a["zarr_vectors"]["chunk_shape"] = json!([100.0, 100.0, 100.0]);
    refused(
        "points_basic",
        "zarr.json",
        edit,
        "/vertices/",
        &["outside chunk"],
    );
    // and a smaller chunk shape: chunk 0.0.1 becomes [25, 50), which misses z ≥ 50
    let edit = |a: &mut Value| a["zarr_vectors"]["chunk_shape"] = json!([25.0, 25.0, 25.0]);
    refused(
        "graph_basic",
        "zarr.json",
        edit,
        "/vertices/",
        &["outside chunk"],
    );
}

#[test]
fn a_bin_shape_with_too_many_bins() {
    // 4·10^7 bins per axis: 6.4·10^22 bins per chunk
    let edit = |a: &mut Value| a["zarr_vectors"]["base_bin_shape"] = json!([1e-6, 1e-6, 1e-6]);
    refused(
        "points_binned",
        "zarr.json",
        edit,
        "zarr.json",
        &["base_bin_shape", "bins per chunk"],
    );
}

#[test]
fn an_unknown_attribute_encoding() {
    let foo = |a: &mut Value| a["encoding"] = json!("foo");
    let doc = "0/link_attributes/weight/0/zarr.json";
    refused("graph_basic", doc, foo, doc, &["encoding", "foo"]);
    let doc = "0/vertex_attributes/intensity/zarr.json";
    refused("points_basic", doc, foo, doc, &["encoding", "foo"]);
}
