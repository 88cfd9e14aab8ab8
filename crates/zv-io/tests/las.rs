//! LAS and LAZ without Python: malformed files (truncated points, a header point count past
//! the data, a bad signature, a truncated LAZ) give an error naming the file and where, and
//! leave the store empty; exports refuse what LAS cannot hold; zv's own files read back equal.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;
use std::path::Path;
use std::sync::Arc;

use zv_core::key::StorePrefix;
use zv_core::store::ListableStore;
use zv_format::document::{AttributeValues, GeometryDocument};
use zv_format::ZvStore;
use zv_io::{ExportOptions, Format, ImportOptions};

/// The byte offset of the point records in the LAS 1.2 files here (a 227-byte header, no
/// VLRs).
const POINTS_AT: usize = 227;
/// The record length of point format 2 (rgb).
const RECORD: usize = 26;

fn csv_store(dir: &Path, text: &str) -> ZvStore {
    let csv = dir.join("points.csv");
    std::fs::write(&csv, text).unwrap();
    let store = Arc::new(zv_store_mem::MemoryStore::new());
    zv_io::import_file(&csv, Format::Csv, store.clone(), &ImportOptions::default()).unwrap();
    ZvStore::open(store).unwrap()
}

fn export(store: &ZvStore, format: Format, name: &str) -> zv_io::Result<Vec<u8>> {
    let mut out = Vec::new();
    zv_io::export(store, format, &mut out, name, &ExportOptions::default())?;
    Ok(out)
}

/// A LAS (or LAZ) file of `n` points, format 2.
fn las_file(dir: &Path, n: usize, format: Format) -> Vec<u8> {
    let mut text = String::from("x,y,z,intensity,red,green,blue,classification\n");
    for i in 0..n {
        text += &format!("{i}.5,{},-{i},{i},{},7,0,{}\n", i * 2, i * 3, i % 32);
    }
    export(&csv_store(dir, &text), format, "points").unwrap()
}

/// Imports `bytes` as `name`: the error's message, and that the store stayed empty.
fn import_error(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    let store = Arc::new(zv_store_mem::MemoryStore::new());
    let opts = ImportOptions {
        batch: 2,
        ..Default::default()
    };
    let err = zv_io::import_file(&path, Format::Las, store.clone(), &opts)
        .err()
        .unwrap_or_else(|| panic!("{name} imported"))
        .to_string();
    assert!(
        store.list_prefix(&StorePrefix::root()).unwrap().is_empty(),
        "{name}: the store is not empty"
    );
    assert!(err.contains(&path.display().to_string()), "{name}: {err}");
    err
}

#[test]
fn truncated_point_data_names_the_byte_of_the_first_missing_point() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = las_file(dir.path(), 5, Format::Las);
    assert_eq!(
        b.len(),
        POINTS_AT + 5 * RECORD,
        "the layout this test assumes"
    );
    b.truncate(b.len() - 3); // point 4 ends early
    let err = import_error(dir.path(), "cut.las", &b);
    let at = POINTS_AT + 4 * RECORD;
    assert!(
        err.contains(&format!(
            "byte {at}: the file ends in point 4: the header says 5 points"
        )),
        "{err}"
    );
}

#[test]
fn a_header_point_count_past_the_data_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = las_file(dir.path(), 5, Format::Las);
    b[107..111].copy_from_slice(&9u32.to_le_bytes()); // the legacy point count
    let err = import_error(dir.path(), "count.las", &b);
    let at = POINTS_AT + 5 * RECORD;
    assert!(
        err.contains(&format!(
            "byte {at}: the file ends in point 5: the header says 9 points"
        )),
        "{err}"
    );
}

#[test]
fn a_bad_signature_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = las_file(dir.path(), 3, Format::Las);
    b[..4].copy_from_slice(b"LASX");
    let err = import_error(dir.path(), "sig.las", &b);
    assert!(err.contains("byte 0") && err.contains("LASF"), "{err}");
    let err = import_error(dir.path(), "short.las", b"LASF");
    assert!(err.contains("byte 0"), "{err}");
}

#[test]
fn a_truncated_laz_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = las_file(dir.path(), 2000, Format::Laz);
    b.truncate(b.len() * 2 / 3);
    let err = import_error(dir.path(), "cut.laz", &b);
    // the points start after the LAZ VLR (100 bytes); their chunk table is past the cut
    assert!(
        err.contains(": byte 327: the LAZ chunk table is at byte"),
        "{err}"
    );
}

