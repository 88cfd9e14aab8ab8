//! Distributed writes: many workers write one store, one commit makes it a ZV store.
//!
//! The store-layout seed allows it (§5.3: writes to distinct spatial chunks are independent;
//! the level-global arrays must be merged). The protocol has three steps, each usable from any
//! engine (Dask, a batch scheduler, `zv import --part K/N` on N machines):
//!
//! 1. [`prepare`] stages the write: it stores a *plan* (`.zv-parts/plan.json`: a run id, the
//!    number of parts N and the writer options) and commits nothing. Preparing again with the
//!    same options and N returns the same plan (a client that lost track resumes); different
//!    ones are an error.
//! 2. [`PartWriter`] `K` of N, on any worker, takes the vertices whose chunk part K owns
//!    ([`part_of`], a fixed hash of the chunk coordinates, so that any router — Dask's
//!    shuffle, a filter over a shared input — sends every chunk's rows to one part), writes
//!    those chunks complete (vertices, fragments, attributes), makes them durable, and only
//!    then stores its *receipt* (`.zv-parts/part-K.json`): each chunk's key, rows and the
//!    object of each fragment, the vertex count, the extent, the largest object id and the
//!    attribute schema. A retried part rewrites its chunks with the same bytes and replaces
//!    its receipt; a part that dies leaves no receipt.
//! 3. [`commit`] reads the N receipts (an error names the parts still missing), refuses a
//!    chunk claimed by two parts, merges them into the object index, the object attributes
//!    and groups (given to the commit), the array and level documents, and writes the root
//!    `zarr.json` last, as every zv writer does; then it removes `.zv-parts/`. Until the root
//!    is written nothing opens as a ZV store, so a client killed before or during the commit
//!    leaves no store that opens, and running the commit again completes it.
//!
//! The store is byte for byte the one a single [`ZvWriter`](crate::writer::ZvWriter) writes
//! from the same rows, whatever N and the order the parts finish in, as long as each chunk's
//! rows reach its part in the input order (with another order, each object holds the same
//! vertices in another order). Tests check this for 1 to 7 parts.
//!
//! Polylines (lines, polylines, streamlines) are distributed too. A part is given whole
//! polylines — every polyline with a vertex in one of its chunks
//! ([`PartWriter::polyline_parts`]), with its id in the whole write, ids increasing — and
//! keeps the pieces in its own chunks; its receipt lists them (polyline, number in the
//! polyline, chunk, fragment, first and last row) with the polylines it saw and their piece
//! counts. The commit joins the pieces into each polyline's path, refusing a polyline a part
//! owning one of its chunks was not given (the error names it), and makes the cross-chunk
//! record between consecutive pieces in different chunks. Every polyline below the object
//! count must reach some part: a polyline without vertices goes to part 0.
//!
//! This release distributes point clouds (with or without object ids) and polylines, with
//! numeric vertex attributes, in the ZV 0.7 and 0.9 layouts. Categorical vertex attributes
//! are refused (their codes depend on every category of the whole write), as are graphs,
//! skeletons and meshes (their links join vertices any part may hold).
//!
//! **The 0.9 layout.** A 0.9 level's cells sit in one chunk grid, the bounding box of every
//! part's chunks, which no part knows. A part therefore stages each cell under [`CELLS_DIR`]
//! (by array and absolute chunk key, encoded as an unsharded grid array stores it), and the
//! commit, which knows the grid, moves every cell the receipts list into it (the stored bytes
//! unchanged, or given to their shard when the write is sharded), then writes the arrays'
//! documents with their `nonempty_chunks`. The staged cells are removed with the plan, after
//! the root is written; a commit that dies before can be run again. The store is byte for
//! byte the single writer's, as in 0.7.

mod plan;
mod receipt;

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use rayon::prelude::*;
use zv_core::key::StoreKey;
use zv_core::store::Store;

use crate::document::{Attribute, AttributeValues};
use crate::error::{Error, Result};
use crate::writer::{Owner, WriteSummary, WriterOptions, ZvWriter};

pub use plan::Plan;
pub use receipt::{ChunkReceipt, ColumnSchema, PartReceipt, PieceReceipt};

/// The directory of a distributed write's plan and receipts, removed by the commit.
pub const PARTS_DIR: &str = ".zv-parts";

/// Where the parts of a ZV 0.9 write stage their cells (see the [module docs](self)).
pub const CELLS_DIR: &str = ".zv-parts/cells";

