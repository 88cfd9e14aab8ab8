//! Multiresolution pyramids: adding coarser levels `1..N` to an existing store
//! ([`build_pyramid`], `zv pyramid`).
//!
//! Each step reads level `L` through the reader, coarsens it ([`coarsen`]), keeps a share of its
//! objects ([`sparsity`]) and writes level `L + 1` through the writer's own machinery
//! ([`crate::writer::ZvWriter`]), so a coarse level is laid out exactly as a level 0 of the same
//! geometry would be, in the store's layout (ZV 0.7, or ZV 0.9 through the 0.9 writer). Then
//! the cross-level links are written ([`links`]: `links/±1` and `cross_chunk_links/±1` in 0.7,
//! the families `links/±1` of offsets segments in 0.9, [`links_v09`]), and after the last level the root document is updated (NGFF datasets,
//! capabilities, `cross_level_storage`, `cross_level_depth`). Levels are built one after the
//! other; a point-cloud level is read one coarse chunk (the fine chunks nested in it) at a time,
//! polylines and skeletons a batch of objects at a time, graphs and meshes whole for their links
//! ([`coarsen`]).
//!
//! A point cloud's levels can also be built in parts on many workers, with the same result
//! ([`parts`]: one step at a time, each part writing the coarse chunks it owns; ZV 0.7 stores
//! only).
//!
//! Every level's grid is checked before anything is written, but the levels are written in
//! place: a failure or a crash midway leaves level groups that readers list (levels are found
//! by listing, not through the root document). `zv pyramid` therefore builds a local store's
//! pyramid in a hard-linked shadow copy published by one atomic exchange
//! (`zv_store_fs::Shadow`).
//!
//! What is kept per level (the rulings are in `docs/format-decisions.md`, "Pyramids"):
//! bins are cumulative (`bin_shape = base bin × Π factors`, `bin_ratio = Π factors`), the
//! chunk shape grows by the chunk-scale factors (cumulative), object ids are kept, dropped
//! objects get empty manifests and absent object-attribute rows.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use zv_format::{Geometry, ZvStore};
//! use zv_format::pyramid::{build_pyramid, PyramidOptions, Step};
//! use zv_format::writer::{WriterOptions, ZvWriter};
//! let store: Arc<dyn zv_core::store::Store> = Arc::new(zv_store_mem::MemoryStore::new());
//! let mut opts = WriterOptions::new(Geometry::PointCloud, vec![10.0, 10.0]);
//! opts.bin_shape = Some(vec![2.5, 2.5]);
//! let mut w = ZvWriter::create(store.clone(), opts)?;
//! w.add_vertices(&[vec![1.0, 1.0], vec![1.5, 1.2], vec![7.0, 3.0]], Some(&[0, 0, 1]), &Default::default())?;
//! w.finish()?;
//! build_pyramid(store.clone(), &PyramidOptions::new(vec![Step::new(2, 1)]))?;
//! let zv = ZvStore::open(store)?;
//! assert_eq!(zv.level_ids(), &[0, 1]);
//! assert_eq!(zv.level(1)?.metadata().vertex_count, 2);
//! # Ok(()) }
//! ```

mod attributes;
mod build;
pub mod coarsen;
pub(crate) mod links;
pub(crate) mod links_v09;
mod parents;
pub mod parts;
mod source;
pub mod sparsity;

use crate::error::{Error, Result};
use crate::writer::CodecChoice;

pub use build::{build_pyramid, build_pyramid_with_progress, LevelSummary, PyramidSummary};
pub use sparsity::SparsityStrategy;

/// One step of a pyramid: level `L` → `L + 1`.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The bin factor on every axis (≥ 1): a coarse bin is `factor` fine bins wide.
    pub coarsen: u32,
    /// The object sparsity factor (≥ 1): `1/sparsity` of the objects are kept.
    pub sparsity: u32,
}

impl Step {
    /// A step coarsening bins by `coarsen` and keeping `1/sparsity` of the objects.
    pub fn new(coarsen: u32, sparsity: u32) -> Self {
        Self { coarsen, sparsity }
    }

    /// Parses `"2,2;2,1"`: steps separated by `;`, each `coarsen[,sparsity]`.
    pub fn parse_list(s: &str) -> Result<Vec<Self>> {
        let bad = |r: String| Error::InvalidInput(format!("--levels `{s}`: {r}"));
        let mut out = Vec::new();
        for part in s.split(';').map(str::trim).filter(|p| !p.is_empty()) {
            let nums: Vec<&str> = part.split(',').map(str::trim).collect();
            let num = |x: &str| {
                x.parse::<u32>()
                    .ok()
                    .filter(|&n| n >= 1)
                    .ok_or_else(|| bad(format!("`{x}` is not an integer ≥ 1")))
            };
            match nums.as_slice() {
                [c] => out.push(Self::new(num(c)?, 1)),
                [c, sp] => out.push(Self::new(num(c)?, num(sp)?)),
                _ => return Err(bad(format!("step `{part}` is not `coarsen[,sparsity]`"))),
            }
        }
        if out.is_empty() {
            return Err(bad("no steps".into()));
        }
        Ok(out)
    }
}

