//! The parent table of a pyramid step ([`ParentMap`]): the metavertex (its number at the
//! coarse level) of every row of every fine chunk, which the cross-level links are written
//! from. Point clouds, graphs and meshes build it a fine chunk at a time, and their rows go to
//! an anonymous temporary file as they come ([`ParentMap::spilling`]): 8 bytes a fine vertex would
//! otherwise stay in memory for the whole step. The geometries coarsened object by object
//! set parents in any order and keep theirs in memory ([`ParentMap::from_rows`]).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::sync::Mutex;

use crate::error::{Error, Result};
use crate::metadata::ChunkKey;

/// A fine vertex without a parent (its object was dropped).
pub(crate) const NO_PARENT: u64 = u64::MAX;

/// Where one fine chunk's parents are.
#[derive(Debug)]
enum Rows {
    Memory(Vec<u64>),
    /// `len` values at byte `offset` of the temporary file.
    Spilled {
        offset: u64,
        len: usize,
    },
}

/// The parent of every row of every fine chunk, in chunk order (see the
/// [module docs](self)).
#[derive(Debug, Default)]
pub(crate) struct ParentMap {
    keys: Vec<ChunkKey>,
    rows: Vec<Rows>,
    /// The temporary file of a spilling map, and the end of what is written.
    file: Option<(Mutex<File>, u64)>,
}

/// An error of the parent table's temporary file.
fn io_error(source: std::io::Error) -> Error {
    Error::Io {
        path: std::env::temp_dir().join("(pyramid parent table)"),
        source,
    }
}

impl ParentMap {
    /// An empty map whose rows go to an anonymous temporary file (in `TMPDIR`), removed
    /// when the map drops.
    pub(crate) fn spilling() -> Result<Self> {
        let file = tempfile::tempfile().map_err(io_error)?;
        Ok(Self {
            keys: Vec::new(),
            rows: Vec::new(),
            file: Some((Mutex::new(file), 0)),
        })
    }

    /// A map in memory from `(fine chunk, row, metavertex)` triples set in any order (the
    /// geometries read object by object, [`set_parent`]); rows never set have [`NO_PARENT`].
    pub(crate) fn from_rows(rows: BTreeMap<ChunkKey, Vec<u64>>) -> Self {
        let (keys, rows) = rows.into_iter().map(|(k, r)| (k, Rows::Memory(r))).unzip();
        Self {
            keys,
            rows,
            file: None,
        }
    }

    /// Appends the parents of the next fine chunk, `key` (written to the temporary file of
    /// a spilling map).
    pub(crate) fn push(&mut self, key: ChunkKey, parents: Vec<u64>) -> Result<()> {
        let rows = match &mut self.file {
            None => Rows::Memory(parents),
            Some((file, end)) => {
                let bytes: Vec<u8> = parents.iter().flat_map(|p| p.to_le_bytes()).collect();
                let f = file.get_mut().unwrap_or_else(|e| e.into_inner());
                f.seek(SeekFrom::Start(*end)).map_err(io_error)?;
                f.write_all(&bytes).map_err(io_error)?;
                let offset = *end;
                *end += bytes.len() as u64;
                Rows::Spilled {
                    offset,
                    len: parents.len(),
                }
            }
        };
        self.keys.push(key);
        self.rows.push(rows);
        Ok(())
    }

    /// The number of fine chunks.
    pub(crate) fn len(&self) -> usize {
        self.keys.len()
    }

    /// Fine chunk `i`'s key.
    pub(crate) fn key(&self, i: usize) -> &ChunkKey {
        &self.keys[i]
    }

    /// Fine chunk `i`'s parents (read back from the temporary file of a spilling map).
    pub(crate) fn rows(&self, i: usize) -> Result<Cow<'_, [u64]>> {
        match (&self.rows[i], &self.file) {
            (Rows::Memory(r), _) => Ok(Cow::Borrowed(r)),
            (Rows::Spilled { offset, len }, Some((file, _))) => {
                let mut bytes = vec![0u8; len * 8];
                let mut f = file.lock().unwrap_or_else(|e| e.into_inner());
                f.seek(SeekFrom::Start(*offset)).map_err(io_error)?;
                f.read_exact(&mut bytes).map_err(io_error)?;
                Ok(Cow::Owned(
                    bytes
                        .chunks_exact(8)
                        .map(|c| {
                            u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])
                        })
                        .collect(),
                ))
            }
            (Rows::Spilled { .. }, None) => Err(Error::InvalidInput(
                "a spilled parent table without its file".into(),
            )),
        }
    }
}

/// Sets `rows[key][row] = parent` in a [`ParentMap::from_rows`] table.
pub(crate) fn set_parent(
    rows: &mut BTreeMap<ChunkKey, Vec<u64>>,
    key: &ChunkKey,
    row: u64,
    parent: u64,
) {
    let r = match rows.get_mut(key) {
        Some(r) => r,
        None => rows.entry(key.clone()).or_default(),
    };
    let row = row as usize;
    if r.len() <= row {
        r.resize(row + 1, NO_PARENT);
    }
    r[row] = parent;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spilled_rows_read_back_as_pushed() {
        let mut spilled = ParentMap::spilling().unwrap();
        let mut memory = ParentMap::default();
        let chunks: Vec<(ChunkKey, Vec<u64>)> = (0..5i64)
            .map(|c| {
                let rows = (0..(c as u64 * 3))
                    .map(|r| {
                        if r % 4 == 1 {
                            NO_PARENT
                        } else {
                            r * 10 + c as u64
                        }
                    })
                    .collect();
                (ChunkKey(vec![c, -c]), rows)
            })
            .collect();
        for (k, r) in &chunks {
            spilled.push(k.clone(), r.clone()).unwrap();
            memory.push(k.clone(), r.clone()).unwrap();
        }
        assert_eq!(spilled.len(), 5);
        // read back in any order, twice
        for i in [3, 0, 4, 1, 2, 3] {
            assert_eq!(spilled.key(i), &chunks[i].0);
            assert_eq!(spilled.rows(i).unwrap().len(), chunks[i].1.len());
            assert_eq!(&*spilled.rows(i).unwrap(), &chunks[i].1[..]);
            assert_eq!(&*memory.rows(i).unwrap(), &chunks[i].1[..]);
        }
        let mut rows = BTreeMap::new();
        set_parent(&mut rows, &ChunkKey(vec![1]), 2, 7);
        let m = ParentMap::from_rows(rows);
        assert_eq!(&*m.rows(0).unwrap(), &[NO_PARENT, NO_PARENT, 7]);
    }
}
