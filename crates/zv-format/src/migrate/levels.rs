//! Pyramid stores migrated level by level (`docs/format-decisions.md`, "Migrating between 0.7
//! and 0.9", "Pyramids"): every level is copied **chunk by chunk, rows kept** — each chunk's
//! blobs (vertices, fragments, vertex and fragment attributes) are the 0.7 blob bytes in
//! both layouts — its object index rewritten with the same manifests (shared fragments and
//! repeats included, which the writer's own fragments could not express), its object and
//! group attributes and groups written by the writer in the target layout, its level
//! document copied. Rows being kept, each cross-level pair is copied as it is, filed in the
//! target layout: `+k` from the finer level, mirrored as `-k` at the coarser one where the
//! source stores `-k`. The root document (the source's, `zv_version` changed) comes last.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;
use zv_core::store::Store;

use super::{layout_of, version_name, MigrateOptions, MigrateSummary};
use crate::blob::{join, Blobs};
use crate::document::GeometryDocument;
use crate::error::{Error, Result};
use crate::geometry::Geometry;
use crate::layout::cross_level::chunk_scale;
use crate::metadata::{ChunkKey, JsonObject, Layout};
use crate::names;
use crate::progress::Progress;
use crate::pyramid::links::{set_parent, write_cross_level, ParentMap};
use crate::pyramid::links_v09::write_cross_level_v09;
use crate::reader::{Level, ZvStore};
use crate::writer::{FormatVersion, Places, WriteSummary, WriterOptions, ZvWriter};

/// Attributes of a chunk-grid array that the target layout recomputes or does not have.
const GRID_ONLY: &[&str] = &["nonempty_chunks", "chunk_grid_origin", "row_shape"];

/// Migrates a store with levels above 0 (see the [module docs](self)).
pub(super) fn migrate_pyramid(
    source: &ZvStore,
    target: Arc<dyn Store>,
    options: &MigrateOptions,
    progress: &dyn Progress,
) -> Result<MigrateSummary> {
    let geometry = source.geometry();
    if geometry != Geometry::PointCloud {
        return Err(Error::Unsupported {
            key: "1/zarr.json".into(),
            what: format!(
                "migrating the pyramid levels of a {} store (zv migrates point-cloud pyramids)",
                geometry.name()
            ),
        });
    }
    let mut chunks = 0u64;
    for &id in source.level_ids() {
        chunks += source.level(id)?.chunk_keys()?.len() as u64;
    }
    progress.set_total(chunks, "chunks");
    let mut written = WriteSummary::default();
    for &id in source.level_ids() {
        let level = source.level(id)?;
        let summary = copy_level(source, &level, &target, options)?;
        progress.advance(summary.chunks as u64);
        if id == 0 {
            written = summary;
        }
    }
    for &id in source.level_ids() {
        copy_cross_level(source, id, &target, options)?;
    }
    let mut root = source.root_attributes().clone();
    if let Some(zv) = root
        .get_mut(names::ROOT_ATTRIBUTE)
        .and_then(Value::as_object_mut)
    {
        zv.insert("zv_version".into(), Value::from(version_name(options.to)));
    }
    let blobs = Blobs::new(target.clone());
    blobs.store().sync()?;
    blobs.create_group("", root)?;
    blobs.store().sync()?;
    Ok(MigrateSummary {
        from: source.root().zv_version.clone(),
        to: version_name(options.to).to_owned(),
        geometry,
        levels: source.level_ids().len() as u32,
        written,
    })
}

