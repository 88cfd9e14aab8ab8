//! A counting global allocator, to check that decoders of untrusted bytes allocate no more
//! than a small multiple of their input.
//!
//! Install it in a test binary and measure a closure:
//!
//! ```text
//! #[global_allocator]
//! static ALLOC: zv_testkit::alloc::CountingAllocator = zv_testkit::alloc::CountingAllocator;
//!
//! let peak = zv_testkit::alloc::peak_alloc(|| drop(decode(bytes)));
//! assert!(peak <= 32 * bytes.len() + 4096);
//! ```
//!
//! Counts are per thread, so tests running in parallel do not disturb each other.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// The system allocator, counting the live bytes of each thread.
#[derive(Debug, Clone, Copy, Default)]
pub struct CountingAllocator;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn note(delta: isize) {
    // `try_with` never allocates and fails only during thread teardown.
    let _ = LIVE.try_with(|live| {
        let v = live.get() + delta;
        live.set(v);
        let _ = PEAK.try_with(|p| {
            if v > p.get() {
                p.set(v);
            }
        });
    });
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so the
// `GlobalAlloc` contract is upheld by `System`; the bookkeeping only touches thread-local
// `Cell`s that are const-initialised and never allocate.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size() as isize);
        // SAFETY: forwarded unchanged; the caller upholds `alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size() as isize);
        // SAFETY: forwarded unchanged; the caller upholds `alloc_zeroed`'s contract.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        note(-(layout.size() as isize));
        // SAFETY: `ptr` was allocated by `System` through this allocator with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size as isize - layout.size() as isize);
        // SAFETY: `ptr` was allocated by `System` with `layout`; the caller upholds the rest.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Runs `f` on this thread and returns the largest number of bytes it had allocated at once
/// (0 unless [`CountingAllocator`] is the global allocator).
pub fn peak_alloc(f: impl FnOnce()) -> usize {
    let base = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(base));
    f();
    (PEAK.with(Cell::get) - base).max(0) as usize
}
