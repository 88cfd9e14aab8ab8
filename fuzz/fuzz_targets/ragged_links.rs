//! Cross-level ragged links (`links/+1`, `links/-1` between levels): `[link_width][blob]`,
//! decoded by `RaggedLinks::decode`; a decoded blob re-encodes to the same groups.
#![no_main]
use libfuzzer_sys::fuzz_target;
use zv_format::layout::links::RaggedLinks;

fuzz_target!(|data: &[u8]| {
    let mut input = zv_fuzz::Input::new(data);
    let width = (input.u8() % 8) as usize;
    if let Ok(links) = RaggedLinks::decode(input.rest(), width) {
        let bytes = links
            .encode()
            .unwrap_or_else(|e| panic!("decoded ragged links do not encode: {e}"));
        let again = RaggedLinks::decode(&bytes, width)
            .unwrap_or_else(|e| panic!("decoded ragged links do not re-decode: {e}"));
        assert_eq!(again, links);
    }
});
