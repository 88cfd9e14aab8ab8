//! The fragment index, version 1 (`vertex_fragments/<key>`, `link_fragments/<key>`;
//! `docs/format-decisions.md`, "Fragment index").
//!
//! A chunk's rows are split into fragments `0..F`; each is a **range** `[start, start+count)`
//! or an **explicit** list of row indices (lists may overlap). Layout, all little-endian:
//!
//! ```text
//! offset     size      field
//! 0          4  u32    magic 0x5A564647 (bytes 47 46 56 5A, "GFVZ")
//! 4          2  u16    version = 1
//! 6          2  u16    flags = 0
//! 8          4  u32    F  number of fragments
//! 12         4  u32    R  number of range fragments = popcount(bitmap)
//! ---- F = 0: the blob ends here (16 bytes) ----
//! 16         P         bitmap: bit f (LSB first) = fragment f is a range;
//!                      ceil(F/8) bytes zero-padded to P = round_up(ceil(F/8), 8)
//! 16+P       16·R      ranges: R × (i64 start, i64 count), in order of the set bits
//! 16+P+16R   4·(E+1)   explicit CSR offsets: u32[E+1], E = F − R, offsets[0] = 0, non-decreasing
//! …          8·T       explicit row indices: i64[T], T = offsets[E] (not aligned)
//! ```
//!
//! Lookup is O(1): fragment `f` is a range iff its bit is set, and its slot among the ranges
//! (or among the explicit lists) is a prefix popcount, answered from per-word ranks.
//!
//! ```
//! use zv_format::layout::fragment_index::{Fragment, FragmentIndex, FragmentRows};
//! let index = FragmentIndex::new(&[Fragment::Range { start: 0, count: 4 },
//!                                  Fragment::Explicit(vec![12, 7, 19])])?;
//! let blob = index.encode();
//! let back = FragmentIndex::decode(&blob, Some(20))?;
//! assert_eq!(back, index);
//! assert!(matches!(back.get(1), Some(FragmentRows::Explicit(&[12, 7, 19]))));
//! # Ok::<(), zv_format::layout::LayoutError>(())
//! ```

use std::ops::Range;

mod decode;
mod encode;

use super::{invalid, to_i64, LayoutError};

/// The magic number, as a little-endian `u32`.
pub const MAGIC: u32 = 0x5A56_4647;
/// The layout version this module reads and writes.
pub const VERSION: u16 = 1;
/// The size of the header.
pub const HEADER_SIZE: usize = 16;

const WHAT: &str = "fragment index";

/// One fragment, as given to the encoder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fragment {
    /// Rows `start .. start + count`.
    Range {
        /// First row.
        start: u64,
        /// Number of rows (may be 0).
        count: u64,
    },
    /// These rows, in this order.
    Explicit(Vec<u64>),
}

/// The rows of one fragment, as returned by lookups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FragmentRows<'a> {
    /// A range of rows.
    Range(Range<u64>),
    /// An explicit list of rows.
    Explicit(&'a [u64]),
}

impl FragmentRows<'_> {
    /// The number of rows.
    pub fn len(&self) -> usize {
        match self {
            FragmentRows::Range(r) => (r.end - r.start) as usize,
            FragmentRows::Explicit(rows) => rows.len(),
        }
    }

    /// Whether the fragment has no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The rows in order.
    pub fn iter(&self) -> Box<dyn Iterator<Item = u64> + '_> {
        match self {
            FragmentRows::Range(r) => Box::new(r.clone()),
            FragmentRows::Explicit(rows) => Box::new(rows.iter().copied()),
        }
    }
}

/// A decoded (or to-be-encoded) fragment index.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FragmentIndex {
    len: u32,
    /// Bit `f` of the bitmap: fragment `f` is a range.
    bitmap: Vec<u64>,
    /// `rank[w]`: number of set bits in the words before `w`.
    rank: Vec<u32>,
    ranges: Vec<(u64, u64)>,
    offsets: Vec<u32>,
    indices: Vec<u64>,
}

fn build_rank(bitmap: &[u64]) -> Vec<u32> {
    let mut rank = Vec::with_capacity(bitmap.len());
    let mut acc = 0u32;
    for w in bitmap {
        rank.push(acc);
        acc += w.count_ones();
    }
    rank
}

impl FragmentIndex {
    /// An index of exactly these fragments (ranges stay ranges, lists stay explicit).
    pub fn new(fragments: &[Fragment]) -> Result<Self, LayoutError> {
        if fragments.is_empty() {
            return Ok(Self::default());
        }
        let len = u32::try_from(fragments.len()).map_err(|_| {
            invalid(
                WHAT,
                format!("{} fragments (max u32::MAX)", fragments.len()),
            )
        })?;
        let mut bitmap = vec![0u64; fragments.len().div_ceil(64)];
        let mut ranges = Vec::new();
        let mut offsets = vec![0u32];
        let mut indices = Vec::new();
        for (f, frag) in fragments.iter().enumerate() {
            match frag {
                Fragment::Range { start, count } => {
                    start
                        .checked_add(*count)
                        .filter(|&end| end <= i64::MAX as u64)
                        .ok_or_else(|| {
                            invalid(WHAT, format!("range ({start}, {count}) overflows"))
                        })?;
                    bitmap[f / 64] |= 1 << (f % 64);
                    ranges.push((*start, *count));
                }
                Fragment::Explicit(rows) => {
                    for &r in rows {
                        to_i64(r, WHAT)?;
                    }
                    indices.extend_from_slice(rows);
                    offsets.push(
                        u32::try_from(indices.len()).map_err(|_| {
                            invalid(WHAT, "more than u32::MAX explicit row indices")
                        })?,
                    );
                }
            }
        }
        Ok(Self::from_parts(len, bitmap, ranges, offsets, indices))
    }

