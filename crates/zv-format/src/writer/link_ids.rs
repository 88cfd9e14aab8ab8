//! The vertex numbers of the links a writer holds until it finishes (graph edges, skeleton
//! links, mesh faces), one after another: 4 bytes each while every number fits in 32 bits,
//! 8 bytes each once one does not (all numbers are widened then, once).
//!
//! A writer holds its links until `finish` (their chunks are known only when every vertex is
//! placed), so their numbers are most of a linked level's memory after its vertex records:
//! 16 bytes an edge as `u64` pairs, 8 bytes as `u32` pairs. Levels of more than 2^32
//! vertices still work, at 8 bytes a number.

/// Vertex numbers, in the narrowest width that holds all of them.
#[derive(Debug, Clone)]
pub(super) enum LinkIds {
    /// Every number is below 2^32.
    Narrow(Vec<u32>),
    /// Some number is not.
    Wide(Vec<u64>),
}

impl Default for LinkIds {
    fn default() -> Self {
        LinkIds::Narrow(Vec::new())
    }
}

impl LinkIds {
    /// The number of vertex numbers held.
    pub(super) fn len(&self) -> usize {
        match self {
            LinkIds::Narrow(v) => v.len(),
            LinkIds::Wide(v) => v.len(),
        }
    }

    /// Appends `ids`, widening every number held first if one of them needs it.
    pub(super) fn extend(&mut self, ids: &[u64]) {
        if let LinkIds::Narrow(v) = self {
            if ids.iter().all(|&x| u32::try_from(x).is_ok()) {
                v.extend(ids.iter().map(|&x| x as u32));
                return;
            }
            let mut wide = Vec::with_capacity(v.len() + ids.len());
            wide.extend(v.iter().map(|&x| u64::from(x)));
            *self = LinkIds::Wide(wide);
        }
        if let LinkIds::Wide(v) = self {
            v.extend_from_slice(ids);
        }
    }

    /// The numbers `start..start + out.len()` written to `out`; `false` (and `out` left as
    /// it was) when they go past the end.
    #[inline]
    pub(super) fn copy_to(&self, start: usize, out: &mut [u64]) -> bool {
        let end = start.saturating_add(out.len());
        match self {
            LinkIds::Narrow(v) => match v.get(start..end) {
                Some(s) => {
                    out.iter_mut().zip(s).for_each(|(o, &x)| *o = u64::from(x));
                    true
                }
                None => false,
            },
            LinkIds::Wide(v) => match v.get(start..end) {
                Some(s) => {
                    out.copy_from_slice(s);
                    true
                }
                None => false,
            },
        }
    }
}

/// The vertices of one link, copied out of [`LinkIds`] (at most four: a quad).
#[derive(Debug, Clone, Copy)]
pub(super) struct LinkVertices {
    ids: [u64; 4],
    len: usize,
}

impl LinkVertices {
    /// The `width` numbers of link `li` of `ids` (links of `width` numbers each, `width` at
    /// most 4); empty when the link is not there.
    #[inline]
    pub(super) fn of(ids: &LinkIds, li: usize, width: usize) -> Self {
        let mut out = LinkVertices {
            ids: [0; 4],
            len: width.min(4),
        };
        let start = li.saturating_mul(width);
        if !ids.copy_to(start, &mut out.ids[..out.len]) {
            out.len = 0;
        }
        out
    }
}

impl std::ops::Deref for LinkVertices {
    type Target = [u64];

    fn deref(&self) -> &[u64] {
        &self.ids[..self.len]
    }
}

impl IntoIterator for LinkVertices {
    type Item = u64;
    type IntoIter = std::iter::Take<std::array::IntoIter<u64, 4>>;

    fn into_iter(self) -> Self::IntoIter {
        self.ids.into_iter().take(self.len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(ids: &LinkIds) -> Vec<u64> {
        let mut out = vec![0; ids.len()];
        assert!(ids.copy_to(0, &mut out));
        out
    }

    #[test]
    fn numbers_stay_narrow_until_one_needs_more() {
        let mut ids = LinkIds::default();
        ids.extend(&[0, 5, u64::from(u32::MAX), 7]);
        assert!(matches!(ids, LinkIds::Narrow(_)));
        assert_eq!(all(&ids), [0, 5, u64::from(u32::MAX), 7]);
        ids.extend(&[1 << 32, 3]);
        assert!(matches!(ids, LinkIds::Wide(_)));
        assert_eq!(all(&ids), [0, 5, u64::from(u32::MAX), 7, 1 << 32, 3]);
        ids.extend(&[9]);
        assert_eq!(ids.len(), 7);
        let mut one = [0];
        assert!(ids.copy_to(4, &mut one));
        assert_eq!(one, [1 << 32]);
        assert!(!ids.copy_to(7, &mut one));
        assert_eq!(one, [1 << 32], "left as it was");
    }

    #[test]
    fn links_are_read_back_in_either_width() {
        for first in [2u64, u64::MAX - 1] {
            let mut ids = LinkIds::default();
            ids.extend(&[first, 1, 2, 3, 4, 5]);
            let l = LinkVertices::of(&ids, 1, 3);
            assert_eq!(&*l, &[3, 4, 5]);
            assert_eq!(l.into_iter().collect::<Vec<_>>(), [3, 4, 5]);
            assert_eq!(&*LinkVertices::of(&ids, 0, 2), &[first, 1]);
            assert!(LinkVertices::of(&ids, 2, 3).is_empty());
            assert!(LinkVertices::of(&ids, usize::MAX, 3).is_empty());
        }
    }
}
