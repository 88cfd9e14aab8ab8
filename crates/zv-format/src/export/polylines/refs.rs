//! The fragment references of every object, compact ([`RefTable`]): what a batch of objects
//! needs of the object index, about 20 bytes per block instead of the decoded manifests'
//! 150 or so per object.

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
    /// The first fragment of each block.
    pub(super) first: Vec<u64>,
    /// The number of fragments of each block.
    pub(super) count: Vec<u64>,
}

/// The table of some consecutive objects, chunks numbered in order of appearance.
#[derive(Default)]
struct Part {
    keys: Vec<Vec<i64>>,
    /// Per object the end of its blocks.
    ends: Vec<u64>,
    chunk: Vec<u32>,
    first: Vec<u64>,
    count: Vec<u64>,
}

impl Part {
    fn of(manifests: Vec<Manifest>) -> Self {
        let mut part = Part::default();
        let mut seen: CoordsMap<Vec<i64>, u32> = CoordsMap::default();
        for m in manifests {
            let start = part.chunk.len();
            for block in m.blocks {
                let c = match seen.get(&*block.chunk) {
                    Some(&c) => c,
                    None => {
                        let c = seen.len() as u32;
                        seen.insert(block.chunk.to_vec(), c);
                        part.keys.push(block.chunk.to_vec());
                        c
                    }
                };
                match block.fragments {
                    BlockFragments::Single(f) => part.push(start, c, f, 1),
                    BlockFragments::Range { start: f, count } => part.push(start, c, f, count),
                    BlockFragments::Explicit(fs) => {
                        for f in fs {
                            part.push(start, c, f, 1);
                        }
                    }
                }
            }
            part.ends.push(part.chunk.len() as u64);
        }
        part
    }

    /// Appends fragments `f .. f + n` of chunk `c` to the object whose blocks start at
    /// `start`: extends its last block when they follow it.
    fn push(&mut self, start: usize, c: u32, f: u64, n: u64) {
        let last = self.chunk.len().checked_sub(1).filter(|&l| l >= start);
        if let Some(l) = last {
            let follows = self.first[l].checked_add(self.count[l]) == Some(f);
            if self.chunk[l] == c && follows {
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
}

impl RefTable {
    /// The table of `level`'s object index (`None`: the level has none), decoded a part at a
    /// time ([`Level::object_index_parts`]).
    pub(super) fn read(level: &Level) -> Result<Option<Self>> {
        let Some((n, parts)) = level.object_index_parts(PART, |_, ms| Part::of(ms))? else {
            return Ok(None);
        };
        let mut table = RefTable {
            starts: Vec::with_capacity(n as usize + 1),
            ..RefTable::default()
        };
        table.starts.push(0);
        let mut global: CoordsMap<Vec<i64>, u32> = CoordsMap::default();
        for part in parts {
            let map: Vec<u32> = part
                .keys
                .into_iter()
                .map(|k| {
                    let next = global.len() as u32;
                    *global.entry(k).or_insert(next)
                })
                .collect();
            let base = table.chunk.len() as u64;
            table.starts.extend(part.ends.iter().map(|e| base + e));
            table.chunk.extend(part.chunk.iter().map(|&c| map[c as usize]));
            table.first.extend(part.first);
            table.count.extend(part.count);
        }
        // objects past the manifests (none in a consistent index) have no blocks
        while (table.starts.len() as u64) <= n {
            table.starts.push(table.chunk.len() as u64);
        }
        // the chunks in key order
        let mut keys: Vec<(Vec<i64>, u32)> = global.into_iter().collect();
        keys.sort_unstable();
        let mut rank = vec![0u32; keys.len()];
        for (r, (_, old)) in keys.iter().enumerate() {
            rank[*old as usize] = r as u32;
        }
        table.chunk.iter_mut().for_each(|c| *c = rank[*c as usize]);
        table.keys = keys.into_iter().map(|(k, _)| ChunkKey(k)).collect();
        Ok(Some(table))
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