/// A one-channel numeric vertex attribute's values.
fn values(doc: &GeometryDocument, name: &str) -> Vec<f64> {
    let AttributeValues::Numeric { rows, .. } = &doc.vertex_attributes[name].values else {
        panic!("{name} is categorical")
    };
    (0..rows.num_rows())
        .map(|r| rows.get_f64(r, 0).unwrap())
        .collect()
}

#[test]
fn zv_s_own_las_and_laz_read_back_equal() {
    let dir = tempfile::tempdir().unwrap();
    let text = "x,y,z,intensity,gps_time\n1.5,2.25,-3,10,1e9\n-4.125,0,7.5,65535,0.5\n";
    let store = csv_store(dir.path(), text);
    let level = |s: &ZvStore| {
        GeometryDocument::from_value(&zv_format::export::export_geometry(s).unwrap()).unwrap()
    };
    let before = level(&store);
    for (format, name) in [(Format::Las, "back.las"), (Format::Laz, "back.laz")] {
        let path = dir.path().join(name);
        std::fs::write(&path, export(&store, format, name).unwrap()).unwrap();
        let back = Arc::new(zv_store_mem::MemoryStore::new());
        zv_io::import_file(&path, Format::Las, back.clone(), &ImportOptions::default()).unwrap();
        let back = ZvStore::open(back).unwrap();
        let after = level(&back);
        assert_eq!(after.vertices, before.vertices, "{name}");
        for attr in ["intensity", "gps_time"] {
            assert_eq!(
                values(&after, attr),
                values(&before, attr),
                "{name}: {attr}"
            );
        }
        let kept = &back.root_attributes()[zv_io::las::HEADER_ATTRIBUTE];
        assert_eq!(kept["point_format"], 1, "{name}: gps_time picks format 1");
        assert_eq!(kept["scale"], serde_json::json!([0.001, 0.001, 0.001]));
        // exported again, the same bytes (the kept header is the same)
        assert_eq!(
            export(&back, format, name).unwrap(),
            std::fs::read(&path).unwrap(),
            "{name}"
        );
    }
}

#[test]
fn exports_refuse_what_las_cannot_hold() {
    let dir = tempfile::tempdir().unwrap();
    let err = |text: &str| {
        export(&csv_store(dir.path(), text), Format::Las, "out.las")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    let e = err("x,y,z,weight\n1,2,3,0.5\n");
    assert!(
        e.contains("out.las: vertex attribute `weight` is not a standard LAS dimension"),
        "{e}"
    );
    let e = err("x,y,z,intensity\n1,2,3,70000\n");
    assert!(
        e.contains("vertex 0: intensity = 70000 does not fit LAS 1.2 point format 0"),
        "{e}"
    );
    let e = err("x,y,z,object_id\n1,2,3,4\n");
    assert!(e.contains("object ids"), "{e}");
    let e = err("x,y\n1,2\n");
    assert!(e.contains("3-D"), "{e}");
    let e = err("x,y,z\n0,2,3\n1e12,2,3\n");
    assert!(e.contains("x = 1000000000000 does not fit"), "{e}");
}

#[test]
fn a_laz_chunk_table_claiming_more_chunks_than_bytes_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = las_file(dir.path(), 50, Format::Laz);
    // the offset of the chunk table is the first 8 bytes of the point data (after the LAZ VLR)
    let mut at = [0u8; 8];
    at.copy_from_slice(&b[327..335]);
    let table = usize::try_from(i64::from_le_bytes(at)).unwrap();
    b[table + 4..table + 8].copy_from_slice(&u32::MAX.to_le_bytes());
    let err = import_error(dir.path(), "chunks.laz", &b);
    assert!(
        err.contains(&format!(
            ": byte {}: the LAZ chunk table claims 4294967295 chunks",
            table + 4
        )),
        "{err}"
    );
    // and a chunk table offset past the end
    let mut b = las_file(dir.path(), 50, Format::Laz);
    b[327..335].copy_from_slice(&(1i64 << 40).to_le_bytes());
    let err = import_error(dir.path(), "table.laz", &b);
    assert!(
        err.contains(": byte 327: the LAZ chunk table is at byte"),
        "{err}"
    );
}

/// A LAS 1.4 point format 6 LAZ (layered chunks of 50 000 points) of `n` points.
fn layered_laz(dir: &Path, n: usize) -> Vec<u8> {
    let mut text = String::from("x,y,z,scan_angle,intensity\n");
    for i in 0..n {
        text += &format!(
            "{}.5,{},{},{},{}\n",
            i % 1000,
            i / 1000,
            i % 7,
            i % 300,
            i % 65536
        );
    }
    export(&csv_store(dir, &text), Format::Laz, "points.laz").unwrap()
}