/// The part (of `parts`) that owns the chunk at `coords`: a SplitMix64 hash of the
/// coordinates (each as the two's-complement `u64`), folded left from `0x9E37_79B9_7F4A_7C15`
/// by `h = mix(h ^ c)`, modulo `parts`. Fixed across releases: routers in other languages
/// compute the same owner.
pub fn part_of(coords: &[i64], parts: u32) -> u32 {
    let mix = |mut z: u64| {
        z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let h = coords
        .iter()
        .fold(0x9E37_79B9_7F4A_7C15u64, |h, &c| mix(h ^ c as u64));
    (h % u64::from(parts.max(1))) as u32
}

/// A run id unlikely to repeat (the time, the process and a counter, mixed).
pub(crate) fn new_run_id() -> String {
    plan::new_run_id()
}

/// The key of `name` under [`PARTS_DIR`].
pub(crate) fn parts_key(name: &str) -> Result<StoreKey> {
    Ok(StoreKey::new(format!("{PARTS_DIR}/{name}")).map_err(zv_core::Error::from)?)
}

/// The key of part `part`'s receipt.
pub(crate) fn receipt_key(part: u32) -> Result<StoreKey> {
    parts_key(&format!("part-{part}.json"))
}

/// Stages a distributed write of `parts` parts with `options` in `store` (see the
/// [module docs](self)); returns the plan, the one already staged if it has the same options
/// and number of parts.
pub fn prepare(store: Arc<dyn Store>, options: &WriterOptions, parts: u32) -> Result<Plan> {
    plan::prepare(store, options, parts)
}

/// The plan staged in `store`, if any.
pub fn read_plan(store: &dyn Store) -> Result<Option<Plan>> {
    plan::read(store)
}

/// Part `part`'s receipt, if it finished (a resuming client skips such parts).
pub fn read_receipt(store: &dyn Store, part: u32) -> Result<Option<PartReceipt>> {
    receipt::read(store, &receipt_key(part)?)
}

/// The parts of the staged write that have no receipt yet.
pub fn missing_parts(store: &dyn Store) -> Result<Vec<u32>> {
    let plan = plan::require(store)?;
    let found: Vec<Result<bool>> = crate::io_pool::with_store(store, || {
        (0..plan.parts)
            .into_par_iter()
            .map(|part| Ok(store.exists(&receipt_key(part)?)?))
            .collect()
    });
    let mut missing = Vec::new();
    for (part, f) in (0..plan.parts).zip(found) {
        if !f? {
            missing.push(part);
        }
    }
    Ok(missing)
}

/// One part of a distributed write (see the [module docs](self)).
pub struct PartWriter {
    store: Arc<dyn Store>,
    writer: ZvWriter,
    part: u32,
    parts: u32,
}

impl std::fmt::Debug for PartWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PartWriter")
            .field("part", &self.part)
            .field("parts", &self.parts)
            .field("writer", &self.writer)
            .finish()
    }
}

impl PartWriter {
    /// Part `part` of the write staged in `store` (by [`prepare`]), with the plan's options.
    pub fn open(store: Arc<dyn Store>, part: u32) -> Result<Self> {
        Self::open_with_budget(store, part, crate::writer::DEFAULT_MEMORY_BUDGET)
    }

    /// [`PartWriter::open`] with this worker's memory budget (bytes of vertex records held
    /// before spilling, as [`WriterOptions::memory_budget`]).
    pub fn open_with_budget(store: Arc<dyn Store>, part: u32, memory_budget: u64) -> Result<Self> {
        let mut plan = plan::require(store.as_ref())?;
        plan.options.memory_budget = memory_budget;
        if part >= plan.parts {
            return Err(Error::InvalidInput(format!(
                "part {part} of a write of {} parts (parts are 0..{})",
                plan.parts, plan.parts
            )));
        }
        let mut writer = ZvWriter::create_unclaimed(Arc::clone(&store), plan.options.clone())?;
        writer.check_part_options()?;
        writer.set_owner(Owner {
            run: plan.run.clone(),
            part,
            parts: plan.parts,
        });
        Ok(Self {
            store,
            writer,
            part,
            parts: plan.parts,
        })
    }

    /// This part's number.
    pub fn part(&self) -> u32 {
        self.part
    }

    /// The number of parts of the write.
    pub fn parts(&self) -> u32 {
        self.parts
    }

    /// Whether this part takes a vertex at `position` (its chunk, after rounding to the
    /// vertex type, is this part's; a position that cannot be stored goes to part 0, which
    /// reports it).
    pub fn owns(&self, position: &[f64]) -> bool {
        self.writer.owns_position(position)
    }

    /// The part that owns each position of `coords` (`ndim` values per vertex): a router
    /// sends each row to that part. Positions are rounded to the vertex type first, as the
    /// writer does; one that cannot be stored goes to part 0, which reports it.
    pub fn owners(&self, coords: &[f64]) -> Vec<u32> {
        self.writer.owners_of(coords)
    }

