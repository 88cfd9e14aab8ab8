//! The spill directory: vertex records go to one file per chunk as batches arrive, so that
//! memory holds one batch, not the vertices; [`ZvWriter::finish`](super::ZvWriter::finish)
//! reads one chunk's file at a time per thread.
//!
//! A record is a [`SpillHeader`] ([`HEADER_LEN`] bytes), then the vertex's stored
//! coordinates, then one cell per vertex attribute column.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::metadata::ChunkKey;

/// The length of a record's header.
pub(super) const HEADER_LEN: usize = 24;

/// The fixed part of a spill record: which fragment the vertex belongs to, where it goes
/// within the fragment, and which vertex it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct SpillHeader {
    /// What makes the fragment: the object (stores with objects), the bin (point clouds
    /// without object ids) or the piece (polylines, the chunk's fragment number).
    pub(super) fragment: u64,
    /// The order within the fragment: the vertex's global index (polylines: its row in the
    /// chunk).
    pub(super) order: u64,
    /// The vertex's global index (the order vertices were added in).
    pub(super) vertex: u64,
}

impl SpillHeader {
    /// Appends the header's [`HEADER_LEN`] bytes to `out`.
    pub(super) fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.fragment.to_le_bytes());
        out.extend_from_slice(&self.order.to_le_bytes());
        out.extend_from_slice(&self.vertex.to_le_bytes());
    }

    /// The header at the start of `record` (which holds at least [`HEADER_LEN`] bytes).
    pub(super) fn decode(record: &[u8]) -> Self {
        let at = |i: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&record[i..i + 8]);
            u64::from_le_bytes(b)
        };
        Self {
            fragment: at(0),
            order: at(8),
            vertex: at(16),
        }
    }
}

/// The spill state of one chunk.
#[derive(Debug, Clone)]
pub(super) struct SpillChunk {
    /// The chunk's index, in the order chunks were first seen.
    pub(super) index: u32,
    file: PathBuf,
    /// Records so far.
    pub(super) rows: u64,
    /// Polylines: pieces (fragments) so far.
    pub(super) segments: u64,
}

/// The spill directory (removed when dropped) and the chunks spilled to it.
#[derive(Debug)]
pub(super) struct Spill {
    dir: tempfile::TempDir,
    chunks: HashMap<ChunkKey, SpillChunk>,
    order: Vec<ChunkKey>,
}

/// An I/O error on `path`.
fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_owned(),
        source,
    }
}

impl Spill {
    /// A new, empty spill directory in the system's temporary directory.
    pub(super) fn new() -> Result<Self> {
        let dir = tempfile::Builder::new()
            .prefix("zv-spill-")
            .tempdir()
            .map_err(io_error(&std::env::temp_dir()))?;
        Ok(Self {
            dir,
            chunks: HashMap::new(),
            order: Vec::new(),
        })
    }

    /// The occupied chunks, in the order they were first seen (their index order).
    pub(super) fn keys(&self) -> &[ChunkKey] {
        &self.order
    }

    /// The state of chunk `key`.
    pub(super) fn get(&self, key: &ChunkKey) -> Option<&SpillChunk> {
        self.chunks.get(key)
    }

    /// Every chunk's state, in no particular order.
    pub(super) fn chunks(&self) -> impl Iterator<Item = (&ChunkKey, &SpillChunk)> {
        self.chunks.iter()
    }

    /// The index of chunk `key`, which becomes occupied if it was not.
    pub(super) fn index(&mut self, key: &ChunkKey) -> u32 {
        if let Some(c) = self.chunks.get(key) {
            return c.index;
        }
        let index = self.order.len() as u32;
        let file = self.dir.path().join(format!("c{index}.spill"));
        self.chunks.insert(
            key.clone(),
            SpillChunk {
                index,
                file,
                rows: 0,
                segments: 0,
            },
        );
        self.order.push(key.clone());
        index
    }

    /// Counts `n` more pieces in chunk number `index`.
    pub(super) fn add_segments(&mut self, index: u32, n: u64) {
        if let Some(c) = self
            .order
            .get(index as usize)
            .and_then(|k| self.chunks.get_mut(k))
        {
            c.segments += n;
        }
    }

    /// Appends records of `record_len` bytes to the files of their (occupied) chunks.
    pub(super) fn append(
        &mut self,
        records: impl IntoIterator<Item = (ChunkKey, Vec<u8>)>,
        record_len: usize,
    ) -> Result<()> {
        for (key, bytes) in records {
            let Some(c) = self.chunks.get_mut(&key) else {
                continue;
            };
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&c.file)
                .map_err(io_error(&c.file))?;
            f.write_all(&bytes).map_err(io_error(&c.file))?;
            c.rows += (bytes.len() / record_len) as u64;
        }
        Ok(())
    }

    /// The records of chunk `key` (none for a chunk that is not occupied).
    pub(super) fn read(&self, key: &ChunkKey) -> Result<Vec<u8>> {
        match self.chunks.get(key) {
            Some(c) => std::fs::read(&c.file).map_err(io_error(&c.file)),
            None => Ok(Vec::new()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_round_trip_in_24_bytes() {
        let h = SpillHeader {
            fragment: 7,
            order: u64::MAX,
            vertex: 1 << 40,
        };
        let mut out = vec![0xAA];
        h.encode_into(&mut out);
        assert_eq!(out.len(), 1 + HEADER_LEN);
        assert_eq!(&out[1..9], &7u64.to_le_bytes());
        out.extend_from_slice(&[1, 2, 3]);
        assert_eq!(SpillHeader::decode(&out[1..]), h);
    }

    #[test]
    fn records_are_appended_per_chunk() {
        let mut spill = Spill::new().unwrap();
        let (a, b) = (ChunkKey(vec![0, 1]), ChunkKey(vec![-1, 0]));
        assert_eq!(spill.index(&a), 0);
        assert_eq!(spill.index(&b), 1);
        assert_eq!(spill.index(&a), 0);
        let rec = |v: u64| {
            let mut r = Vec::new();
            SpillHeader {
                fragment: 0,
                order: v,
                vertex: v,
            }
            .encode_into(&mut r);
            r
        };
        spill
            .append([(a.clone(), rec(1)), (b.clone(), rec(2))], HEADER_LEN)
            .unwrap();
        spill.append([(a.clone(), rec(3))], HEADER_LEN).unwrap();
        let raw = spill.read(&a).unwrap();
        let orders: Vec<u64> = raw
            .chunks_exact(HEADER_LEN)
            .map(|r| SpillHeader::decode(r).order)
            .collect();
        assert_eq!(orders, vec![1, 3]);
        assert_eq!(spill.get(&a).unwrap().rows, 2);
        assert_eq!(spill.keys(), &[a, b.clone()]);
        assert!(spill.read(&ChunkKey(vec![9, 9])).unwrap().is_empty());
        spill.add_segments(1, 4);
        assert_eq!(spill.get(&b).unwrap().segments, 4);
    }
}
