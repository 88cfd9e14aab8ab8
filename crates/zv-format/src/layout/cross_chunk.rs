//! Cross-chunk link records (`cross_chunk_links/<d>/data`; `docs/format-decisions.md`,
//! "Polyline / line cross-chunk records").
//!
//! Records back to back, all int64, no header:
//!
//! ```text
//! record r:  [c0_0 … c0_{n-1}, v0,  c1_0 … c1_{n-1}, v1,  …]     n = sid_ndim, link_width endpoints
//! total:     num_links × link_width × (sid_ndim + 1) × 8 bytes
//! ```
//!
//! Endpoint 0 is at the owning level, the others at level + `level_delta`; `v` is a row of
//! `vertices/<chunk>` there.
//!
//! ```
//! use zv_format::layout::cross_chunk::CrossChunkLinks;
//! let mut links = CrossChunkLinks::new(2, 3);
//! links.push(&[(&[0, 0, 0], 2), (&[1, 0, 0], 0)])?;
//! let bytes = links.encode();
//! assert_eq!(bytes.len(), 64);
//! let back = CrossChunkLinks::decode(&bytes, 1, 2, 3)?;
//! assert_eq!(back.endpoint(0, 1), Some((&[1i64, 0, 0][..], 0)));
//! # Ok::<(), zv_format::layout::LayoutError>(())
//! ```

use super::{encode_i64s, invalid, LayoutError};

const WHAT: &str = "cross-chunk links";

/// Cross-chunk link records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrossChunkLinks {
    link_width: usize,
    sid_ndim: usize,
    values: Vec<i64>,
}

impl CrossChunkLinks {
    /// No records, of the given shape.
    pub fn new(link_width: usize, sid_ndim: usize) -> Self {
        Self {
            link_width,
            sid_ndim,
            values: Vec::new(),
        }
    }

    /// Appends a record of `link_width` endpoints `(chunk, row)`.
    pub fn push(&mut self, endpoints: &[(&[i64], u64)]) -> Result<(), LayoutError> {
        if endpoints.len() != self.link_width {
            return Err(invalid(
                WHAT,
                format!(
                    "{} endpoints, link_width is {}",
                    endpoints.len(),
                    self.link_width
                ),
            ));
        }
        for (chunk, row) in endpoints {
            if chunk.len() != self.sid_ndim {
                return Err(invalid(
                    WHAT,
                    format!(
                        "chunk {chunk:?} has {} coordinates, sid_ndim is {}",
                        chunk.len(),
                        self.sid_ndim
                    ),
                ));
            }
            let row = i64::try_from(*row).map_err(|_| invalid(WHAT, "row does not fit int64"))?;
            self.values.extend_from_slice(chunk);
            self.values.push(row);
        }
        Ok(())
    }

    /// Endpoints per record.
    pub fn link_width(&self) -> usize {
        self.link_width
    }

    /// Chunk-coordinate arity.
    pub fn sid_ndim(&self) -> usize {
        self.sid_ndim
    }

    fn record_len(&self) -> usize {
        self.link_width * (self.sid_ndim + 1)
    }

    /// The number of records.
    pub fn len(&self) -> usize {
        match self.record_len() {
            0 => 0,
            n => self.values.len() / n,
        }
    }

    /// Whether there are no records.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Endpoint `k` of record `r`: `(chunk coordinates, row)`.
    pub fn endpoint(&self, r: usize, k: usize) -> Option<(&[i64], u64)> {
        if k >= self.link_width {
            return None;
        }
        let base = r * self.record_len() + k * (self.sid_ndim + 1);
        let e = self.values.get(base..base + self.sid_ndim + 1)?;
        Some((&e[..self.sid_ndim], e[self.sid_ndim] as u64))
    }

    /// The flat int64 values.
    pub fn values(&self) -> &[i64] {
        &self.values
    }

    /// Appends the records of `other`, which must have the same shape.
    pub fn append(&mut self, other: &CrossChunkLinks) -> Result<(), LayoutError> {
        if (other.link_width, other.sid_ndim) != (self.link_width, self.sid_ndim) {
            return Err(invalid(
                WHAT,
                format!(
                    "records of link_width {} and sid_ndim {} appended to records of {} and {}",
                    other.link_width, other.sid_ndim, self.link_width, self.sid_ndim
                ),
            ));
        }
        self.values.extend_from_slice(&other.values);
        Ok(())
    }

    /// Makes room for `records` more records, exactly (a count too large for memory is an
    /// error): for a caller that counts its records first.
    pub fn reserve_exact(&mut self, records: usize) -> Result<(), LayoutError> {
        let values = records
            .checked_mul(self.record_len())
            .ok_or_else(|| invalid(WHAT, format!("{records} records are too many to hold")))?;
        self.values
            .try_reserve_exact(values)
            .map_err(|_| invalid(WHAT, format!("{records} records are too many to hold")))
    }

