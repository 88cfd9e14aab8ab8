//! The vertex records of every chunk, as batches arrive: held in memory per chunk while they
//! fit the memory budget ([`WriterOptions::memory_budget`](super::WriterOptions)); once they
//! do not, everything held goes to a spill file per chunk in a temporary directory (created
//! then, removed when the writer drops), and so again each time the budget fills up, so that the
//! records in memory stay within the budget (plus one record) however many vertices stream
//! through. [`ZvWriter::finish`](super::ZvWriter::finish) takes one chunk's records at a time
//! per thread: its spill file (if any) followed by what is held in memory, which is the order
//! they arrived in, so a spilled and an unspilled write give the same store.
//!
//! A record is a [`SpillHeader`] ([`HEADER_LEN`] bytes), then the vertex's stored
//! coordinates, then one cell per vertex attribute column.

use std::borrow::Cow;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::lookup::ChunkLookup;
use crate::error::{Error, Result};
use crate::metadata::ChunkKey;

/// The length of a record's header.
pub(super) const HEADER_LEN: usize = 16;

/// The fixed part of a spill record: which fragment the vertex belongs to and which vertex it
/// is. Records arrive in the order they take within their fragment (skeletons excepted, which
/// are ordered by [`SkeletonOrder`](super::skeleton::SkeletonOrder)), so the order within a
/// fragment is the arrival order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct SpillHeader {
    /// What makes the fragment: the object (stores with objects), the bin (point clouds
    /// without object ids) or the piece (polylines, the chunk's fragment number).
    pub(super) fragment: u64,
    /// The vertex's global index (the order vertices were added in).
    pub(super) vertex: u64,
}

impl SpillHeader {
    /// Appends the header's [`HEADER_LEN`] bytes to `out`.
    pub(super) fn encode_into(&self, out: &mut Vec<u8>) {
        let mut b = [0u8; HEADER_LEN];
        b[..8].copy_from_slice(&self.fragment.to_le_bytes());
        b[8..].copy_from_slice(&self.vertex.to_le_bytes());
        out.extend_from_slice(&b);
    }

    /// The header at the start of `record` (which holds at least [`HEADER_LEN`] bytes).
    pub(super) fn decode(record: &[u8]) -> Self {
        Self {
            fragment: u64_at(record, 0),
            vertex: u64_at(record, 8),
        }
    }

    /// The fragment of the record at the start of `record`.
    pub(super) fn fragment_of(record: &[u8]) -> u64 {
        u64_at(record, 0)
    }
}

/// The little-endian `u64` at `record[i..i + 8]`.
fn u64_at(record: &[u8], i: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&record[i..i + 8]);
    u64::from_le_bytes(b)
}

/// Bytes of records a chunk stages before appending them to its buffer: writes to a thousand
/// chunks then touch a thousand small, cache-resident stages rather than a thousand growing
/// buffers (pages and cache lines), and each buffer grows by whole stages.
const STAGE: usize = 256;

/// The state of one chunk.
#[derive(Debug, Clone)]
pub(super) struct SpillChunk {
    /// Records so far.
    pub(super) rows: u64,
    /// Polylines: pieces (fragments) so far.
    pub(super) segments: u64,
    /// The records held in memory (they follow those in the spill file, and precede those
    /// staged).
    held: Vec<u8>,
    /// Whether records of this chunk went to its spill file.
    spilled: bool,
    /// The bytes staged.
    staged: usize,
    stage: [u8; STAGE],
}

impl Default for SpillChunk {
    fn default() -> Self {
        Self {
            rows: 0,
            segments: 0,
            held: Vec::new(),
            spilled: false,
            staged: 0,
            stage: [0; STAGE],
        }
    }
}

impl SpillChunk {
    /// Appends the staged bytes to the buffer.
    pub(super) fn unstage(&mut self) {
        self.held.extend_from_slice(&self.stage[..self.staged]);
        self.staged = 0;
    }

    /// Appends a record (staged; [`SpillChunk::unstage`] ends a batch). Returns whether the
    /// chunk's stage was empty before (the chunk then has staged bytes to append).
    pub(super) fn push(&mut self, record: &[u8]) -> bool {
        self.rows += 1;
        if self.staged + record.len() > STAGE {
            self.unstage();
        }
        if record.len() > STAGE {
            self.held.extend_from_slice(record);
            return false;
        }
        let began = self.staged == 0;
        crate::short_copy::copy(
            &mut self.stage[self.staged..self.staged + record.len()],
            record,
        );
        self.staged += record.len();
        began
    }
}

