//! LAS/LAZ import (`zv import file.las`): see `zv_fuzz::io_case` — the input is the file (a
//! LAZ file imports under the `.las` name too: the header says it is compressed).
//!
//! zv-io contains panics of the laz-rs decoder (`catch_unwind`, docs/robustness.md finding
//! 8), which libFuzzer's panic hook would turn into an abort before they unwind. The target
//! restores the default hook once: a contained panic is then an import error, and a panic
//! nothing catches still reaches libfuzzer-sys's `catch_unwind`, which aborts (a finding).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| drop(std::panic::take_hook()));
    zv_fuzz::io_case::import_case(zv_io::Format::Las, "las", data);
});
