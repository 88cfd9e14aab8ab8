//! Pyramid levels of a point cloud built in parts, on many workers: the distributed write of
//! [`crate::parts`] applied to one step of [`super::build_pyramid`].
//!
//! A point cloud's coarse chunk depends only on the fine chunks nested in it, so a step
//! splits by coarse chunk, each owned by one part ([`crate::parts::part_of`] of its
//! coordinates):
//!
//! 1. [`prepare_level`] stages step `i` (level `i` → `i + 1`) of N parts: it checks the store
//!    (levels `0..=i` present, `i + 1` not yet), chooses the objects the step keeps (the
//!    single build's choice) and stores a plan, `.zv-parts/pyramid.json`.
//! 2. [`write_level_part`] `K`, on any worker: reads the fine chunks nested in part K's coarse
//!    chunks, writes those coarse chunks (vertices, fragments, vertex and fragment
//!    attributes) and the `±1` cross-level link blobs of those chunks, makes them durable,
//!    then stores its receipt (the chunks' rows and objects, the link rows).
//! 3. [`commit_level`] reads the receipts, writes the level's object index, object
//!    attributes, groups and documents, the link documents, and (after the last step) the
//!    root's new datasets and capabilities; then removes the plan and receipts.
//!
//! The result is byte for byte [`super::build_pyramid`]'s, whatever the number of parts and
//! the order they finish in. Supported: point clouds with numeric vertex attributes (a
//! categorical one is refused: its codes need every category of the level), cross-level
//! links `none`, `implicit` or `explicit` of depth 1 (deeper links compose levels), and a
//! chunk-scale factor of 1 when links are written (with a larger chunk the `+1` pairs join
//! different chunk keys: level-global records). A part that dies leaves no receipt and is run
//! again; until a level's commit its chunks are not part of any level document.

use std::sync::Arc;

use bytes::Bytes;
use serde_json::{json, Value};
use zv_core::store::{Store, StoreError};

use super::build::{
    level_grids, level_keep, level_writer, nest, update_root, LevelGrid, LevelSummary,
};
use super::coarsen::points;
use super::links::{write_cross_level_blobs, write_links_documents};
use super::source::SourceLevel;
use super::{CrossLevel, PyramidOptions, SparsityStrategy, Step};
use crate::error::{Error, Result};
use crate::geometry::Geometry;
use crate::metadata::ChunkKey;
use crate::parts::{part_of, parts_key, read_receipts, receipt_key, remove_parts, Plan};
use crate::writer::{CodecChoice, Owner};
use crate::ZvStore;

/// The plan's name under [`crate::parts::PARTS_DIR`].
pub const LEVEL_PLAN: &str = "pyramid.json";

/// The largest plan read: the kept objects take a bit each.
const MAX_LEVEL_PLAN_BYTES: u64 = 1 << 30;

/// A staged step of a pyramid built in parts.
#[derive(Debug, Clone, PartialEq)]
pub struct LevelPlan {
    /// The run's id: receipts of another run are refused.
    pub run: String,
    /// The number of parts.
    pub parts: u32,
    /// The step: level `step` → `step + 1`.
    pub step: usize,
    /// The pyramid's options (all its steps: the last step's commit updates the root).
    pub options: PyramidOptions,
    /// The objects the step keeps (empty for a level without objects).
    pub keep: Vec<bool>,
}

fn bad(reason: impl Into<String>) -> Error {
    Error::InvalidInput(reason.into())
}

fn bad_plan(reason: impl Into<String>) -> Error {
    Error::Metadata {
        key: format!("{}/{LEVEL_PLAN}", crate::parts::PARTS_DIR),
        reason: reason.into(),
    }
}

/// `keep` as hex digits, bit `i % 8` of byte `i / 8` for object `i`.
fn keep_hex(keep: &[bool]) -> String {
    keep.chunks(8)
        .map(|byte| {
            let b = byte
                .iter()
                .enumerate()
                .fold(0u8, |b, (i, &k)| b | (u8::from(k) << i));
            format!("{b:02x}")
        })
        .collect()
}

