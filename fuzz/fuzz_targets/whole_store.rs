//! A whole store: one of the reference fixtures, loaded into an in-memory store
//! (`zv-store-mem`), is mutated by the input — an `arbitrary` list of edits (replace, truncate,
//! flip a bit, overwrite bytes, delete, swap two keys' values, set a number or string in a
//! `zarr.json`) — then opened as ZV; every level reads a few objects and a box query, and the
//! store is dumped. Anything may be refused; nothing may panic, hang or run out of memory.
#![no_main]
use libfuzzer_sys::fuzz_target;
use zv_fuzz::store_case::{run, Case};

fuzz_target!(|case: Case| {
    run(&case);
});
