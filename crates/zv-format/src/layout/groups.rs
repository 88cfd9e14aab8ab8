//! Groups (`groups/data` + `groups/offsets`; `docs/format-decisions.md`, "Groups").
//!
//! ```text
//! groups/data      int64[]  object ids of group 0, then group 1, …, back to back
//! groups/offsets   int64[G] byte offset of each group in `data` (no terminal entry;
//!                           group g spans off[g] .. off[g+1], the last runs to the end)
//! ```
//!
//! ```
//! use zv_format::layout::groups::Groups;
//! let g = Groups { members: vec![vec![0, 2], vec![1]] };
//! let (data, offsets) = g.encode()?;
//! assert_eq!(offsets, [0i64, 16].iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>());
//! assert_eq!(Groups::decode(&data, &offsets)?, g);
//! # Ok::<(), zv_format::layout::LayoutError>(())
//! ```

use super::{i64s, invalid, put_i64s, to_i64, LayoutError};

const WHAT: &str = "groups";

/// The object ids of each group `0..G`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Groups {
    /// `members[g]`: the object ids of group `g`, in stored order.
    pub members: Vec<Vec<u64>>,
}

impl Groups {
    /// Encodes `(data, offsets)`.
    pub fn encode(&self) -> Result<(Vec<u8>, Vec<u8>), LayoutError> {
        let mut data = Vec::new();
        let mut offsets = Vec::with_capacity(8 * self.members.len());
        for ids in &self.members {
            offsets.extend_from_slice(&(data.len() as i64).to_le_bytes());
            for &id in ids {
                data.extend_from_slice(&to_i64(id, WHAT)?.to_le_bytes());
            }
        }
        Ok((data, offsets))
    }

    /// Decodes `data` and `offsets`, checking that offsets start at 0, do not decrease, are
    /// multiples of 8 and lie within `data`, and that ids are not negative.
    pub fn decode(data: &[u8], offsets: &[u8]) -> Result<Self, LayoutError> {
        let ids = i64s(data, WHAT)?;
        let offs = i64s(offsets, "groups offsets")?;
        if offs.is_empty() {
            if !data.is_empty() {
                return Err(invalid(WHAT, "no groups but a non-empty data blob"));
            }
            return Ok(Self::default());
        }
        let mut members = Vec::with_capacity(offs.len());
        for (g, &o) in offs.iter().enumerate() {
            let end = offs.get(g + 1).copied().unwrap_or(data.len() as i64);
            let ok = o >= 0 && o % 8 == 0 && end % 8 == 0 && o <= end && end as usize <= data.len();
            if !ok || (g == 0 && o != 0) {
                return Err(invalid(
                    "groups offsets",
                    format!(
                        "group {g} spans bytes {o}..{end} of a {}-byte data blob",
                        data.len()
                    ),
                ));
            }
            let span = &ids[o as usize / 8..end as usize / 8];
            let mut v = Vec::with_capacity(span.len());
            for &id in span {
                v.push(
                    u64::try_from(id).map_err(|_| {
                        invalid(WHAT, format!("group {g}: negative object id {id}"))
                    })?,
                );
            }
            members.push(v);
        }
        Ok(Self { members })
    }

    /// The number of groups.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Whether there are no groups.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }
}

/// Writes raw int64 values (for tests and writers).
pub fn encode_i64s(values: &[i64]) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() * 8);
    put_i64s(&mut out, values.iter().copied());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn golden_and_errors() {
        let g = Groups {
            members: vec![vec![0, 2], vec![1]],
        };
        let (data, offsets) = g.encode().unwrap();
        assert_eq!(data, encode_i64s(&[0, 2, 1]));
        assert_eq!(offsets, encode_i64s(&[0, 16]));
        let empty_groups = Groups {
            members: vec![vec![], vec![3], vec![]],
        };
        let (d, o) = empty_groups.encode().unwrap();
        assert_eq!(Groups::decode(&d, &o).unwrap(), empty_groups);
        assert_eq!(Groups::decode(&[], &[]).unwrap(), Groups::default());
        assert!(
            Groups::decode(&data, &encode_i64s(&[0, 12])).is_err(),
            "unaligned"
        );
        assert!(
            Groups::decode(&data, &encode_i64s(&[8, 16])).is_err(),
            "first offset"
        );
        assert!(
            Groups::decode(&data, &encode_i64s(&[0, 32])).is_err(),
            "past end"
        );
        assert!(
            Groups::decode(&data, &encode_i64s(&[0, 16, 8])).is_err(),
            "decreasing"
        );
        assert!(
            Groups::decode(&data[..23], &offsets).is_err(),
            "ragged data"
        );
        assert!(
            Groups::decode(&encode_i64s(&[-1]), &encode_i64s(&[0])).is_err(),
            "negative id"
        );
        assert!(Groups::decode(&data, &[]).is_err(), "data without groups");
    }
}
