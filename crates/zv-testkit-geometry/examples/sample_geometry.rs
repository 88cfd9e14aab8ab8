//! Prints a summary of a few random geometry documents (to eyeball the generator).
#![allow(clippy::unwrap_used, missing_docs)]
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;
fn main() {
    let mut runner = TestRunner::deterministic();
    for _ in 0..16 {
        let d = zv_testkit_geometry::geometry_document()
            .new_tree(&mut runner)
            .unwrap()
            .current();
        let len = |k: &str| d[k].as_array().map_or(0, Vec::len);
        let keys = |k: &str| {
            d[k].as_object()
                .map(|o| o.keys().cloned().collect::<Vec<_>>().join(","))
                .unwrap_or_default()
        };
        println!("{:12} dims {} chunk {:?} bins {} dtype {} codecs {:12} verts {:3} polys {} edges {:3} faces {:3} va [{}] la [{}] oa [{}] fa [{}] groups {} ga [{}]",
            d["geometry"].as_str().unwrap(), d["chunk_shape"].as_array().unwrap().len(), d["chunk_shape"], !d["bin_shape"].is_null(), d["vertex_dtype"], d["codecs"].as_str().unwrap(),
            len("vertices"), len("polylines"), len("edges"), len("faces"), keys("vertex_attributes"), keys("link_attributes"), keys("object_attributes"), keys("fragment_attributes"),
            d["groups"].as_object().map_or(0, |o| o.len()), keys("group_attributes"));
    }
}
