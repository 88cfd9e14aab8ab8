//! Per-chunk links (`links/<delta>/<chunk>`): `[link_width][flags][u32 row count][blob]`,
//! decoded by `LinkRows::decode` (rows checked against the row count with flag bit 0).
#![no_main]
use libfuzzer_sys::fuzz_target;
use zv_format::layout::links::LinkRows;

fuzz_target!(|data: &[u8]| {
    let mut input = zv_fuzz::Input::new(data);
    let width = input.u8() as usize;
    let flags = input.u8();
    let rows = input.u32() as u64;
    let row_count = (flags & 1 != 0).then_some(rows);
    if let Ok(links) = LinkRows::decode(input.rest(), width, row_count) {
        assert_eq!(links.rows().count(), links.len());
        for r in 0..links.len() {
            assert_eq!(links.row(r).map(<[i64]>::len), Some(width));
        }
        let again = LinkRows::decode(&links.encode(), width, row_count)
            .unwrap_or_else(|e| panic!("decoded links do not re-decode: {e}"));
        assert_eq!(again, links);
    }
});
