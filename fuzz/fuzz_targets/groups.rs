//! Groups (`groups/data` + `groups/offsets`): `[u16-prefixed offsets][data]`, decoded by
//! `Groups::decode`; decoded groups re-encode to blobs that decode equal.
#![no_main]
use libfuzzer_sys::fuzz_target;
use zv_format::layout::groups::Groups;

fuzz_target!(|data: &[u8]| {
    let mut input = zv_fuzz::Input::new(data);
    let offsets = input.prefixed();
    if let Ok(groups) = Groups::decode(input.rest(), offsets) {
        let (d, o) = groups
            .encode()
            .unwrap_or_else(|e| panic!("decoded groups do not encode: {e}"));
        let again = Groups::decode(&d, &o)
            .unwrap_or_else(|e| panic!("decoded groups do not re-decode: {e}"));
        assert_eq!(again, groups);
    }
});
