//! Where the vertices of a level went ([`Places`]): the chunk and row of every vertex, by the
//! number it was added with. A pyramid step keeps one per coarse vertex while it writes its
//! cross-level links, so each is 8 bytes (a chunk index and a row), the chunk keys held once.

use rustc_hash::FxHashMap;

use crate::error::{Error, Result};
use crate::metadata::ChunkKey;

/// The (chunk, row) of every vertex of a level, by vertex number.
#[derive(Debug, Default, Clone)]
pub(crate) struct Places {
    keys: Vec<ChunkKey>,
    /// The index in `keys` of each key pushed by [`Places::push`].
    index: FxHashMap<ChunkKey, u32>,
    /// `chunk index << 32 | row` of every vertex.
    at: Vec<u64>,
}

impl Places {
    /// Places from the writer's own table: `keys`, and `chunk index << 32 | row` of every
    /// vertex.
    pub(crate) fn from_parts(keys: Vec<ChunkKey>, at: Vec<u64>) -> Self {
        Self {
            keys,
            index: FxHashMap::default(),
            at,
        }
    }

    /// Appends the next vertex, at row `row` of chunk `key`; a row or a chunk count past
    /// `u32::MAX` is an error.
    pub(crate) fn push(&mut self, key: &ChunkKey, row: u64) -> Result<()> {
        let row = u32::try_from(row)
            .map_err(|_| Error::InvalidInput(format!("row {row} of chunk {key} is past 2^32")))?;
        let ci = match self.index.get(key) {
            Some(&ci) => ci,
            None => {
                let ci = u32::try_from(self.keys.len())
                    .map_err(|_| Error::InvalidInput("more than 2^32 chunks".into()))?;
                self.keys.push(key.clone());
                self.index.insert(key.clone(), ci);
                ci
            }
        };
        self.at.push(u64::from(ci) << 32 | u64::from(row));
        Ok(())
    }

    /// The chunk and row of vertex `g`, if there is one.
    pub(crate) fn get(&self, g: u64) -> Option<(&ChunkKey, u64)> {
        let v = *self.at.get(usize::try_from(g).ok()?)?;
        let key = self.keys.get((v >> 32) as usize)?;
        Some((key, v & 0xFFFF_FFFF))
    }

    /// The number of vertices.
    pub(crate) fn len(&self) -> usize {
        self.at.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vertices_keep_their_chunk_and_row() {
        let (a, b) = (ChunkKey(vec![0, 1]), ChunkKey(vec![-3, 2]));
        let mut p = Places::default();
        p.push(&a, 7).unwrap();
        p.push(&b, 0).unwrap();
        p.push(&a, u64::from(u32::MAX)).unwrap();
        assert_eq!(p.len(), 3);
        assert_eq!(p.get(0), Some((&a, 7)));
        assert_eq!(p.get(1), Some((&b, 0)));
        assert_eq!(p.get(2), Some((&a, u64::from(u32::MAX))));
        assert_eq!(p.get(3), None);
        assert!(p.push(&b, 1 << 32).is_err());
        let q = Places::from_parts(vec![b.clone(), a.clone()], vec![1 << 32 | 5, 9]);
        assert_eq!(q.get(0), Some((&a, 5)));
        assert_eq!(q.get(1), Some((&b, 9)));
    }
}
