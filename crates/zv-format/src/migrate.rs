//! A store rewritten in the other on-disk layout (`zv migrate STORE OUT --to 0.9|0.7`):
//! ZV 0.7 to ZV 0.9 as zarr-vectors 0.9.2 reads it, and back
//! (`docs/format-decisions.md`, "Migrating between 0.7 and 0.9").
//!
//! The store is read through the reader (which reads both layouts behind one API) and
//! written by the streaming [`ZvWriter`] in the target layout, so the copy holds the same
//! content by meaning (see "Same content"): the writer's fragments, codecs and record order,
//! not the source's bytes. How much is in memory at once:
//!
//! - **point clouds** stream chunk by chunk ([`PointStream`]: a few chunks read at a time,
//!   in parallel, handed to the writer in key order), so memory is the chunks in flight, the
//!   object index and the writer's budget ([`MigrateOptions::memory_budget`]; past it the
//!   writer spills to temporary files);
//! - **polylines, streamlines, graphs, skeletons and meshes** are read whole, as
//!   [`export_geometry`](crate::export::export_geometry) reads them (their links and
//!   manifests are numbered over the whole level), then written in batches: memory grows
//!   with the level.
//!
//! A store with levels above 0 (a point-cloud pyramid) is copied level by level, chunk by
//! chunk with its rows kept, and its cross-level links re-filed ([`levels`]).
//!
//! What the target layout or the writer cannot hold is refused before anything is written,
//! with an error naming the node: pyramids of other geometries than point clouds, and link
//! attributes of skeletons (which zv's writer does not write). Other link attributes are
//! carried both ways (the export reads them, the writer writes them). Object-attribute types the
//! 0.9 writer refuses (categorical, multi-channel, bool, or a present value equal to 0.9's
//! absent value), and categorical link attributes, are refused by the writer, which checks everything before its first write.
//! The root `zarr.json` is written last, so a failed migration leaves no store that opens.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use zv_format::document::GeometryDocument;
//! use zv_format::migrate::{migrate, MigrateOptions};
//! use zv_format::writer::FormatVersion;
//! let doc = GeometryDocument::from_json(br#"{"format": "zv-geometry/1",
//!     "geometry": "point_cloud", "chunk_shape": [10, 10],
//!     "vertices": [[1, 2], [15, 3], [4, 4]]}"#)?;
//! let v7 = Arc::new(zv_store_mem::MemoryStore::new());
//! zv_format::import::write_document_in(v7.clone(), &doc, 1000, FormatVersion::V0_7)?;
//! let v9 = Arc::new(zv_store_mem::MemoryStore::new());
//! let source = zv_format::ZvStore::open(v7)?;
//! let options = MigrateOptions::new(FormatVersion::V0_9);
//! let summary = migrate(&source, v9.clone(), &options, &zv_format::progress::NoProgress)?;
//! assert_eq!((summary.to.as_str(), summary.written.vertices), ("0.9.2", 3));
//! assert_eq!(zv_format::ZvStore::open(v9)?.root().zv_version, "0.9.2");
//! # Ok(()) }
//! ```

use std::collections::BTreeMap;
use std::sync::Arc;

use zv_core::store::Store;

use crate::document::{Attribute, AttributeValues, GeometryDocument};
use crate::error::{Error, Result};
use crate::export::points::{ChunkColumn, PointChunk, PointStream};
use crate::export::{export_geometry, export_without_vertices};
use crate::geometry::Geometry;
use crate::metadata::Layout;
use crate::names;
use crate::progress::Progress;
use crate::reader::{AttributeInfo, ZvStore};
use crate::writer::{CodecChoice, FormatVersion, WriteSummary, WriterOptions, ZvWriter};

mod levels;

/// Vertices (or polylines) per batch handed to the writer for the geometries read whole.
const BATCH: usize = 100_000;

/// How to migrate.
#[derive(Debug, Clone, PartialEq)]
pub struct MigrateOptions {
    /// The target layout.
    pub to: FormatVersion,
    /// The codecs of the new store (the spec's by default; the source's are not copied).
    pub codecs: CodecChoice,
    /// The writer's memory budget ([`WriterOptions::memory_budget`]).
    pub memory_budget: u64,
    /// To 0.9: the shard shape of the chunk-grid arrays ([`WriterOptions::shard_shape`];
    /// unsharded by default).
    pub shard_shape: Option<Vec<u64>>,
}

impl MigrateOptions {
    /// Migrate to `to`, with the spec's codecs and the writer's default budget.
    pub fn new(to: FormatVersion) -> Self {
        Self {
            to,
            codecs: CodecChoice::default(),
            memory_budget: crate::writer::DEFAULT_MEMORY_BUDGET,
            shard_shape: None,
        }
    }
}

/// What a migration did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MigrateSummary {
    /// The source's `zv_version`.
    pub from: String,
    /// The `zv_version` written.
    pub to: String,
    /// The geometry.
    pub geometry: Geometry,
    /// The levels written.
    pub levels: u32,
    /// What the writer wrote.
    pub written: WriteSummary,
}

