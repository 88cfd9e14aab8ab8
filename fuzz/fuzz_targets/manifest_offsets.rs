//! The object index as a manifest-block stream with its offsets table (`object_index/data` +
//! `object_index/offsets`): `[sid_ndim][u16-prefixed offsets][data]`, decoded by
//! `decode_with_offsets`.
#![no_main]
use libfuzzer_sys::fuzz_target;
use zv_format::layout::manifest::decode_with_offsets;

fuzz_target!(|data: &[u8]| {
    let mut input = zv_fuzz::Input::new(data);
    let sid_ndim = (input.u8() % 6) as usize;
    let offsets = input.prefixed();
    if let Ok(manifests) = decode_with_offsets(input.rest(), offsets, sid_ndim) {
        zv_fuzz::exercise_manifests(&manifests, sid_ndim);
    }
});
