//! Decoding and validating a fragment index: every section length is checked before it is
//! read, so allocations are bounded by the blob size.

use super::{FragmentIndex, MAGIC, VERSION, WHAT};
use crate::layout::{invalid, le_i64, Cursor, LayoutError};

impl FragmentIndex {
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
        let base = c.pos();
        let section = c.take(16 * r)?;
        let mut ranges = Vec::with_capacity(r);
        for (k, b) in section.chunks_exact(16).enumerate() {
            let (start, count) = (le_i64(b), le_i64(&b[8..]));
            let (Ok(start), Ok(count)) = (u64::try_from(start), u64::try_from(count)) else {
                let (field, v, at) = match start < 0 {
                    true => ("range start", start, base + 16 * k),
                    false => ("range count", count, base + 16 * k + 8),
                };
                return Err(invalid(
                    WHAT,
                    format!("{field} {v} at offset {at} is negative"),
                ));
            };
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
        Ok(Self::from_parts(len, bitmap, ranges, offsets, indices))
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
    use super::super::{Fragment, FragmentIndex};

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
        // a negative start or count, named with its offset
        for (at, field) in [(24, "range start"), (32, "range count")] {
            let mut bad = good.clone();
            bad[at + 7] = 0x80;
            let err = FragmentIndex::decode(&bad, None).unwrap_err().to_string();
            assert!(
                err.contains(&format!("{field} -")) && err.contains(&format!("offset {at} ")),
                "{err}"
            );
        }
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
}
