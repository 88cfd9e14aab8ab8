//! Cross-chunk links (`cross_chunk_links/<delta>/data`):
//! `[u32 num_links][link_width][sid_ndim][blob]`, decoded by `CrossChunkLinks::decode`.
#![no_main]
use libfuzzer_sys::fuzz_target;
use zv_format::layout::cross_chunk::CrossChunkLinks;

fuzz_target!(|data: &[u8]| {
    let mut input = zv_fuzz::Input::new(data);
    let num_links = input.u32() as u64;
    let width = (input.u8() % 8) as usize;
    let sid_ndim = (input.u8() % 6) as usize;
    if let Ok(links) = CrossChunkLinks::decode(input.rest(), num_links, width, sid_ndim) {
        assert_eq!(links.len() as u64, num_links);
        for r in 0..links.len() {
            for k in 0..width {
                let (sid, row) = links
                    .endpoint(r, k)
                    .unwrap_or_else(|| panic!("record {r} endpoint {k} is missing"));
                assert_eq!(sid.len(), sid_ndim);
                let _ = row;
            }
        }
        let again = CrossChunkLinks::decode(&links.encode(), num_links, width, sid_ndim)
            .unwrap_or_else(|e| panic!("decoded cross-chunk links do not re-decode: {e}"));
        assert_eq!(again.values(), links.values());
    }
});
