//! Decoding manifests: [`Manifest::visit_at`], the one decoder, and the decodes built on it.
//! Every length is checked before anything is read or held; the commonest block (one fragment)
//! is read straight from its bytes, any other block or fault through a cursor whose errors
//! name it.

use super::{BlockFragments, Manifest, ManifestBlock, MAX_FRAGMENTS, WHAT};
use crate::layout::{invalid, le_i64, Cursor, LayoutError};

/// Reads one fragment index (non-negative, below 2^32).
fn fragment(c: &mut Cursor<'_>) -> Result<u64, LayoutError> {
    let at = c.pos();
    let f = c.index("fragment index")?;
    if f >= MAX_FRAGMENTS {
        return Err(invalid(
            WHAT,
            format!("fragment index {f} at offset {at} is not below 2^32 (a chunk has fewer)"),
        ));
    }
    Ok(f)
}

impl Manifest {
    /// Decodes one manifest that must fill `bytes` exactly (trailing bytes are an error).
    pub fn decode(bytes: &[u8], sid_ndim: usize) -> Result<Self, LayoutError> {
        let (m, end) = Self::decode_at(bytes, 0, sid_ndim)?;
        if end != bytes.len() {
            return Err(LayoutError::TrailingBytes {
                what: WHAT,
                end,
                extra: bytes.len() - end,
            });
        }
        Ok(m)
    }

    /// Decodes the manifest starting at `offset`; returns it and where it ends.
    pub fn decode_at(
        bytes: &[u8],
        offset: usize,
        sid_ndim: usize,
    ) -> Result<(Self, usize), LayoutError> {
        Self::decode_at_where(bytes, offset, sid_ndim, |_| true)
    }

    /// [`Manifest::decode_at`] keeping only the blocks whose chunk `keep` accepts: the others
    /// are stepped over (their lengths checked, their fragments neither checked nor
    /// allocated), so a reader that wants a few chunks of a large index pays little for the
    /// rest.
    pub fn decode_at_where(
        bytes: &[u8],
        offset: usize,
        sid_ndim: usize,
        keep: impl Fn(&[i64]) -> bool,
    ) -> Result<(Self, usize), LayoutError> {
        // room for the blocks of a small manifest (a filtered one keeps few of a large one)
        let stated = bytes
            .get(offset..offset.saturating_add(4))
            .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        let mut blocks = Vec::with_capacity((stated as usize).min(64));
        let end = Self::visit_at(bytes, offset, sid_ndim, keep, |chunk, fragments| {
            blocks.push(ManifestBlock {
                chunk: chunk.into(),
                fragments,
            });
        })?;
        Ok((Self { blocks }, end))
    }

