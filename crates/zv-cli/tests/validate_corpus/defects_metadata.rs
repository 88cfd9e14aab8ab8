//! Defects of levels 1 and 2: structure and metadata.

use serde_json::json;

use crate::Defect;

/// The defects of levels 1 and 2.
pub(crate) const DEFECTS: &[Defect] = &[
    (
        "no-root-document",
        "points_basic",
        1,
        "root-document",
        "zarr.json",
        |s| s.remove("zarr.json"),
    ),
    (
        "not-zv",
        "points_basic",
        1,
        "root-document",
        "zarr.json",
        |s| {
            s.attrs("", |a| {
                a.as_object_mut().unwrap().remove("zarr_vectors");
            })
        },
    ),
    (
        "no-level-0",
        "points_basic",
        1,
        "level-groups",
        "0/zarr.json",
        |s| std::fs::rename(s.path("0"), s.path("7")).unwrap(),
    ),
    (
        "no-vertices",
        "points_basic",
        1,
        "vertices-array",
        "0/vertices",
        |s| s.remove("0/vertices"),
    ),
    (
        "wrong-zv-array",
        "points_basic",
        1,
        "array-document",
        "0/vertex_fragments/zarr.json",
        |s| s.attrs("0/vertex_fragments", |a| a["zv_array"] = json!("links")),
    ),
    (
        "bad-chunk-key",
        "points_basic",
        1,
        "chunk-key",
        "0/vertices/abc",
        |s| s.set_blob("0/vertices/abc", &[0; 12]),
    ),
    (
        "short-chunk-key",
        "points_basic",
        1,
        "chunk-key",
        "0/vertex_fragments/0.0",
        |s| s.set_blob("0/vertex_fragments/0.0", &[]),
    ),
    (
        "old-version",
        "points_basic",
        2,
        "zv-version",
        "zarr.json",
        |s| s.attrs("", |a| a["zarr_vectors"]["zv_version"] = json!("0.6.0")),
    ),
    (
        "bad-version-string",
        "points_basic",
        2,
        "zv-version",
        "zarr.json",
        |s| s.attrs("", |a| a["zarr_vectors"]["zv_version"] = json!("seven")),
    ),
    (
        "no-axes",
        "points_basic",
        2,
        "root-schema",
        "zarr.json",
        |s| {
            s.attrs("", |a| {
                a["multiscales"][0].as_object_mut().unwrap().remove("axes");
            })
        },
    ),
    (
        "chunk-shape-arity",
        "points_basic",
        2,
        "root-shapes",
        "zarr.json",
        |s| {
            s.attrs("", |a| {
                a["zarr_vectors"]["chunk_shape"] = json!([50.0, 50.0])
            })
        },
    ),
    (
        "bounds-inverted",
        "points_basic",
        2,
        "root-shapes",
        "zarr.json",
        |s| s.attrs("", |a| a["zarr_vectors"]["bounds"][0][0] = json!(500.0)),
    ),
    (
        "bin-not-dividing",
        "points_binned",
        2,
        "base-bin-shape",
        "zarr.json",
        |s| {
            s.attrs("", |a| {
                a["zarr_vectors"]["base_bin_shape"] = json!([15.0, 15.0, 15.0])
            })
        },
    ),
    (
        "bad-convention",
        "graph_basic",
        2,
        "enumerations",
        "zarr.json",
        |s| {
            s.attrs("", |a| {
                a["zarr_vectors"]["links_convention"] = json!("zigzag")
            })
        },
    ),
    (
        "bad-geometry-type",
        "points_basic",
        2,
        "enumerations",
        "zarr.json",
        |s| {
            s.attrs("", |a| {
                a["zarr_vectors"]["geometry_types"] = json!(["blob"])
            })
        },
    ),
    (
        "bad-cross-level-storage",
        "points_basic",
        2,
        "enumerations",
        "zarr.json",
        |s| {
            s.attrs("", |a| {
                a["zarr_vectors"]["cross_level_storage"] = json!("sometimes")
            })
        },
    ),
    (
        "depth-below-minus-one",
        "points_basic",
        2,
        "cross-level-depth",
        "zarr.json",
        |s| s.attrs("", |a| a["zarr_vectors"]["cross_level_depth"] = json!(-2)),
    ),
    (
        "reduction-factor-1",
        "points_basic",
        2,
        "reduction-factor",
        "zarr.json",
        |s| s.attrs("", |a| a["zarr_vectors"]["reduction_factor"] = json!(1)),
    ),
    (
        "vertex-count-not-number",
        "points_basic",
        2,
        "level-schema",
        "0/zarr.json",
        |s| {
            s.attrs("0", |a| {
                a["zarr_vectors_level"]["vertex_count"] = json!("many")
            })
        },
    ),
    (
        "level-number",
        "points_basic",
        2,
        "level-number",
        "0/zarr.json",
        |s| s.attrs("0", |a| a["zarr_vectors_level"]["level"] = json!(3)),
    ),
    (
        "level-0-parent",
        "points_basic",
        2,
        "level-parent",
        "0/zarr.json",
        |s| s.attrs("0", |a| a["zarr_vectors_level"]["parent_level"] = json!(0)),
    ),
    (
        "level-1-no-parent",
        "pyramid_points",
        2,
        "level-parent",
        "1/zarr.json",
        |s| {
            s.attrs("1", |a| {
                a["zarr_vectors_level"]
                    .as_object_mut()
                    .unwrap()
                    .remove("parent_level");
            })
        },
    ),
    (
        "sparsity",
        "points_basic",
        2,
        "object-sparsity",
        "0/zarr.json",
        |s| {
            s.attrs("0", |a| {
                a["zarr_vectors_level"]["object_sparsity"] = json!(1.5)
            })
        },
    ),
    (
        "no-inherited",
        "pyramid_points",
        2,
        "inherited-objects",
        "1/zarr.json",
        |s| {
            s.attrs("1", |a| {
                a["zarr_vectors_level"]
                    .as_object_mut()
                    .unwrap()
                    .remove("inherited_num_objects");
            })
        },
    ),
    (
        "int-vertices",
        "points_basic",
        2,
        "array-metadata",
        "0/vertices/zarr.json",
        |s| s.attrs("0/vertices", |a| a["dtype"] = json!("int32")),
    ),
    (
        "vertex-encoding",
        "points_basic",
        2,
        "array-metadata",
        "0/vertices/zarr.json",
        |s| s.attrs("0/vertices", |a| a["encoding"] = json!("lz77")),
    ),
    (
        "links-delta",
        "graph_basic",
        2,
        "array-metadata",
        "0/links/0/zarr.json",
        |s| s.attrs("0/links/0", |a| a["level_delta"] = json!(1)),
    ),
];
