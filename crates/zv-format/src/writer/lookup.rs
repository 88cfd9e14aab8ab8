//! Finding a chunk's index from its coordinates, once per vertex, without allocating: a dense
//! table over the chunks the bounds allow when the bounds are fixed and hold few enough
//! chunks, else a hash table (FxHash) keyed by the coordinates, held inline for up to
//! [`INLINE_AXES`] axes.

use rustc_hash::FxHashMap;

/// The most axes whose chunk coordinates the hash table holds inline.
const INLINE_AXES: usize = 4;

/// The most slots of a dense table (4 bytes each, zeroed pages untouched until used).
pub(super) const DENSE_LIMIT: u64 = 1 << 22;

/// `coords` zero-padded to [`INLINE_AXES`] values (`coords` has at most that many).
fn inline(coords: &[i64]) -> [i64; INLINE_AXES] {
    let mut k = [0; INLINE_AXES];
    k[..coords.len()].copy_from_slice(coords);
    k
}

/// The hash table.
#[derive(Debug)]
enum Hashed {
    Inline(FxHashMap<[i64; INLINE_AXES], u32>),
    Boxed(FxHashMap<Box<[i64]>, u32>),
}

/// A dense table over the chunk coordinates `lo..=hi` (row-major), holding index + 1 (0: no
/// chunk yet).
#[derive(Debug)]
struct Dense {
    lo: Vec<i64>,
    extent: Vec<u64>,
    slots: Vec<u32>,
}

impl Dense {
    /// The table over `lo..=hi`, if it has at most [`DENSE_LIMIT`] slots.
    fn new(lo: Vec<i64>, hi: &[i64]) -> Option<Self> {
        let extent: Vec<u64> = lo
            .iter()
            .zip(hi)
            .map(|(&l, &h)| u64::try_from(i128::from(h) - i128::from(l) + 1).ok())
            .collect::<Option<_>>()?;
        let n = extent
            .iter()
            .try_fold(1u64, |acc, &e| acc.checked_mul(e))
            .filter(|&n| n <= DENSE_LIMIT)?;
        Some(Self {
            lo,
            extent,
            slots: vec![0; n as usize],
        })
    }

    /// The slot of `coords`, if they are inside the table.
    #[inline]
    fn slot(&self, coords: &[i64]) -> Option<usize> {
        let mut s = 0u64;
        for ((&c, &l), &e) in coords.iter().zip(&self.lo).zip(&self.extent) {
            let d = c.checked_sub(l).and_then(|d| u64::try_from(d).ok())?;
            if d >= e {
                return None;
            }
            s = s * e + d;
        }
        Some(s as usize)
    }
}

/// Chunk coordinates → chunk index.
#[derive(Debug)]
pub(super) struct ChunkLookup {
    dense: Option<Dense>,
    hashed: Hashed,
}

impl ChunkLookup {
    /// A lookup for chunk coordinates of `ndim` axes; `dense` is the inclusive range of chunk
    /// coordinates all chunks are known to lie in, if any (coordinates outside it still work).
    pub(super) fn new(ndim: usize, dense: Option<(Vec<i64>, Vec<i64>)>) -> Self {
        Self {
            dense: dense.and_then(|(lo, hi)| Dense::new(lo, &hi)),
            hashed: if ndim <= INLINE_AXES {
                Hashed::Inline(FxHashMap::default())
            } else {
                Hashed::Boxed(FxHashMap::default())
            },
        }
    }

    /// An empty lookup over the same dense range, for a slice of a batch placed apart.
    pub(super) fn empty_like(&self) -> Self {
        Self {
            dense: self.dense.as_ref().map(|d| Dense {
                lo: d.lo.clone(),
                extent: d.extent.clone(),
                slots: vec![0; d.slots.len()],
            }),
            hashed: match &self.hashed {
                Hashed::Inline(_) => Hashed::Inline(FxHashMap::default()),
                Hashed::Boxed(_) => Hashed::Boxed(FxHashMap::default()),
            },
        }
    }

    /// The dense slot of `coords`, if there is one.
    #[inline]
    fn slot(&self, coords: &[i64]) -> Option<usize> {
        self.dense.as_ref().and_then(|d| d.slot(coords))
    }

    /// The index of the chunk at `coords`, if it has one.
    #[inline]
    pub(super) fn get(&self, coords: &[i64]) -> Option<u32> {
        if let (Some(d), Some(s)) = (&self.dense, self.slot(coords)) {
            return d.slots[s].checked_sub(1);
        }
        match &self.hashed {
            Hashed::Inline(m) => m.get(&inline(coords)).copied(),
            Hashed::Boxed(m) => m.get(coords).copied(),
        }
    }

    /// Gives the chunk at `coords` the index `index` (below `u32::MAX`).
    pub(super) fn insert(&mut self, coords: &[i64], index: u32) {
        if let Some(s) = self.slot(coords) {
            if let Some(d) = &mut self.dense {
                d.slots[s] = index + 1;
            }
            return;
        }
        match &mut self.hashed {
            Hashed::Inline(m) => m.insert(inline(coords), index),
            Hashed::Boxed(m) => m.insert(coords.into(), index),
        };
    }

    /// Forgets the chunk at `coords`.
    pub(super) fn remove(&mut self, coords: &[i64]) {
        if let Some(s) = self.slot(coords) {
            if let Some(d) = &mut self.dense {
                d.slots[s] = 0;
            }
            return;
        }
        match &mut self.hashed {
            Hashed::Inline(m) => m.remove(&inline(coords)),
            Hashed::Boxed(m) => m.remove(coords),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_lookup_finds_what_was_inserted() {
        let lookups = [
            ChunkLookup::new(2, None),
            ChunkLookup::new(2, Some((vec![-1, 0], vec![1, 3]))),
            ChunkLookup::new(5, None),
            ChunkLookup::new(2, Some((vec![0, 0], vec![1 << 40, 1 << 40]))), // too large
        ];
        for mut l in lookups {
            let nd = if matches!(l.hashed, Hashed::Boxed(_)) {
                5
            } else {
                2
            };
            let key = |a: i64, b: i64| [&[a, b][..], &vec![9; nd - 2]].concat();
            // inside and outside the dense range
            let keys = [key(-1, 0), key(1, 3), key(0, 2), key(2, 0), key(-5, -5)];
            for (i, k) in keys.iter().enumerate() {
                assert_eq!(l.get(k), None);
                l.insert(k, i as u32);
            }
            for (i, k) in keys.iter().enumerate() {
                assert_eq!(l.get(k), Some(i as u32));
            }
            l.remove(&keys[1]);
            l.remove(&keys[3]);
            assert_eq!(l.get(&keys[1]), None);
            assert_eq!(l.get(&keys[3]), None);
            assert_eq!(l.get(&keys[4]), Some(4));
        }
        assert!(ChunkLookup::new(2, Some((vec![0, 0], vec![3, 3])))
            .dense
            .is_some());
    }
}
