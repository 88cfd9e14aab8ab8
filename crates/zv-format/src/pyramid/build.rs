//! The pyramid builder: level after level, the fine level read one coarse chunk at a time,
//! the coarse level written by the writer, then the cross-level links; the root document is
//! updated last.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{json, Map, Value};
use zv_core::store::Store;

use super::attributes::{fragment_attributes, groups, object_attributes};
use super::coarsen::{bin_of, linked, points, polylines, skeletons};
use super::links::{CrossLevelLinks, ParentMap, NO_PARENT};
use super::source::SourceLevel;
use super::sparsity::{select, ObjectStats, SparsityStrategy};
use super::PyramidOptions;
use crate::blob::Blobs;
use crate::error::{Error, Result};
use crate::geometry::Geometry;
use crate::metadata::json::whole_multiples;
use crate::metadata::{ChunkKey, Layout};
use crate::names;
use crate::writer::{FormatVersion, Places, WriterOptions, ZvWriter};
use crate::ZvStore;

/// What one new level holds.
#[derive(Debug, Clone, PartialEq)]
pub struct LevelSummary {
    /// The level number.
    pub level: u32,
    /// Its vertex (metavertex) count.
    pub vertices: u64,
    /// Its chunk count.
    pub chunks: usize,
    /// The objects kept (0 for a level without objects).
    pub objects_kept: u64,
    /// The fine → coarse pairs linked (0 without cross-level links).
    pub cross_level_links: u64,
}

/// What [`build_pyramid`] wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct PyramidSummary {
    /// The new levels, in order.
    pub levels: Vec<LevelSummary>,
}

/// The grid of a level: bin and chunk shapes, the cumulative bin ratio.
#[derive(Debug, Clone)]
pub(super) struct LevelGrid {
    pub(super) bin: Vec<f64>,
    pub(super) chunk: Vec<f64>,
    pub(super) ratio: Vec<u64>,
}

fn bad(reason: impl Into<String>) -> Error {
    Error::InvalidInput(reason.into())
}

/// Adds levels `1..=N` (one per step) to the store, which must hold level 0 only. See the
/// [module docs](super).
pub fn build_pyramid(store: Arc<dyn Store>, opts: &PyramidOptions) -> Result<PyramidSummary> {
    build_pyramid_with_progress(store, opts, &crate::progress::NoProgress)
}

/// [`build_pyramid`], reporting to `progress` one unit per level built (the total is the
/// number of steps).
pub fn build_pyramid_with_progress(
    store: Arc<dyn Store>,
    opts: &PyramidOptions,
    progress: &dyn crate::progress::Progress,
) -> Result<PyramidSummary> {
    opts.validate()?;
    let zv = ZvStore::open(store.clone())?;
    let layout = zv.root().layout();
    if zv.level_ids() != [0] {
        return Err(bad(format!(
            "the store already has levels {:?}: a pyramid is built on a store with level 0 only",
            zv.level_ids()
        )));
    }
    match zv.geometry() {
        Geometry::Graph | Geometry::Mesh => linked::check_no_link_attributes(&zv.level(0)?)?,
        Geometry::Other(name) => {
            return Err(Error::Unsupported {
                key: "zarr.json".into(),
                what: format!("pyramids of `{name}` geometry (not a geometry of the spec)"),
            })
        }
        _ => {}
    }
    let root = zv.root().clone();
    // every level's grid is checked before anything is written
    let grids = level_grids(&root.effective_bin_shape(), &root.chunk_shape, opts)?;
    if layout == Layout::ChunkGrid {
        check_v09_source(&zv)?;
    }
    let blobs = Blobs::with_layout(store.clone(), layout);
    let links = CrossLevelLinks {
        blobs: &blobs,
        v09_scales: (layout == Layout::ChunkGrid)
            .then(|| v09_scales(&root.chunk_shape, &grids))
            .transpose()?,
        sid_ndim: root.ndim(),
        explicit: opts.cross_level == super::CrossLevel::Explicit,
        codecs: &opts.codecs,
    };
    let mut levels = Vec::new();
    let mut datasets = Vec::new();
    let mut with_objects = false;
    let mut chains = Chains::default();
    progress.set_total(grids.len() as u64, "levels");
    for (i, grid) in grids.iter().enumerate() {
        let scale = u64::from(opts.chunk_scale_of(i));
        let coarse = i as u32 + 1;
        let level = ZvStore::open(store.clone())?.level(i as u32)?;
        let source = SourceLevel::new(level)?;
        with_objects |= source.has_objects();
        let (summary, step) = build_level(&store, &links, &source, opts, i, grid, scale)?;
        if opts.writes_links() {
            chains = deeper_links(&links, opts, chains, step, coarse)?;
        }
        datasets.push(dataset(coarse, grid));
        levels.push(summary);
        progress.advance(1);
    }
    update_root(&blobs, opts, datasets, with_objects)?;
    Ok(PyramidSummary { levels })
}

