//! A level's object index read but not decoded ([`RawIndex`]): zv's container (`data` +
//! `offsets`) or ZV 0.9's (`vlen_manifests_v2`: a vlen-bytes `manifests` array by row and the
//! row → id table `object_ids`). Reading many objects decodes each manifest where it is used,
//! straight into the object's fragment references, instead of decoding the whole index into
//! manifests first (a level of a million fragments spread over many chunks has as many
//! blocks, each a decoded block of about 70 bytes). Only the framing (offsets, item count,
//! ids) is checked up front; anything else wrong is found as the manifests are used, and the
//! caller then reads through the decoded index, whose errors name the fault exactly.

use super::v09::object_ids::{row_ids, MAX_ID_GAP};
use super::Level;
use crate::blob::join;
use crate::error::Result;
use crate::layout::manifest::{BlockFragments, Manifest};
use crate::layout::LayoutError;
use crate::metadata::arrays::{ObjectIndexArray, VLEN_MANIFESTS_V2};
use crate::names;

/// A row with no manifest (an id the 0.9 `object_ids` table does not list).
const NO_ROW: usize = usize::MAX;

/// An object index read but not decoded, its framing checked.
pub(crate) struct RawIndex {
    /// The manifests, back to back.
    data: Vec<u8>,
    /// Where each row's manifest starts, then the end of the data (`rows + 1` values,
    /// non-decreasing, the first 0).
    bounds: Vec<usize>,
    /// Whether an empty row is an empty manifest (0.9's vlen items; in zv's stream every
    /// manifest has at least its block count).
    vlen: bool,
    /// The row of each id when ids are not the rows (0.9's sparse or permuted ids),
    /// [`NO_ROW`] for an id without one.
    row_of: Option<Vec<usize>>,
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
            vlen: false,
            row_of: None,
            sid_ndim,
        })
    }

    /// ZV 0.9's container: the vlen items back to back (`data`) and their `bounds` (at least
    /// `n + 1`; items past `n` must be empty padding), and the `object_ids` bytes (`n` int64
    /// ids); `None` when they disagree, an id is negative or stored twice, or the id space
    /// is one the decoded read refuses (it names the fault).
    fn v09(
        data: Vec<u8>,
        mut bounds: Vec<usize>,
        ids: &[u8],
        sid_ndim: usize,
        n: usize,
    ) -> Option<Self> {
        if bounds.len() <= n || bounds[n..].windows(2).any(|w| w[0] != w[1]) {
            return None;
        }
        bounds.truncate(n + 1);
        if bounds.first() != Some(&0)
            || bounds.windows(2).any(|w| w[0] > w[1])
            || bounds.last().is_some_and(|&end| end > data.len())
        {
            return None;
        }
        let ids = row_ids(ids, n, "").ok()?;
        let row_of = if ids.iter().enumerate().all(|(r, &id)| id == r as u64) {
            None
        } else {
            let max = ids.iter().copied().max().unwrap_or(0);
            if max >= (n as u64).saturating_add(MAX_ID_GAP) {
                return None;
            }
            let mut row_of = vec![NO_ROW; usize::try_from(max + 1).ok()?];
            for (r, &id) in ids.iter().enumerate() {
                if std::mem::replace(&mut row_of[id as usize], r) != NO_ROW {
                    return None;
                }
            }
            Some(row_of)
        };
        Some(Self {
            data,
            bounds,
            vlen: true,
            row_of,
            sid_ndim,
        })
    }

    /// The number of objects (ids `0..num_objects`; with 0.9's ids, the largest plus one).
    pub(crate) fn num_objects(&self) -> u64 {
        match &self.row_of {
            Some(row_of) => row_of.len() as u64,
            None => (self.bounds.len() - 1) as u64,
        }
    }

    /// Gives `each` every block of object `id`'s manifest, in order. An error when the id is
    /// past the objects, or the manifest does not decode or does not fill its bytes.
    pub(crate) fn visit(
        &self,
        id: u64,
        each: impl FnMut(&[i64], BlockFragments),
    ) -> Result<(), LayoutError> {
        let past = || {
            crate::layout::invalid(
                "object index",
                format!("object {id} is past the {} objects", self.num_objects()),
            )
        };
        let i = usize::try_from(id).unwrap_or(usize::MAX);
        let row = match &self.row_of {
            Some(row_of) => match row_of.get(i) {
                Some(&NO_ROW) => return Ok(()),
                Some(&r) => r,
                None => return Err(past()),
            },
            None => i,
        };
        let (Some(&start), Some(&end)) =
            (self.bounds.get(row), self.bounds.get(row.saturating_add(1)))
        else {
            return Err(past());
        };
        if self.vlen && start == end {
            return Ok(());
        }
        let bytes = &self.data[..end];
        let at = Manifest::visit_at(bytes, start, self.sid_ndim, |_| true, each)?;
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
    /// This level's object index, read but not decoded (`None`: the reference's vlen
    /// container, no index, an index this level has decoded already, or framing the decoded
    /// read must name the fault of).
    pub(crate) fn raw_object_index(&self) -> Result<Option<RawIndex>> {
        if self.cache.object_index.get().is_some() {
            return Ok(None);
        }
        let Some((group, model)) = self.index_model()? else {
            return Ok(None);
        };
        if model.layout.as_deref() == Some(VLEN_MANIFESTS_V2) {
            return self.raw_v09_index(&group, &model);
        }
        Ok(self
            .zv_container_of(&group, &model)?
            .and_then(|(data, offsets, sid_ndim, n)| RawIndex::new(data, &offsets, sid_ndim, n)))
    }

    /// ZV 0.9's container (`vlen_manifests_v2`) of the index group `group` with metadata
    /// `model`.
    fn raw_v09_index(&self, group: &str, model: &ObjectIndexArray) -> Result<Option<RawIndex>> {
        let Ok(n) = usize::try_from(model.num_objects) else {
            return Ok(None);
        };
        let sid_ndim = model.sid_ndim.unwrap_or(self.key_arity);
        let (Some((data, bounds)), Some(ids)) = (
            self.blobs
                .read_flat_elements(&join(&[group, names::MANIFESTS]))?,
            self.blobs.read_bytes(&join(&[group, names::OBJECT_IDS]))?,
        ) else {
            return Ok(None);
        };
        Ok(RawIndex::v09(data, bounds, &ids, sid_ndim, n))
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
            out.push(ManifestBlock {
                chunk: chunk.into(),
                fragments,
            })
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

    /// The vlen items of `manifests` back to back, their bounds, and `padding` empty items.
    fn items(manifests: &[Manifest], padding: usize) -> (Vec<u8>, Vec<usize>) {
        let (mut data, mut bounds) = (Vec::new(), vec![0]);
        for m in manifests {
            if !m.blocks.is_empty() {
                m.encode_into(&mut data, 2).unwrap();
            }
            bounds.push(data.len());
        }
        bounds.extend(std::iter::repeat_n(data.len(), padding));
        (data, bounds)
    }

    fn ids(v: &[i64]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn zv09_rows_are_visited_by_id() {
        let rows = vec![
            Manifest::from_refs(&[(vec![0, 1], 3), (vec![2, -1], 0)]),
            Manifest::default(),
            Manifest::from_refs(&[(vec![5, 5], 1)]),
        ];
        let (data, bounds) = items(&rows, 2);
        // rows in id order: ids are the rows
        let raw = RawIndex::v09(data.clone(), bounds.clone(), &ids(&[0, 1, 2]), 2, 3).unwrap();
        assert_eq!(raw.num_objects(), 3);
        for (id, m) in rows.iter().enumerate() {
            assert_eq!(visited(&raw, id as u64).unwrap(), m.blocks, "object {id}");
        }
        assert!(visited(&raw, 3).is_err());
        // sparse, permuted ids: ids without a row are empty, the largest bounds the objects
        let raw = RawIndex::v09(data.clone(), bounds.clone(), &ids(&[7, 2, 4]), 2, 3).unwrap();
        assert_eq!(raw.num_objects(), 8);
        assert_eq!(visited(&raw, 7).unwrap(), rows[0].blocks);
        assert_eq!(visited(&raw, 2).unwrap(), rows[1].blocks);
        assert_eq!(visited(&raw, 4).unwrap(), rows[2].blocks);
        for id in [0, 1, 3, 5, 6] {
            assert!(visited(&raw, id).unwrap().is_empty(), "object {id}");
        }
        assert!(visited(&raw, 8).is_err());
    }

    #[test]
    fn zv09_framing_the_decoded_read_refuses_is_refused() {
        let rows = vec![
            Manifest::from_refs(&[(vec![0, 1], 3)]),
            Manifest::from_refs(&[(vec![1, 1], 0)]),
        ];
        let (data, bounds) = items(&rows, 0);
        let ok = ids(&[0, 1]);
        assert!(RawIndex::v09(data.clone(), bounds.clone(), &ok, 2, 2).is_some());
        for (what, b, i, n) in [
            ("an id stored twice", bounds.clone(), ids(&[1, 1]), 2),
            ("a negative id", bounds.clone(), ids(&[0, -1]), 2),
            ("ids of another count", bounds.clone(), ids(&[0]), 2),
            (
                "an id space too large",
                bounds.clone(),
                ids(&[0, 1 << 40]),
                2,
            ),
            ("fewer items than rows", bounds[..2].to_vec(), ok.clone(), 2),
            (
                "bounds past the data",
                vec![0, 3, data.len() + 1],
                ok.clone(),
                2,
            ),
            ("bounds decreasing", vec![0, data.len(), 3], ok.clone(), 2),
        ] {
            assert!(RawIndex::v09(data.clone(), b, &i, 2, n).is_none(), "{what}");
        }
        // padding past the rows must be empty
        let mut padded = bounds.clone();
        padded.push(data.len() + 1);
        let mut longer = data.clone();
        longer.push(0);
        assert!(RawIndex::v09(longer, padded, &ok, 2, 2).is_none());
        // a manifest cut short is an error when visited
        let cut = vec![0, bounds[1] - 1, data.len()];
        let raw = RawIndex::v09(data, cut, &ok, 2, 2).unwrap();
        assert!(visited(&raw, 0).is_err());
    }
}
