//! The fragment index (`vertex_fragments`, `link_fragments`): `[flags][u32 row count][blob]`;
//! with flag bit 0 the rows are checked against the row count. A decoded index must re-encode
//! to an index that decodes equal.
#![no_main]
use libfuzzer_sys::fuzz_target;
use zv_format::layout::fragment_index::FragmentIndex;

fuzz_target!(|data: &[u8]| {
    let mut input = zv_fuzz::Input::new(data);
    let flags = input.u8();
    let rows = input.u32() as u64;
    let row_count = (flags & 1 != 0).then_some(rows);
    if let Ok(index) = FragmentIndex::decode(input.rest(), row_count) {
        // Rows are expanded only once they are known to lie in a small chunk, as the reader
        // does (a range of 2^62 rows is valid without a row count and costs nothing stored).
        if index.check_rows(1 << 16).is_ok() {
            for f in index.iter() {
                assert_eq!(f.len(), f.iter().count());
            }
        }
        let _ = index.check_rows(rows);
        let again = FragmentIndex::decode(&index.encode(), row_count)
            .unwrap_or_else(|e| panic!("a decoded fragment index does not re-decode: {e}"));
        assert_eq!(again.to_fragments(), index.to_fragments());
    }
});
