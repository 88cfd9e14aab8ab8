//! The only `unsafe` code of zv: calls into c-blosc. Every input is checked in safe code
//! first (see `header.rs`).
#![allow(unsafe_code)]

use std::ffi::CString;
use std::os::raw::{c_int, c_void};

use super::header::{BloscHeader, HEADER_SIZE};

/// Whether c-blosc was built with the compressor `name`.
pub(super) fn compressor_available(name: &str) -> bool {
    let Ok(c_name) = CString::new(name) else {
        return false;
    };
    // SAFETY: `c_name` is a valid NUL-terminated string that outlives the call; c-blosc only
    // reads it.
    let code = unsafe { blosc_src::blosc_compname_to_compcode(c_name.as_ptr()) };
    code >= 0
}

/// Compresses `input` (at most `MAX_BUFFER_SIZE` bytes; checked by the caller).
pub(super) fn compress(
    input: &[u8],
    clevel: i32,
    shuffle: i32,
    typesize: usize,
    cname: &str,
    blocksize: usize,
) -> Result<Vec<u8>, String> {
    let c_name = CString::new(cname).map_err(|_| "invalid compressor name".to_owned())?;
    let capacity = input.len() + HEADER_SIZE;
    let mut out = vec![0u8; capacity];
    // SAFETY: `input` is readable for `input.len()` bytes and `out` writable for `capacity`
    // bytes (c-blosc never writes more than `destsize`); `c_name` is NUL-terminated and
    // outlives the call; the `_ctx` variant uses no global state, so concurrent calls are
    // sound.
    let written = unsafe {
        blosc_src::blosc_compress_ctx(
            clevel as c_int,
            shuffle as c_int,
            typesize,
            input.len(),
            input.as_ptr().cast::<c_void>(),
            out.as_mut_ptr().cast::<c_void>(),
            capacity,
            c_name.as_ptr(),
            blocksize,
            1,
        )
    };
    if written <= 0 {
        return Err(format!("c-blosc compression failed (code {written})"));
    }
    out.truncate(written as usize);
    Ok(out)
}

/// Decompresses a frame whose header was parsed and validated against `input`.
pub(super) fn decompress(input: &[u8], header: &BloscHeader) -> Result<Vec<u8>, String> {
    debug_assert_eq!(header.cbytes, input.len());
    let mut nbytes_checked: usize = 0;
    // SAFETY: `input` is readable for `input.len()` bytes, which equals the `cbytes` of its
    // header (checked by `BloscHeader::parse`); `nbytes_checked` is a valid out-pointer.
    let valid = unsafe {
        blosc_src::blosc_cbuffer_validate(
            input.as_ptr().cast::<c_void>(),
            input.len(),
            &mut nbytes_checked,
        )
    };
    if valid < 0 || nbytes_checked != header.nbytes {
        return Err("c-blosc refused the frame header".into());
    }
    let mut out = vec![0u8; header.nbytes];
    // SAFETY: the frame's header, size and block-start table were validated in safe code
    // (`BloscHeader::validate_frame`), and c-blosc 1.21 checks every stream offset against
    // the header's `cbytes`, which equals `input.len()`; `out` is writable for `nbytes`
    // bytes and c-blosc never writes beyond `destsize`; the `_ctx` variant uses no global
    // state.
    let n = unsafe {
        blosc_src::blosc_decompress_ctx(
            input.as_ptr().cast::<c_void>(),
            out.as_mut_ptr().cast::<c_void>(),
            out.len(),
            1,
        )
    };
    if n < 0 || n as usize != header.nbytes {
        return Err(format!("c-blosc could not decode the frame (code {n})"));
    }
    Ok(out)
}
