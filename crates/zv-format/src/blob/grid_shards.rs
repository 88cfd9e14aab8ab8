//! Sharded ZV 0.9 chunk-grid arrays (`docs/format-decisions.md`, "Writing ZV 0.9",
//! "Sharded output"): the cells of a grid array are packed `S₀ × … × S_{D-1}` to a stored
//! object with the Zarr v3 `sharding_indexed` codec (inner chunk shape `[1, …, 1]`, the cell
//! codecs inside, a little-endian index followed by `crc32c`, index at the end), as
//! zarr-vectors 0.9.2's `shard_shape=` writes them.
//!
//! A shard is one stored object, so it is written once, whole: the writer's cells are held
//! here until every occupied chunk of the level inside the shard has been given to the array
//! (empty blobs count: the writer gives every per-chunk array of a chunk-complete family a
//! blob per occupied chunk, empty or not), then the shard is encoded and stored by the thread
//! that completed it. Arrays whose cells cover only some chunks (the cross-chunk link
//! segments) keep their incomplete shards until the array's document is written, which
//! stores them first. Memory is therefore the cells of the shards in flight, not the level.

use std::collections::{HashMap, HashSet};

use serde_json::json;
use zv_core::metadata::ExtensionMetadata;

use crate::error::{Error, Result};

/// Most cells one shard may hold (its index is 16 bytes per cell).
pub const MAX_SHARD_CELLS: u64 = 1 << 20;

/// The shard shape of a level's grid arrays and how many occupied chunks each shard holds.
#[derive(Debug, Clone)]
pub(super) struct ShardPlan {
    shape: Vec<u64>,
    occupied: HashMap<Vec<u64>, usize>,
}

impl ShardPlan {
    /// The plan for shards of `shape` cells over a grid whose occupied cells are `cells`.
    pub(super) fn new(shape: Vec<u64>, cells: impl Iterator<Item = Vec<u64>>) -> Result<Self> {
        check_shard_shape(&shape)?;
        let mut occupied: HashMap<Vec<u64>, usize> = HashMap::new();
        for cell in cells {
            let shard: Vec<u64> = cell.iter().zip(&shape).map(|(&i, &s)| i / s).collect();
            *occupied.entry(shard).or_default() += 1;
        }
        Ok(Self { shape, occupied })
    }

    /// The shard shape in cells.
    pub(super) fn shape(&self) -> &[u64] {
        &self.shape
    }

    /// The shard holding grid cell `index`, and the cell's position in it (C order).
    fn locate(&self, index: &[u64]) -> (Vec<u64>, usize) {
        let mut linear = 0usize;
        let shard = index
            .iter()
            .zip(&self.shape)
            .map(|(&i, &s)| {
                linear = linear * s as usize + (i % s) as usize;
                i / s
            })
            .collect();
        (shard, linear)
    }

    /// The number of cells in one shard.
    fn cells(&self) -> usize {
        self.shape.iter().product::<u64>() as usize
    }

    /// The codec chain of a sharded grid array whose cells use `cell_codecs`.
    pub(super) fn codecs(&self, cell_codecs: Vec<ExtensionMetadata>) -> Vec<ExtensionMetadata> {
        let rank = self.shape.len();
        vec![ExtensionMetadata::with_configuration(
            "sharding_indexed",
            json!({
                "chunk_shape": vec![1u64; rank],
                "codecs": cell_codecs,
                "index_codecs": [
                    {"name": "bytes", "configuration": {"endian": "little"}},
                    {"name": "crc32c"}
                ],
                "index_location": "end"
            }),
        )]
    }
}

/// Checks a shard shape: at least one dimension, every extent ≥ 1, at most
/// [`MAX_SHARD_CELLS`] cells.
pub fn check_shard_shape(shape: &[u64]) -> Result<()> {
    let cells = shape
        .iter()
        .try_fold(1u64, |acc, &s| acc.checked_mul(s).filter(|_| s > 0));
    match cells {
        Some(n) if !shape.is_empty() && n <= MAX_SHARD_CELLS => Ok(()),
        _ => Err(Error::InvalidInput(format!(
            "shard shape {shape:?}: every extent must be at least 1 and a shard at most \
             {MAX_SHARD_CELLS} cells"
        ))),
    }
}

/// The cells of one shard given so far.
#[derive(Debug)]
struct Partial {
    cells: Vec<Option<Vec<u8>>>,
    given: usize,
}

/// The shards of one grid array being written.
#[derive(Debug, Default)]
pub(super) struct ShardBuffer {
    partial: HashMap<Vec<u64>, Partial>,
    stored: HashSet<Vec<u64>>,
}