/// The inverse of [`keep_hex`] for `n` objects.
fn keep_from_hex(hex: &str, n: usize) -> Result<Vec<bool>> {
    if hex.len() != n.div_ceil(8) * 2 || !hex.is_ascii() {
        return Err(bad_plan(format!("`keep` does not hold {n} objects")));
    }
    let mut out = Vec::with_capacity(n);
    for i in 0..n.div_ceil(8) {
        let b = u8::from_str_radix(&hex[i * 2..i * 2 + 2], 16)
            .map_err(|_| bad_plan("`keep` is not hexadecimal"))?;
        out.extend((0..8).map(|bit| b & (1 << bit) != 0));
    }
    out.truncate(n);
    Ok(out)
}

impl LevelPlan {
    fn to_json(&self) -> Vec<u8> {
        let o = &self.options;
        let v = json!({
            "zv_pyramid_parts": 1,
            "run": self.run,
            "parts": self.parts,
            "step": self.step,
            "steps": o.steps.iter().map(|s| [s.coarsen, s.sparsity]).collect::<Vec<_>>(),
            "chunk_scale": o.chunk_scale,
            "sparsity": o.strategy.name(),
            "seed": o.seed,
            "cross_level": o.cross_level.name(),
            "depth": o.depth,
            "codecs": o.codecs.spec(),
            "objects": self.keep.len(),
            "keep": keep_hex(&self.keep),
        });
        serde_json::to_vec(&v).unwrap_or_default()
    }

    fn from_json(bytes: &[u8]) -> Result<Self> {
        let v: Value = serde_json::from_slice(bytes).map_err(|e| bad_plan(e.to_string()))?;
        if v.get("zv_pyramid_parts") != Some(&json!(1)) {
            return Err(bad_plan("`zv_pyramid_parts` is not 1"));
        }
        let get = |name: &str| v.get(name).cloned().unwrap_or(Value::Null);
        let member = |name: &str| -> Result<Value> { Ok(get(name)) };
        fn parse<T: serde::de::DeserializeOwned>(v: Value, name: &str) -> Result<T> {
            serde_json::from_value(v).map_err(|e| bad_plan(format!("`{name}`: {e}")))
        }
        let steps: Vec<[u32; 2]> = parse(member("steps")?, "steps")?;
        let mut options =
            PyramidOptions::new(steps.iter().map(|s| Step::new(s[0], s[1])).collect());
        options.chunk_scale = parse(member("chunk_scale")?, "chunk_scale")?;
        options.strategy = SparsityStrategy::parse(&parse::<String>(get("sparsity"), "sparsity")?)?;
        options.seed = parse(get("seed"), "seed")?;
        options.cross_level =
            CrossLevel::parse(&parse::<String>(get("cross_level"), "cross_level")?)?;
        options.depth = parse(get("depth"), "depth")?;
        options.codecs = CodecChoice::parse(&parse::<String>(get("codecs"), "codecs")?)?;
        options.validate()?;
        let objects: usize = parse(get("objects"), "objects")?;
        let plan = Self {
            run: parse(get("run"), "run")?,
            parts: parse(get("parts"), "parts")?,
            step: parse(get("step"), "step")?,
            keep: keep_from_hex(&parse::<String>(get("keep"), "keep")?, objects)?,
            options,
        };
        if plan.parts == 0 || plan.step >= plan.options.steps.len() {
            return Err(bad_plan("no parts, or a step the options do not have"));
        }
        Ok(plan)
    }

    /// The plan of the distributed write protocol for the receipts' checks.
    fn as_write_plan(&self, source: &SourceLevel) -> Plan {
        let mut options = crate::writer::WriterOptions::new(
            Geometry::PointCloud,
            source.level.root().chunk_shape.clone(),
        );
        options.codecs = self.options.codecs;
        Plan {
            run: self.run.clone(),
            parts: self.parts,
            options,
        }
    }
}

/// Checks that `plan` keeps or drops each object of `source` (a plan made for another store
/// is refused).
fn check_keep(plan: &LevelPlan, source: &SourceLevel) -> Result<()> {
    let objects = if source.has_objects() {
        source.num_objects
    } else {
        0
    };
    if plan.keep.len() as u64 != objects {
        return Err(bad_plan(format!(
            "it keeps or drops {} objects, level {} has {objects}",
            plan.keep.len(),
            plan.step
        )));
    }
    Ok(())
}

