//! The superchunk file `data/__N.blp`: a 16-byte header, then one blosc frame.
//!
//! ```text
//! offset size field
//! 0      4    magic     "blpk"
//! 4      1    version   1
//! 5      3    reserved
//! 8      8    nchunks   i64 LE, 1 in bcolz 1.x
//! 16     …    one c-blosc 1.x frame
//! ```

use std::path::Path;

use crate::error::{Error, Result};

/// The size of the superchunk header.
pub const SUPERCHUNK_HEADER_SIZE: usize = 16;
const MAGIC: &[u8; 4] = b"blpk";
const VERSION: u8 = 1;

/// Checks the header of a superchunk file and returns its blosc frame.
pub fn split_superchunk<'a>(path: &Path, bytes: &'a [u8]) -> Result<&'a [u8]> {
    let Some((header, frame)) = bytes.split_at_checked(SUPERCHUNK_HEADER_SIZE) else {
        return Err(Error::invalid(
            path,
            format!(
                "superchunk of {} bytes is shorter than its {SUPERCHUNK_HEADER_SIZE}-byte header",
                bytes.len()
            ),
        ));
    };
    if &header[..4] != MAGIC {
        return Err(Error::invalid(
            path,
            format!(
                "wrong superchunk magic {:?} (expected \"blpk\")",
                &header[..4]
            ),
        ));
    }
    if header[4] != VERSION {
        return Err(Error::unsupported(
            path,
            format!(
                "superchunk format version {} (bcolz 1.x writes {VERSION})",
                header[4]
            ),
        ));
    }
    let mut n = [0u8; 8];
    n.copy_from_slice(&header[8..16]);
    let nchunks = i64::from_le_bytes(n);
    if nchunks != 1 {
        return Err(Error::unsupported(
            path,
            format!("superchunk with {nchunks} blosc chunks (bcolz 1.x writes 1)"),
        ));
    }
    Ok(frame)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(magic: &[u8; 4], version: u8, nchunks: i64) -> Vec<u8> {
        let mut h = magic.to_vec();
        h.extend([version, 0, 0, 0]);
        h.extend(nchunks.to_le_bytes());
        h
    }

    #[test]
    fn header_checks() {
        let p = Path::new("/d/data/__0.blp");
        let mut ok = header(b"blpk", 1, 1);
        ok.extend([9, 9]);
        assert_eq!(split_superchunk(p, &ok).unwrap(), &[9, 9]);
        for bad in [
            header(b"blpx", 1, 1),
            header(b"blpk", 2, 1),
            header(b"blpk", 1, 2),
            header(b"blpk", 1, -1),
            b"blpk".to_vec(),
        ] {
            let e = split_superchunk(p, &bad).unwrap_err();
            assert!(e.to_string().starts_with("/d/data/__0.blp: "), "{e}");
        }
    }
}