/// Copies `level` into `target`: chunk blobs, object index and attributes, level document.
fn copy_level(
    source: &ZvStore,
    level: &Level,
    target: &Arc<dyn Store>,
    options: &MigrateOptions,
) -> Result<WriteSummary> {
    let id = level.id();
    let name = id.to_string();
    let keys = level.chunk_keys()?;
    let doc = crate::export::level_without_vertices(source, level)?;
    let doc = GeometryDocument::from_value(&doc)?;
    let mut wopts = WriterOptions::from_document(&doc)?;
    wopts.chunk_shape = level.chunk_shape();
    wopts.format_version = options.to;
    wopts.codecs = options.codecs;
    wopts.shard_shape = options.shard_shape.clone();
    let mut w = if id == 0 {
        ZvWriter::create(target.clone(), wopts)?
    } else {
        ZvWriter::for_level(target.clone(), wopts, id, serde_json::Map::new())?
    };
    let mut objects = 0;
    if let Some(index) = level.object_index()? {
        w.add_vertices_flat(&[], Some(&[]), &BTreeMap::new())?;
        crate::import::add_objects(&mut w, &doc);
        let place: BTreeMap<&[i64], u32> = keys
            .iter()
            .enumerate()
            .map(|(i, k)| (k.coords(), i as u32))
            .collect();
        let okey = level.p(&[names::OBJECT_INDEX, "zarr.json"]);
        let refs = index
            .manifests
            .iter()
            .map(|m| {
                m.refs()
                    .map(|(c, f)| match (place.get(c), u32::try_from(f)) {
                        (Some(&ci), Ok(f)) => Ok((ci, f)),
                        _ => Err(Error::inconsistent(
                            &okey,
                            format!(
                                "a manifest names fragment {f} of chunk {}, which has no vertices",
                                ChunkKey(c.to_vec())
                            ),
                        )),
                    })
                    .collect::<Result<Vec<_>>>()
            })
            .collect::<Result<Vec<_>>>()?;
        objects = refs.len() as u64;
        w.write_copied_objects(&keys, &refs)?;
    }
    let blobs = Blobs::with_layout(target.clone(), layout_of(options.to));
    if options.to == FormatVersion::V0_9 {
        let (origin, shape) = crate::blob::bounding_grid(&keys, level.root().ndim());
        blobs.begin_grid(origin, shape, options.shard_shape.clone(), &keys)?;
    }
    let vsize = level.vertex_type().size().unwrap_or(4);
    let mut arrays = vec![
        (names::VERTICES.to_owned(), vsize),
        (names::VERTEX_FRAGMENTS.to_owned(), 1),
    ];
    for (folder, names_of) in [
        (names::VERTEX_ATTRIBUTES, level.vertex_attribute_names()?),
        (
            names::FRAGMENT_ATTRIBUTES,
            level.fragment_attribute_names()?,
        ),
    ] {
        if !names_of.is_empty() {
            let attrs = group_attributes(level, &[folder])?;
            blobs.write_group(&join(&[&name, folder]), attrs)?;
        }
        for n in names_of {
            arrays.push((join(&[folder, &n]), 8));
        }
    }
    let mut rows = 0u64;
    for (array, typesize) in &arrays {
        let codecs = options.codecs.codecs(*typesize, false);
        let mut total = 0u64;
        for key in &keys {
            let path = level.chunk_blob(&[array], key);
            let Some(bytes) = level.blobs().read_bytes(&path)? else {
                continue;
            };
            total += bytes.len() as u64;
            blobs.write_bytes(&join(&[&name, array, &key.to_string()]), &bytes, &codecs)?;
        }
        if array == names::VERTICES {
            rows = total / (vsize as u64 * level.root().ndim() as u64).max(1);
        }
        let mut attrs = group_attributes(level, &[array])?;
        if options.to == FormatVersion::V0_9 {
            if let Some(rs) = row_shape(level, array, total, rows)? {
                attrs.insert("row_shape".into(), rs);
            }
        }
        blobs.write_chunk_array_document(&join(&[&name, array]), attrs, &codecs)?;
    }
    blobs.write_group(&name, level.attributes().clone())?;
    Ok(WriteSummary {
        vertices: rows,
        chunks: keys.len(),
        objects,
        ..WriteSummary::default()
    })
}

/// The attributes of the level's node `path` without the ones the target recomputes.
fn group_attributes(level: &Level, path: &[&str]) -> Result<JsonObject> {
    let mut attrs = level
        .blobs()
        .group_attributes(&level.p(path))?
        .unwrap_or_default();
    for k in GRID_ONLY {
        attrs.remove(*k);
    }
    Ok(attrs)
}