/// The plan staged in `store`, if any.
pub fn read_level_plan(store: &dyn Store) -> Result<Option<LevelPlan>> {
    match store.get_capped(&parts_key(LEVEL_PLAN)?, MAX_LEVEL_PLAN_BYTES)? {
        Some(bytes) => LevelPlan::from_json(&bytes).map(Some),
        None => Ok(None),
    }
}

fn require(store: &dyn Store) -> Result<LevelPlan> {
    read_level_plan(store)?.ok_or_else(|| {
        bad(format!(
            "no pyramid level is staged here ({}/{LEVEL_PLAN} is missing; prepare one first)",
            crate::parts::PARTS_DIR
        ))
    })
}

/// Level `step` of the opened store `zv` as the source of a step (for reading the chunks
/// `chunks` only, when given), with the coarse level's grid.
fn source_of(
    zv: &ZvStore,
    opts: &PyramidOptions,
    step: usize,
    chunks: Option<&[ChunkKey]>,
) -> Result<(SourceLevel, LevelGrid)> {
    let root = zv.root().clone();
    let grids = level_grids(&root.effective_bin_shape(), &root.chunk_shape, opts)?;
    let grid = grids.get(step).cloned().ok_or_else(|| {
        bad(format!(
            "the pyramid has {} steps, not {}",
            grids.len(),
            step + 1
        ))
    })?;
    let level = zv.level(step as u32)?;
    let source = match chunks {
        Some(chunks) => SourceLevel::for_chunks(level, chunks)?,
        None => SourceLevel::new(level)?,
    };
    Ok((source, grid))
}

/// Whether `store` holds level `level`'s document (a level whose parts are written but not
/// committed has chunks and no document).
fn committed(store: &Arc<dyn Store>, level: u32) -> Result<bool> {
    Ok(crate::blob::Blobs::new(store.clone())
        .node(&level.to_string())?
        .is_some())
}

/// Checks that step `step` of `opts` can be built in parts on `store` (opened as `zv`).
fn check_step(
    store: &Arc<dyn Store>,
    zv: &ZvStore,
    opts: &PyramidOptions,
    step: usize,
) -> Result<()> {
    opts.validate()?;
    if zv.root().layout() != crate::metadata::Layout::PerChunkNodes {
        return Err(Error::Unsupported {
            key: "zarr.json".into(),
            what: format!(
                "a pyramid step built in parts on a ZV {} store (distributed steps write the 0.7 layout; `zv pyramid` without `--part` builds a 0.9 pyramid in one run)",
                zv.root().zv_version
            ),
        });
    }
    if zv.geometry() != Geometry::PointCloud {
        return Err(bad(format!(
            "pyramid levels are built in parts for point clouds (one coarse chunk needs only the fine chunks in it), not {}",
            zv.geometry().name()
        )));
    }
    for l in 0..=step as u32 {
        if !committed(store, l)? {
            return Err(bad(format!(
                "step {step} needs level {l}, which the store has not"
            )));
        }
    }
    if committed(store, step as u32 + 1)? {
        return Err(bad(format!("the store has level {} already", step + 1)));
    }
    if opts.writes_links() && opts.depth != 1 {
        return Err(bad(
            "a pyramid built in parts writes cross-level links of depth 1 (or none)",
        ));
    }
    if opts.writes_links() && opts.chunk_scale_of(step) != 1 {
        return Err(bad(
            "a pyramid built in parts with cross-level links keeps the chunk shape (chunk-scale 1)",
        ));
    }
    let level = zv.level(step as u32)?;
    for name in level.vertex_attribute_names()? {
        if level.vertex_attribute_info(&name)?.dictionary.is_some() {
            return Err(bad(format!(
                "vertex attribute `{name}` is categorical: a pyramid built in parts takes numeric ones"
            )));
        }
    }
    Ok(())
}

