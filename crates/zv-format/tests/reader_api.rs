//! The reader API on the reference fixtures: objects, groups, chunks, levels and bounding-box
//! queries answer what the fixtures' expected content says, box queries touch only the
//! intersecting chunks, and the tolerated quirks (legacy object-index containers, `__shard_*`
//! packs, mixed codecs, compact JSON, the identity object index) read to the same content.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{json, Value};
use zv_core::metadata::ExtensionMetadata;
use zv_core::store::Store;
use zv_format::blob::{join, Blobs};
use zv_format::layout::manifest::encode_stream;
use zv_format::metadata::{chunk_of, ChunkKey};
use zv_format::reader::ZvStore;
use zv_format::{dump, Level};
use zv_store_fs::FilesystemStore;
use zv_testkit::env::fixtures_dir;
use zv_testkit::store::CountingStore;

fn expected(name: &str) -> Value {
    serde_json::from_slice(
        &std::fs::read(fixtures_dir().join(format!("{name}.expected.json"))).unwrap(),
    )
    .unwrap()
}

fn open(name: &str) -> ZvStore {
    ZvStore::open_url(
        fixtures_dir()
            .join(format!("{name}.zarr"))
            .to_str()
            .unwrap(),
    )
    .unwrap()
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

fn rows_json(rows: &[Vec<f64>]) -> Value {
    json!(rows)
}

#[test]
fn objects_match_the_expected_content() {
    for name in [
        "points_basic",
        "streamlines_basic",
        "graph_basic",
        "skeleton_basic",
        "mesh_basic",
        "pyramid_points",
    ] {
        let store = open(name);
        let exp = expected(name);
        for &lid in store.level_ids() {
            let level = store.level(lid).unwrap();
            let want = &exp["levels"][lid.to_string()]["objects"];
            let Some(want) = want.as_array() else {
                continue;
            };
            let ids: Vec<u64> = (0..want.len() as u64).collect();
            let objects = level.objects(&ids).unwrap();
            for (o, w) in objects.iter().zip(want) {
                assert_eq!(
                    rows_json(&o.vertices.to_rows()),
                    w["vertices"],
                    "{name} L{lid} object {}",
                    o.id
                );
                if let Some(wa) = w.get("vertex_attributes").and_then(Value::as_object) {
                    for (attr, values) in wa {
                        let rows = &o.vertex_attributes[attr];
                        let got: Vec<Value> = (0..rows.num_rows())
                            .map(|r| rows.row_json(r).unwrap())
                            .collect();
                        assert_eq!(
                            &json!(got),
                            values,
                            "{name} object {} attribute {attr}",
                            o.id
                        );
                    }
                }
                match (&o.links, w.get("links")) {
                    (None, None) => {}
                    (Some(links), Some(wl)) => {
                        let mut got = links.clone();
                        if name == "mesh_basic" {
                            for l in &mut got {
                                let p = (0..l.len()).min_by_key(|&i| l[i]).unwrap();
                                l.rotate_left(p);
                            }
                        }
                        got.sort();
                        assert_eq!(json!(got), *wl, "{name} L{lid} object {} links", o.id);
                    }
                    (a, b) => panic!("{name} object {}: links {a:?} vs expected {b:?}", o.id),
                }
            }
        }
    }
}

#[test]
fn object_attributes_groups_and_group_queries() {
    let store = open("points_basic");
    let exp = expected("points_basic");
    let level = store.level(0).unwrap();
    let o = level.object(3).unwrap();
    for (name, attr) in exp["levels"]["0"]["object_attributes"].as_object().unwrap() {
        assert_eq!(
            o.attributes[name].as_ref().unwrap(),
            &attr["values"][3],
            "{name}"
        );
    }
    let groups = exp["levels"]["0"]["groups"].as_array().unwrap();
    for (g, members) in groups.iter().enumerate() {
        let objs = level.group_objects(g).unwrap();
        let ids: Vec<u64> = objs.iter().map(|o| o.id).collect();
        assert_eq!(json!(ids), *members);
    }
    assert!(level.group_objects(groups.len()).is_err());
    assert!(level.object(12).is_err());
    // present_mask: dropped objects have no attribute values
    let pyr = open("pyramid_points").level(2).unwrap();
    let mask = expected("pyramid_points")["levels"]["2"]["object_attributes"]["score"]
        ["present_mask"]
        .clone();
    for (i, m) in mask.as_array().unwrap().iter().enumerate() {
        let o = pyr.object(i as u64).unwrap();
        assert_eq!(
            o.attributes["score"].is_some(),
            m.as_u64() == Some(1),
            "object {i}"
        );
    }
}

#[test]
fn skeleton_parents_are_rebuilt_per_object() {
    let level = open("skeleton_basic").level(0).unwrap();
    let o = level.object(0).unwrap();
    let links = o.links.unwrap();
    // a tree: every vertex but the root has exactly one parent
    assert_eq!(links.len(), o.vertices.len() - 1);
    let children: BTreeSet<u64> = links.iter().map(|l| l[0]).collect();
    assert_eq!(children.len(), links.len());
    assert!(!children.contains(&0));
}

#[test]
fn chunks_and_levels() {
    let store = open("pyramid_points");
    let exp = expected("pyramid_points");
    assert_eq!(json!(store.level_ids()), exp["level_ids"]);
    for &lid in store.level_ids() {
        let level = store.level(lid).unwrap();
        let we = &exp["levels"][lid.to_string()];
        let keys: Vec<String> = level
            .chunk_keys()
            .unwrap()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(json!(keys), we["chunk_keys"]);
        for k in level.chunk_keys().unwrap() {
            let c = level.chunk(&k).unwrap().unwrap();
            assert_eq!(
                rows_json(&c.vertices.rows()),
                we["chunks"][k.to_string()]["vertices"]
            );
        }
        assert_eq!(
            json!(level.chunk_shape()),
            we["level_metadata"]["effective_chunk_shape"]
        );
    }
    assert!(store.level(7).is_err());
}

/// All points of a level (brute force), filtered by an inclusive box.
fn brute_force(level: &Level, lo: &[f64], hi: &[f64]) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    for k in level.chunk_keys().unwrap() {
        let v = level.vertices(&k).unwrap().unwrap();
        for (r, p) in v.rows().iter().enumerate() {
            if p.iter()
                .zip(lo.iter().zip(hi))
                .all(|(x, (a, b))| a <= x && x <= b)
            {
                out.push((k.to_string(), r as u64));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn box_queries_read_only_intersecting_chunks() {
    for (name, lo, hi, attrs) in [
        ("points_basic", [0.0, 0.0, 0.0], [40.0, 40.0, 60.0], vec![]),
        (
            "points_basic",
            [10.0, 55.0, 0.0],
            [99.0, 99.0, 30.0],
            vec!["intensity", "normal"],
        ),
        ("points_binned", [0.0, 0.0, 0.0], [30.0, 19.0, 45.0], vec![]),
        (
            "points_binned",
            [41.0, 41.0, 41.0],
            [80.0, 80.0, 80.0],
            vec!["intensity"],
        ),
        (
            "graph_basic",
            [20.0, 20.0, 20.0],
            [45.0, 60.0, 49.0],
            vec![],
        ),
    ] {
        let inner: Arc<dyn Store> =
            Arc::new(FilesystemStore::new(fixtures_dir().join(format!("{name}.zarr"))).unwrap());
        let counting = Arc::new(CountingStore::new(inner));
        let store = ZvStore::open(counting.clone()).unwrap();
        let level = store.level(0).unwrap();
        let keys = level.chunk_keys().unwrap();
        counting.reset();
        let hits = level.query_box_with(&lo, &hi, &attrs).unwrap();
        // the chunks the box intersects, by the floor rule
        let cs = level.chunk_shape();
        let (clo, chi) = (chunk_of(&lo, &cs), chunk_of(&hi, &cs));
        let inside: Vec<&ChunkKey> = keys
            .iter()
            .filter(|k| {
                k.coords()
                    .iter()
                    .zip(clo.iter().zip(&chi))
                    .all(|(c, (a, b))| a <= c && c <= b)
            })
            .collect();
        assert!(
            !inside.is_empty() && inside.len() < keys.len(),
            "{name}: the box should cut the store"
        );
        let binned = name == "points_binned";
        let mut arrays = vec!["vertices".to_owned()];
        if binned {
            arrays.push("vertex_fragments".into());
        }
        arrays.extend(attrs.iter().map(|a| format!("vertex_attributes/{a}")));
        let mut want: Vec<String> = Vec::new();
        for k in &inside {
            for a in &arrays {
                want.push(format!("0/{a}/{k}/zarr.json"));
                want.push(format!("0/{a}/{k}/c/0"));
            }
        }
        want.sort();
        let reads = counting.reads();
        // group documents of the arrays (how attributes are typed) are not chunk data
        let groups: Vec<String> = arrays.iter().map(|a| format!("0/{a}/zarr.json")).collect();
        let (meta, mut got): (Vec<String>, Vec<String>) =
            reads.into_iter().partition(|k| groups.contains(k));
        got.sort();
        assert_eq!(got, want, "{name}: chunk blobs read by the box query");
        assert_eq!(got.len(), 2 * inside.len() * arrays.len());
        assert!(
            meta.len() <= arrays.len(),
            "{name}: group documents read more than once: {meta:?}"
        );
        // and the hits are exactly the points in the box
        let mut hit_rows: Vec<(String, u64)> =
            hits.rows.iter().map(|(k, r)| (k.to_string(), r)).collect();
        hit_rows.sort();
        assert_eq!(hit_rows, brute_force(&level, &lo, &hi), "{name}: hits");
        for a in &attrs {
            assert_eq!(hits.vertex_attributes[*a].num_rows(), hits.rows.len());
        }
    }
}

#[test]
fn box_query_bounds_are_inclusive_and_checked() {
    let level = open("points_basic").level(0).unwrap();
    let all = level.query_box(&[-1e9; 3], &[1e9; 3]).unwrap();
    let p = all.positions[0].to_vec();
    let exact = level.query_box(&p, &p).unwrap();
    assert!(
        exact.positions.contains(&p),
        "a point on the box boundary is inside"
    );
    assert!(level.query_box(&[0.0, 0.0], &[1.0, 1.0]).is_err());
    assert!(level.query_box(&[5.0, 0.0, 0.0], &[1.0, 1.0, 1.0]).is_err());
    assert!(level
        .query_box(&[f64::NAN, 0.0, 0.0], &[1.0, 1.0, 1.0])
        .is_err());
    assert_eq!(all.positions.len(), 300);
}

// ---------------------------------------------------------------------------------------------
// Quirks: transformed copies of fixtures read to the same logical content.

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
            let mut perm = std::fs::metadata(&target).unwrap().permissions();
            #[allow(clippy::permissions_set_readonly_false)]
            perm.set_readonly(false);
            std::fs::set_permissions(&target, perm).unwrap();
        }
    }
}

fn copy_fixture(name: &str, dir: &Path) -> PathBuf {
    let to = dir.join(format!("{name}.zarr"));
    copy_dir(&fixtures_dir().join(format!("{name}.zarr")), &to);
    to
}

fn logical(store: &ZvStore) -> Value {
    let mut d = dump::dump(store).unwrap();
    let m = d.as_object_mut().unwrap();
    m.remove("root_attributes");
    m.remove("root_group_attributes_tree");
    for (_, l) in m["levels"].as_object_mut().unwrap() {
        let l = l.as_object_mut().unwrap();
        for k in [
            "level_attributes",
            "group_attributes_tree",
            "array_chunk_keys",
            "chunk_keys",
            "chunks",
            "links",
            "link_attributes",
            "cross_chunk_links",
            "cross_chunk_link_attributes",
            "object_index",
            "vertex_attribute_info",
        ] {
            l.remove(k);
        }
        if let Some(oa) = l
            .get_mut("object_attributes")
            .and_then(Value::as_object_mut)
        {
            for (_, a) in oa {
                a.as_object_mut().unwrap().remove("array_attributes");
            }
        }
    }
    d
}

fn blobs_of(path: &Path) -> Blobs {
    Blobs::new(Arc::new(FilesystemStore::new(path).unwrap()))
}

#[test]
fn legacy_object_index_containers_read_the_same() {
    let dir = tempfile::tempdir().unwrap();
    for (variant, with_offsets) in [("data+offsets", true), ("data", false)] {
        let path = copy_fixture("points_basic", &dir.path().join(variant));
        let original = logical(&ZvStore::open_url(path.to_str().unwrap()).unwrap());
        let store = ZvStore::open_url(path.to_str().unwrap()).unwrap();
        let index = store.level(0).unwrap().object_index().unwrap().unwrap();
        let (data, offsets) = encode_stream(&index.manifests, index.sid_ndim).unwrap();
        std::fs::remove_dir_all(path.join("0/object_index/manifests")).unwrap();
        let blobs = blobs_of(&path);
        let codecs = vec![ExtensionMetadata::new("bytes")];
        blobs
            .write_bytes("0/object_index/data", &data, &codecs)
            .unwrap();
        if with_offsets {
            blobs
                .write_bytes("0/object_index/offsets", &offsets, &codecs)
                .unwrap();
        }
        let mut attrs = index.attributes.clone();
        attrs.remove("layout");
        blobs.write_group("0/object_index", attrs).unwrap();
        let reread = ZvStore::open_url(path.to_str().unwrap()).unwrap();
        assert_eq!(logical(&reread), original, "{variant}");
    }
}

#[test]
fn shard_packs_mixed_codecs_and_compact_json_read_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let path = copy_fixture("graph_basic", dir.path());
    let original = logical(&ZvStore::open_url(path.to_str().unwrap()).unwrap());
    let blobs = blobs_of(&path);
    // pack every vertices blob into one __shard_ array (as the reference's shard_store does)
    let mut packed = Vec::new();
    let mut index = serde_json::Map::new();
    for name in blobs.blob_names("0/vertices").unwrap() {
        let bytes = blobs
            .read_bytes(&join(&["0/vertices", &name]))
            .unwrap()
            .unwrap();
        index.insert(name.clone(), json!([packed.len(), bytes.len()]));
        packed.extend_from_slice(&bytes);
        std::fs::remove_dir_all(path.join("0/vertices").join(&name)).unwrap();
    }
    blobs
        .write_bytes(
            "0/vertices/__shard_000000",
            &packed,
            &[ExtensionMetadata::new("bytes")],
        )
        .unwrap();
    let meta_path = path.join("0/vertices/__shard_000000/zarr.json");
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&meta_path).unwrap()).unwrap();
    doc["attributes"]["shard_index"] = Value::Object(index);
    std::fs::write(&meta_path, serde_json::to_vec(&doc).unwrap()).unwrap();
    // re-encode other blobs with other codecs
    let recode = |array: &str, codecs: Value| {
        let codecs: Vec<ExtensionMetadata> = serde_json::from_value(codecs).unwrap();
        for name in blobs.blob_names(array).unwrap() {
            let p = join(&[array, &name]);
            let bytes = blobs.read_bytes(&p).unwrap().unwrap();
            blobs.write_bytes(&p, &bytes, &codecs).unwrap();
        }
    };
    recode(
        "0/vertex_fragments",
        json!([{"name": "bytes"}, {"name": "gzip", "configuration": {"level": 5}}]),
    );
    recode(
        "0/links/0",
        json!([{"name": "bytes"}, {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 5, "shuffle": "bitshuffle", "typesize": 8}}]),
    );
    recode(
        "0/vertex_attributes/diameter",
        json!([{"name": "bytes"}, {"name": "zstd", "configuration": {"level": 3, "checksum": true}}, {"name": "crc32c"}]),
    );
    // compact JSON for every group document
    for entry in walk(&path) {
        if entry.file_name().and_then(|n| n.to_str()) == Some("zarr.json") {
            let v: Value = serde_json::from_slice(&std::fs::read(&entry).unwrap()).unwrap();
            std::fs::write(&entry, serde_json::to_vec(&v).unwrap()).unwrap();
        }
    }
    let reread = ZvStore::open_url(path.to_str().unwrap()).unwrap();
    assert_eq!(logical(&reread), original);
    // the object API reads through the packs too
    let o = reread.level(0).unwrap().object(0).unwrap();
    assert!(!o.vertices.is_empty());
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            out.extend(walk(&e.path()));
        } else {
            out.push(e.path());
        }
    }
    out
}