/// The `row_shape` of a vertex attribute array in the 0.9 layout (`[]` or `[C]`): its
/// channels as recorded, else as its `bytes` over the level's `rows` give them.
fn row_shape(level: &Level, array: &str, bytes: u64, rows: u64) -> Result<Option<Value>> {
    let Some(n) = array.strip_prefix(&format!("{}/", names::VERTEX_ATTRIBUTES)) else {
        return Ok(None);
    };
    let info = level.vertex_attribute_info(n)?;
    let size = info.data_type.size().unwrap_or(1).max(1) as u64;
    let channels = info
        .channels()
        .map_or_else(|| bytes / (rows * size).max(1), |c| c as u64);
    Ok(Some(if channels > 1 {
        serde_json::json!([channels])
    } else {
        serde_json::json!([])
    }))
}

/// Copies the cross-level pairs of level `id` (`+k`, and their `-k` mirror where the source
/// has it at level `id + k`).
fn copy_cross_level(
    source: &ZvStore,
    id: u32,
    target: &Arc<dyn Store>,
    options: &MigrateOptions,
) -> Result<()> {
    let level = source.level(id)?;
    let mut deltas = level.link_deltas()?;
    deltas.extend(level.cross_chunk_deltas()?);
    deltas.retain(|&d| d > 0);
    deltas.sort_unstable();
    deltas.dedup();
    let arity = level.root().ndim();
    for d in deltas {
        let coarse_id = id + d as u32;
        let coarse = source.level(coarse_id)?;
        let explicit =
            coarse.link_deltas()?.contains(&-d) || coarse.cross_chunk_deltas()?.contains(&-d);
        // each fine row's parent, numbered over the distinct parents met
        let mut rows: BTreeMap<ChunkKey, Vec<u64>> = BTreeMap::new();
        let mut places = Places::default();
        let mut number: BTreeMap<(ChunkKey, u64), u64> = BTreeMap::new();
        let mut add = |fine: &ChunkKey, r: u64, c: ChunkKey, cr: u64| -> Result<()> {
            let g = match number.get(&(c.clone(), cr)) {
                Some(&g) => g,
                None => {
                    let g = places.len() as u64;
                    places.push(&c, cr)?;
                    number.insert((c, cr), g);
                    g
                }
            };
            set_parent(&mut rows, fine, r, g);
            Ok(())
        };
        for key in level.chunk_keys()? {
            if let Some(r) = level.cross_level_links(d, &key, 2)? {
                for g in &r.groups {
                    for p in g.chunks_exact(2) {
                        add(&key, p[0] as u64, key.clone(), p[1] as u64)?;
                    }
                }
            }
        }
        if let Some(c) = level.cross_chunk_links(d)? {
            for r in 0..c.links.len() {
                if let (Some((a, ra)), Some((b, rb))) =
                    (c.links.endpoint(r, 0), c.links.endpoint(r, 1))
                {
                    add(&ChunkKey(a.to_vec()), ra, ChunkKey(b.to_vec()), rb)?;
                }
            }
        }
        let parents = ParentMap::from_rows(rows);
        if options.to == FormatVersion::V0_9 {
            let root = &level.root().chunk_shape;
            let scale = |l: &Level| {
                chunk_scale(&l.chunk_shape(), root, arity)
                    .map_err(|w| Error::metadata(l.p(&["zarr.json"]), w))
            };
            let (rs, rt) = (scale(&level)?, scale(&coarse)?);
            write_cross_level_v09(
                target,
                (id, coarse_id),
                &parents,
                &places,
                (&rs, &rt),
                explicit,
                &options.codecs,
            )?;
        } else {
            let blobs = Blobs::with_layout(target.clone(), Layout::PerChunkNodes);
            write_cross_level(
                &blobs,
                (id, coarse_id),
                &parents,
                &places,
                arity,
                explicit,
                &options.codecs,
            )?;
        }
    }
    Ok(())
}