#[test]
fn layered_laz_of_several_chunks_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let b = layered_laz(dir.path(), 120_000);
    let path = dir.path().join("three-chunks.laz");
    std::fs::write(&path, b).unwrap();
    let store = Arc::new(zv_store_mem::MemoryStore::new());
    let s = zv_io::import_file(&path, Format::Laz, store.clone(), &ImportOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.vertices, 120_000);
    let doc = GeometryDocument::from_value(
        &zv_format::export::export_geometry(&ZvStore::open(store).unwrap()).unwrap(),
    )
    .unwrap();
    let mut angles = values(&doc, "scan_angle");
    angles.sort_by(f64::total_cmp);
    assert_eq!((angles[0], angles[angles.len() - 1]), (0.0, 299.0));
}

/// Fuzz finding (io_las): a layered LAZ chunk whose header claims a layer of 1.2 GB made the
/// `laz` decoder reserve it before reading (a small file, an out-of-memory); the layer sizes
/// are now checked against the file first.
#[test]
fn a_laz_layer_larger_than_the_file_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = layered_laz(dir.path(), 20);
    // the first chunk: after the 8 bytes of chunk-table offset at the start of the point data
    // (the header's offset at byte 96), the first point (30 bytes), the count, then the nine
    // layer sizes of the point fields
    let points = u32::from_le_bytes([b[96], b[97], b[98], b[99]]) as usize;
    let chunk = points + 8;
    let first_size = chunk + 30 + 4;
    b[first_size..first_size + 4].copy_from_slice(&0x4d00_0000u32.to_le_bytes());
    let err = import_error(dir.path(), "layer.laz", &b);
    assert!(
        err.contains(&format!(
            ": byte {first_size}: the LAZ chunk at byte {chunk} claims a layer of 1291845632 bytes"
        )),
        "{err}"
    );
}

#[test]
fn a_laz_switched_to_variable_chunks_without_their_table_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = las_file(dir.path(), 30, Format::Laz);
    // the LAZ VLR's payload starts 54 bytes into the VLR (after the 227-byte 1.2 header); its
    // chunk size is at byte 12 of it: u32::MAX means variable-size chunks, counted by the table
    let chunk_size = 227 + 54 + 12;
    b[chunk_size..chunk_size + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    let err = import_error(dir.path(), "variable.laz", &b);
    assert!(err.contains(": byte 327: the LAZ chunk table"), "{err}");
}

/// Fuzz finding (io_las, input `crash-37faeb66…`): a LAZ file whose GPS time deltas overflow
/// an i64 in laz-rs's decoder (`las/gps.rs`, plain `+` where LASzip wraps) panicked in debug
/// builds. The laz crate is built with overflow checks off (it wraps, as LASzip and release
/// builds do); the file imports or is refused, without a panic.
const GPS_OVERFLOW_LAZ: [&str; 18] = [
    "4c41534600000000000000000000000000000000000000000102000000000000000000000000000000000000",
    "00000000000000000000000000007a7600000000000000000000000000000000000000000000000000000000",
    "000000000000e3004d010000010000008322000c0000000000000000000000000000000000000000000000fc",
    "a9f1d24d62503ffca9f1d24d62503ffca9f1d24d62503f000000000000000000000000000000000000000000",
    "0026c00000000000802640000000000000d03f0000000000c04040000000000000e03f000000000000000000",
    "000000000026c000006c61737a697020656e636f6465640000bc56340068747470733a2f2f6c61737a69702e",
    "6f7267000000000000000000000000000002000000020200000000000050c30000ffffffffffffffffffffff",
    "ffffffffff0300060014000200070008000200080006000200f401000000000000e2040000ac0d0000102700",
    "00000000000100000000000000000000000000000000000000000000000000000000000000000000f03f0000",
    "01000000503bf4328296f6b9a4ee1d630fcea66bd8060c11d98273796e746800000000002b00000000000000",
    "0000000000007a7600000000000000000000000000000000000000000000000000000000000000000000e300",
    "4d010000010000008322000c0000000000000000000000000000000000000000000000fca9f1d24d62503ffc",
    "a9f1d24d62503ffca9f1d24d62503f0000000000000000000000000000000000000000000026c00000000000",
    "802640000000000000d03f0000000000c04040000000000000e03f0000000000000000000000000000260002",
    "0200000000000050c30000ffffffffffffffffffffffffffffffff03000600140002657469638eed0bb7804c",
    "e8655f7501997822b100b962812b62950e1b623d685f332983b92a2ff9c9225bde2b9a89c9c79031c33abf21",
    "9c025d567d9dd698e94af8a0b4977663aa727e8e44887040632f069f417605e2bab946e3c3dccf4a9e000000",
    "000000000100000042d8000000",
];

