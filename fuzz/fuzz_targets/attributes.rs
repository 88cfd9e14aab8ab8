//! Attribute blobs: `[mode][data type][u32 rows][channels][payload]`.
//!
//! - mode 0: per-row attributes (`vertex_attributes`, `link_attributes`, …) by
//!   `AttributeRows::decode` (channels given, or inferred when 0);
//! - mode 1: dense attributes (`object_attributes/<name>/data`) by `DenseArray::decode`, shape
//!   `[rows, channels]`;
//! - mode 2: a `present_mask` of `rows` rows by `decode_present_mask`;
//! - mode 3: a dictionary-encoded attribute: a `u16`-prefixed JSON attributes object read by
//!   `Dictionary::from_attributes`, then the payload's codes decoded through it.
#![no_main]
use libfuzzer_sys::fuzz_target;
use zv_core::data_type::ALL_DATA_TYPES;
use zv_format::layout::attributes::{decode_present_mask, AttributeRows, DenseArray, Dictionary};

fn exercise(rows: &AttributeRows) {
    for r in 0..rows.num_rows() {
        let _ = rows.row_json(r);
        let _ = rows.get_f64(r, 0);
    }
    let again = AttributeRows::decode(
        &rows.encode(),
        rows.data_type(),
        rows.num_rows() as u64,
        Some(rows.channels()),
    );
    if rows.num_rows() > 0 {
        let again = again.unwrap_or_else(|e| panic!("decoded rows do not re-decode: {e}"));
        assert_eq!(again.as_le_bytes(), rows.as_le_bytes());
    }
}

fuzz_target!(|data: &[u8]| {
    let mut input = zv_fuzz::Input::new(data);
    let mode = input.u8() % 4;
    let data_type = ALL_DATA_TYPES[input.u8() as usize % ALL_DATA_TYPES.len()];
    let rows = input.u32() as u64;
    let channels = input.u8() as usize;
    match mode {
        0 => {
            let channels = (channels != 0).then_some(channels);
            if let Ok(r) = AttributeRows::decode(input.rest(), data_type, rows, channels) {
                exercise(&r);
            }
        }
        1 => {
            if let Ok(d) = DenseArray::decode(input.rest(), data_type, &[rows, channels as u64]) {
                exercise(&d.rows);
            }
        }
        2 => {
            if let Ok(mask) = decode_present_mask(input.rest(), rows) {
                assert_eq!(mask.len() as u64, rows);
            }
        }
        _ => {
            let json = input.prefixed();
            let Ok(serde_json::Value::Object(attributes)) = serde_json::from_slice(json) else {
                return;
            };
            let Ok(Some(dictionary)) = Dictionary::from_attributes(&attributes) else {
                return;
            };
            let channels = (channels != 0).then_some(channels);
            if let Ok(codes) = AttributeRows::decode(input.rest(), data_type, rows, channels) {
                if let Ok(values) = dictionary.decode_values(&codes) {
                    assert_eq!(values.len(), codes.num_rows());
                }
                let _ = dictionary.decode(&codes);
            }
        }
    }
});
