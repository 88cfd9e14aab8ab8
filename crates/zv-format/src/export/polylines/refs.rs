//! The fragment references of every object, compact ([`RefTable`]): what a batch of objects
//! needs of the object index, 12 bytes per block of fragments (and 8 per object) instead of
//! the decoded manifests' hundred and more per object.

use crate::error::Result;
use crate::layout::manifest::{BlockFragments, Manifest};
use crate::metadata::ChunkKey;
use crate::reader::level_scan::CoordsMap;
use crate::reader::Level;

/// Objects whose manifests are decoded at a time.
const PART: usize = 1 << 14;

/// Every object's fragment references as blocks of consecutive fragments of one chunk, in
/// manifest order (ranges are kept as ranges: a block is checked against its chunk's
/// fragment count before it is expanded).
#[derive(Debug, Default)]
pub(super) struct RefTable {
    /// The chunks the manifests name, in key order.
    pub(super) keys: Vec<ChunkKey>,
    /// Per object its first block, and the end of the last object's.
    pub(super) starts: Vec<u64>,
    /// The chunk (index in `keys`) of each block.
    pub(super) chunk: Vec<u32>,
    /// The first fragment of each block (fragment indices are below 2^32; one that is not
    /// is kept as `u32::MAX`, past any chunk's fragments).
    pub(super) first: Vec<u32>,
    /// The number of fragments of each block.
    pub(super) count: Vec<u32>,
}

impl RefTable {
    /// The table of `level`'s object index (`None`: the level has none), decoded a part at a
    /// time ([`Level::object_index_parts`]).
    pub(super) fn read(level: &Level) -> Result<Option<Self>> {
        let mut table = RefTable::default();
        let mut seen: CoordsMap<Vec<i64>, u32> = CoordsMap::default();
        let n = level.object_index_parts(PART, |first, manifests| {
            if first == 0 {
                table = RefTable::default();
                seen.clear();
            }
            for m in manifests {
                table.starts.push(table.chunk.len() as u64);
                table.add(m, &mut seen);
            }
        })?;
        let Some(n) = n else {
            return Ok(None);
        };
        // objects past the manifests (none in a consistent index) have no blocks
        while (table.starts.len() as u64) <= n {
            table.starts.push(table.chunk.len() as u64);
        }
        for v in [&mut table.chunk, &mut table.first, &mut table.count] {
            v.shrink_to_fit();
        }
        table.starts.shrink_to_fit();
        // the chunks in key order
        let mut keys: Vec<(Vec<i64>, u32)> = seen.into_iter().collect();
        keys.sort_unstable();
        let mut rank = vec![0u32; keys.len()];
        for (r, (_, old)) in keys.iter().enumerate() {
            rank[*old as usize] = r as u32;
        }
        table.chunk.iter_mut().for_each(|c| *c = rank[*c as usize]);
        table.keys = keys.into_iter().map(|(k, _)| ChunkKey(k)).collect();
        Ok(Some(table))
    }

    /// Appends the blocks of manifest `m`, the last object's; `seen` numbers the chunks in
    /// order of appearance.
    fn add(&mut self, m: Manifest, seen: &mut CoordsMap<Vec<i64>, u32>) {
        let start = self.chunk.len();
        for block in m.blocks {
            let c = match seen.get(&*block.chunk) {
                Some(&c) => c,
                None => {
                    let c = seen.len() as u32;
                    seen.insert(block.chunk.to_vec(), c);
                    c
                }
            };
            match block.fragments {
                BlockFragments::Single(f) => self.push(start, c, f, 1),
                BlockFragments::Range { start: f, count } => self.push(start, c, f, count),
                BlockFragments::Explicit(fs) => {
                    for f in fs {
                        self.push(start, c, f, 1);
                    }
                }
            }
        }
    }

    /// Appends fragments `f .. f + n` of chunk `c` to the object whose blocks start at
    /// `start`: extends its last block when they follow it.
    fn push(&mut self, start: usize, c: u32, f: u64, n: u64) {
        let clamp = |x: u64| u32::try_from(x).unwrap_or(u32::MAX);
        let (f, n) = (clamp(f), clamp(n));
        let last = self.chunk.len().checked_sub(1).filter(|&l| l >= start);
        if let Some(l) = last {
            let follows = self.first[l].checked_add(self.count[l]) == Some(f);
            if self.chunk[l] == c && follows && f != u32::MAX {
                if let Some(sum) = self.count[l].checked_add(n) {
                    self.count[l] = sum;
                    return;
                }
            }
        }
        self.chunk.push(c);
        self.first.push(f);
        self.count.push(n);
    }

    /// The number of objects.
    pub(super) fn num_objects(&self) -> u64 {
        self.starts.len() as u64 - 1
    }

    /// The object whose blocks hold block `b`.
    pub(super) fn object_of(&self, b: u64) -> u64 {
        self.starts.partition_point(|&s| s <= b).saturating_sub(1) as u64
    }
}