#[test]
fn a_laz_whose_gps_time_deltas_overflow_does_not_panic() {
    let dir = tempfile::tempdir().unwrap();
    let (result, _) = common::import_hex(dir.path(), "gps.laz", &GPS_OVERFLOW_LAZ, 761);
    // whatever the decoded values, the outcome is a store or an error naming the file
    if let Err(e) = result {
        assert!(e.to_string().contains("gps.laz"), "{e}");
    }
}

/// Fuzz finding (io_las, input `crash-46523516…`): a LAZ file whose arithmetic-coded data breaks
/// laz-rs's `debug_assert!(sym < (1 << 16))` (`decoders.rs`) panicked in debug builds. The laz
/// crate is built without debug assertions (as in release builds and LASzip); the file imports
/// or is refused, without a panic.
const SYMBOL_ASSERT_LAZ: [&str; 13] = [
    "4c41534600000000000000000000000000000000000000000102000000000000000000000000000000000000",
    "00000000000000000000000000007a7600000000000000000000000000000000000000000000000000000000",
    "000000000000e3004d010000010000008322000c0000000000000000000000000000000000000000000000fc",
    "a9f1d24d62503ffca9f1d24d62503ffca9f1d24d62503f000000000000000000000000000000000000000000",
    "0026c00000000000802640000000000000d03f0000000000c04040000000000023e03f000000000000000000",
    "000000000026c000006c61737a697020656e636f6465640000bc56340068747470733a2f2f6c61737a69702e",
    "6f7267000000000000000000000000000002000000020200000000000050c30000ffffffffffffffffffffff",
    "ffffffffff0300060014000200070008000200080006000200f401000000000000e2040000ac0d0000102775",
    "622776622776020000000000000000f03f000001000000503bf4328296f6b9a4ee1d630fcea66bd8060c11d9",
    "01000000000000228209d81d03e8e7c469928eed0bb7804ce8655f7501997822b100b962812b62950e1b623d",
    "685f332983b905e2bab946e3c300000000000000000000000000000000000000000000000000400000000000",
    "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
    "0000a2000000000000000000000000000000dccf4a9e000000000000000100000042d8000000",
];

#[test]
fn a_laz_breaking_the_decoder_s_debug_assertions_does_not_panic() {
    let dir = tempfile::tempdir().unwrap();
    let (result, _) = common::import_hex(dir.path(), "symbol.laz", &SYMBOL_ASSERT_LAZ, 566);
    if let Err(e) = result {
        assert!(e.to_string().contains("symbol.laz"), "{e}");
    }
}

/// laz-rs indexed its symbol table out of bounds on crafted RGB data (`decoders.rs`; fuzz
/// finding 8): a panic in release builds too. zv-io contains the decoder's panic and refuses
/// the file, naming it.
const RGB_INDEX_LAZ: [&str; 19] = [
    "4c41534600001000000000000000000000000000000000000104000000000000000000000000000000000000",
    "00000000000000000000000000007a7600000000000000000000000000000000000000000000000000000000",
    "0000000000007701db010000010000008826000c0000000000000000000000000000000000000000000000fc",
    "a9f1d24d62503ffca9f1d24d62503ffca9f1d24d62503f000000000000000000000000000000000000000000",
    "0026c00000000000802640000000000000d03f0000000000c04040000000000000e03f000000000000000000",
    "000000000026c000000000000000000000000000000000000000000c00000000000000000000000000000000",
    "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
    "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
    "000000000000000000000000000000000000000000000000006c61737a697020656e636f6465640000bc562e",
    "0068747470733a2f2f6c61737a69702e6f726700000000000000000000000000000300000002020000000000",
    "0050c30000ffffffffffffffffffffffffffffffff02000a001e0003000c0008000300d802000000000000e2",
    "040000ac0d00001027000000000000000001000000000000000000000001000000010000000c0000002b0000",
    "00190000000000000000000000000000000a0000000000000000000000170000002b0000000f00000030aa05",
    "d5b8149f9cdf330af8fa998ea0e025fc351e2120aadead52c2844000f7b01d0d0367211bb08000004dbf0879",
    "6f219a808c4a88c05dcbfbd7b3a7bb14c1770000000f4a07e805caff000000634afad18878000002d0dc1190",
    "33ffffffffffffffffffffffffffffffffffffffffffffff85fb69d1f1cd000000abfd307c298af00e56f219",
    "f0a62bc0395bc867bc41015e01cade03fd7f5bf60900a20ff5fd6fd81c000000000000000100000000000000",
    "0000000001000000010000000c0000002b000000190000000000000000000000000000405fd2fe8234411283",
    "4fbc1543000000000000010000004573000000",
];

