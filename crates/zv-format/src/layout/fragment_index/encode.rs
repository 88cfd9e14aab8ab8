//! Encoding a fragment index (the layout in the [parent module](super)'s docs).

use super::{FragmentIndex, HEADER_SIZE, MAGIC, VERSION};

impl FragmentIndex {
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
}

#[cfg(test)]
mod tests {
    use super::super::{Fragment, FragmentIndex, FragmentRows};

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
}