#[test]
fn identity_object_index_in_a_single_chunk_store() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("identity.zarr");
    let blobs = blobs_of(&path);
    let root = json!({"zarr_vectors": {"zv_version": "0.7.0", "chunk_shape": [100.0, 100.0], "bounds": [[0, 0], [100, 100]],
        "geometry_types": ["streamline"], "object_index_convention": "identity"},
        "multiscales": [{"version": "0.4", "name": "default", "axes": [{"name": "x", "type": "space"}, {"name": "y", "type": "space"}],
        "datasets": [{"path": "0", "coordinateTransformations": [{"type": "scale", "scale": [1.0, 1.0]}]}], "metadata": {"format": "zarr_vectors"}}]});
    blobs
        .write_group("", root.as_object().unwrap().clone())
        .unwrap();
    blobs.write_group("0", json!({"zarr_vectors_level": {"level": 0, "vertex_count": 5, "arrays_present": ["vertices"]}}).as_object().unwrap().clone()).unwrap();
    blobs
        .write_group(
            "0/vertices",
            json!({"zv_array": "vertices", "dtype": "float32", "encoding": "raw"})
                .as_object()
                .unwrap()
                .clone(),
        )
        .unwrap();
    let verts: Vec<u8> = [1.0f32, 1.0, 2.0, 2.0, 3.0, 3.0, 10.0, 10.0, 11.0, 11.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let codecs = vec![ExtensionMetadata::new("bytes")];
    blobs
        .write_bytes("0/vertices/0.0", &verts, &codecs)
        .unwrap();
    let frags = zv_format::layout::fragment_index::FragmentIndex::consecutive(&[3, 2]).unwrap();
    blobs
        .write_group(
            "0/vertex_fragments",
            json!({"zv_array": "vertex_fragments", "encoding": "fragment_index_v1"})
                .as_object()
                .unwrap()
                .clone(),
        )
        .unwrap();
    blobs
        .write_bytes("0/vertex_fragments/0.0", &frags.encode(), &codecs)
        .unwrap();
    let store = ZvStore::open_url(path.to_str().unwrap()).unwrap();
    let level = store.level(0).unwrap();
    let o = level.object(1).unwrap();
    assert_eq!(o.vertices, vec![vec![10.0, 10.0], vec![11.0, 11.0]]);
    assert_eq!(o.links, Some(vec![vec![0, 1]]));
    assert_eq!(level.object_index().unwrap().unwrap().num_objects, 2);
    // two chunks: the identity convention is refused
    blobs
        .write_bytes("0/vertices/0.1", &verts[..8], &codecs)
        .unwrap();
    blobs
        .write_bytes(
            "0/vertex_fragments/0.1",
            &zv_format::layout::fragment_index::FragmentIndex::consecutive(&[1])
                .unwrap()
                .encode(),
            &codecs,
        )
        .unwrap();
    let err = ZvStore::open_url(path.to_str().unwrap())
        .unwrap()
        .level(0)
        .unwrap()
        .object_index()
        .unwrap_err();
    assert!(err.to_string().contains("identity"), "{err}");
}