/// The NGFF dataset of level `level` with grid `grid`: its scale (the bin ratio) and
/// translation (half a bin).
fn dataset(level: u32, grid: &LevelGrid) -> Value {
    json!({"path": level.to_string(), "coordinateTransformations": [
        {"type": "scale", "scale": grid.ratio.iter().map(|&r| r as f64).collect::<Vec<_>>()},
        {"type": "translation", "translation": grid.bin.iter().map(|b| b / 2.0).collect::<Vec<_>>()},
    ]})
}

/// The NGFF datasets of levels `1..=N` of `grids`.
pub(super) fn datasets(grids: &[LevelGrid]) -> Vec<Value> {
    grids
        .iter()
        .enumerate()
        .map(|(i, g)| dataset(i as u32 + 1, g))
        .collect()
}

/// The cross-level links deeper than one step still to be written: for each finer level `L`
/// whose links to a later level are due (`cross_level_depth` ≥ 2, or −1 for all pairs), the
/// metavertex of every row of `L` at the level built last; and that level's metavertex places.
#[derive(Default)]
struct Chains {
    maps: Vec<(u32, ParentMap)>,
    places: Places,
}

/// After the step to level `coarse`: composes every chain with the step's parents, writes the
/// `±k` links of each (`k` = `coarse − L` ≥ 2), and returns the chains still due.
fn deeper_links(
    links: &CrossLevelLinks<'_>,
    opts: &PyramidOptions,
    chains: Chains,
    step: Step,
    coarse: u32,
) -> Result<Chains> {
    let due = |k: i64| opts.depth < 0 || k < opts.depth;
    // the step's parents by fine chunk (the chunks of the level built before this step), read
    // in whole when there are chains to compose (links deeper than one step)
    let step_rows = if chains.maps.is_empty() {
        Vec::new()
    } else {
        (0..step.parents.len())
            .map(|i| step.parents.rows(i))
            .collect::<Result<Vec<_>>>()?
    };
    let by_chunk: std::collections::HashMap<&ChunkKey, &[u64]> = step_rows
        .iter()
        .enumerate()
        .map(|(i, rows)| (step.parents.key(i), &rows[..]))
        .collect();
    let mut maps = Vec::new();
    for (level, map) in chains.maps {
        let mut composed = ParentMap::default();
        for i in 0..map.len() {
            let up = map
                .rows(i)?
                .iter()
                .map(|&g| {
                    if g == NO_PARENT {
                        return Ok(NO_PARENT);
                    }
                    let (c, r) = chains.places.get(g).ok_or_else(|| {
                        bad(format!(
                            "pyramid level {}: metavertex {g} was not written",
                            coarse - 1
                        ))
                    })?;
                    let parent = by_chunk.get(c).and_then(|rows| rows.get(r as usize));
                    Ok(parent.copied().unwrap_or(NO_PARENT))
                })
                .collect::<Result<Vec<u64>>>()?;
            composed.push(map.key(i).clone(), up)?;
        }
        links.write((level, coarse), &composed, &step.places)?;
        if due(i64::from(coarse - level)) {
            maps.push((level, composed));
        }
    }
    if due(1) {
        maps.push((coarse - 1, step.parents));
    }
    Ok(Chains {
        maps,
        places: step.places,
    })
}

/// The grids of levels `1..=N`: bins cumulative from the base bin, chunks scaled step by
/// step; an error if a level's bin does not divide its chunk.
pub(super) fn level_grids(
    base_bin: &[f64],
    chunk: &[f64],
    opts: &PyramidOptions,
) -> Result<Vec<LevelGrid>> {
    let mut grid = LevelGrid {
        bin: base_bin.to_vec(),
        chunk: chunk.to_vec(),
        ratio: vec![1; base_bin.len()],
    };
    let mut out = Vec::with_capacity(opts.steps.len());
    for (i, step) in opts.steps.iter().enumerate() {
        let scale = f64::from(opts.chunk_scale_of(i));
        grid.ratio
            .iter_mut()
            .for_each(|r| *r *= u64::from(step.coarsen));
        grid.bin = base_bin
            .iter()
            .zip(&grid.ratio)
            .map(|(b, r)| b * *r as f64)
            .collect();
        grid.chunk = grid.chunk.iter().map(|c| c * scale).collect();
        if !whole_multiples(&grid.chunk, &grid.bin) {
            return Err(bad(format!(
                "level {}: bin shape {:?} does not divide chunk shape {:?} (raise the chunk-scale factor)",
                i + 1,
                grid.bin,
                grid.chunk
            )));
        }
        out.push(grid.clone());
    }
    Ok(out)
}