    /// Removes every record (the shape stays).
    pub fn clear(&mut self) {
        self.values.clear();
    }

    /// The encoding.
    pub fn encode(&self) -> Vec<u8> {
        encode_i64s(&self.values)
    }

    /// Decodes `num_links` records; the length must be exactly
    /// `num_links × link_width × (sid_ndim + 1) × 8`, and rows must not be negative.
    pub fn decode(
        bytes: &[u8],
        num_links: u64,
        link_width: usize,
        sid_ndim: usize,
    ) -> Result<Self, LayoutError> {
        let mut d = RecordDecoder::new(link_width, sid_ndim)?;
        // the length is checked before anything is decoded
        d.expect(Some(num_links), bytes.len() as u64)?;
        d.push(bytes);
        d.finish(Some(num_links))
    }
}

/// Records decoded a piece of their encoding at a time (a blob read a stored chunk at a
/// time holds one chunk's bytes beside the values, not the whole encoding): the pieces are
/// the encoding cut anywhere, in order. [`CrossChunkLinks::decode`] is it with one piece.
///
/// ```
/// use zv_format::layout::cross_chunk::{CrossChunkLinks, RecordDecoder};
/// let mut links = CrossChunkLinks::new(2, 3);
/// links.push(&[(&[0, 0, 0], 2), (&[1, 0, 0], 0)])?;
/// let bytes = links.encode();
/// let mut d = RecordDecoder::new(2, 3)?;
/// d.push(&bytes[..13]);
/// d.push(&bytes[13..]);
/// assert_eq!(d.finish(None)?, links);
/// # Ok::<(), zv_format::layout::LayoutError>(())
/// ```
#[derive(Debug)]
pub struct RecordDecoder {
    out: CrossChunkLinks,
    /// The values of `out` whose rows are checked ([`RecordDecoder::check_pushed`]).
    checked: usize,
    /// The bytes of a value cut by the end of the last piece.
    carry: Vec<u8>,
    /// The bytes pushed so far.
    bytes: u64,
    /// The records handed over by [`RecordDecoder::take_whole`].
    taken: u64,
}

impl RecordDecoder {
    /// No records yet, of `link_width` endpoints of `sid_ndim` coordinates each.
    pub fn new(link_width: usize, sid_ndim: usize) -> Result<Self, LayoutError> {
        if link_width == 0 {
            return Err(invalid(WHAT, "link_width 0"));
        }
        Ok(Self {
            out: CrossChunkLinks::new(link_width, sid_ndim),
            checked: 0,
            carry: Vec::new(),
            bytes: 0,
            taken: 0,
        })
    }

    /// The records a `total`-byte encoding holds: `num_links` when it is given (an error
    /// unless the encoding is exactly its size), else as many whole records as fit.
    fn records(&self, num_links: Option<u64>, total: u64) -> Result<u64, LayoutError> {
        let record = (self.out.record_len() as u64).saturating_mul(8).max(1);
        let n = num_links.unwrap_or(total / record);
        let (w, sid) = (self.out.link_width, self.out.sid_ndim);
        let expected = (n as u128) * (w as u128) * (sid as u128 + 1) * 8;
        if expected != total as u128 {
            return Err(invalid(
                WHAT,
                format!(
                    "{total} bytes, but num_links {n} × link_width {w} × (sid_ndim {sid} + 1) × 8 = {expected}"
                ),
            ));
        }
        Ok(n)
    }

    /// Checks that an encoding of `total` bytes holds `num_links` records (or whole records
    /// when `None`), without making room for them (a blob taken a piece at a time,
    /// [`RecordDecoder::take_whole`]).
    pub fn check(&self, num_links: Option<u64>, total: u64) -> Result<(), LayoutError> {
        self.records(num_links, total).map(|_| ())
    }

    /// Checks that an encoding of `total` bytes holds `num_links` records (or whole records
    /// when `None`) and makes room for its values (a size too large for memory is an error).
    pub fn expect(&mut self, num_links: Option<u64>, total: u64) -> Result<(), LayoutError> {
        self.records(num_links, total)?;
        let values = usize::try_from(total / 8).unwrap_or(usize::MAX);
        let more = values.saturating_sub(self.out.values.len());
        self.out
            .values
            .try_reserve_exact(more)
            .map_err(|_| invalid(WHAT, format!("{total} bytes are too many to hold")))
    }