    /// Decodes the manifest starting at `offset` block by block without building it: `each`
    /// is given every block whose chunk `keep` accepts (the others are stepped over, their
    /// lengths checked, their fragments neither checked nor allocated). Returns where the
    /// manifest ends. The one decoder of manifests: [`Manifest::decode_at_where`] is it with
    /// the blocks kept.
    pub fn visit_at(
        bytes: &[u8],
        offset: usize,
        sid_ndim: usize,
        keep: impl Fn(&[i64]) -> bool,
        mut each: impl FnMut(&[i64], BlockFragments),
    ) -> Result<usize, LayoutError> {
        let mut c = Cursor::at(bytes, offset, WHAT);
        let n = c.u32()? as usize;
        let head = sid_ndim.saturating_mul(8);
        // Every block takes at least 8·sid_ndim + 5 bytes (an empty mode-2 block): check
        // before anything is built.
        c.need(n.saturating_mul(head.saturating_add(5)))?;
        if n == 0 {
            return Ok(c.pos());
        }
        // the coordinates of the block at hand, on the stack for the usual arities (a block
        // fits the bytes, so more are no more than the bytes justify)
        let (mut inline, mut heap) = ([0i64; 4], Vec::new());
        let chunk: &mut [i64] = match inline.get_mut(..sid_ndim) {
            Some(c) => c,
            None => {
                heap.resize(sid_ndim, 0);
                &mut heap
            }
        };
        for _ in 0..n {
            // the commonest block, one fragment (mode 0), read straight from the bytes; any
            // other block, or a fault, is read by the cursor below, whose errors name it
            let pos = c.pos();
            let single = bytes
                .get(pos..pos.saturating_add(head + 9))
                .filter(|b| b[head] == 0);
            if let Some(b) = single {
                let f = le_i64(&b[head + 1..]) as u64;
                if f < MAX_FRAGMENTS {
                    for (v, x) in chunk.iter_mut().zip(b.chunks_exact(8)) {
                        *v = le_i64(x);
                    }
                    c.take(head + 9)?;
                    if keep(chunk) {
                        each(chunk, BlockFragments::Single(f));
                    }
                    continue;
                }
            }
            for v in chunk.iter_mut() {
                *v = c.i64()?;
            }
            if !keep(chunk) {
                let at = c.pos();
                let len = match c.u8()? {
                    0 => 8,
                    1 => 16,
                    2 => (c.u32()? as usize).saturating_mul(8),
                    m => {
                        return Err(invalid(
                            WHAT,
                            format!("unknown block mode {m} at offset {at}"),
                        ))
                    }
                };
                c.take(len)?;
                continue;
            }
            let at = c.pos();
            let fragments = match c.u8()? {
                0 => BlockFragments::Single(fragment(&mut c)?),
                1 => {
                    let start = c.index("range start")?;
                    let count = c.index("range count")?;
                    start
                        .checked_add(count)
                        .filter(|&e| e <= MAX_FRAGMENTS)
                        .ok_or_else(|| {
                            invalid(
                                WHAT,
                                format!(
                                    "range ({start}, {count}) at offset {at} goes past fragment 2^32 (a chunk has fewer)"
                                ),
                            )
                        })?;
                    BlockFragments::Range { start, count }
                }
                2 => {
                    let k = c.u32()? as usize;
                    c.need(k.saturating_mul(8))?;
                    let mut v = Vec::with_capacity(k);
                    for _ in 0..k {
                        v.push(fragment(&mut c)?);
                    }
                    BlockFragments::Explicit(v)
                }
                m => {
                    return Err(invalid(
                        WHAT,
                        format!("unknown block mode {m} at offset {at}"),
                    ))
                }
            };
            each(chunk, fragments);
        }
        Ok(c.pos())
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::single;
    use super::*;

    #[test]
    fn decoder_errors() {
        let m = Manifest {
            blocks: vec![single(&[1, -2], 3)],
        };
        let b = m.encode(2).unwrap();
        for cut in 0..b.len() {
            assert!(Manifest::decode(&b[..cut], 2).is_err());
        }
        let mut ext = b.clone();
        ext.push(0);
        assert!(matches!(
            Manifest::decode(&ext, 2),
            Err(LayoutError::TrailingBytes { .. })
        ));
        let mut bad = b.clone();
        bad[4 + 16] = 7;
        assert!(Manifest::decode(&bad, 2).is_err(), "unknown mode");
        assert!(m.encode(3).is_err(), "arity mismatch");
        // a one-fragment block whose fragment is negative or not below 2^32 is an error
        // naming it, unless the block is stepped over
        for (f, says) in [(-1i64, "is negative"), (1 << 32, "not below 2^32")] {
            let mut bad = b.clone();
            bad[4 + 17..4 + 25].copy_from_slice(&f.to_le_bytes());
            let err = Manifest::decode(&bad, 2).unwrap_err().to_string();
            assert!(err.contains(says) && err.contains("offset 21"), "{err}");
            let end = Manifest::visit_at(&bad, 0, 2, |_| false, |_, _| panic!("kept"));
            assert_eq!(end.unwrap(), bad.len());
        }
        // a huge block count with a tiny blob fails before allocating
        assert!(Manifest::decode(&[0xff, 0xff, 0xff, 0xff], 3).is_err());
        // so does an absurd arity: no coordinates are held for it
        for huge in [usize::MAX, usize::MAX / 8, 1 << 40] {
            assert_eq!(
                Manifest::decode(&[0, 0, 0, 0], huge).unwrap(),
                Manifest::default()
            );
            assert!(Manifest::decode(&[1, 0, 0, 0, 0, 0, 0, 0, 0], huge).is_err());
        }
    }
}