/// Stages step `step` (level `step` → `step + 1`) of a pyramid with `opts` in `parts`
/// parts (see the [module docs](self)); returns the plan, the one already staged if it is
/// the same step with the same options and parts.
pub fn prepare_level(
    store: Arc<dyn Store>,
    opts: &PyramidOptions,
    step: usize,
    parts: u32,
) -> Result<LevelPlan> {
    if parts == 0 {
        return Err(bad("a pyramid level is built in at least 1 part"));
    }
    let same = |p: &LevelPlan| p.parts == parts && p.step == step && p.options == *opts;
    let mismatch = |p: &LevelPlan| {
        bad(format!(
            "another pyramid level is staged here (run {}, step {}, {} parts); commit it or remove {}/",
            p.run,
            p.step,
            p.parts,
            crate::parts::PARTS_DIR
        ))
    };
    if let Some(p) = read_level_plan(store.as_ref())? {
        return if same(&p) { Ok(p) } else { Err(mismatch(&p)) };
    }
    let zv = ZvStore::open(store.clone())?;
    check_step(&store, &zv, opts, step)?;
    let (source, grid) = source_of(&zv, opts, step, None)?;
    let keys = source.level.chunk_keys()?;
    let keep = level_keep(&source, opts, step, &grid, &keys)?;
    let plan = LevelPlan {
        run: crate::parts::new_run_id(),
        parts,
        step,
        options: opts.clone(),
        keep,
    };
    match store.set_new(&parts_key(LEVEL_PLAN)?, Bytes::from(plan.to_json())) {
        Ok(()) => {
            store.sync()?;
            Ok(plan)
        }
        Err(StoreError::AlreadyExists { .. }) => {
            let p = require(store.as_ref())?;
            if same(&p) {
                Ok(p)
            } else {
                Err(mismatch(&p))
            }
        }
        Err(e) => Err(e.into()),
    }
}

/// The parts of the staged level without a receipt yet.
pub fn missing_level_parts(store: &dyn Store) -> Result<Vec<u32>> {
    let plan = require(store)?;
    let mut missing = Vec::new();
    for part in 0..plan.parts {
        if !store.exists(&receipt_key(part)?)? {
            missing.push(part);
        }
    }
    Ok(missing)
}

/// Writes part `part` of the staged level (see the [module docs](self)) and stores its
/// receipt; returns the number of metavertices it wrote.
pub fn write_level_part(store: Arc<dyn Store>, part: u32) -> Result<u64> {
    let plan = require(store.as_ref())?;
    if part >= plan.parts {
        return Err(bad(format!(
            "part {part} of a level built in {} parts (parts are 0..{})",
            plan.parts, plan.parts
        )));
    }
    let opts = &plan.options;
    let zv = ZvStore::open(store.clone())?;
    let ndim = zv.root().ndim();
    let scale = u64::from(opts.chunk_scale_of(plan.step));
    // the fine chunks nested in this part's coarse chunks, and only their objects
    let keys = zv.level(plan.step as u32)?.chunk_keys()?;
    let mut nested = nest(keys, scale, ndim)?;
    nested.retain(|coarse, _| part_of(coarse, plan.parts) == part);
    let mine: Vec<ChunkKey> = nested.values().flatten().cloned().collect();
    let (source, grid) = source_of(&zv, opts, plan.step, Some(&mine))?;
    check_keep(&plan, &source)?;
    let mut writer = level_writer(&store, &source, opts, plan.step, &grid, &plan.keep, true)?;
    writer.set_owner(Owner {
        run: plan.run.clone(),
        part,
        parts: plan.parts,
    });
    let parents = points::coarsen_level(&source, &plan.keep, &grid.bin, nested, &mut writer)?;
    let (mut receipt, places) = writer.finish_part_with_places()?;
    if opts.writes_links() {
        let blobs = crate::blob::Blobs::new(store.clone());
        let coarse = plan.step as u32 + 1;
        let rows = write_cross_level_blobs(
            &blobs,
            (plan.step as u32, coarse),
            &parents,
            &places,
            (ndim, opts.cross_level == CrossLevel::Explicit),
            &opts.codecs,
        )?;
        receipt.cross_level_rows = Some(rows);
    }
    store.sync()?;
    store.set(&receipt_key(part)?, Bytes::from(receipt.to_json()?))?;
    store.sync()?;
    Ok(receipt.vertices)
}