/// How cross-level links are stored (root `cross_level_storage`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrossLevel {
    /// No cross-level links.
    None,
    /// `+1` at the finer level only.
    Implicit,
    /// `+1` at the finer level and `-1` at the coarser one.
    Explicit,
}

impl CrossLevel {
    /// Parses `none`, `implicit` or `explicit`.
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "none" => Ok(Self::None),
            "implicit" => Ok(Self::Implicit),
            "explicit" => Ok(Self::Explicit),
            _ => Err(Error::InvalidInput(format!(
                "--cross-level `{s}`: expected none, implicit or explicit"
            ))),
        }
    }

    /// The root `cross_level_storage` value.
    pub fn name(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Implicit => "implicit",
            Self::Explicit => "explicit",
        }
    }
}

/// Options of [`build_pyramid`].
#[derive(Debug, Clone, PartialEq)]
pub struct PyramidOptions {
    /// The steps, level 0 → 1 first.
    pub steps: Vec<Step>,
    /// The chunk-scale factor of each step (≥ 1; missing steps take 1): level `L + 1`'s chunk
    /// shape is level `L`'s times this on every axis.
    pub chunk_scale: Vec<u32>,
    /// Which objects a sparse step keeps.
    pub strategy: SparsityStrategy,
    /// The seed of the `random` strategy.
    pub seed: u64,
    /// Cross-level link storage.
    pub cross_level: CrossLevel,
    /// `cross_level_depth`: links `±1 … ±depth` between levels that many steps apart (0 writes
    /// no links, −1 links every pair of levels).
    pub depth: i64,
    /// The codecs of the new levels' blobs.
    pub codecs: CodecChoice,
    /// The coarse levels' writers' memory budget ([`crate::writer::WriterOptions::memory_budget`]:
    /// bytes of vertex records held before they are spilled to temporary files;
    /// [`PYRAMID_MEMORY_BUDGET`] by default). The levels written are the same whatever the
    /// budget.
    pub memory_budget: u64,
}

/// The default [`PyramidOptions::memory_budget`]: 256 MiB, a quarter of the writer's own
/// default. A pyramid step also holds a place per coarse vertex (and, but for point clouds, a
/// parent per fine vertex); spilling the coarse records sooner keeps the step's peak lower at
/// no measured cost (20M points in 1000 objects, bins of 12.5, level 1, parents still in
/// memory: 22.9 s and 951 MiB with 1 GiB, 22.9 s and 637 MiB with 256 MiB).
pub const PYRAMID_MEMORY_BUDGET: u64 = 256 << 20;

impl PyramidOptions {
    /// Options with defaults: chunk scale 1, random sparsity with seed 0, explicit links of
    /// depth 1, the spec's codecs, a memory budget of [`PYRAMID_MEMORY_BUDGET`].
    pub fn new(steps: Vec<Step>) -> Self {
        Self {
            steps,
            chunk_scale: Vec::new(),
            strategy: SparsityStrategy::Random,
            seed: 0,
            cross_level: CrossLevel::Explicit,
            depth: 1,
            codecs: CodecChoice::default(),
            memory_budget: PYRAMID_MEMORY_BUDGET,
        }
    }

    /// The chunk-scale factor of step `i`.
    pub(crate) fn chunk_scale_of(&self, i: usize) -> u32 {
        self.chunk_scale.get(i).copied().unwrap_or(1).max(1)
    }

    /// Whether links are written at all.
    pub(crate) fn writes_links(&self) -> bool {
        self.cross_level != CrossLevel::None && self.depth != 0
    }

    /// Checks the options.
    pub(crate) fn validate(&self) -> Result<()> {
        let bad = |r: &str| Err(Error::InvalidInput(r.to_owned()));
        if self.steps.is_empty() {
            return bad("a pyramid needs at least one step");
        }
        if self.steps.iter().any(|s| s.coarsen == 0 || s.sparsity == 0) {
            return bad("coarsen and sparsity factors must be ≥ 1");
        }
        if self.chunk_scale.contains(&0) {
            return bad("chunk-scale factors must be ≥ 1");
        }
        if self.depth < -1 {
            return bad("--depth: 0 (no links), N ≥ 1 (±1 … ±N) or −1 (every pair of levels)");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_parse_and_refuse_bad_input() {
        assert_eq!(
            Step::parse_list("2,2;2,1").unwrap(),
            vec![Step::new(2, 2), Step::new(2, 1)]
        );
        assert_eq!(Step::parse_list("4").unwrap(), vec![Step::new(4, 1)]);
        for bad in ["", "0", "2,0", "a", "2,2,2", "-1"] {
            assert!(Step::parse_list(bad).is_err(), "{bad}");
        }
        assert!(CrossLevel::parse("sideways").is_err());
        assert_eq!(CrossLevel::parse("implicit").unwrap().name(), "implicit");
    }
}
