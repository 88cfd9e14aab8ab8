//! Fragment attributes carried to the coarse levels of a pyramid (`zv_format::pyramid`): zv
//! stores one value per object on each of its fragments, so every fragment of every coarse
//! level holds its object's value, numeric and categorical, through sparse steps (dropped
//! objects have no fragments) and chunk-scale changes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeMap;
use std::sync::Arc;

use zv_core::data_type::DataType;
use zv_core::store::Store;
use zv_format::document::{Attribute, AttributeValues};
use zv_format::layout::attributes::AttributeRows;
use zv_format::pyramid::{build_pyramid, PyramidOptions, Step};
use zv_format::writer::{WriterOptions, ZvWriter};
use zv_format::{Geometry, ZvStore};
use zv_store_mem::MemoryStore;

const OBJECTS: usize = 24;

/// Object `o`'s weight and kind.
fn weight(o: usize) -> f64 {
    o as f64 * 1.5 - 3.0
}

fn kind(o: usize) -> String {
    ["axon", "dendrite", "soma"][o % 3].to_owned()
}

/// Polylines zig-zagging over several chunks of 10 (so each object has many fragments).
fn store() -> Arc<dyn Store> {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut w = ZvWriter::create(
        store.clone(),
        WriterOptions::new(Geometry::Streamline, vec![10.0; 3]),
    )
    .unwrap();
    let lines: Vec<Vec<Vec<f64>>> = (0..OBJECTS)
        .map(|o| {
            (0..30)
                .map(|i| {
                    let t = i as f64;
                    vec![
                        t * 1.7 + o as f64,
                        (t * 0.9).sin() * 12.0 + 15.0,
                        o as f64 * 2.5,
                    ]
                })
                .collect()
        })
        .collect();
    w.add_polylines(&lines, &BTreeMap::new()).unwrap();
    let weights: Vec<f64> = (0..OBJECTS).map(weight).collect();
    let mut attrs = BTreeMap::new();
    attrs.insert(
        "weight".to_owned(),
        Attribute {
            values: AttributeValues::Numeric {
                rows: AttributeRows::from_f64s(DataType::Float32, 1, &weights).unwrap(),
                present: None,
            },
            channel_names: None,
        },
    );
    attrs.insert(
        "kind".to_owned(),
        Attribute {
            values: AttributeValues::Categorical((0..OBJECTS).map(|o| Some(kind(o))).collect()),
            channel_names: None,
        },
    );
    w.set_fragment_attributes(attrs);
    w.finish().unwrap();
    store
}

#[test]
fn every_coarse_fragment_holds_its_objects_values() {
    let store = store();
    let mut opts = PyramidOptions::new(vec![Step::new(2, 2), Step::new(2, 1)]);
    opts.chunk_scale = vec![2, 2];
    build_pyramid(store.clone(), &opts).unwrap();
    let report = zv_format::validate::validate(store.clone(), 5);
    assert!(
        report.is_valid(),
        "{:?}",
        report.errors().collect::<Vec<_>>()
    );
    let zv = ZvStore::open(store).unwrap();
    for l in 0..=2 {
        let level = zv.level(l).unwrap();
        let mut names = level.fragment_attribute_names().unwrap();
        names.sort();
        assert_eq!(names, ["kind", "weight"], "level {l}");
        let weight_info = level.fragment_attribute_info("weight").unwrap();
        let kind_info = level.fragment_attribute_info("kind").unwrap();
        let dictionary = kind_info.dictionary.clone().expect("kind is categorical");
        // each chunk's fragment rows
        let mut rows = BTreeMap::new();
        for key in level.chunk_keys().unwrap() {
            let n = level.chunk(&key).unwrap().unwrap().fragments.len() as u64;
            let w = level
                .fragment_attribute(&weight_info, &key, n)
                .unwrap()
                .unwrap();
            let k = level
                .fragment_attribute(&kind_info, &key, n)
                .unwrap()
                .unwrap();
            let k = dictionary.decode(&k).unwrap();
            rows.insert(key, (w, k));
        }
        let (mut kept, mut fragments) = (0, 0);
        for o in 0..OBJECTS {
            let object = level.object(o as u64).unwrap();
            if object.fragments.is_empty() {
                continue;
            }
            kept += 1;
            for (key, f) in object.fragments.iter() {
                let (w, k) = &rows[key];
                assert_eq!(
                    w.get_f64(f as usize, 0),
                    Some(weight(o)),
                    "level {l} object {o}"
                );
                assert_eq!(
                    k[f as usize].as_deref(),
                    Some(kind(o).as_str()),
                    "level {l} object {o}"
                );
                fragments += 1;
            }
        }
        let stored: usize = rows.values().map(|(w, _)| w.num_rows()).sum();
        assert_eq!(
            fragments, stored,
            "level {l}: every fragment belongs to an object"
        );
        // level 1 keeps half of the objects, level 2 all of those
        let want = if l == 0 { OBJECTS } else { OBJECTS / 2 };
        assert_eq!(kept, want, "level {l}");
    }
}
