//! LAS/LAZ import (`zv import file.las`): see `zv_fuzz::io_case` — the input is the file (a
//! LAZ file imports under the `.las` name too: the header says it is compressed).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    zv_fuzz::io_case::import_case(zv_io::Format::Las, "las", data);
});