/// The chunk scale of every level of a ZV 0.9 pyramid, level 0 (the root's chunks) first,
/// then the levels of `grids` (`layout::cross_level::chunk_scale`).
fn v09_scales(root_chunk: &[f64], grids: &[LevelGrid]) -> Result<Vec<Vec<i64>>> {
    std::iter::once(root_chunk)
        .chain(grids.iter().map(|g| g.chunk.as_slice()))
        .map(|c| {
            crate::layout::cross_level::chunk_scale(c, root_chunk, root_chunk.len())
                .map_err(|why| bad(format!("pyramid chunk shapes: {why}")))
        })
        .collect()
}

/// What a ZV 0.9 pyramid cannot be built on: a geometry the 0.9 writer does not write, or a
/// level 0 storing sparse object ids (`object_index/object_ids`; the writer stores every id
/// `0..N`, so the coarse levels would hold objects level 0 does not).
fn check_v09_source(zv: &ZvStore) -> Result<()> {
    if !FormatVersion::V0_9.writes(&zv.geometry()) {
        return Err(Error::Unsupported {
            key: "zarr.json".into(),
            what: format!(
                "pyramids of `{}` geometry in the ZV 0.9 layout (the 0.9 writer does not write it)",
                zv.geometry().name()
            ),
        });
    }
    let level = zv.level(0)?;
    if level.object_index()?.is_some_and(|i| i.ids.is_some()) {
        return Err(Error::Unsupported {
            key: level.p(&[names::OBJECT_INDEX, "object_ids"]),
            what: "pyramids of a ZV 0.9 level with sparse object ids (zv writes every id 0..N at the coarse levels)".into(),
        });
    }
    Ok(())
}

/// The level document's fields (beside `vertex_count` and `arrays_present`).
pub(super) fn level_fields(
    source: &SourceLevel,
    opts: &PyramidOptions,
    i: usize,
    grid: &LevelGrid,
    root_chunk: &[f64],
) -> Map<String, Value> {
    let step = &opts.steps[i];
    let mut m = Map::new();
    m.insert("level".into(), json!(i + 1));
    m.insert(
        "object_sparsity".into(),
        json!(1.0 / f64::from(step.sparsity)),
    );
    m.insert("coarsening_method".into(), json!("per_object"));
    m.insert("parent_level".into(), json!(i));
    m.insert("bin_shape".into(), json!(grid.bin));
    m.insert("bin_ratio".into(), json!(grid.ratio));
    if grid.chunk != root_chunk {
        m.insert("chunk_shape".into(), json!(grid.chunk));
    }
    if source.has_objects() {
        m.insert("preserves_object_ids".into(), json!(true));
        m.insert("inherited_num_objects".into(), json!(source.num_objects));
    }
    m
}

/// The fine chunk keys grouped by the coarse chunk they nest in (`key // scale`).
pub(super) fn nest(
    keys: Vec<ChunkKey>,
    scale: u64,
    ndim: usize,
) -> Result<BTreeMap<Vec<i64>, Vec<ChunkKey>>> {
    let mut out: BTreeMap<Vec<i64>, Vec<ChunkKey>> = BTreeMap::new();
    for k in keys {
        if k.arity() != ndim {
            return Err(Error::Unsupported {
                key: format!("vertices/{k}"),
                what: "pyramids of attribute-chunked levels".into(),
            });
        }
        let c = k.0.iter().map(|x| x.div_euclid(scale as i64)).collect();
        out.entry(c).or_default().push(k);
    }
    Ok(out)
}

