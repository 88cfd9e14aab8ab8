//! Link rows (`links/0/<key>`) and the cross-level ragged blob (`links/±N/<key>`;
//! `docs/format-decisions.md`, "Cross-level links").
//!
//! Intra-level links are flat rows of `link_width` int64 chunk-local row indices into
//! `vertices/<key>`, with no header:
//!
//! ```text
//! links/0/<key>    int64[M × link_width]
//! ```
//!
//! The cross-level blob is self-describing:
//!
//! ```text
//! i64 K                      number of groups
//! i64 off[K]                 byte offset of group k within DATA (group k ends at off[k+1],
//!                            the last at the end of DATA)
//! DATA                       groups back to back, each rows of link_width × i64
//! ```
//!
//! ```
//! use zv_format::layout::links::{LinkRows, RaggedLinks};
//! let rows = LinkRows::new(2, vec![0, 1, 1, 2, 1, 3])?;
//! assert_eq!(LinkRows::decode(&rows.encode(), 2, Some(4))?, rows);
//! let ragged = RaggedLinks { link_width: 2, groups: vec![vec![1, 0, 0, 0, 1, 0, 2, 0]] };
//! assert_eq!(RaggedLinks::decode(&ragged.encode()?, 2)?, ragged);
//! # Ok::<(), zv_format::layout::LayoutError>(())
//! ```

use super::{encode_i64s, i64s, invalid, put_i64s, LayoutError};

/// Rows of `link_width` row indices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkRows {
    link_width: usize,
    values: Vec<i64>,
}

impl LinkRows {
    /// Rows from flat values (`values.len()` must be a multiple of `link_width` ≥ 1).
    pub fn new(link_width: usize, values: Vec<i64>) -> Result<Self, LayoutError> {
        if link_width == 0 || values.len() % link_width != 0 {
            return Err(invalid(
                "links",
                format!(
                    "{} values do not make rows of width {link_width}",
                    values.len()
                ),
            ));
        }
        Ok(Self { link_width, values })
    }

    /// The row width.
    pub fn link_width(&self) -> usize {
        self.link_width
    }

    /// The number of rows.
    pub fn len(&self) -> usize {
        self.values.len() / self.link_width
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Row `i`.
    pub fn row(&self, i: usize) -> Option<&[i64]> {
        self.values
            .get(i * self.link_width..(i + 1) * self.link_width)
    }

    /// The rows in order.
    pub fn rows(&self) -> impl Iterator<Item = &[i64]> + '_ {
        self.values.chunks_exact(self.link_width)
    }

    /// The flat values.
    pub fn values(&self) -> &[i64] {
        &self.values
    }

    /// The encoding.
    pub fn encode(&self) -> Vec<u8> {
        encode_i64s(&self.values)
    }

    /// Decodes rows of `link_width`; with `row_count`, every index must be in `0..row_count`
    /// (otherwise only non-negative).
    pub fn decode(
        bytes: &[u8],
        link_width: usize,
        row_count: Option<u64>,
    ) -> Result<Self, LayoutError> {
        if link_width == 0 || bytes.len() % (8 * link_width) != 0 {
            return Err(invalid(
                "links",
                format!(
                    "{} bytes are not whole rows of {link_width} int64",
                    bytes.len()
                ),
            ));
        }
        let values = i64s(bytes, "links")?;
        if let Some(v) = values
            .iter()
            .find(|&&v| v < 0 || row_count.is_some_and(|n| v as u64 >= n))
        {
            return Err(invalid(
                "links",
                format!(
                    "row index {v} is outside the chunk's {} rows",
                    row_count.map_or("?".into(), |n| n.to_string())
                ),
            ));
        }
        Ok(Self { link_width, values })
    }
}

/// The cross-level ragged blob: groups of rows of `link_width` int64.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RaggedLinks {
    /// The row width (2 in every store the reference writes).
    pub link_width: usize,
    /// Each group's flat values (a multiple of `link_width`).
    pub groups: Vec<Vec<i64>>,
}

const RAGGED: &str = "cross-level links";

