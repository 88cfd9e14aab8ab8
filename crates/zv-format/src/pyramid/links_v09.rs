//! The cross-level links of a step in the ZV 0.9 layout (`docs/format-decisions.md`, "Writing
//! ZV 0.9", "Cross-level links"), as zarr-vectors 0.9.2's `write_cross_level_links` files
//! them ([`crate::layout::cross_level`]): at the fine level the family `links/+k`, at the
//! coarse level (explicit storage) `links/-k`, each a directed, canonical family of width 2
//! with one chunk-grid array per offsets segment over its level's grid.

use std::collections::BTreeSet;
use std::sync::Arc;

use rayon::prelude::*;
use serde_json::json;
use zv_core::store::Store;

use super::links::{write_pair_rows, Pair, ParentMap, StepPairs};
use crate::blob::{join, Blobs};
use crate::error::{Error, Result};
use crate::io_pool::window_len;
use crate::layout::cross_level::partition_pairs;
use crate::layout::offset_links::parse_segment;
use crate::metadata::{ChunkKey, JsonObject, Layout};
use crate::names;
use crate::reader::delta_name;
use crate::writer::{CodecChoice, Places};

/// Writes the `+k` links of `fine` (and, when `explicit`, the `-k` links of `coarse`), `k` =
/// `coarse − fine`, from each fine row's metavertex (`parents`) and each metavertex's place
/// (`places`); `scales` are the chunk scales of the fine and the coarse level. Both levels'
/// `vertices` arrays must be written (their grids hold the cells). Returns the pairs. Memory
/// holds a window of chunks' pairs at a time ([`window_len`] chunks: fine chunks for `+k`,
/// coarse chunks for `-k`), not the step's: each cell of a family is one chunk's pairs at one
/// offset, and the chunks of a window are paired and written in parallel.
pub(crate) fn write_cross_level_v09(
    store: &Arc<dyn Store>,
    (fine, coarse): (u32, u32),
    parents: &ParentMap,
    places: &Places,
    scales: (&[i64], &[i64]),
    explicit: bool,
    codecs: &CodecChoice,
) -> Result<u64> {
    let step = StepPairs::new(parents, places, coarse);
    let k = i32::try_from(coarse - fine)
        .map_err(|_| Error::InvalidInput(format!("levels {fine} and {coarse}")))?;
    let sid = scales.0.len();
    // +k, a fine chunk at a time (its rows in order), a window of chunks in parallel
    let mut up = FamilyWriter::start(store, fine, k, (scales.0, scales.1), sid, codecs)?;
    let all: Vec<usize> = (0..step.fine_chunks()).collect();
    for window in all.chunks(window_len()) {
        up.cells_of(window, |&i| Ok(step.up(i)?.1))?;
    }
    let total = up.finish()?;
    if explicit {
        // -k, a coarse chunk at a time: the fine chunks with rows in each coarse chunk are
        // noted first
        let census = step.census()?;
        let mut down = FamilyWriter::start(store, coarse, -k, (scales.1, scales.0), sid, codecs)?;
        for window in census.children.chunks(window_len()) {
            down.cells_of(window, |(ck, fine_chunks)| step.down(ck, fine_chunks))?;
        }
        down.finish()?;
    }
    Ok(total)
}

/// One family `level/links/<delta>` being written, a window of chunks' pairs at a time
/// ([`FamilyWriter::cells_of`]): each window's cells are written as they come, the segments'
/// documents and the family's at the end ([`FamilyWriter::finish`]).
struct FamilyWriter<'a> {
    blobs: Blobs,
    name: String,
    family: String,
    delta: i32,
    scales: (&'a [i64], &'a [i64]),
    sid: usize,
    codecs: Vec<zv_core::metadata::ExtensionMetadata>,
    segments: BTreeSet<String>,
    pairs: u64,
}