#[test]
fn a_laz_whose_decoder_panics_is_refused_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let (result, _) = common::import_hex(dir.path(), "rgb.las", &RGB_INDEX_LAZ, 811);
    let err = result.expect_err("the decoder's panic is an error");
    let msg = err.to_string();
    assert!(msg.contains("rgb.las"), "{msg}");
    assert!(msg.contains("the LAZ decoder failed"), "{msg}");
}

/// Two LAZ files the fuzzer found (`io_las`, finding 9), point format 6 with GPS times: their
/// arithmetic-coded data switches GPS time sequence over and over, and laz-rs decoded each
/// switch by calling itself again, until the stack overflowed and the process died
/// (SIGSEGV, or "has overflowed its stack"). The vendored laz-rs loops instead
/// (`vendor/laz/ZV-PATCH.md`): one file is an error naming its first point, the other imports.
const GPS_SWITCHES_FAIL: [&str; 17] = [
    "4c41534600001000000000000000000000000000000000000104000000000000000000000000000000000000",
    "00000000000000000000000000007a7600000000000000000000000000000000000000000000000000000000",
    "0000000000007701db010000010000008826000c0000000000000000000000000000000000000000000000fc",
    "ccf1d24d62503ffca9f1d24d62503ffca9f1d24d62503f000000000000000000000000000000000000000000",
    "0026c00000000000802640000000000000d03f0000000000c04040000000000000e03f000000000000000000",
    "000000000026c000000000000000000000000000000000000000000c00000000000000000000000000000000",
    "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
    "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
    "000000000000000000000000000000000000000000000000006c61737a697020656e636f6465640000bc562e",
    "0068747470733a2f2f6c61737a69702e6f726700000000000000000000000000000300000002020000000000",
    "0050c30000ffffffffffffffffffffffffffffffff02000a001e0003000c0008000300d802000000000000e2",
    "040000ac0d00001027000000000000000001000000000000000000000001000000010000000c0000002b0000",
    "00190000000000000000000000000000000a0000000000000000000000170000002b0000000f00000030aa05",
    "d5b8149f9cdf330af8fa998ea0e025fc351e2120aadead52c2844000f7b01d0d0367211bb08000004dbf0879",
    "6f219a808c4a88c05dcbfbd7ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff0000000000",
    "000000000000000000405fd2fe82344112834fbc1543000000000000010000004573000000",
];

const GPS_SWITCHES_IMPORT: [&str; 20] = [
    "4c41534600000000000000000000000000000000000000000102002d00000000000000000000000000000000",
    "00000000000000000000000000007a7600000000000000000000000000000000000000000000000000000000",
    "000000000000e3004d010000010000008322000c0000000000000000000000000000000060000000000000fc",
    "a9f1d24d62503ffca9f1d24d62503ffca9f1d24d62503f000000000000000000000000000000000000000000",
    "0026c000000000008026400000000000003f3f0000000000c04040000000000000e03f000000000000000000",
    "000000000026c000006c61737a697020656e636f6465640000bc56340068747470733a2f2f6c61737a69702e",
    "6f7267000000000000000000000000000002000000020200000000000050c30000ffffffffffffffffffffff",
    "ffffffffff0300060014000200070008000200080006000200f401000000000000e2040000ac0d0000102700",
    "000000000001000000000000000000f03f00006e6f64655f7479706501000000503bf432824c415346000000",
    "0000000000000000000000000000000000010200000000000000000000000000000000000000000000000000",
    "000000000000007a7600000000000000000000000000000000000000000000000000000000000000000000e3",
    "00e3000000000000000014000c00000006000000000000000000000000ffffffffffffffffffffffffffffff",
    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
    "ffffffffffffffffffffffffffffffffffffffffffffffff00000000000000fca9f1d24d62503ffca9f1d24d",
    "62503ffca9f1d24d62503f000000000000000000000000000000000079000000000026c00000000000802640",
    "000000000000d03f0000000000c04040000000000000e03f000000000000000000000000000026c0e2040000",
    "ac0d0200102700000000010100000000ca08000064190000282300000100080000010000b20c00001c250000",
    "401f000000000101000000009a100000d4300000581b00000196f6b9a4ee1d63000000000000000000000026",
    "c0000003e8e70000c4",
];

