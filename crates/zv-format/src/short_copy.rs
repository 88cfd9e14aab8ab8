//! Copies of short byte strings whose length is known only at run time (a record, a vertex,
//! an attribute cell), made once per vertex. For the usual lengths the copy is of a length
//! fixed at compile time, a few moves, rather than a call to `memmove` each.

/// `src` appended to `out`.
#[inline]
pub(crate) fn append(out: &mut Vec<u8>, src: &[u8]) {
    /// `src` (of length `N`) appended as a fixed-length copy.
    #[inline(always)]
    fn fixed<const N: usize>(out: &mut Vec<u8>, src: &[u8]) {
        match <&[u8; N]>::try_from(src) {
            Ok(a) => out.extend_from_slice(a),
            Err(_) => out.extend_from_slice(src),
        }
    }
    match src.len() {
        4 => fixed::<4>(out, src),
        8 => fixed::<8>(out, src),
        12 => fixed::<12>(out, src),
        16 => fixed::<16>(out, src),
        24 => fixed::<24>(out, src),
        28 => fixed::<28>(out, src),
        32 => fixed::<32>(out, src),
        36 => fixed::<36>(out, src),
        40 => fixed::<40>(out, src),
        48 => fixed::<48>(out, src),
        _ => out.extend_from_slice(src),
    }
}

/// `src` copied over `dst` (of the same length).
#[inline]
pub(crate) fn copy(dst: &mut [u8], src: &[u8]) {
    /// `src` (of length `N`) copied as a fixed-length copy.
    #[inline(always)]
    fn fixed<const N: usize>(dst: &mut [u8], src: &[u8]) {
        match (
            <&mut [u8; N]>::try_from(&mut *dst),
            <&[u8; N]>::try_from(src),
        ) {
            (Ok(d), Ok(s)) => *d = *s,
            _ => dst.copy_from_slice(src),
        }
    }
    match src.len() {
        4 => fixed::<4>(dst, src),
        8 => fixed::<8>(dst, src),
        12 => fixed::<12>(dst, src),
        16 => fixed::<16>(dst, src),
        24 => fixed::<24>(dst, src),
        28 => fixed::<28>(dst, src),
        32 => fixed::<32>(dst, src),
        36 => fixed::<36>(dst, src),
        40 => fixed::<40>(dst, src),
        48 => fixed::<48>(dst, src),
        _ => dst.copy_from_slice(src),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_length_is_copied_whole() {
        for n in 0..80usize {
            let src: Vec<u8> = (0..n as u8).collect();
            let mut out = vec![7u8];
            append(&mut out, &src);
            assert_eq!(out[0], 7);
            assert_eq!(&out[1..], &src[..]);
            let mut dst = vec![0u8; n];
            copy(&mut dst, &src);
            assert_eq!(dst, src);
        }
    }
}
