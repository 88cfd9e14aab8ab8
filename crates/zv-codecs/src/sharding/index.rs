//! The shard index: for each inner chunk (C order over the inner chunk grid) an `offset` and
//! an `nbytes`, both `u64`; an inner chunk that is not stored has both equal to 2^64 − 1.
//!
//! The index is checked before anything is allocated or read for the inner chunks it names:
//! entries lie inside the shard (when its size is known), do not overlap one another or the
//! index itself, and have the encoded size of an inner chunk when the inner codecs fix it.

use std::ops::Range;

use zv_core::codec::CodecError;

use super::NAME;

/// The `offset` and `nbytes` of an inner chunk that is not stored.
pub const EMPTY: u64 = u64::MAX;

/// A decoded, validated shard index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardIndex {
    /// `(offset, nbytes)` of each inner chunk, `None` when it is not stored.
    entries: Vec<Option<(u64, u64)>>,
}

/// What a shard index is checked against.
#[derive(Debug, Clone, Default)]
pub struct IndexLimits {
    /// The size of the shard, when it is known (a whole shard was read).
    pub shard_len: Option<u64>,
    /// The bytes of the shard the index itself occupies, when known.
    pub index_range: Option<Range<u64>>,
    /// The encoded size of every inner chunk, when the inner codecs fix it.
    pub inner_size: Option<u64>,
}

impl ShardIndex {
    /// The index of `n` inner chunks from its decoded elements (`2n` native-order `u64`s),
    /// checked against `limits`.
    pub fn from_decoded(bytes: &[u8], n: usize, limits: &IndexLimits) -> Result<Self, CodecError> {
        if Some(bytes.len()) != n.checked_mul(16) {
            return Err(CodecError::SizeMismatch {
                codec: NAME.into(),
                expected: (n as u64).saturating_mul(16),
                actual: bytes.len() as u64,
            });
        }
        let mut entries = zv_core::codec::try_vec(n)?;
        for pair in bytes.chunks_exact(16) {
            let mut word = [0u8; 8];
            word.copy_from_slice(&pair[..8]);
            let offset = u64::from_ne_bytes(word);
            word.copy_from_slice(&pair[8..]);
            let nbytes = u64::from_ne_bytes(word);
            entries.push(match (offset, nbytes) {
                (EMPTY, EMPTY) => None,
                (o, s) => Some((o, s)),
            });
        }
        let index = Self { entries };
        index.check(limits)?;
        Ok(index)
    }

    /// An index from its entries (for encoding).
    pub fn new(entries: Vec<Option<(u64, u64)>>) -> Self {
        Self { entries }
    }

    /// The decoded elements of the index: `2n` native-order `u64`s.
    pub fn to_decoded(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.entries.len() * 16);
        for e in &self.entries {
            let (o, s) = e.unwrap_or((EMPTY, EMPTY));
            out.extend_from_slice(&o.to_ne_bytes());
            out.extend_from_slice(&s.to_ne_bytes());
        }
        out
    }

    /// The number of inner chunks.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the index has no inner chunk.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// `(offset, nbytes)` of inner chunk `i`, `None` if it is not stored (or out of range).
    pub fn entry(&self, i: usize) -> Option<(u64, u64)> {
        self.entries.get(i).copied().flatten()
    }

    fn check(&self, limits: &IndexLimits) -> Result<(), CodecError> {
        let bad = |i: usize, reason: String| {
            CodecError::corrupt(NAME, format!("shard index entry {i}: {reason}"))
        };
        let mut spans: Vec<(u64, u64, usize)> = Vec::new();
        for (i, e) in self.entries.iter().enumerate() {
            let Some((offset, nbytes)) = *e else { continue };
            if offset == EMPTY || nbytes == EMPTY {
                return Err(bad(
                    i,
                    format!("offset {offset} and nbytes {nbytes}: only one is 2^64-1"),
                ));
            }
            let end = offset
                .checked_add(nbytes)
                .ok_or_else(|| bad(i, format!("offset {offset} + nbytes {nbytes} overflows")))?;
            if let Some(len) = limits.shard_len {
                if end > len {
                    return Err(bad(
                        i,
                        format!("bytes {offset}..{end} lie past the end of the {len}-byte shard"),
                    ));
                }
            }
            if let Some(size) = limits.inner_size {
                if nbytes != size {
                    return Err(bad(
                        i,
                        format!("{nbytes} bytes, but an encoded inner chunk has {size}"),
                    ));
                }
            }
            if let Some(r) = &limits.index_range {
                if nbytes > 0 && offset < r.end && r.start < end {
                    return Err(bad(
                        i,
                        format!(
                            "bytes {offset}..{end} overlap the index ({}..{})",
                            r.start, r.end
                        ),
                    ));
                }
            }
            if nbytes > 0 {
                spans.push((offset, end, i));
            }
        }
        spans.sort_unstable();
        for w in spans.windows(2) {
            if w[1].0 < w[0].1 {
                return Err(bad(
                    w[1].2,
                    format!(
                        "bytes {}..{} overlap those of entry {} ({}..{})",
                        w[1].0, w[1].1, w[0].2, w[0].0, w[0].1
                    ),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(entries: &[(u64, u64)]) -> Vec<u8> {
        ShardIndex::new(entries.iter().map(|&e| Some(e)).collect()).to_decoded()
    }

    #[test]
    fn empty_entries_round_trip() {
        let index = ShardIndex::new(vec![Some((0, 4)), None, Some((4, 4))]);
        let back =
            ShardIndex::from_decoded(&index.to_decoded(), 3, &IndexLimits::default()).unwrap();
        assert_eq!(back, index);
        assert_eq!(back.entry(1), None);
        assert_eq!(back.entry(2), Some((4, 4)));
    }

    #[test]
    fn bad_indices_are_refused() {
        let limits = IndexLimits {
            shard_len: Some(40),
            index_range: Some(0..32),
            inner_size: None,
        };
        let overlap = raw(&[(32, 4), (34, 4)]);
        let e = ShardIndex::from_decoded(&overlap, 2, &IndexLimits::default()).unwrap_err();
        assert!(e.to_string().contains("overlap those of entry 0"), "{e}");
        let past = raw(&[(32, 4), (36, 8)]);
        let e = ShardIndex::from_decoded(&past, 2, &limits).unwrap_err();
        assert!(e.to_string().contains("past the end"), "{e}");
        let on_index = raw(&[(30, 4), (36, 4)]);
        let e = ShardIndex::from_decoded(&on_index, 2, &limits).unwrap_err();
        assert!(e.to_string().contains("overlap the index"), "{e}");
        let sized = IndexLimits {
            inner_size: Some(4),
            ..IndexLimits::default()
        };
        let e = ShardIndex::from_decoded(&raw(&[(0, 4), (4, 5)]), 2, &sized).unwrap_err();
        assert!(
            e.to_string().contains("an encoded inner chunk has 4"),
            "{e}"
        );
        let half = raw(&[(EMPTY, 3)]);
        assert!(ShardIndex::from_decoded(&half, 1, &IndexLimits::default()).is_err());
        let wrap = raw(&[(u64::MAX - 1, 5)]);
        assert!(ShardIndex::from_decoded(&wrap, 1, &IndexLimits::default()).is_err());
        assert!(ShardIndex::from_decoded(&[0; 15], 1, &IndexLimits::default()).is_err());
    }
}
