//! Fallible zeroed allocation, the only `unsafe` code of zv-core.
//!
//! A large buffer that starts as zeros (a region read's result, a fill-value chunk) is best
//! allocated zeroed by the allocator (`calloc`): for a large size the allocator maps fresh
//! pages that the kernel zeroes when they are first written, so the buffer is written once (by
//! the decoded data) instead of twice (zeros, then the data). `vec![0u8; n]` does this but
//! aborts the process when the allocation fails, and the stable standard library has no
//! fallible zeroed allocation (`Box::try_new_zeroed_slice` is unstable), hence the one call to
//! `std::alloc::alloc_zeroed` below.
#![allow(unsafe_code)]

use std::alloc::{alloc_zeroed, Layout};

/// `n` zero bytes, or `None` if they cannot be allocated (the caller reports the error).
pub(crate) fn try_zeroed_bytes(n: usize) -> Option<Vec<u8>> {
    if n == 0 {
        return Some(Vec::new());
    }
    let layout = Layout::array::<u8>(n).ok()?;
    // SAFETY: `layout` has a non-zero size (`n > 0`, checked above), as `alloc_zeroed` requires.
    let ptr = unsafe { alloc_zeroed(layout) };
    if ptr.is_null() {
        return None;
    }
    // SAFETY: `ptr` is non-null and was allocated by the global allocator with the layout of
    // `n` bytes (alignment 1, size `n`), which is the layout a `Vec<u8>` of capacity `n` frees
    // it with; all `n` bytes are initialised (zeroed), so a length of `n` is valid; the `Vec`
    // takes sole ownership of the allocation.
    Some(unsafe { Vec::from_raw_parts(ptr, n, n) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeroed_buffers_of_any_size() {
        assert_eq!(try_zeroed_bytes(0), Some(Vec::new()));
        let small = try_zeroed_bytes(17).unwrap_or_default();
        assert_eq!(small, vec![0u8; 17]);
        let mut large = try_zeroed_bytes(64 << 20).unwrap_or_default();
        assert_eq!(large.len(), 64 << 20);
        assert!(large.iter().all(|&b| b == 0));
        large[12345] = 7;
        large.push(1);
        assert_eq!((large[12345], large.len()), (7, (64 << 20) + 1));
    }

    #[test]
    fn impossible_sizes_are_none() {
        assert_eq!(try_zeroed_bytes(usize::MAX), None);
        assert_eq!(try_zeroed_bytes(isize::MAX as usize), None);
    }
}