impl<'a> FamilyWriter<'a> {
    /// Starts the family of pairs whose sources are at `level` (on its grid, with the chunk
    /// scales `scales`: the source level's, then the target's).
    fn start(
        store: &Arc<dyn Store>,
        level: u32,
        delta: i32,
        scales: (&'a [i64], &'a [i64]),
        sid: usize,
        codecs: &CodecChoice,
    ) -> Result<Self> {
        let name = level.to_string();
        let family = join(&[&name, names::LINKS, &delta_name(delta)]);
        // the cells lie on the level's own grid, the one its vertices are on
        let vertices = join(&[&name, names::VERTICES]);
        let grid = Blobs::with_layout(store.clone(), Layout::ChunkGrid)
            .grid(&vertices)?
            .ok_or_else(|| Error::Missing {
                key: join(&[&vertices, "zarr.json"]),
                what: format!("the chunk grid of level {level} (its cross-level links lie on it)"),
            })?;
        let blobs = Blobs::with_layout(store.clone(), Layout::ChunkGrid);
        // sharded as the level's vertices are; a family covers some chunks only, so its shards
        // are stored with its document
        blobs.begin_grid(
            grid.origin().to_vec(),
            grid.shape().to_vec(),
            grid.shard_shape(),
            &[],
        )?;
        Ok(Self {
            blobs,
            name,
            family,
            delta,
            scales,
            sid,
            codecs: codecs.codecs(8, true),
            segments: BTreeSet::new(),
            pairs: 0,
        })
    }

    /// Writes the cells of the pairs `pairs_of` makes of each item of `items`, in parallel;
    /// each item's pairs (sources at this family's level) hold every pair of their source
    /// chunks: no other item has pairs of the same source chunk. The first error in item
    /// order is returned.
    fn cells_of<'p, T: Sync>(
        &mut self,
        items: &[T],
        pairs_of: impl Fn(&T) -> Result<Vec<Pair<'p>>> + Sync,
    ) -> Result<()> {
        let written: Vec<Result<(u64, Vec<String>)>> = items
            .par_iter()
            .map(|item| {
                let pairs = pairs_of(item)?;
                let segments = self.write_cells(&pairs)?;
                Ok((pairs.len() as u64, segments))
            })
            .collect();
        for w in written {
            let (pairs, segments) = w?;
            self.pairs += pairs;
            self.segments.extend(segments);
        }
        Ok(())
    }

    /// Writes the cells of `pairs`; returns their offsets segments.
    fn write_cells(&self, pairs: &[Pair<'_>]) -> Result<Vec<String>> {
        let family_key = || join(&[&self.family, "zarr.json"]);
        let coords = pairs
            .iter()
            .map(|&((a, ra), (b, rb))| ((a.coords(), ra), (b.coords(), rb)));
        let cells = partition_pairs(coords, self.scales.0, self.scales.1).ok_or_else(|| {
            Error::InvalidInput(format!("{}: a chunk offset overflows", family_key()))
        })?;
        let mut segments = Vec::new();
        for ((seg, source), rows) in cells {
            let path = join(&[&self.family, &seg, &ChunkKey(source).to_string()]);
            write_pair_rows(&self.blobs, &path, rows, &self.codecs)?;
            segments.push(seg);
        }
        Ok(segments)
    }

    /// Writes the segments' documents and the family's; returns the pairs written.
    fn finish(self) -> Result<u64> {
        let blobs = &self.blobs;
        for seg in &self.segments {
            let path = join(&[&self.family, seg]);
            let offsets = parse_segment(seg, self.sid, 2)
                .map_err(|why| Error::metadata(join(&[&path, "zarr.json"]), why))?;
            let mut m = JsonObject::new();
            m.insert("zv_array".into(), json!(names::LINKS));
            m.insert("dtype".into(), json!("int64"));
            m.insert("offsets".into(), json!(offsets));
            m.insert("has_perm".into(), json!(false));
            m.insert("link_width".into(), json!(2));
            m.insert("level_delta".into(), json!(self.delta));
            blobs.write_chunk_array_document(&path, m, &self.codecs)?;
        }
        let mut attributes = JsonObject::new();
        attributes.insert("zv_array".into(), json!("links_family"));
        attributes.insert("level_delta".into(), json!(self.delta));
        attributes.insert("link_width".into(), json!(2));
        attributes.insert("sid_ndim".into(), json!(self.sid));
        attributes.insert("directed".into(), json!(true));
        attributes.insert("store".into(), json!("canonical"));
        attributes.insert("num_links".into(), json!(self.pairs));
        attributes.insert("num_physical_records".into(), json!(self.pairs));
        let links = join(&[&self.name, names::LINKS]);
        if blobs.node(&links)?.is_none() {
            blobs.write_group(&links, JsonObject::new())?;
        }
        blobs.write_group(&self.family, attributes)?;
        Ok(self.pairs)
    }
}