/// The layout a format version writes.
fn layout_of(version: FormatVersion) -> Layout {
    match version {
        FormatVersion::V0_7 => Layout::PerChunkNodes,
        FormatVersion::V0_9 => Layout::ChunkGrid,
    }
}

/// The `zv_version` a format version writes.
fn version_name(version: FormatVersion) -> &'static str {
    match version {
        FormatVersion::V0_7 => "0.7.0",
        FormatVersion::V0_9 => "0.9.2",
    }
}

/// Refuses, before anything is read in bulk or written, what the migration to `to` cannot
/// carry: a source already in the target layout, pyramids of other geometries than point clouds,
/// link attributes of a skeleton. The error names the node concerned.
pub fn check_migratable(source: &ZvStore, to: FormatVersion) -> Result<()> {
    let root = source.root();
    let unsupported = |key: String, what: String| Err(Error::Unsupported { key, what });
    if root.layout() == layout_of(to) {
        return unsupported(
            "zarr.json".into(),
            format!(
                "migrating to {}: the store is already ZV {}",
                version_name(to),
                root.zv_version
            ),
        );
    }
    if source.level_ids().iter().any(|&l| l != 0) && source.geometry() != Geometry::PointCloud {
        return unsupported(
            "1/zarr.json".into(),
            format!(
                "migrating the pyramid levels of a {} store: zv migrates point-cloud pyramids \
                 only (migrate level 0 alone and rebuild them with `zv pyramid`)",
                source.geometry().name()
            ),
        );
    }
    let geometry = source.geometry();
    if to == FormatVersion::V0_9 && !to.writes(&geometry) {
        return unsupported(
            "zarr.json".into(),
            format!(
                "migrating a {} store to 0.9: this build does not write {} stores in the ZV \
                 0.9 layout yet",
                geometry.name(),
                geometry.name()
            ),
        );
    }
    if geometry == Geometry::Skeleton {
        let level = source.level(0)?;
        if let Some(name) = level.link_attribute_names()?.first() {
            return unsupported(
                level.p(&[names::LINK_ATTRIBUTES, name, "zarr.json"]),
                format!(
                    "migrating the skeleton link attribute `{name}`: zv writes no link \
                     attributes on skeletons (their links are mostly implicit)"
                ),
            );
        }
    }
    Ok(())
}

/// Migrates `source` into `target` (an empty store) in the layout `options.to`, reporting
/// to `progress` one unit per chunk of level 0 as it is read. See the [module docs](self).
pub fn migrate(
    source: &ZvStore,
    target: Arc<dyn Store>,
    options: &MigrateOptions,
    progress: &dyn Progress,
) -> Result<MigrateSummary> {
    check_migratable(source, options.to)?;
    if source.level_ids().len() > 1 {
        return levels::migrate_pyramid(source, target, options, progress);
    }
    let geometry = source.geometry();
    let streamed = geometry == Geometry::PointCloud;
    let doc = if streamed {
        export_without_vertices(source)?
    } else {
        let chunks = source.level(0)?.chunk_keys()?.len() as u64;
        progress.set_total(chunks, "chunks");
        let doc = export_geometry(source)?;
        progress.advance(chunks);
        doc
    };
    let doc = GeometryDocument::from_value(&doc)?;
    let mut opts = WriterOptions::from_document(&doc)?;
    opts.format_version = options.to;
    opts.codecs = options.codecs;
    opts.memory_budget = options.memory_budget;
    opts.shard_shape = options.shard_shape.clone();
    let mut w = ZvWriter::create(target, opts)?;
    if streamed {
        let stream = PointStream::open(source, false)?;
        let infos = stream.infos().to_vec();
        stream.for_each(progress, |chunk| add_point_chunk(&mut w, &infos, chunk))?;
    } else {
        crate::import::add_geometry(&mut w, &doc, BATCH)?;
    }
    crate::import::add_objects(&mut w, &doc);
    let written = w.finish()?;
    Ok(MigrateSummary {
        from: source.root().zv_version.clone(),
        to: version_name(options.to).to_owned(),
        geometry,
        levels: 1,
        written,
    })
}

/// Hands one chunk of points to the writer, with their objects and vertex attributes.
fn add_point_chunk(w: &mut ZvWriter, infos: &[AttributeInfo], chunk: PointChunk) -> Result<()> {
    let mut attributes = BTreeMap::new();
    for (info, column) in infos.iter().zip(chunk.attributes) {
        let values = match column {
            ChunkColumn::Numeric(Some(rows)) => AttributeValues::Numeric {
                rows,
                present: None,
            },
            ChunkColumn::Numeric(None) => {
                return Err(Error::Missing {
                    key: format!("0/{}/{}", names::VERTEX_ATTRIBUTES, info.name),
                    what: format!(
                        "the rows of chunk {} (every vertex needs a value to be migrated)",
                        chunk.key
                    ),
                })
            }
            ChunkColumn::Categorical(values) => AttributeValues::Categorical(values),
        };
        let a = Attribute {
            values,
            channel_names: info.channel_names.clone(),
        };
        attributes.insert(info.name.clone(), a);
    }
    w.add_vertices_flat(
        chunk.positions.as_flat(),
        chunk.object_ids.as_deref(),
        &attributes,
    )?;
    Ok(())
}