#[test]
fn gps_time_sequence_switches_do_not_overflow_the_stack() {
    let dir = tempfile::tempdir().unwrap();
    for (name, lines, len) in [
        ("fail.las", &GPS_SWITCHES_FAIL[..], 741),
        ("import.las", &GPS_SWITCHES_IMPORT[..], 845),
    ] {
        let bytes = common::unhex(lines);
        assert_eq!(bytes.len(), len, "{name}");
        let path = dir.path().join(name);
        std::fs::write(&path, &bytes).unwrap();
        let store = Arc::new(zv_store_mem::MemoryStore::new());
        let result = zv_io::import_file(&path, Format::Las, store, &ImportOptions::default());
        match (name, result) {
            ("fail.las", Err(e)) => {
                let msg = e.to_string();
                assert!(msg.contains("fail.las: point 0"), "{msg}");
            }
            ("import.las", Ok(summary)) => assert!(summary.vertices > 0),
            (name, other) => panic!("{name}: {other:?}"),
        }
    }
}

/// A LAZ file the fuzzer found (`io_las`, finding 10): its variable-size chunk table, which
/// zv reads before the points to check the counts, is arithmetic-coded too, and its crafted
/// entries made laz-rs index out of bounds there — outside the containment of finding 8, so
/// the panic ended the import (and aborted the fuzzer).
const CHUNK_TABLE_PANICS: [&str; 21] = [
    "4c41534600000000000000000000000080000000000000000102000000000000000000000000000000000000",
    "00000000000000000000000000007a7600000000000000000000000000000000000000000000000000000000",
    "000000000000e3004d010000010000008322000c0000ff00ff000000000000000000000000000000000000fc",
    "a9f1d24d62503ffca9f1d24d6250352f7665727465785f617474726962757465732f7363616e5f6469726563",
    "74696f6e5f666c61672640000000000000d03f0000000000c04040000000000000e03f000000000000000000",
    "000000000026c000006c61737a697020656e636f6465640000bc56340068747470733a2f2f6c61737a69702e",
    "6f726700000000000000000000000000000200000002020000000050c300000000ffffffffffffffffffffff",
    "ffffffffff0300060014000200070008000200080006000200f401000000000000e2040000ac0d0000102700",
    "00000000000100000028000000000000063f000001000000503bf682b93296f4a4ee1d630fcea66bd8060c11",
    "d98209d81d03e8e7c469928eed0bb7804ce8655f7501997822b100b962812b62950e1b623d685ff42983b92a",
    "2ff9c9225bde2b9a89c9c79031c33abf219c025d567d9dd698e94af8a0b4977663aa727e8e44887040632f06",
    "9f417605e2bab946e3c3dccf4a9e00000000802640000000ffffffffffffffffffffffffffffffffffffffff",
    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff00",
    "0000d03f0000000000c040403a0000000000e03f000000000000000000000000000026c000006c61737a6970",
    "20656e636f6465640000bc56340068747470733a2f2f6c61737a69702e6f7267000000000000000000000000",
    "000002000000020200000000000050c30000ffffdfffffffffffffffffffffffffff0300060014002e000200",
    "070008000200080006000200f401000000000000e2040000ac0d000010270000000000000100000000000000",
    "0000f03f000001000024503bf4318296f6b9a4ee1d630fcea66bd8060c0000000000000000000011d98209d8",
    "1d03e8e7c479928eed0bb7804ce8655f7501997822b100b962812b62950e1b623d685f332983b92a2ff9c922",
    "5bde2b9a89c9c79031c33abf219c025d567d9dd698e94af8a0b4977663aa727e8e4473796e74686574696300",
    "00000000000100000042d8000000",
];

#[test]
fn a_laz_whose_chunk_table_panics_the_decoder_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (result, store) = common::import_hex(dir.path(), "table.las", &CHUNK_TABLE_PANICS, 894);
    let msg = result
        .expect_err("the decoder's panic is an error")
        .to_string();
    assert!(msg.contains("table.las: byte 333"), "{msg}");
    assert!(msg.contains("the LAZ decoder failed"), "{msg}");
    assert!(store.list_prefix(&StorePrefix::root()).unwrap().is_empty());
}
