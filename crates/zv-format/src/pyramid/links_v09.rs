//! The cross-level links of a step in the ZV 0.9 layout (`docs/format-decisions.md`, "Writing
//! ZV 0.9", "Cross-level links"), as zarr-vectors 0.9.2's `write_cross_level_links` files
//! them ([`crate::layout::cross_level`]): at the fine level the family `links/+k`, at the
//! coarse level (explicit storage) `links/-k`, each a directed, canonical family of width 2
//! with one chunk-grid array per offsets segment over its level's grid.

use std::sync::Arc;

use serde_json::json;
use zv_core::store::Store;

use super::links::{ParentMap, NO_PARENT};
use crate::blob::{join, Blobs};
use crate::error::{Error, Result};
use crate::layout::cross_level::partition_pairs;
use crate::layout::links::RaggedLinks;
use crate::layout::offset_links::parse_segment;
use crate::metadata::{ChunkKey, JsonObject, Layout};
use crate::names;
use crate::reader::delta_name;
use crate::writer::CodecChoice;

/// One pair: (chunk, row) at the level written, (chunk, row) at the other.
type Pair<'a> = ((&'a [i64], u64), (&'a [i64], u64));

/// Writes the `+k` links of `fine` (and, when `explicit`, the `-k` links of `coarse`), `k` =
/// `coarse − fine`, from each fine row's metavertex (`parents`) and each metavertex's place
/// (`places`); `scales` are the chunk scales of the fine and the coarse level. Both levels'
/// `vertices` arrays must be written (their grids hold the cells). Returns the pairs.
pub(crate) fn write_cross_level_v09(
    store: &Arc<dyn Store>,
    (fine, coarse): (u32, u32),
    parents: &ParentMap,
    places: &[(ChunkKey, u64)],
    scales: (&[i64], &[i64]),
    explicit: bool,
    codecs: &CodecChoice,
) -> Result<u64> {
    let mut up: Vec<Pair<'_>> = Vec::new();
    for (key, rows) in &parents.chunks {
        for (r, &g) in rows.iter().enumerate() {
            if g == NO_PARENT {
                continue;
            }
            let (ck, cr) = places.get(g as usize).ok_or_else(|| {
                Error::InvalidInput(format!(
                    "pyramid level {coarse}: metavertex {g} was not written"
                ))
            })?;
            up.push(((key.coords(), r as u64), (ck.coords(), *cr)));
        }
    }
    let k = i32::try_from(coarse - fine)
        .map_err(|_| Error::InvalidInput(format!("levels {fine} and {coarse}")))?;
    let sid = scales.0.len();
    write_side(store, fine, k, &up, scales, sid, codecs)?;
    if explicit {
        let mut down: Vec<Pair<'_>> = up.iter().map(|&(a, b)| (b, a)).collect();
        down.sort_unstable();
        write_side(store, coarse, -k, &down, (scales.1, scales.0), sid, codecs)?;
    }
    Ok(up.len() as u64)
}

/// Writes `pairs` (sources at `level`) as the family `level/links/<delta>`.
fn write_side(
    store: &Arc<dyn Store>,
    level: u32,
    delta: i32,
    pairs: &[Pair<'_>],
    (scale_src, scale_trg): (&[i64], &[i64]),
    sid: usize,
    codecs: &CodecChoice,
) -> Result<()> {
    let name = level.to_string();
    let family = join(&[&name, names::LINKS, &delta_name(delta)]);
    let family_key = join(&[&family, "zarr.json"]);
    let cells = partition_pairs(pairs.iter().copied(), scale_src, scale_trg)
        .ok_or_else(|| Error::InvalidInput(format!("{family_key}: a chunk offset overflows")))?;
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
    let codecs = codecs.codecs(8, true);
    let mut segments: Vec<String> = Vec::new();
    for ((seg, source), rows) in cells {
        let path = join(&[&family, &seg, &ChunkKey(source).to_string()]);
        let blob = RaggedLinks {
            link_width: 2,
            groups: vec![rows],
        }
        .encode()
        .map_err(|source| Error::Blob {
            key: path.clone(),
            source,
        })?;
        blobs.write_bytes(&path, &blob, &codecs)?;
        if segments.last() != Some(&seg) {
            segments.push(seg);
        }
    }
    for seg in &segments {
        let path = join(&[&family, seg]);
        let offsets = parse_segment(seg, sid, 2)
            .map_err(|why| Error::metadata(join(&[&path, "zarr.json"]), why))?;
        let mut m = JsonObject::new();
        m.insert("zv_array".into(), json!(names::LINKS));
        m.insert("dtype".into(), json!("int64"));
        m.insert("offsets".into(), json!(offsets));
        m.insert("has_perm".into(), json!(false));
        m.insert("link_width".into(), json!(2));
        m.insert("level_delta".into(), json!(delta));
        blobs.write_chunk_array_document(&path, m, &codecs)?;
    }
    let mut attributes = JsonObject::new();
    attributes.insert("zv_array".into(), json!("links_family"));
    attributes.insert("level_delta".into(), json!(delta));
    attributes.insert("link_width".into(), json!(2));
    attributes.insert("sid_ndim".into(), json!(sid));
    attributes.insert("directed".into(), json!(true));
    attributes.insert("store".into(), json!("canonical"));
    attributes.insert("num_links".into(), json!(pairs.len()));
    attributes.insert("num_physical_records".into(), json!(pairs.len()));
    let links = join(&[&name, names::LINKS]);
    if blobs.node(&links)?.is_none() {
        blobs.write_group(&links, JsonObject::new())?;
    }
    blobs.write_group(&family, attributes)
}