/// The objects' statistics for the sparsity strategies (one pass over the fine level).
pub(super) fn object_stats(
    source: &SourceLevel,
    keys: &[ChunkKey],
    strategy: &SparsityStrategy,
    coarse_chunk: &[f64],
) -> Result<Vec<ObjectStats>> {
    let ndim = coarse_chunk.len();
    let n = source.num_objects as usize;
    let mut stats = vec![ObjectStats::default(); n];
    let mut sums = vec![vec![0.0; ndim]; n];
    for key in keys {
        let Some(chunk) = source.chunk(key)? else {
            continue;
        };
        for (r, o) in chunk.objects.iter().enumerate() {
            let Some(o) = o.and_then(|o| usize::try_from(o).ok()).filter(|&o| o < n) else {
                continue;
            };
            stats[o].length += 1;
            let p = &chunk.positions[r * ndim..(r + 1) * ndim];
            sums[o].iter_mut().zip(p).for_each(|(s, x)| *s += x);
        }
    }
    for (s, sum) in stats.iter_mut().zip(&sums) {
        let centroid: Vec<f64> = sum.iter().map(|x| x / s.length.max(1) as f64).collect();
        bin_of(&centroid, coarse_chunk, &mut s.cell);
        s.score = f64::NAN;
    }
    if let SparsityStrategy::Attribute(name) = strategy {
        let attributes = source.level.object_attributes()?;
        let a = attributes.get(name).ok_or_else(|| {
            bad(format!(
                "--sparsity attribute:{name}: level {} has no object attribute `{name}`",
                source.level.id()
            ))
        })?;
        if a.dictionary.is_some() {
            return Err(bad(format!(
                "--sparsity attribute:{name}: the attribute is categorical, not numeric"
            )));
        }
        for (o, s) in stats.iter_mut().enumerate() {
            let present = a
                .present_mask
                .as_ref()
                .is_none_or(|m| m.get(o) == Some(&true));
            if present {
                s.score = a.values.rows.get_f64(o, 0).unwrap_or(f64::NAN);
            }
        }
    }
    Ok(stats)
}

/// What a step leaves for the deeper cross-level links: each fine row's metavertex, and each
/// metavertex's place (chunk, row) at the coarse level.
struct Step {
    parents: ParentMap,
    places: Places,
}

/// The objects step `i` keeps (empty when the level has none): every object with vertices
/// for a factor of 1, else the strategy's choice over the objects' statistics (`keys`: the
/// source level's chunks).
pub(super) fn level_keep(
    source: &SourceLevel,
    opts: &PyramidOptions,
    i: usize,
    grid: &LevelGrid,
    keys: &[ChunkKey],
) -> Result<Vec<bool>> {
    if !source.has_objects() {
        return Ok(Vec::new());
    }
    let step = &opts.steps[i];
    let stats = if step.sparsity > 1 {
        object_stats(source, keys, &opts.strategy, &grid.chunk)?
    } else {
        // every object with vertices is kept: their manifests say which
        source
            .nonempty
            .iter()
            .map(|&n| ObjectStats {
                length: u64::from(n),
                ..Default::default()
            })
            .collect()
    };
    Ok(select(&opts.strategy, &stats, step.sparsity, opts.seed))
}

/// The writer of level `i + 1` (grid `grid`, objects `keep`): with the per-object data of a
/// level with objects (object count, object and fragment attributes, groups), or, for a
/// part of a distributed build (`part`), the fragment attributes alone (its chunk blobs
/// need them; the commit writes the rest).
pub(super) fn level_writer(
    store: &Arc<dyn Store>,
    source: &SourceLevel,
    opts: &PyramidOptions,
    i: usize,
    grid: &LevelGrid,
    keep: &[bool],
    part: bool,
) -> Result<ZvWriter> {
    let root = source.level.root().clone();
    let mut wopts = WriterOptions::new(source.level.geometry().clone(), grid.chunk.clone());
    wopts.axes = Some(root.axes.clone());
    wopts.bin_shape = Some(grid.bin.clone());
    wopts.vertex_type = source.level.vertex_type();
    wopts.codecs = opts.codecs;
    wopts.memory_budget = opts.memory_budget;
    wopts.format_version = FormatVersion::of_layout(root.layout());
    // a sharded 0.9 store gets sharded levels (the fine level's shards)
    wopts.shard_shape = source.level.shard_shape()?;
    let fields = level_fields(source, opts, i, grid, &root.chunk_shape);
    let mut writer = ZvWriter::for_level(store.clone(), wopts, i as u32 + 1, fields)?;
    if source.has_objects() {
        writer.set_fragment_attributes(fragment_attributes(source, keep)?);
        if !part {
            writer.set_num_objects(source.num_objects);
            writer.set_object_attributes(object_attributes(source, keep)?);
            if let Some((members, attributes)) = groups(source)? {
                writer.set_groups(members, attributes);
            }
        }
    }
    Ok(writer)
}

