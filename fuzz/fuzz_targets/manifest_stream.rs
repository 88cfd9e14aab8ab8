//! The object index as a bare manifest-block stream (`object_index/data`, no offsets):
//! `[sid_ndim][flags][u16 expected count][stream]`, decoded by `decode_stream` (with the
//! expected count when flag bit 0 is set).
#![no_main]
use libfuzzer_sys::fuzz_target;
use zv_format::layout::manifest::decode_stream;

fuzz_target!(|data: &[u8]| {
    let mut input = zv_fuzz::Input::new(data);
    let sid_ndim = (input.u8() % 6) as usize;
    let flags = input.u8();
    let expected = input.u16() as usize;
    let expected = (flags & 1 != 0).then_some(expected);
    if let Ok(manifests) = decode_stream(input.rest(), sid_ndim, expected) {
        zv_fuzz::exercise_manifests(&manifests, sid_ndim);
    }
});