/// The records of every occupied chunk, in memory up to the budget and in spill files past it.
#[derive(Debug)]
pub(super) struct Spill {
    budget: u64,
    /// Bytes held in memory.
    held: u64,
    /// The spill directory, once something is spilled (removed when dropped).
    dir: Option<tempfile::TempDir>,
    /// The index of each chunk, by its coordinates.
    lookup: ChunkLookup,
    /// The chunks, by index (the order they were first seen in).
    chunks: Vec<SpillChunk>,
    /// The chunks with staged bytes.
    staging: Vec<u32>,
    keys: Vec<ChunkKey>,
}

/// An I/O error on `path`.
fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_owned(),
        source,
    }
}

impl Spill {
    /// No chunks yet; chunks are found by `lookup`, and records are held in memory up to
    /// `budget` bytes.
    pub(super) fn new(lookup: ChunkLookup, budget: u64) -> Self {
        Self {
            budget,
            held: 0,
            dir: None,
            lookup,
            chunks: Vec::new(),
            staging: Vec::new(),
            keys: Vec::new(),
        }
    }

    /// How chunks are found (an empty copy of it places a slice of a batch apart).
    pub(super) fn lookup(&self) -> &ChunkLookup {
        &self.lookup
    }

    /// The occupied chunks, in the order they were first seen (their index order).
    pub(super) fn keys(&self) -> &[ChunkKey] {
        &self.keys
    }

    /// The state of chunk number `index`.
    pub(super) fn chunk(&self, index: u32) -> &SpillChunk {
        &self.chunks[index as usize]
    }

    /// Every chunk's key and state, in index order.
    pub(super) fn chunks(&self) -> impl Iterator<Item = (&ChunkKey, &SpillChunk)> {
        self.keys.iter().zip(&self.chunks)
    }

    /// The index of the chunk at `coords`, which becomes occupied if it was not.
    pub(super) fn index(&mut self, coords: &[i64]) -> u32 {
        if let Some(i) = self.lookup.get(coords) {
            return i;
        }
        let index = self.chunks.len() as u32;
        self.lookup.insert(coords, index);
        self.chunks.push(SpillChunk::default());
        self.keys.push(ChunkKey(coords.to_vec()));
        index
    }

    /// Sets the row count of chunk number `index`, whose records were written elsewhere (the
    /// parts of a distributed write, merged at its commit).
    pub(super) fn set_rows(&mut self, index: u32, rows: u64) {
        self.chunks[index as usize].rows = rows;
    }

    /// Sets the piece count of chunk number `index`, whose pieces were written elsewhere.
    pub(super) fn set_segments(&mut self, index: u32, segments: u64) {
        self.chunks[index as usize].segments = segments;
    }

    /// Forgets the chunks from number `occupied` on (which hold no records yet).
    pub(super) fn truncate(&mut self, occupied: usize) {
        for key in self.keys.drain(occupied..) {
            self.lookup.remove(&key.0);
        }
        self.chunks.truncate(occupied);
    }

    /// Counts one more piece in chunk number `index`; returns the piece's fragment number.
    pub(super) fn add_segment(&mut self, index: u32) -> u64 {
        let c = &mut self.chunks[index as usize];
        c.segments += 1;
        c.segments - 1
    }

    /// Appends a record to chunk number `index` (staged: [`Spill::unstage`] ends a batch).
    pub(super) fn push(&mut self, index: u32, record: &[u8]) {
        self.held += record.len() as u64;
        if self.chunks[index as usize].push(record) {
            self.staging.push(index);
        }
    }

    /// Whether records went to spill files (else every record is held in memory).
    pub(super) fn spilled(&self) -> bool {
        self.dir.is_some()
    }

    /// Whether `bytes` more records fit the memory budget (none of them would be spilled).
    pub(super) fn fits(&self, bytes: u64) -> bool {
        self.held.saturating_add(bytes) <= self.budget
    }

    /// The keys and the chunks, the chunks to be filled in place (from several threads, each
    /// its own chunks); [`Spill::filled`] then counts the bytes they were given.
    pub(super) fn split_mut(&mut self) -> (&[ChunkKey], &mut [SpillChunk]) {
        (&self.keys, &mut self.chunks)
    }

    /// Counts `bytes` of records given to the chunks through [`Spill::split_mut`] (each chunk
    /// unstaged).
    pub(super) fn filled(&mut self, bytes: u64) {
        self.held += bytes;
    }

    /// Appends every chunk's staged records to its buffer.
    pub(super) fn unstage(&mut self) {
        for i in self.staging.drain(..) {
            self.chunks[i as usize].unstage();
        }
    }

    /// Makes room in memory for `counts[i]` more records of `record_len` bytes in chunk
    /// number `i`, if they all fit the budget (otherwise buffers grow as records come).
    pub(super) fn reserve(&mut self, counts: &[u32], record_len: usize) {
        let total: u64 = counts.iter().map(|&c| u64::from(c)).sum::<u64>() * record_len as u64;
        if self.held.saturating_add(total) > self.budget {
            return;
        }
        for (c, &n) in self.chunks.iter_mut().zip(counts) {
            c.held.reserve(n as usize * record_len);
        }
    }