/// Builds level `i + 1` from level `i` (and writes its `±1` links).
fn build_level(
    store: &Arc<dyn Store>,
    cross_level: &CrossLevelLinks<'_>,
    source: &SourceLevel,
    opts: &PyramidOptions,
    i: usize,
    grid: &LevelGrid,
    scale: u64,
) -> Result<(LevelSummary, Step)> {
    let root = source.level.root().clone();
    let ndim = root.ndim();
    let keys = source.level.chunk_keys()?;
    let keep = level_keep(source, opts, i, grid, &keys)?;
    let geometry = source.level.geometry().clone();
    let coarse = i as u32 + 1;
    let mut writer = level_writer(store, source, opts, i, grid, &keep, false)?;
    let parents = match geometry {
        Geometry::PointCloud => points::coarsen_level(
            source,
            &keep,
            &grid.bin,
            nest(keys, scale, ndim)?,
            &mut writer,
        )?,
        Geometry::Skeleton => skeletons::coarsen_level(source, &keep, &grid.bin, &mut writer)?,
        Geometry::Graph | Geometry::Mesh => {
            // a coarse chunk at a time where the chunk keys nest (spatial keys), else whole
            let nested = keys
                .iter()
                .all(|k| k.arity() == ndim)
                .then(|| nest(keys, scale, ndim))
                .transpose()?;
            linked::coarsen_level(source, &keep, &grid.bin, nested, &mut writer)?
        }
        Geometry::Line | Geometry::Polyline | Geometry::Streamline => {
            polylines::coarsen_level(source, &keep, &grid.bin, &mut writer)?
        }
        Geometry::Other(name) => {
            return Err(Error::Unsupported {
                key: "zarr.json".into(),
                what: format!("pyramids of `{name}` geometry"),
            })
        }
    };
    let (summary, places) = writer.finish_level()?;
    let links = if opts.writes_links() {
        cross_level.write((i as u32, coarse), &parents, &places)?
    } else {
        0
    };
    let summary = LevelSummary {
        level: coarse,
        vertices: summary.vertices,
        chunks: summary.chunks,
        objects_kept: keep.iter().filter(|&&k| k).count() as u64,
        cross_level_links: links,
    };
    Ok((summary, Step { parents, places }))
}

/// Updates the root document after the last level: the NGFF datasets of the new levels (and
/// their nodes in an `ome` block that lists levels), the capabilities, `cross_level_storage`
/// and `cross_level_depth`. Everything written before
/// is synced first.
pub(super) fn update_root(
    blobs: &Blobs,
    opts: &PyramidOptions,
    datasets: Vec<Value>,
    with_objects: bool,
) -> Result<()> {
    let key = "zarr.json";
    let mut attrs = blobs.group_attributes("")?.ok_or_else(|| Error::Missing {
        key: key.into(),
        what: "the root document".into(),
    })?;
    let zv = attrs
        .get_mut(names::ROOT_ATTRIBUTE)
        .and_then(Value::as_object_mut)
        .ok_or_else(|| Error::metadata(key, "no zarr_vectors object"))?;
    let mut caps: Vec<Value> = zv
        .get("format_capabilities")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut add = |t: &str| {
        if !caps.iter().any(|c| c == t) {
            caps.push(json!(t));
        }
    };
    if with_objects {
        add("preserved_object_ids");
    }
    if opts.writes_links() {
        add("multiscale_links");
    }
    zv.insert("format_capabilities".into(), Value::Array(caps));
    zv.insert("cross_level_storage".into(), json!(opts.cross_level.name()));
    zv.insert("cross_level_depth".into(), json!(opts.depth));
    // zarr-vectors 0.9.2's `ome` block lists every level as a `zv:level` node: kept whole
    if let Some(nodes) = attrs
        .get_mut("ome")
        .and_then(|o| o.get_mut("nodes"))
        .and_then(Value::as_array_mut)
    {
        for d in &datasets {
            nodes.push(json!({"type": "zv:level", "name": d["path"]}));
        }
    }
    let ds = attrs
        .get_mut("multiscales")
        .and_then(Value::as_array_mut)
        .and_then(|m| m.first_mut())
        .and_then(|m| m.get_mut("datasets"))
        .and_then(Value::as_array_mut)
        .ok_or_else(|| Error::metadata(key, "no multiscales[0].datasets"))?;
    ds.extend(datasets);
    blobs.store().sync()?;
    blobs.write_group("", attrs)?;
    blobs.store().sync()?;
    Ok(())
}