/// Commits the staged level once every part has its receipt (see the [module docs](self)),
/// then removes the plan and receipts. After the last step, the root is updated.
pub fn commit_level(store: Arc<dyn Store>) -> Result<LevelSummary> {
    let plan = require(store.as_ref())?;
    let opts = &plan.options;
    let coarse = plan.step as u32 + 1;
    // the commit reads no chunk: only the per-object data
    let zv = ZvStore::open(store.clone())?;
    let (source, grid) = source_of(&zv, opts, plan.step, Some(&[]))?;
    if committed(&store, coarse)? {
        remove_parts(store.as_ref(), plan.parts, LEVEL_PLAN)?;
        return Err(bad(format!(
            "level {coarse} is committed already (its leftover plan and receipts are removed now)"
        )));
    }
    check_keep(&plan, &source)?;
    let receipts = read_receipts(store.as_ref(), &plan.as_write_plan(&source))?;
    let (mut up, mut down) = (0u64, 0u64);
    for r in &receipts {
        let [u, d] = match r.cross_level_rows {
            Some(rows) => rows,
            None if !opts.writes_links() => [0, 0],
            None => {
                return Err(bad(format!(
                    "the receipt of part {} has no cross-level link rows (not a pyramid part's)",
                    r.part
                )))
            }
        };
        up = up.saturating_add(u);
        down = down.saturating_add(d);
    }
    let writer = level_writer(&store, &source, opts, plan.step, &grid, &plan.keep, false)?;
    let summary = crate::io_pool::with_store(store.as_ref(), || writer.commit_parts(receipts))?;
    let blobs = crate::blob::Blobs::new(store.clone());
    if opts.writes_links() {
        write_links_documents(&blobs, &plan.step.to_string(), 1, up)?;
        if opts.cross_level == CrossLevel::Explicit {
            write_links_documents(&blobs, &coarse.to_string(), -1, down)?;
        }
    }
    if plan.step + 1 == opts.steps.len() {
        let root = source.level.root().clone();
        let grids = level_grids(&root.effective_bin_shape(), &root.chunk_shape, opts)?;
        let datasets = super::build::datasets(&grids);
        update_root(&blobs, opts, datasets, source.has_objects())?;
    }
    store.sync()?;
    remove_parts(store.as_ref(), plan.parts, LEVEL_PLAN)?;
    Ok(LevelSummary {
        level: coarse,
        vertices: summary.vertices,
        chunks: summary.chunks,
        objects_kept: plan.keep.iter().filter(|&&k| k).count() as u64,
        cross_level_links: up,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kept_objects_round_trip_through_hex() {
        for n in [0, 1, 7, 8, 9, 100] {
            let keep: Vec<bool> = (0..n).map(|i| i % 3 == 0 || i % 7 == 1).collect();
            assert_eq!(keep_from_hex(&keep_hex(&keep), n).unwrap(), keep);
        }
        assert!(keep_from_hex("zz", 8).is_err());
        assert!(keep_from_hex("00", 9).is_err());
    }

    #[test]
    fn plans_round_trip_and_damaged_ones_are_errors() {
        let mut options = PyramidOptions::new(vec![Step::new(2, 1), Step::new(2, 2)]);
        options.strategy = SparsityStrategy::Attribute("w".into());
        options.seed = 7;
        options.cross_level = CrossLevel::Implicit;
        let plan = LevelPlan {
            run: "r".into(),
            parts: 3,
            step: 1,
            options,
            keep: vec![true, false, true],
        };
        assert_eq!(LevelPlan::from_json(&plan.to_json()).unwrap(), plan);
        for damaged in [&b"{"[..], b"[]", b"{\"zv_pyramid_parts\": 2}"] {
            let e = LevelPlan::from_json(damaged).unwrap_err().to_string();
            assert!(e.contains(LEVEL_PLAN), "{e}");
        }
    }
}
