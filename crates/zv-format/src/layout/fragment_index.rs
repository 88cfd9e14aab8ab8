//! The fragment index, version 1 (`vertex_fragments/<key>`, `link_fragments/<key>`; §3.3).
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

use super::{invalid, to_i64, Cursor, LayoutError};

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
        let rank = build_rank(&bitmap);
        Ok(Self {
            len,
            bitmap,
            rank,
            ranges,
            offsets,
            indices,
        })
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

    /// The size of the encoded blob.
    pub fn encoded_len(&self) -> usize {
        if self.len == 0 {
            return HEADER_SIZE;
        }
        let p = (self.len as usize).div_ceil(8).next_multiple_of(8);
        HEADER_SIZE + p + 16 * self.ranges.len() + 4 * self.offsets.len() + 8 * self.indices.len()
    }

    /// Encodes the index (zero padding).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.encoded_len());
        out.extend_from_slice(&MAGIC.to_le_bytes());
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out.extend_from_slice(&self.len.to_le_bytes());
        out.extend_from_slice(&(self.ranges.len() as u32).to_le_bytes());
        if self.len == 0 {
            return out;
        }
        let nbytes = (self.len as usize).div_ceil(8);
        let p = nbytes.next_multiple_of(8);
        for i in 0..p {
            let byte = if i < nbytes {
                (self.bitmap[i / 8] >> (8 * (i % 8))) as u8
            } else {
                0
            };
            out.push(byte);
        }
        for &(start, count) in &self.ranges {
            out.extend_from_slice(&(start as i64).to_le_bytes());
            out.extend_from_slice(&(count as i64).to_le_bytes());
        }
        for &o in &self.offsets {
            out.extend_from_slice(&o.to_le_bytes());
        }
        for &i in &self.indices {
            out.extend_from_slice(&(i as i64).to_le_bytes());
        }
        out
    }

    /// Decodes and validates a blob. With `row_count` (the rows of the chunk the fragments
    /// refer to), every range and index must lie within `0..row_count`. Padding and trailing
    /// bytes are ignored.
    pub fn decode(bytes: &[u8], row_count: Option<u64>) -> Result<Self, LayoutError> {
        let mut c = Cursor::new(bytes, WHAT);
        let magic = c.u32()?;
        if magic != MAGIC {
            return Err(invalid(
                WHAT,
                format!("bad magic {magic:#010x} (expected {MAGIC:#010x}, bytes 47 46 56 5A)"),
            ));
        }
        let version = c.u16()?;
        if version != VERSION {
            return Err(invalid(WHAT, format!("unsupported version {version}")));
        }
        let flags = c.u16()?;
        if flags != 0 {
            return Err(invalid(
                WHAT,
                format!("reserved flags {flags:#06x} are set"),
            ));
        }
        let len = c.u32()?;
        let num_ranges = c.u32()?;
        if num_ranges > len {
            return Err(invalid(
                WHAT,
                format!("{num_ranges} range fragments but only {len} fragments"),
            ));
        }
        if len == 0 {
            return Ok(Self::default());
        }
        let f = len as usize;
        let nbytes = f.div_ceil(8);
        let p = nbytes.next_multiple_of(8);
        let bitmap_bytes = c.take(p)?;
        let mut bitmap = vec![0u64; f.div_ceil(64)];
        for (i, &b) in bitmap_bytes[..nbytes].iter().enumerate() {
            bitmap[i / 8] |= u64::from(b) << (8 * (i % 8));
        }
        // Bits past F in the last byte are padding.
        if f % 64 != 0 {
            if let Some(last) = bitmap.last_mut() {
                *last &= (1u64 << (f % 64)) - 1;
            }
        }
        let popcount: u64 = bitmap.iter().map(|w| u64::from(w.count_ones())).sum();
        if popcount != u64::from(num_ranges) {
            return Err(invalid(
                WHAT,
                format!("header says {num_ranges} ranges, the bitmap marks {popcount}"),
            ));
        }
        let r = num_ranges as usize;
        c.need(16 * r)?;
        let mut ranges = Vec::with_capacity(r);
        for k in 0..r {
            let start = c.index("range start")?;
            let count = c.index("range count")?;
            let end = start
                .checked_add(count)
                .filter(|&e| e <= i64::MAX as u64)
                .ok_or_else(|| invalid(WHAT, format!("range {k} ({start}, {count}) overflows")))?;
            if let Some(rows) = row_count {
                if end > rows {
                    return Err(invalid(
                        WHAT,
                        format!("range {k} ({start}, {count}) ends past the chunk's {rows} rows"),
                    ));
                }
            }
            ranges.push((start, count));
        }
        let e = f - r;
        c.need(4 * (e + 1))?;
        let mut offsets = Vec::with_capacity(e + 1);
        for k in 0..=e {
            let o = c.u32()?;
            let prev = offsets.last().copied();
            if k == 0 && o != 0 {
                return Err(invalid(WHAT, format!("CSR offsets start at {o}, not 0")));
            }
            if prev.is_some_and(|p| o < p) {
                return Err(invalid(WHAT, format!("CSR offsets decrease at entry {k}")));
            }
            offsets.push(o);
        }
        let t = offsets.last().copied().unwrap_or(0) as usize;
        c.need(8 * t)?;
        let mut indices = Vec::with_capacity(t);
        for _ in 0..t {
            let i = c.index("row index")?;
            if let Some(rows) = row_count {
                if i >= rows {
                    return Err(invalid(
                        WHAT,
                        format!("row index {i} is past the chunk's {rows} rows"),
                    ));
                }
            }
            indices.push(i);
        }
        let rank = build_rank(&bitmap);
        Ok(Self {
            len,
            bitmap,
            rank,
            ranges,
            offsets,
            indices,
        })
    }

    /// Checks every range and index against the chunk's `row_count`.
    pub fn check_rows(&self, row_count: u64) -> Result<(), LayoutError> {
        for (k, &(start, count)) in self.ranges.iter().enumerate() {
            if start + count > row_count {
                return Err(invalid(
                    WHAT,
                    format!("range {k} ({start}, {count}) ends past the chunk's {row_count} rows"),
                ));
            }
        }
        if let Some(i) = self.indices.iter().find(|&&i| i >= row_count) {
            return Err(invalid(
                WHAT,
                format!("row index {i} is past the chunk's {row_count} rows"),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        s.split_whitespace()
            .map(|b| u8::from_str_radix(b, 16).unwrap())
            .collect()
    }

    fn i64le(v: i64) -> String {
        v.to_le_bytes()
            .iter()
            .map(|b| format!("{b:02x} "))
            .collect()
    }

    #[test]
    fn golden_a_one_range() {
        let idx = FragmentIndex::new(&[Fragment::Range { start: 0, count: 2 }]).unwrap();
        let want = hex("47 46 56 5a 01 00 00 00 01 00 00 00 01 00 00 00
             01 00 00 00 00 00 00 00
             00 00 00 00 00 00 00 00 02 00 00 00 00 00 00 00
             00 00 00 00");
        assert_eq!(idx.encode(), want);
        assert_eq!(want.len(), 44);
        assert_eq!(FragmentIndex::decode(&want, Some(2)).unwrap(), idx);
    }

    #[test]
    fn golden_b_mixed() {
        let idx = FragmentIndex::new(&[
            Fragment::Range { start: 0, count: 4 },
            Fragment::Explicit(vec![12, 7, 19]),
            Fragment::Range {
                start: 20,
                count: 8,
            },
        ])
        .unwrap();
        let want = hex(&format!(
            "47 46 56 5a 01 00 00 00 03 00 00 00 02 00 00 00
             05 00 00 00 00 00 00 00
             {}{}{}{}
             00 00 00 00 03 00 00 00
             {}{}{}",
            i64le(0),
            i64le(4),
            i64le(20),
            i64le(8),
            i64le(12),
            i64le(7),
            i64le(19)
        ));
        assert_eq!(want.len(), 88);
        assert_eq!(idx.encode(), want);
        let back = FragmentIndex::decode(&want, Some(28)).unwrap();
        assert_eq!(back, idx);
        assert!(back.is_range(0) && !back.is_range(1) && back.is_range(2));
        assert_eq!(back.get(2), Some(FragmentRows::Range(20..28)));
    }

    #[test]
    fn golden_c_empty() {
        let idx = FragmentIndex::new(&[]).unwrap();
        assert_eq!(
            idx.encode(),
            hex("47 46 56 5a 01 00 00 00 00 00 00 00 00 00 00 00")
        );
    }

    #[test]
    fn golden_d_one_empty_explicit() {
        let idx = FragmentIndex::new(&[Fragment::Explicit(vec![])]).unwrap();
        let want = hex("47 46 56 5a 01 00 00 00 01 00 00 00 00 00 00 00
             00 00 00 00 00 00 00 00
             00 00 00 00 00 00 00 00");
        assert_eq!(idx.encode(), want);
        assert_eq!(FragmentIndex::from_rows(&[vec![]]).unwrap(), idx);
    }

    #[test]
    fn golden_e_binned_point_cloud() {
        let idx = FragmentIndex::consecutive(&[2, 0, 0, 0, 0, 0, 0, 0]).unwrap();
        let mut want =
            hex("47 46 56 5a 01 00 00 00 08 00 00 00 08 00 00 00 ff 00 00 00 00 00 00 00");
        want.extend(hex(&format!("{}{}", i64le(0), i64le(2))));
        for _ in 0..7 {
            want.extend(hex(&format!("{}{}", i64le(2), i64le(0))));
        }
        want.extend(hex("00 00 00 00"));
        assert_eq!(want.len(), 156);
        assert_eq!(idx.encode(), want);
    }

    #[test]
    fn decoder_checks() {
        let good = FragmentIndex::new(&[
            Fragment::Range { start: 0, count: 4 },
            Fragment::Explicit(vec![3, 1]),
        ])
        .unwrap()
        .encode();
        assert!(FragmentIndex::decode(&good, Some(4)).is_ok());
        assert!(
            FragmentIndex::decode(&good, Some(3)).is_err(),
            "range past rows"
        );
        let mut bad = good.clone();
        bad[0] = 0x5a;
        assert!(FragmentIndex::decode(&bad, None).is_err(), "magic");
        let mut bad = good.clone();
        bad[4] = 2;
        assert!(FragmentIndex::decode(&bad, None).is_err(), "version");
        let mut bad = good.clone();
        bad[6] = 1;
        assert!(FragmentIndex::decode(&bad, None).is_err(), "flags");
        let mut bad = good.clone();
        bad[12] = 2;
        assert!(FragmentIndex::decode(&bad, None).is_err(), "popcount");
        let mut bad = good.clone();
        bad[12] = 3;
        assert!(FragmentIndex::decode(&bad, None).is_err(), "R > F");
        for cut in 0..good.len() {
            assert!(
                FragmentIndex::decode(&good[..cut], None).is_err(),
                "cut {cut}"
            );
        }
        let mut extended = good.clone();
        extended.extend_from_slice(&[9, 9, 9]);
        assert!(
            FragmentIndex::decode(&extended, None).is_ok(),
            "trailing bytes are ignored"
        );
        // negative start
        let mut bad = good.clone();
        bad[24 + 7] = 0x80;
        assert!(FragmentIndex::decode(&bad, None).is_err(), "negative start");
        // CSR offsets must start at 0 and not decrease
        let csr = 16 + 8 + 16;
        let mut bad = good.clone();
        bad[csr] = 1;
        assert!(
            FragmentIndex::decode(&bad, None).is_err(),
            "offsets[0] != 0"
        );
        // a huge F with a tiny blob is refused before allocating
        let mut bomb = good[..16].to_vec();
        bomb[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        bomb[12..16].copy_from_slice(&0u32.to_le_bytes());
        assert!(FragmentIndex::decode(&bomb, None).is_err());
    }

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