#[test]
fn version_and_draco_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = copy_fixture("points_basic", dir.path());
    let root = path.join("zarr.json");
    let text = std::fs::read_to_string(&root).unwrap();
    std::fs::write(&root, text.replace("\"0.7.0\"", "\"0.8.0\"")).unwrap();
    let err = ZvStore::open_url(path.to_str().unwrap())
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "`zarr.json`: store is ZV 0.8.0; this build reads 0.7.x and 0.9.x"
    );
    std::fs::write(&root, text).unwrap();
    let blobs = blobs_of(&path);
    blobs
        .write_bytes(
            "0/vertices/0.0.0",
            b"DRACO\x02\x02\x01\x01\x00",
            &[ExtensionMetadata::new("bytes")],
        )
        .unwrap();
    let store = ZvStore::open_url(path.to_str().unwrap()).unwrap();
    let err = store
        .level(0)
        .unwrap()
        .vertices(&"0.0.0".parse().unwrap())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("Draco") && err.contains("0/vertices/0.0.0"),
        "{err}"
    );
}

#[test]
fn reader_works_on_any_store_plugin() {
    // copy a fixture into the memory store and read it there
    let mem: Arc<dyn Store> = Arc::new(zv_store_mem::MemoryStore::new());
    let fs = FilesystemStore::new(fixtures_dir().join("mesh_basic.zarr")).unwrap();
    use zv_core::store::{ListableStore, ReadableStore};
    for k in fs.list().unwrap() {
        mem.set(&k, fs.get(&k).unwrap().unwrap()).unwrap();
    }
    let from_mem = ZvStore::open(mem).unwrap();
    assert_eq!(logical(&from_mem), logical(&open("mesh_basic")));
    let _ = f(&json!(1.0));
}