    /// Appends the next piece of the encoding.
    pub fn push(&mut self, mut piece: &[u8]) {
        self.bytes += piece.len() as u64;
        if !self.carry.is_empty() {
            let take = (8 - self.carry.len()).min(piece.len());
            self.carry.extend_from_slice(&piece[..take]);
            piece = &piece[take..];
            if self.carry.len() < 8 {
                return;
            }
            let mut v = [0u8; 8];
            v.copy_from_slice(&self.carry);
            self.out.values.push(i64::from_le_bytes(v));
            self.carry.clear();
        }
        let whole = piece.len() / 8 * 8;
        self.out.values.extend(
            piece[..whole]
                .chunks_exact(8)
                .map(|c| i64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])),
        );
        self.carry.extend_from_slice(&piece[whole..]);
    }

    /// The whole records decoded so far and not yet taken, their rows checked as
    /// [`RecordDecoder::finish`] checks them; a record cut by the end of the last piece stays
    /// for the next. With this, a blob is decoded a piece at a time without holding its
    /// records: [`RecordDecoder::finish`] then gives the records after the last take.
    pub fn take_whole(&mut self) -> Result<CrossChunkLinks, LayoutError> {
        self.check_pushed()?;
        let record = self.out.record_len().max(1);
        let whole = self.out.values.len() / record * record;
        let rest = self.out.values.split_off(whole);
        let values = std::mem::replace(&mut self.out.values, rest);
        let batch = CrossChunkLinks {
            link_width: self.out.link_width,
            sid_ndim: self.out.sid_ndim,
            values,
        };
        self.checked = 0;
        self.taken += batch.len() as u64;
        Ok(batch)
    }

    /// Checks the rows of the whole records pushed since the last check, as
    /// [`RecordDecoder::finish`] checks them (records numbered from the blob's first): a
    /// reader that pushes a stored chunk at a time finds a bad row in the chunk that holds it.
    pub fn check_pushed(&mut self) -> Result<(), LayoutError> {
        let record = self.out.record_len().max(1);
        let whole = self.out.values.len() / record * record;
        if whole > self.checked {
            let first = self.taken + (self.checked / record) as u64;
            let (w, sid) = (self.out.link_width, self.out.sid_ndim);
            check_rows(&self.out.values[self.checked..whole], w, sid, first)?;
            self.checked = whole;
        }
        Ok(())
    }

    /// The records (those after the last [`RecordDecoder::take_whole`]): the bytes pushed
    /// must be exactly `num_links` records (whole records when `None`), and rows must not be
    /// negative.
    pub fn finish(mut self, num_links: Option<u64>) -> Result<CrossChunkLinks, LayoutError> {
        self.records(num_links, self.bytes)?;
        self.check_pushed()?;
        Ok(self.out)
    }
}

/// Checks that no row of the records `values` (of `w` endpoints of `sid` coordinates and a
/// row each, the first numbered `first`) is negative.
fn check_rows(values: &[i64], w: usize, sid: usize, first: u64) -> Result<(), LayoutError> {
    let record = (w * (sid + 1)).max(1);
    for (r, rec) in values.chunks_exact(record).enumerate() {
        for k in 0..w {
            let row = rec[k * (sid + 1) + sid];
            if row < 0 {
                return Err(invalid(
                    WHAT,
                    format!(
                        "record {} endpoint {k}: negative row {row}",
                        first + r as u64
                    ),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn golden_graph_record_and_checks() {
        let want: Vec<u8> = [0i64, 0, 0, 2, 1, 0, 0, 0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let l = CrossChunkLinks::decode(&want, 1, 2, 3).unwrap();
        assert_eq!(l.endpoint(0, 0), Some((&[0i64, 0, 0][..], 2)));
        assert_eq!(l.encode(), want);
        assert!(CrossChunkLinks::decode(&want, 2, 2, 3).is_err());
        assert!(CrossChunkLinks::decode(&want, 1, 3, 3).is_err());
        assert!(CrossChunkLinks::decode(&want[..56], 1, 2, 3).is_err());
        assert!(CrossChunkLinks::decode(&want, u64::MAX, 2, 3).is_err());
        let mut neg = want.clone();
        neg[24..32].copy_from_slice(&(-1i64).to_le_bytes());
        assert!(CrossChunkLinks::decode(&neg, 1, 2, 3).is_err());
        // a mesh face: 3 endpoints
        let mut m = CrossChunkLinks::new(3, 3);
        m.push(&[(&[0, 0, 0], 1), (&[1, 0, 0], 0), (&[0, 0, 0], 2)])
            .unwrap();
        assert_eq!(m.encode().len(), 96);
        assert!(m
            .push(&[(&[0, 0], 1), (&[1, 0, 0], 0), (&[0, 0, 0], 2)])
            .is_err());
    }
}