impl RaggedLinks {
    /// The encoding.
    pub fn encode(&self) -> Result<Vec<u8>, LayoutError> {
        let mut out = Vec::new();
        put_i64s(&mut out, [self.groups.len() as i64]);
        let mut off = 0i64;
        for g in &self.groups {
            if self.link_width == 0 || g.len() % self.link_width != 0 {
                return Err(invalid(RAGGED, "a group is not whole rows"));
            }
            put_i64s(&mut out, [off]);
            off += 8 * g.len() as i64;
        }
        for g in &self.groups {
            put_i64s(&mut out, g.iter().copied());
        }
        Ok(out)
    }

    /// Decodes and validates the blob: `K ≥ 0`, offsets from 0, non-decreasing, within DATA,
    /// every group whole rows.
    pub fn decode(bytes: &[u8], link_width: usize) -> Result<Self, LayoutError> {
        if link_width == 0 {
            return Err(invalid(RAGGED, "link_width 0"));
        }
        let mut c = super::Cursor::new(bytes, RAGGED);
        let k = c.i64()?;
        let k =
            usize::try_from(k).map_err(|_| invalid(RAGGED, format!("negative group count {k}")))?;
        c.need(k.saturating_mul(8))?;
        let mut offs = Vec::with_capacity(k);
        for _ in 0..k {
            offs.push(c.i64()?);
        }
        let data = &bytes[c.pos()..];
        if k == 0 && !data.is_empty() {
            return Err(invalid(RAGGED, "no groups but data follows"));
        }
        let mut groups = Vec::with_capacity(k);
        for (g, &o) in offs.iter().enumerate() {
            let end = offs.get(g + 1).copied().unwrap_or(data.len() as i64);
            let ok = o >= 0 && o <= end && end as usize <= data.len() && (g > 0 || o == 0);
            if !ok {
                return Err(invalid(
                    RAGGED,
                    format!("group {g} spans {o}..{end} of {} data bytes", data.len()),
                ));
            }
            let span = &data[o as usize..end as usize];
            if span.len() % (8 * link_width) != 0 {
                return Err(invalid(
                    RAGGED,
                    format!("group {g} is not whole rows of width {link_width}"),
                ));
            }
            let values = i64s(span, RAGGED)?;
            if let Some(v) = values.iter().find(|&&v| v < 0) {
                return Err(invalid(RAGGED, format!("negative row index {v}")));
            }
            groups.push(values);
        }
        Ok(Self { link_width, groups })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn golden_graph_links() {
        let rows = LinkRows::new(2, vec![0, 1, 1, 2, 1, 3]).unwrap();
        assert_eq!(rows.encode().len(), 48);
        assert_eq!(rows.row(2), Some(&[1, 3][..]));
        assert!(LinkRows::decode(&rows.encode(), 2, Some(3)).is_err());
        assert!(LinkRows::decode(&rows.encode()[..47], 2, None).is_err());
        assert!(LinkRows::decode(&rows.encode(), 4, None).is_err());
        assert!(LinkRows::decode(&rows.encode(), 3, None).is_ok());
        assert!(LinkRows::decode(&[], 2, Some(0)).unwrap().is_empty());
    }

    #[test]
    fn golden_pyramid_blob() {
        // pyr/0/links/+1/0.1.1 after zstd: [1, 0, (0,0), (1,0), (2,0)]
        let want: Vec<u8> = [1i64, 0, 0, 0, 1, 0, 2, 0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let r = RaggedLinks::decode(&want, 2).unwrap();
        assert_eq!(r.groups, vec![vec![0, 0, 1, 0, 2, 0]]);
        assert_eq!(r.encode().unwrap(), want);
        let mut bad = want.clone();
        bad[8] = 8;
        assert!(RaggedLinks::decode(&bad, 2).is_err(), "first offset not 0");
        assert!(RaggedLinks::decode(&want[..20], 2).is_err());
        let mut bomb = vec![0u8; 16];
        bomb[..8].copy_from_slice(&i64::MAX.to_le_bytes());
        assert!(RaggedLinks::decode(&bomb, 2).is_err());
        assert!(RaggedLinks::decode(&(-1i64).to_le_bytes(), 2).is_err());
    }
}
