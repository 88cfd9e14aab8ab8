//! Defects of levels 3 to 5: blobs, references, placement, pyramids, and the warnings.

use serde_json::json;
use zv_format::layout::fragment_index::FragmentIndex;
use zv_format::layout::manifest::BlockFragments;

use crate::store::{get_f32, set_f32};
use crate::Defect;

/// The defects of levels 3 to 5 and the warning-only defects.
pub(crate) const DEFECTS: &[Defect] = &[
    (
        "vertices-truncated",
        "points_basic",
        3,
        "vertices-decode",
        "0/vertices/0.0.0",
        |s| {
            s.edit_blob("0/vertices/0.0.0", |b| {
                b.pop();
            })
        },
    ),
    (
        "fragment-magic",
        "points_basic",
        3,
        "fragment-index",
        "0/vertex_fragments/0.0.0",
        |s| s.edit_blob("0/vertex_fragments/0.0.0", |b| b[0] ^= 0xff),
    ),
    (
        "fragment-past-rows",
        "points_basic",
        3,
        "fragment-index",
        "0/vertex_fragments/0.0.0",
        |s| s.edit_blob("0/vertices/0.0.0", |b| b.truncate(b.len() - 12)),
    ),
    (
        "fragments-missing",
        "points_basic",
        3,
        "missing-blob",
        "0/vertex_fragments/0.0.0",
        |s| s.remove("0/vertex_fragments/0.0.0"),
    ),
    (
        "attribute-missing",
        "points_binned",
        3,
        "missing-blob",
        "0/vertex_attributes/intensity/0.0.0",
        |s| s.remove("0/vertex_attributes/intensity/0.0.0"),
    ),
    (
        "orphan",
        "points_binned",
        3,
        "orphan-blob",
        "0/vertex_fragments/1.1.1",
        |s| s.remove("0/vertices/1.1.1"),
    ),
    (
        "nan",
        "points_basic",
        3,
        "non-finite",
        "0/vertices/0.0.0",
        |s| s.edit_blob("0/vertices/0.0.0", |b| set_f32(b, 1, f32::NAN)),
    ),
    (
        "vertex-count",
        "points_basic",
        3,
        "vertex-count",
        "0/zarr.json",
        |s| {
            s.attrs("0", |a| {
                a["zarr_vectors_level"]["vertex_count"] = json!(999)
            })
        },
    ),
    (
        "attribute-short",
        "points_binned",
        3,
        "vertex-attribute",
        "0/vertex_attributes/intensity/0.0.0",
        |s| {
            s.edit_blob("0/vertex_attributes/intensity/0.0.0", |b| {
                b.truncate(b.len() - 4)
            })
        },
    ),
    (
        "link-row-out-of-chunk",
        "graph_basic",
        3,
        "link-rows",
        "0/links/0/0.0.0",
        |s| {
            s.edit_blob("0/links/0/0.0.0", |b| {
                b[..8].copy_from_slice(&1000i64.to_le_bytes())
            })
        },
    ),
    (
        "link-fragments-magic",
        "graph_basic",
        3,
        "link-fragments",
        "0/link_fragments/0.0.0",
        |s| s.edit_blob("0/link_fragments/0.0.0", |b| b[0] ^= 0xff),
    ),
    (
        "link-attribute-short",
        "graph_basic",
        3,
        "link-attribute",
        "0/link_attributes/weight/0/0.0.0",
        |s| {
            s.edit_blob("0/link_attributes/weight/0/0.0.0", |b| {
                b.truncate(b.len() - 4)
            })
        },
    ),
    (
        "too-many-bin-fragments",
        "points_binned",
        3,
        "bins-per-chunk",
        "0/vertex_fragments/0.0.0",
        |s| {
            let rows = s.blob("0/vertices/0.0.0").len() as u64 / 12;
            let mut counts = vec![0u64; 9];
            counts[0] = rows;
            s.set_blob(
                "0/vertex_fragments/0.0.0",
                &FragmentIndex::consecutive(&counts).unwrap().encode(),
            );
        },
    ),
    (
        "manifest-trailing",
        "points_basic",
        3,
        "object-index",
        "0/object_index",
        |s| {
            s.edit_manifests(|_| {});
            s.edit_blob("0/object_index/data", |b| b.extend_from_slice(&[0; 3]));
        },
    ),
    (
        "manifest-fragment",
        "points_basic",
        3,
        "manifest-references",
        "0/object_index",
        |s| s.edit_manifests(|ms| ms[0].blocks[0].fragments = BlockFragments::Single(99)),
    ),
    (
        "manifest-chunk",
        "points_basic",
        3,
        "manifest-references",
        "0/object_index",
        |s| s.edit_manifests(|ms| ms[0].blocks[0].chunk = vec![9, 9, 9].into()),
    ),
    (
        "shared-fragment",
        "points_basic",
        3,
        "shared-fragments",
        "0/object_index",
        |s| s.edit_manifests(|ms| ms[1] = ms[0].clone()),
    ),
    (
        "ccl-length",
        "graph_basic",
        3,
        "cross-chunk-links",
        "0/cross_chunk_links/0/data",
        |s| s.edit_blob("0/cross_chunk_links/0/data", |b| b.truncate(b.len() - 8)),
    ),
    (
        "ccl-chunk",
        "graph_basic",
        3,
        "cross-chunk-endpoints",
        "0/cross_chunk_links/0/data",
        |s| {
            s.edit_blob("0/cross_chunk_links/0/data", |b| {
                b[..8].copy_from_slice(&9i64.to_le_bytes())
            })
        },
    ),
    (
        "ccl-row",
        "graph_basic",
        3,
        "cross-chunk-endpoints",
        "0/cross_chunk_links/0/data",
        |s| {
            s.edit_blob("0/cross_chunk_links/0/data", |b| {
                b[24..32].copy_from_slice(&5000i64.to_le_bytes())
            })
        },
    ),
    (
        "object-attribute-rows",
        "graph_basic",
        3,
        "object-attribute",
        "0/object_attributes/volume/data",
        |s| s.edit_blob("0/object_attributes/volume/data", |b| b.truncate(4)),
    ),
    ("num-groups", "points_basic", 3, "groups", "0/groups", |s| {
        s.attrs("0/groups", |a| a["num_groups"] = json!(9))
    }),
    (
        "group-member",
        "points_basic",
        3,
        "groups",
        "0/groups",
        |s| {
            s.edit_blob("0/groups/data", |b| {
                b[..8].copy_from_slice(&500i64.to_le_bytes())
            })
        },
    ),
    (
        "group-attribute-rows",
        "points_basic",
        3,
        "group-attribute",
        "0/group_attributes/code/data",
        |s| s.edit_blob("0/group_attributes/code/data", |b| b.truncate(4)),
    ),
    (
        "cross-level-blob",
        "pyramid_points",
        3,
        "cross-level-links",
        "1/links/-1/0.0.0",
        |s| s.edit_blob("1/links/-1/0.0.0", |b| b.truncate(b.len() - 8)),
    ),
    (
        "cross-level-target",
        "pyramid_points",
        3,
        "cross-level-links",
        "2/links/-1/0.0.0",
        |s| {
            s.edit_blob("2/links/-1/0.0.0", |b| {
                let n = b.len();
                b[n - 8..].copy_from_slice(&777i64.to_le_bytes());
            })
        },
    ),
    (
        "graph-implicit",
        "graph_basic",
        4,
        "links-convention",
        "zarr.json",
        |s| {
            s.attrs("", |a| {
                a["zarr_vectors"]["links_convention"] = json!("implicit_sequential")
            })
        },
    ),
    (
        "mesh-width-2",
        "mesh_basic",
        4,
        "link-width",
        "0/links/0/zarr.json",
        |s| {
            s.attrs("0/links/0", |a| a["link_width"] = json!(2));
            s.attrs("0/cross_chunk_links/0", |a| a["link_width"] = json!(2));
            for e in std::fs::read_dir(s.path("0/links/0")).unwrap() {
                let name = e.unwrap().file_name().into_string().unwrap();
                if name != "zarr.json" {
                    let node = format!("0/links/0/{name}");
                    s.edit_blob(&node, |b| {
                        let keep = b.len() / 48 * 48;
                        b.truncate(keep);
                    });
                }
            }
            s.edit_blob("0/cross_chunk_links/0/data", |b| {
                let keep = b.len() / 96 * 96;
                b.truncate(keep);
            });
            let n = s.blob("0/cross_chunk_links/0/data").len() / 64;
            s.attrs("0/cross_chunk_links/0", |a| a["num_links"] = json!(n));
        },
    ),
    (
        "vertex-outside-chunk",
        "points_basic",
        4,
        "vertex-chunk",
        "0/vertices/0.0.0",
        |s| {
            s.edit_blob("0/vertices/0.0.0", |b| {
                let x = get_f32(b, 0);
                set_f32(b, 0, x + 50.0);
            })
        },
    ),
    (
        "vertex-outside-bin",
        "points_binned",
        4,
        "vertex-bin",
        "0/vertices/0.0.0",
        |s| {
            s.edit_blob("0/vertices/0.0.0", |b| {
                let x = get_f32(b, 0);
                set_f32(b, 0, (x + 20.0) % 40.0);
            })
        },
    ),
    (
        "bounds-shrunk",
        "points_basic",
        4,
        "vertex-bounds",
        "0/vertices/1.1.1",
        |s| {
            s.attrs("", |a| {
                a["zarr_vectors"]["bounds"][1] = json!([60.0, 60.0, 60.0])
            })
        },
    ),
    (
        "levels-gap",
        "pyramid_points",
        5,
        "levels-contiguous",
        "3/zarr.json",
        |s| {
            std::fs::rename(s.path("2"), s.path("3")).unwrap();
            s.attrs("3", |a| a["zarr_vectors_level"]["level"] = json!(3));
            s.attrs("", |a| {
                a["multiscales"][0]["datasets"][2]["path"] = json!("3")
            });
        },
    ),
    (
        "level-chunk-shape",
        "pyramid_points",
        5,
        "level-chunk-shape",
        "2/zarr.json",
        |s| {
            s.attrs("2", |a| {
                a["zarr_vectors_level"]["chunk_shape"] = json!([75.0, 75.0, 75.0])
            })
        },
    ),
    (
        "level-bin-shape",
        "pyramid_points",
        5,
        "level-bin-shape",
        "1/zarr.json",
        |s| {
            s.attrs("", |a| {
                a["multiscales"][0]["datasets"][1]["coordinateTransformations"][1]["translation"] =
                    json!([15.0, 15.0, 15.0])
            })
        },
    ),
    (
        "inherited-mismatch",
        "pyramid_points",
        5,
        "preserved-ids",
        "1/zarr.json",
        |s| {
            s.attrs("1", |a| {
                a["zarr_vectors_level"]["inherited_num_objects"] = json!(15)
            })
        },
    ),
    (
        "no-multiscale-token",
        "pyramid_points",
        5,
        "multiscale-links",
        "zarr.json",
        |s| {
            s.attrs("", |a| {
                a["zarr_vectors"]["format_capabilities"] =
                    json!(["preserved_object_ids", "shared_fragments"])
            })
        },
    ),
    (
        "unknown-array",
        "points_basic",
        1,
        "unknown-array",
        "0/extras",
        |s| s.set_blob("0/extras", &[1, 2]),
    ),
    (
        "unknown-capability",
        "points_basic",
        2,
        "capabilities",
        "zarr.json",
        |s| {
            s.attrs("", |a| {
                a["zarr_vectors"]["format_capabilities"] = json!(["teleportation"])
            })
        },
    ),
    (
        "point-cloud-links",
        "points_basic",
        4,
        "point-cloud-links",
        "0/links/0/zarr.json",
        |s| {
            std::fs::create_dir_all(s.path("0/links/0")).unwrap();
            std::fs::write(s.path("0/links/0/zarr.json"), r#"{"zarr_format":3,"node_type":"group","attributes":{"zv_array":"links","dtype":"int64","link_width":2,"level_delta":0}}"#).unwrap();
        },
    ),
    (
        "duplicate-axis",
        "points_basic",
        2,
        "axes",
        "zarr.json",
        |s| s.attrs("", |a| a["multiscales"][0]["axes"][1]["name"] = json!("x")),
    ),
    (
        "multiscale-token-without-arrays",
        "points_basic",
        5,
        "multiscale-token",
        "zarr.json",
        |s| {
            s.attrs("", |a| {
                a["zarr_vectors"]["format_capabilities"] = json!(["multiscale_links"])
            })
        },
    ),
    (
        "coarse-level-grows",
        "pyramid_points",
        5,
        "level-vertex-counts",
        "2/zarr.json",
        // level 2's one chunk repeated 9 times: 72 vertices, more than level 1's 64
        |s| s.edit_blob("2/vertices/0.0.0", |b| *b = b.repeat(9)),
    ),
    (
        "fragment-attribute-rows",
        "zv:graph_attributes",
        3,
        "fragment-attribute",
        "0/fragment_attributes/tag/0.0.0",
        |s| {
            s.edit_blob("0/fragment_attributes/tag/0.0.0", |b| {
                b.extend_from_slice(&[0; 2]) // no whole number of int32 rows
            })
        },
    ),
    (
        "cross-chunk-attribute-rows",
        "zv:graph_attributes",
        3,
        "cross-chunk-attribute",
        "0/cross_chunk_link_attributes/weight/0",
        |s| {
            s.edit_blob("0/cross_chunk_link_attributes/weight/0/data", |b| {
                b.truncate(b.len() - 4)
            })
        },
    ),
    (
        "grid-origin-outside",
        "zv09:graph_09",
        1,
        "chunk-grid",
        "0/vertices/zarr.json",
        // chunk 0.0.0 now lies before the grid
        |s| s.attrs("0/vertices", |a| a["chunk_grid_origin"] = json!([1, 0, 0])),
    ),
    (
        "segment-name",
        "zv09:graph_09",
        1,
        "link-segments",
        "0/links/0/+1.x.0/zarr.json",
        |s| {
            std::fs::rename(s.path("0/links/0/+1.0.0"), s.path("0/links/0/+1.x.0")).unwrap();
        },
    ),
    (
        "listed-cell-deleted",
        "zv09:graph_09",
        3,
        "nonempty-chunks",
        "0/vertex_fragments/c/1/0/0",
        |s| s.remove("0/vertex_fragments/c/1/0/0"),
    ),
    (
        "cell-not-listed",
        "zv09:graph_09",
        3,
        "nonempty-chunks",
        "0/links/0/0.0.0/c/0/0/0",
        |s| {
            s.attrs("0/links/0/0.0.0", |a| {
                let keys = a["nonempty_chunks"].as_array_mut().unwrap();
                keys.retain(|k| k != "0.0.0");
            })
        },
    ),
    (
        "link-attributes-cross-level-09",
        "zv09:graph_09",
        1,
        "v09-unread",
        "0/link_attributes/weight/+1/zarr.json",
        |s| {
            std::fs::create_dir_all(s.path("0/link_attributes/weight/+1")).unwrap();
            let group = r#"{"zarr_format": 3, "node_type": "group", "attributes":
                {"zv_array": "link_attribute_family", "name": "weight", "level_delta": 1}}"#;
            std::fs::write(s.path("0/link_attributes/weight/+1/zarr.json"), group).unwrap();
        },
    ),
    (
        "link-attribute-cell-deleted-09",
        "zv09:graph_09",
        3,
        "missing-blob",
        "0/link_attributes/weight/0/0.0.0/c/0/0/0",
        |s| s.remove("0/link_attributes/weight/0/0.0.0/c/0/0/0"),
    ),
    (
        "cross-chunk-attribute-cell-deleted-09",
        "zv09:graph_09",
        3,
        "cross-chunk-attribute",
        "0/link_attributes/weight/0",
        |s| s.remove("0/link_attributes/weight/0/+1.0.0/c/0/0/0"),
    ),
];