    /// Adds vertices as [`ZvWriter::add_vertices_flat`] does; a vertex in a chunk another part
    /// owns is an error (and the batch changes nothing).
    pub fn add_vertices_flat(
        &mut self,
        coords: &[f64],
        object_ids: Option<&[u64]>,
        attributes: &BTreeMap<String, Attribute>,
    ) -> Result<u64> {
        self.writer
            .add_vertices_flat(coords, object_ids, attributes)
    }

    /// Adds the vertices of a batch that this part owns ([`PartWriter::owns`]) and leaves
    /// the others, keeping their order; returns how many it added. For inputs every part
    /// reads whole (`zv import --part K/N`).
    pub fn add_owned_vertices_flat(
        &mut self,
        coords: &[f64],
        object_ids: Option<&[u64]>,
        attributes: &BTreeMap<String, Attribute>,
    ) -> Result<u64> {
        let nd = self.writer.ndim();
        if nd == 0 || coords.len() % nd != 0 {
            // the writer names the problem
            return self
                .writer
                .add_vertices_flat(coords, object_ids, attributes);
        }
        let keep: Vec<usize> = self
            .owners(coords)
            .into_iter()
            .enumerate()
            .filter(|&(_, o)| o == self.part)
            .map(|(i, _)| i)
            .collect();
        if keep.len() == coords.len() / nd {
            self.writer
                .add_vertices_flat(coords, object_ids, attributes)?;
            return Ok(keep.len() as u64);
        }
        let kept_coords: Vec<f64> = keep
            .iter()
            .flat_map(|&i| coords[i * nd..(i + 1) * nd].iter().copied())
            .collect();
        let kept_ids: Option<Vec<u64>> = match object_ids {
            Some(ids) if ids.len() == coords.len() / nd => {
                Some(keep.iter().map(|&i| ids[i]).collect())
            }
            // a wrong count: the writer names it
            Some(ids) => return self.writer.add_vertices_flat(coords, Some(ids), attributes),
            None => None,
        };
        let mut kept_attributes = BTreeMap::new();
        for (name, a) in attributes {
            kept_attributes.insert(name.clone(), gather(name, a, &keep)?);
        }
        self.writer
            .add_vertices_flat(&kept_coords, kept_ids.as_deref(), &kept_attributes)?;
        Ok(keep.len() as u64)
    }

    /// Adds polylines (polyline geometries) as [`ZvWriter::add_polylines_flat`] does, with
    /// their ids in the whole write (`None`: the ids after the last polyline given, from 0 —
    /// for inputs every part reads whole). A part is given each polyline that has a vertex in
    /// one of its chunks ([`PartWriter::polyline_parts`]; more is harmless) and keeps the
    /// pieces in its own chunks. Ids must increase over the part's calls, as must each
    /// chunk's polylines reach its part in id order for the single writer's bytes.
    pub fn add_polylines_flat(
        &mut self,
        coords: &[f64],
        offsets: &[usize],
        ids: Option<&[u64]>,
        attributes: &BTreeMap<String, Attribute>,
    ) -> Result<()> {
        self.writer
            .add_polylines_with(coords, offsets, ids, attributes)
    }

    /// The parts each polyline goes to (`offsets` as [`ZvWriter::add_polylines_flat`]): the
    /// owners of its vertices' chunks, ascending and once each; part 0 for a polyline without
    /// vertices (someone must report it). Returns `(polyline index, part)` pairs in that
    /// order.
    pub fn polyline_parts(&self, coords: &[f64], offsets: &[usize]) -> Vec<(usize, u32)> {
        let owners = self.owners(coords);
        let mut out = Vec::new();
        let mut parts: Vec<u32> = Vec::new();
        for (pi, w) in offsets.windows(2).enumerate() {
            let (a, b) = (w[0].min(owners.len()), w[1].min(owners.len()));
            parts.clear();
            parts.extend_from_slice(&owners[a..b.max(a)]);
            if parts.is_empty() {
                parts.push(0);
            }
            parts.sort_unstable();
            parts.dedup();
            out.extend(parts.iter().map(|&p| (pi, p)));
        }
        out
    }

    /// Writes this part's chunks, makes them durable, then stores and returns its receipt.
    pub fn finish(self) -> Result<PartReceipt> {
        let receipt = self.writer.finish_part()?;
        let key = receipt_key(self.part)?;
        self.store.set(&key, Bytes::from(receipt.to_json()?))?;
        self.store.sync()?;
        Ok(receipt)
    }
}