/// A shard ready to be stored: its coordinates and its cells in C order (empty: no cell).
pub(super) type FullShard = (Vec<u64>, Vec<Vec<u8>>);

impl ShardBuffer {
    /// Takes cell `index` of the array (`bytes`, empty for a chunk without data); returns its
    /// shard when this was the last occupied chunk of the shard to be given. A cell of a
    /// shard already stored is an error naming `what` (the shard would be written twice).
    pub(super) fn give(
        &mut self,
        plan: &ShardPlan,
        index: &[u64],
        bytes: Vec<u8>,
        what: &str,
    ) -> Result<Option<FullShard>> {
        let (shard, linear) = plan.locate(index);
        if self.stored.contains(&shard) {
            return Err(Error::inconsistent(
                what,
                format!("cell {index:?} given after its shard {shard:?} was stored"),
            ));
        }
        let partial = self
            .partial
            .entry(shard.clone())
            .or_insert_with(|| Partial {
                cells: vec![None; plan.cells()],
                given: 0,
            });
        let slot = partial.cells.get_mut(linear).ok_or_else(|| {
            Error::inconsistent(what, format!("cell {index:?} outside its shard"))
        })?;
        if slot.is_none() {
            partial.given += 1;
        }
        *slot = Some(bytes);
        let expected = plan.occupied.get(&shard).copied().unwrap_or(0);
        if expected == 0 || partial.given < expected {
            return Ok(None);
        }
        let done = self.partial.remove(&shard).map(|p| p.cells);
        self.stored.insert(shard.clone());
        Ok(done.map(|cells| {
            (
                shard,
                cells.into_iter().map(Option::unwrap_or_default).collect(),
            )
        }))
    }

    /// The shards not complete yet (an array whose cells cover only some chunks), emptied.
    pub(super) fn drain(&mut self) -> Vec<FullShard> {
        let mut out: Vec<FullShard> = self
            .partial
            .drain()
            .map(|(shard, p)| {
                let cells = p.cells.into_iter().map(Option::unwrap_or_default).collect();
                (shard, cells)
            })
            .collect();
        for (shard, _) in &out {
            self.stored.insert(shard.clone());
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> ShardPlan {
        // a 3 x 3 grid in 2 x 2 shards; occupied cells (0,0), (0,1), (2,2)
        ShardPlan::new(vec![2, 2], [vec![0, 0], vec![0, 1], vec![2, 2]].into_iter()).unwrap()
    }

    #[test]
    fn a_shard_is_returned_once_its_occupied_cells_are_given() {
        let plan = plan();
        let mut b = ShardBuffer::default();
        assert!(b
            .give(&plan, &[0, 1], b"b".to_vec(), "a")
            .unwrap()
            .is_none());
        // giving the same cell again replaces it and does not count twice
        assert!(b
            .give(&plan, &[0, 1], b"B".to_vec(), "a")
            .unwrap()
            .is_none());
        let (shard, cells) = b.give(&plan, &[0, 0], b"".to_vec(), "a").unwrap().unwrap();
        assert_eq!(shard, vec![0, 0]);
        assert_eq!(cells, vec![b"".to_vec(), b"B".to_vec(), vec![], vec![]]);
        let (shard, cells) = b.give(&plan, &[2, 2], b"z".to_vec(), "a").unwrap().unwrap();
        assert_eq!(shard, vec![1, 1]);
        assert_eq!(cells[0], b"z".to_vec());
        let err = b
            .give(&plan, &[1, 1], b"x".to_vec(), "a/zarr.json")
            .unwrap_err();
        assert!(err.to_string().contains("a/zarr.json"), "{err}");
    }

    #[test]
    fn incomplete_shards_are_drained_in_order() {
        let plan = plan();
        let mut b = ShardBuffer::default();
        assert!(b.give(&plan, &[2, 2], b"".to_vec(), "a").unwrap().is_some());
        assert!(b
            .give(&plan, &[1, 0], b"q".to_vec(), "a")
            .unwrap()
            .is_none());
        let drained = b.drain();
        assert_eq!(drained.len(), 1);
        assert_eq!(drained[0].0, vec![0, 0]);
        assert_eq!(drained[0].1[2], b"q".to_vec());
        assert!(b.drain().is_empty());
    }

    #[test]
    fn shard_shapes_are_checked() {
        assert!(check_shard_shape(&[8, 8, 8]).is_ok());
        assert!(check_shard_shape(&[]).is_err());
        assert!(check_shard_shape(&[0, 2]).is_err());
        assert!(check_shard_shape(&[1 << 11, 1 << 10]).is_err());
        assert!(check_shard_shape(&[u64::MAX, 2]).is_err());
    }
}
