//! Property round trips: random point clouds written by zv, exported as PLY (every encoding),
//! CSV and OBJ, import back with the same content.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeMap;
use std::sync::Arc;

use proptest::prelude::*;
use zv_core::data_type::DataType;
use zv_format::document::{Attribute, AttributeValues, GeometryDocument};
use zv_format::layout::attributes::AttributeRows;
use zv_format::writer::{WriterOptions, ZvWriter};
use zv_format::{Geometry, ZvStore};
use zv_io::{ExportOptions, Format, ImportOptions, PlyEncoding};

fn store_of(points: &[[f32; 3]], red: &[u8], dt: DataType) -> ZvStore {
    let store: Arc<dyn zv_core::store::Store> = Arc::new(zv_store_mem::MemoryStore::new());
    let mut o = WriterOptions::new(Geometry::PointCloud, vec![16.0; 3]);
    o.vertex_type = dt;
    let mut w = ZvWriter::create(store.clone(), o).unwrap();
    let flat: Vec<f64> = points.iter().flatten().map(|&v| f64::from(v)).collect();
    let attrs = BTreeMap::from([(
        "red".to_owned(),
        Attribute {
            values: AttributeValues::Numeric {
                rows: AttributeRows::from_le(DataType::UInt8, 1, red.to_vec()).unwrap(),
                present: None,
            },
            channel_names: None,
        },
    )]);
    w.add_vertices_flat(&flat, None, &attrs).unwrap();
    w.finish().unwrap();
    ZvStore::open(store).unwrap()
}

fn level0(store: &ZvStore) -> GeometryDocument {
    GeometryDocument::from_value(&zv_format::export::export_geometry(store).unwrap()).unwrap()
}

/// Positions as bit patterns, each with its `red` (when the store has it), sorted.
fn rows(store: &ZvStore) -> Vec<Vec<u64>> {
    let doc = level0(store);
    let red = doc.vertex_attributes.get("red").map(|a| match &a.values {
        AttributeValues::Numeric { rows, .. } => rows.clone(),
        _ => panic!(),
    });
    let mut out: Vec<Vec<u64>> = doc
        .vertices
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let mut r: Vec<u64> = p.iter().map(|v| v.to_bits()).collect();
            if let Some(red) = &red {
                r.push(red.get_f64(i, 0).unwrap().to_bits());
            }
            r
        })
        .collect();
    out.sort();
    out
}

/// `store` exported as `format` and imported back (as `vertex_type`, when given).
fn through(
    store: &ZvStore,
    format: Format,
    enc: PlyEncoding,
    batch: usize,
    vertex_type: Option<DataType>,
) -> ZvStore {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("f.{}", format.name()));
    let mut f = std::fs::File::create(&path).unwrap();
    zv_io::export(
        store,
        format,
        &mut f,
        "f",
        &ExportOptions {
            ply_encoding: enc,
            ..Default::default()
        },
    )
    .unwrap();
    drop(f);
    let back = Arc::new(zv_store_mem::MemoryStore::new());
    let opts = ImportOptions {
        batch,
        vertex_type,
        ..Default::default()
    };
    zv_io::import_file(&path, format, back.clone(), &opts).unwrap();
    ZvStore::open(back).unwrap()
}

fn coord() -> impl Strategy<Value = f32> {
    prop_oneof![
        -1000.0f32..1000.0,
        (-8i32..8).prop_map(|i| i as f32 * 0.125),
        Just(-0.0f32)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
    #[test]
    fn point_clouds_round_trip_through_ply_csv_and_obj(
        pts in prop::collection::vec(([coord(), coord(), coord()], any::<u8>()), 1..60),
        enc in 0usize..3,
        batch in 1usize..20,
        wide in any::<bool>(),
    ) {
        let points: Vec<[f32; 3]> = pts.iter().map(|p| p.0).collect();
        let red: Vec<u8> = pts.iter().map(|p| p.1).collect();
        let dt = if wide { DataType::Float64 } else { DataType::Float32 };
        let store = store_of(&points, &red, dt);
        let want = rows(&store);
        let enc = [PlyEncoding::Ascii, PlyEncoding::BinaryLittleEndian, PlyEncoding::BinaryBigEndian][enc];
        prop_assert_eq!(rows(&through(&store, Format::Ply, enc, batch, None)), want.clone());
        // CSV and OBJ positions are float64 unless told: float32 text reads back as float32
        prop_assert_eq!(rows(&through(&store, Format::Csv, enc, batch, Some(dt))), want.clone());
        let positions: Vec<Vec<u64>> = {
            let mut p: Vec<Vec<u64>> = want.iter().map(|r| r[..3].to_vec()).collect();
            p.sort();
            p
        };
        prop_assert_eq!(rows(&through(&store, Format::Obj, enc, batch, Some(dt))), positions);
    }
}