/// The rows `keep` of attribute `name` (a batch's values in order; a wrong row count is left
/// for the writer's check, which names it).
fn gather(name: &str, a: &Attribute, keep: &[usize]) -> Result<Attribute> {
    let values = match &a.values {
        AttributeValues::Numeric { rows, present } => {
            if rows.num_rows() < keep.last().map_or(0, |&i| i + 1) {
                return Ok(a.clone());
            }
            let rows = rows.gather(keep.iter().map(|&i| i as u64)).map_err(|e| {
                Error::attribute(crate::error::AttributeKind::Vertex, name, e.to_string())
            })?;
            let present = present.as_ref().map(|p| {
                keep.iter()
                    .map(|&i| p.get(i).copied().unwrap_or(false))
                    .collect()
            });
            AttributeValues::Numeric { rows, present }
        }
        AttributeValues::Categorical(v) => {
            if v.len() < keep.last().map_or(0, |&i| i + 1) {
                return Ok(a.clone());
            }
            AttributeValues::Categorical(keep.iter().map(|&i| v[i].clone()).collect())
        }
    };
    Ok(Attribute {
        values,
        channel_names: a.channel_names.clone(),
    })
}

/// What the commit writes besides the parts' chunks: the per-object and per-group data,
/// which is small and known to the client.
#[derive(Debug, Clone, Default)]
pub struct CommitInputs {
    /// Object attributes, one row per object (as [`ZvWriter::set_object_attributes`]).
    pub object_attributes: BTreeMap<String, Attribute>,
    /// Groups: group id → object ids (as [`ZvWriter::set_groups`]).
    pub groups: BTreeMap<u64, Vec<u64>>,
    /// Group attributes, one row per group.
    pub group_attributes: BTreeMap<String, Attribute>,
    /// At least this many objects (as [`ZvWriter::set_num_objects`]).
    pub num_objects: u64,
}

/// Commits the distributed write staged in `store` once every part has its receipt (see the
/// [module docs](self)), then removes `.zv-parts/`.
pub fn commit(store: Arc<dyn Store>, inputs: CommitInputs) -> Result<WriteSummary> {
    let plan = plan::require(store.as_ref())?;
    if store.exists(&StoreKey::new("zarr.json").map_err(zv_core::Error::from)?)? {
        // a commit that ended before removing the plan
        remove_parts(store.as_ref(), plan.parts, plan::PLAN)?;
        return Err(Error::InvalidInput(
            "the store is committed already (its leftover plan and receipts are removed now)"
                .into(),
        ));
    }
    let receipts = read_receipts(store.as_ref(), &plan)?;
    let mut writer = ZvWriter::create_unclaimed(Arc::clone(&store), plan.options.clone())?;
    writer.set_object_attributes(inputs.object_attributes);
    writer.set_groups(inputs.groups, inputs.group_attributes);
    writer.set_num_objects(inputs.num_objects);
    let summary = crate::io_pool::with_store(store.as_ref(), || writer.commit_parts(receipts))?;
    remove_parts(store.as_ref(), plan.parts, plan::PLAN)?;
    Ok(summary)
}

/// Every part's receipt of the write `plan` stages, checked; an error naming the parts
/// without one.
pub(crate) fn read_receipts(store: &dyn Store, plan: &Plan) -> Result<Vec<PartReceipt>> {
    // the receipts are read and parsed in parallel (as many requests in flight as the store
    // wants: thousands of parts in a bucket)
    let read: Vec<Result<Option<PartReceipt>>> = crate::io_pool::with_store(store, || {
        (0..plan.parts)
            .into_par_iter()
            .map(|part| read_receipt(store, part))
            .collect()
    });
    let mut receipts = Vec::with_capacity(plan.parts as usize);
    let mut missing = Vec::new();
    for (part, r) in (0..plan.parts).zip(read) {
        match r? {
            Some(r) => {
                r.check(plan, part, receipt_key(part)?.as_ref())?;
                receipts.push(r);
            }
            None => missing.push(part),
        }
    }
    if !missing.is_empty() {
        return Err(Error::InvalidInput(format!(
            "{} of {} parts have not finished (no receipt under {PARTS_DIR}/): {}",
            missing.len(),
            plan.parts,
            list(&missing)
        )));
    }
    Ok(receipts)
}

/// Removes the plan (`plan_name` under [`PARTS_DIR`]) and receipts of a committed write (keys
/// computed, no listing needed).
pub(crate) fn remove_parts(store: &dyn Store, parts: u32, plan_name: &str) -> Result<()> {
    for part in 0..parts {
        store.delete(&receipt_key(part)?)?;
    }
    let cells =
        zv_core::key::StorePrefix::new(format!("{CELLS_DIR}/")).map_err(zv_core::Error::from)?;
    store.delete_prefix(&cells)?;
    store.delete(&parts_key(plan_name)?)?;
    store.sync()?;
    Ok(())
}

/// `0, 1, 2, …` (the first 20).
fn list(parts: &[u32]) -> String {
    let mut s: Vec<String> = parts.iter().take(20).map(u32::to_string).collect();
    if parts.len() > 20 {
        s.push("…".to_owned());
    }
    s.join(", ")
}
