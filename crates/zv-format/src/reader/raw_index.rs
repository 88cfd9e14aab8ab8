//! zv's container of a level's object index (`data` + `offsets`), read but not decoded
//! ([`RawIndex`]). Reading many objects decodes each manifest where it is used, straight into
//! the object's fragment references, instead of decoding the whole index into manifests
//! first (a level of a million fragments spread over many chunks has as many blocks, each a
//! decoded block of about 70 bytes). Only the offsets are checked up front; anything else
//! wrong is found as the manifests are used, and the caller then reads through the decoded
//! index, whose errors name the fault exactly.

use super::Level;
use crate::error::Result;
use crate::layout::manifest::{BlockFragments, ChunkCoords, Manifest};
use crate::layout::LayoutError;

/// zv's object-index container, its offsets checked.
pub(crate) struct RawIndex {
    data: Vec<u8>,
    /// Where each manifest starts, then the end of the stream (`num_objects + 1` values,
    /// non-decreasing, the first 0).
    bounds: Vec<usize>,
    sid_ndim: usize,
}

impl RawIndex {
    /// The container of `data` (the manifests) and `offsets` (an `i64` start per object):
    /// `None` when the offsets are not `n` non-decreasing starts inside the stream, the first
    /// 0 (the decoded read names the fault).
    fn new(data: Vec<u8>, offsets: &[u8], sid_ndim: usize, n: usize) -> Option<Self> {
        if offsets.len() != n.checked_mul(8)? || (n == 0 && !data.is_empty()) {
            return None;
        }
        let mut bounds = Vec::with_capacity(n + 1);
        for o in offsets.chunks_exact(8) {
            let v = i64::from_le_bytes([o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7]]);
            let v = usize::try_from(v).ok().filter(|&v| v <= data.len())?;
            if bounds.last().is_some_and(|&last| v < last) || (bounds.is_empty() && v != 0) {
                return None;
            }
            bounds.push(v);
        }
        bounds.push(data.len());
        Some(Self {
            data,
            bounds,
            sid_ndim,
        })
    }

    /// The number of objects.
    pub(crate) fn num_objects(&self) -> u64 {
        (self.bounds.len() - 1) as u64
    }

    /// Gives `each` every block of object `id`'s manifest, in order. An error when the id is
    /// past the objects, or the manifest does not decode or does not fill its bytes.
    pub(crate) fn visit(
        &self,
        id: u64,
        each: impl FnMut(ChunkCoords, BlockFragments),
    ) -> Result<(), LayoutError> {
        let i = usize::try_from(id).unwrap_or(usize::MAX);
        let (Some(&start), Some(&end)) = (self.bounds.get(i), self.bounds.get(i.saturating_add(1)))
        else {
            return Err(crate::layout::invalid(
                "object index",
                format!("object {id} is past the {} objects", self.num_objects()),
            ));
        };
        let at = Manifest::visit_at(&self.data[..end], start, self.sid_ndim, |_| true, each)?;
        if at != end {
            return Err(LayoutError::TrailingBytes {
                what: "object manifest",
                end: at,
                extra: end - at,
            });
        }
        Ok(())
    }
}

impl Level {
    /// zv's container of this level's object index, read but not decoded (`None`: another
    /// container, no index, an index this level has decoded already, or offsets the decoded
    /// read must name the fault of).
    pub(crate) fn raw_object_index(&self) -> Result<Option<RawIndex>> {
        Ok(self
            .zv_container()?
            .and_then(|(data, offsets, sid_ndim, n)| RawIndex::new(data, &offsets, sid_ndim, n)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::manifest::{decode_with_offsets, ManifestBlock};

    fn encoded(manifests: &[Manifest]) -> (Vec<u8>, Vec<u8>) {
        let (mut data, mut offsets) = (Vec::new(), Vec::new());
        for m in manifests {
            offsets.extend_from_slice(&(data.len() as i64).to_le_bytes());
            m.encode_into(&mut data, 2).unwrap();
        }
        (data, offsets)
    }

    fn visited(raw: &RawIndex, id: u64) -> Result<Vec<ManifestBlock>, LayoutError> {
        let mut out = Vec::new();
        raw.visit(id, |chunk, fragments| {
            out.push(ManifestBlock { chunk, fragments })
        })?;
        Ok(out)
    }

    #[test]
    fn visiting_gives_the_decoded_blocks() {
        let manifests = vec![
            Manifest::from_refs(&[(vec![0, 1], 3), (vec![0, 1], 4), (vec![2, -1], 0)]),
            Manifest::default(),
            Manifest::from_refs(&[(vec![5, 5], 1), (vec![5, 5], 9), (vec![0, 0], 2)]),
        ];
        let (data, offsets) = encoded(&manifests);
        let raw = RawIndex::new(data.clone(), &offsets, 2, 3).unwrap();
        assert_eq!(raw.num_objects(), 3);
        let decoded = decode_with_offsets(&data, &offsets, 2).unwrap();
        for (id, m) in decoded.iter().enumerate() {
            assert_eq!(visited(&raw, id as u64).unwrap(), m.blocks, "object {id}");
        }
        assert!(visited(&raw, 3).is_err());
    }

    #[test]
    fn offsets_the_decoded_read_refuses_are_refused() {
        let manifests = vec![
            Manifest::from_refs(&[(vec![0, 1], 3)]),
            Manifest::from_refs(&[(vec![1, 1], 0)]),
        ];
        let (data, offsets) = encoded(&manifests);
        let at = |v: &[i64]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let second = i64::from_le_bytes(offsets[8..16].try_into().unwrap());
        for bad in [
            at(&[1, second]),                // first not 0
            at(&[0, data.len() as i64 + 1]), // past the stream
            at(&[second, 0]),                // decreasing
            at(&[0, -1]),                    // negative
            at(&[0]),                        // fewer than the objects
        ] {
            assert!(RawIndex::new(data.clone(), &bad, 2, 2).is_none(), "{bad:?}");
            assert!(decode_with_offsets(&data, &bad, 2).map_or(true, |m| m.len() != 2));
        }
        assert!(RawIndex::new(vec![1], &[], 2, 0).is_none());
        // a manifest cut short, or followed by bytes of another, is an error when visited
        let cut = at(&[0, second - 1]);
        let raw = RawIndex::new(data.clone(), &cut, 2, 2).unwrap();
        assert!(visited(&raw, 0).is_err());
        assert!(visited(&raw, 1).is_err());
    }
}