    /// The index of these sections (the per-word ranks are computed here).
    fn from_parts(
        len: u32,
        bitmap: Vec<u64>,
        ranges: Vec<(u64, u64)>,
        offsets: Vec<u32>,
        indices: Vec<u64>,
    ) -> Self {
        let rank = build_rank(&bitmap);
        Self {
            len,
            bitmap,
            rank,
            ranges,
            offsets,
            indices,
        }
    }

    /// Consecutive ranges of the given sizes: fragment `k` covers the `counts[k]` rows after
    /// fragment `k − 1` (how writers lay out rows fragment by fragment). Empty fragments are
    /// ranges of count 0.
    pub fn consecutive(counts: &[u64]) -> Result<Self, LayoutError> {
        let mut start = 0u64;
        let fragments: Vec<Fragment> = counts
            .iter()
            .map(|&count| {
                let f = Fragment::Range { start, count };
                start = start.saturating_add(count);
                f
            })
            .collect();
        Self::new(&fragments)
    }

    /// An index from row lists, promoting a non-empty list of consecutive rows to a range (the
    /// canonical choice: ranges where rows are contiguous, explicit lists otherwise). An empty
    /// list stays an empty explicit fragment, as the reference encodes it.
    pub fn from_rows(rows: &[Vec<u64>]) -> Result<Self, LayoutError> {
        let fragments: Vec<Fragment> = rows
            .iter()
            .map(|r| {
                let contiguous =
                    !r.is_empty() && r.windows(2).all(|w| w[0].checked_add(1) == Some(w[1]));
                if contiguous {
                    Fragment::Range {
                        start: r[0],
                        count: r.len() as u64,
                    }
                } else {
                    Fragment::Explicit(r.clone())
                }
            })
            .collect();
        Self::new(&fragments)
    }

    /// The number of fragments.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether there are no fragments.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The number of range fragments.
    pub fn num_ranges(&self) -> usize {
        self.ranges.len()
    }

    /// Whether fragment `f` is a range (`false` if `f` is out of bounds).
    pub fn is_range(&self, f: usize) -> bool {
        f < self.len() && (self.bitmap[f / 64] >> (f % 64)) & 1 == 1
    }

    /// The number of range fragments before `f`.
    fn ranks_before(&self, f: usize) -> usize {
        let w = f / 64;
        let mask = (1u64 << (f % 64)) - 1;
        self.rank[w] as usize + (self.bitmap[w] & mask).count_ones() as usize
    }

    /// The rows of fragment `f`, or `None` if `f` is out of bounds.
    pub fn get(&self, f: usize) -> Option<FragmentRows<'_>> {
        if f >= self.len() {
            return None;
        }
        let r = self.ranks_before(f);
        if self.is_range(f) {
            let (start, count) = *self.ranges.get(r)?;
            Some(FragmentRows::Range(start..start + count))
        } else {
            let e = f - r;
            let a = *self.offsets.get(e)? as usize;
            let b = *self.offsets.get(e + 1)? as usize;
            Some(FragmentRows::Explicit(self.indices.get(a..b)?))
        }
    }

    /// Every fragment in order.
    pub fn iter(&self) -> impl Iterator<Item = FragmentRows<'_>> + '_ {
        (0..self.len()).filter_map(move |f| self.get(f))
    }

    /// The fragments as [`Fragment`] values.
    pub fn to_fragments(&self) -> Vec<Fragment> {
        self.iter()
            .map(|r| match r {
                FragmentRows::Range(r) => Fragment::Range {
                    start: r.start,
                    count: r.end - r.start,
                },
                FragmentRows::Explicit(rows) => Fragment::Explicit(rows.to_vec()),
            })
            .collect()
    }

    /// Whether every fragment is a range and the ranges tile `0..rows` in order (the layout
    /// the 0.7.0 writers produce).
    pub fn is_consecutive_ranges(&self) -> bool {
        let mut next = 0u64;
        for f in 0..self.len() {
            match self.get(f) {
                Some(FragmentRows::Range(r)) if r.start == next => next = r.end,
                _ => return false,
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_matches_fragments_over_many_words() {
        let frags: Vec<Fragment> = (0..300u64)
            .map(|i| {
                if i % 3 == 0 {
                    Fragment::Explicit(vec![i, i + 2])
                } else {
                    Fragment::Range {
                        start: i,
                        count: i % 5,
                    }
                }
            })
            .collect();
        let idx = FragmentIndex::new(&frags).unwrap();
        assert_eq!(idx.to_fragments(), frags);
        let back = FragmentIndex::decode(&idx.encode(), None).unwrap();
        assert_eq!(back.to_fragments(), frags);
        assert_eq!(back.encoded_len(), back.encode().len());
    }
}
