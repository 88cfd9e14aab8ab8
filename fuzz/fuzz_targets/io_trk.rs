//! TRK import (`zv import file.trk`): see `zv_fuzz::io_case` — the input is the file.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    zv_fuzz::io_case::import_case(zv_io::Format::Trk, "trk", data);
});
