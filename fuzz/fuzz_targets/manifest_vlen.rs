//! The object index's vlen container (`object_index/manifests`, the reference's layout):
//! `[sid_ndim][u16 num_objects]` then items, each `u16`-length-prefixed, decoded by
//! `decode_vlen_items`.
#![no_main]
use libfuzzer_sys::fuzz_target;
use zv_format::layout::manifest::decode_vlen_items;

fuzz_target!(|data: &[u8]| {
    let mut input = zv_fuzz::Input::new(data);
    let sid_ndim = (input.u8() % 6) as usize;
    let num_objects = input.u16() as usize;
    let mut items = Vec::new();
    loop {
        let n = input.u16() as usize;
        let item = input.bytes(n);
        if item.is_empty() && n != 0 {
            break;
        }
        items.push(item);
        if items.len() > 4096 {
            break;
        }
        if n == 0 && item.is_empty() && items.len() > num_objects + 1 {
            break;
        }
    }
    if let Ok(manifests) = decode_vlen_items(items.iter().copied(), num_objects, sid_ndim) {
        zv_fuzz::exercise_manifests(&manifests, sid_ndim);
    }
});