    /// Whether the records held in memory exceed the budget.
    pub(super) fn over_budget(&self) -> bool {
        self.held > self.budget
    }

    /// Appends every chunk's records held in memory to its spill file, and frees them.
    pub(super) fn spill_all(&mut self) -> Result<()> {
        self.unstage();
        let dir = match &self.dir {
            Some(d) => d.path().to_owned(),
            None => {
                let d = tempfile::Builder::new()
                    .prefix("zv-spill-")
                    .tempdir()
                    .map_err(io_error(&std::env::temp_dir()))?;
                let path = d.path().to_owned();
                self.dir = Some(d);
                path
            }
        };
        for (i, c) in self.chunks.iter_mut().enumerate() {
            if c.held.is_empty() {
                continue;
            }
            let file = spill_file(&dir, i);
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&file)
                .map_err(io_error(&file))?;
            f.write_all(&c.held).map_err(io_error(&file))?;
            c.held = Vec::new();
            c.spilled = true;
        }
        self.held = 0;
        Ok(())
    }

    /// The records of chunk number `index`, in the order they arrived (none staged).
    pub(super) fn read(&self, index: usize) -> Result<Cow<'_, [u8]>> {
        let c = &self.chunks[index];
        let Some(dir) = self.dir.as_ref().filter(|_| c.spilled) else {
            return Ok(Cow::Borrowed(&c.held));
        };
        let file = spill_file(dir.path(), index);
        let mut out = std::fs::read(&file).map_err(io_error(&file))?;
        out.extend_from_slice(&c.held);
        Ok(Cow::Owned(out))
    }
}

/// The spill file of chunk number `index` in `dir`.
fn spill_file(dir: &Path, index: usize) -> PathBuf {
    dir.join(format!("c{index}.spill"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_round_trip_in_16_bytes() {
        let h = SpillHeader {
            fragment: 7,
            vertex: 1 << 40,
        };
        let mut out = vec![0xAA];
        h.encode_into(&mut out);
        assert_eq!(out.len(), 1 + HEADER_LEN);
        assert_eq!(&out[1..9], &7u64.to_le_bytes());
        out.extend_from_slice(&[1, 2, 3]);
        assert_eq!(SpillHeader::decode(&out[1..]), h);
        assert_eq!(SpillHeader::fragment_of(&out[1..]), 7);
    }

    /// Adds a record of vertex `v` to chunk `ci`.
    fn add(spill: &mut Spill, ci: u32, v: u64) {
        let mut rec = Vec::new();
        SpillHeader {
            fragment: 0,
            vertex: v,
        }
        .encode_into(&mut rec);
        spill.push(ci, &rec);
    }

    fn vertices(spill: &Spill, ci: usize) -> Vec<u64> {
        let raw = spill.read(ci).unwrap();
        raw.chunks_exact(HEADER_LEN)
            .map(|r| SpillHeader::decode(r).vertex)
            .collect()
    }

    #[test]
    fn records_are_kept_per_chunk_in_memory_and_spilled_past_the_budget() {
        for (ndim, budget) in [(2, 0), (2, 2 * HEADER_LEN as u64), (2, u64::MAX), (5, 0)] {
            let mut spill = Spill::new(ChunkLookup::new(ndim, None), budget);
            let pad = |k: [i64; 2]| [&k[..], &vec![7; ndim - 2]].concat();
            let (a, b) = (pad([0, 1]), pad([-1, 0]));
            assert_eq!(spill.index(&a), 0);
            assert_eq!(spill.index(&b), 1);
            assert_eq!(spill.index(&a), 0);
            for (ci, v) in [(0, 1), (1, 2), (0, 3), (0, 4), (1, 5)] {
                add(&mut spill, ci, v);
                if spill.over_budget() {
                    spill.spill_all().unwrap();
                }
            }
            spill.unstage();
            assert_eq!(spill.dir.is_some(), budget < u64::MAX, "{budget}");
            assert_eq!(vertices(&spill, 0), vec![1, 3, 4]);
            assert_eq!(vertices(&spill, 1), vec![2, 5]);
            assert_eq!(spill.chunk(0).rows, 3);
            assert_eq!(spill.keys(), &[ChunkKey(a.clone()), ChunkKey(b.clone())]);
            assert_eq!(spill.add_segment(1), 0);
            assert_eq!(spill.add_segment(1), 1);
            assert_eq!(spill.chunk(1).segments, 2);
            // chunks met by a refused batch are forgotten
            let c = pad([5, 5]);
            assert_eq!(spill.index(&c), 2);
            spill.truncate(2);
            assert_eq!(spill.keys().len(), 2);
            assert_eq!(spill.index(&b), 1);
            assert_eq!(spill.index(&c), 2);
        }
    }
}
