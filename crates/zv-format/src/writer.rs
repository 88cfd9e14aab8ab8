//! Writing ZV stores in the "zv-0.7 spec profile" (DECISIONS.md, "Write one profile").
//!
//! [`ZvWriter`] takes geometry in batches of any size: vertex rows (with object ids and vertex
//! attributes), polylines, edges, faces. Vertex rows and their attributes go to a spill
//! directory per chunk as they arrive, so memory holds one batch plus bookkeeping, not the
//! vertices. What is kept in memory, and so grows with the dataset:
//!
//! - connectivity: 16 bytes per edge, 8 per face corner, plus the link attribute values;
//!   skeletons also 8 bytes per vertex (its object);
//! - polylines: 8 bytes per piece (a run of a polyline inside one bin), 16 per chunk crossing
//!   and 8 per polyline.
//!
//! During [`ZvWriter::finish`], linked geometries add 8 bytes per vertex (its chunk and row),
//! skeletons 24 more (DFS order) and 16 per intra-chunk link; one chunk's spill data is read
//! at a time per thread; and the level-global blobs — the object index, the cross-chunk links
//! (`8·link_width·(ndim+1)` bytes per record) and the dense attributes — are built whole, as
//! they are single blobs. Nothing is written to the store before [`ZvWriter::finish`], which
//! validates everything first, then
//! encodes and writes the chunk blobs in parallel, then the level-global arrays (object index,
//! groups, cross-chunk links, attributes), then the group documents, and the root `zarr.json`
//! last: a store whose writing failed or was abandoned has no root metadata and does not open
//! as a ZV store.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use zv_format::{Geometry, ZvStore};
//! use zv_format::writer::{WriterOptions, ZvWriter};
//! let store: Arc<dyn zv_core::store::Store> = Arc::new(zv_store_mem::MemoryStore::new());
//! let mut w = ZvWriter::create(store.clone(), WriterOptions::new(Geometry::Graph, vec![10.0, 10.0, 10.0]))?;
//! w.add_vertices(&[vec![1.0, 1.0, 1.0], vec![12.0, 1.0, 1.0], vec![2.0, 5.0, 1.0]], None, &Default::default())?;
//! w.add_edges(&[[0, 1], [0, 2]], &Default::default())?;
//! w.finish()?;
//! let level = ZvStore::open(store)?.level(0)?;
//! let graph = level.object(0)?;
//! assert_eq!(graph.vertices.len(), 3);
//! assert_eq!(graph.links.unwrap().len(), 2);   // one edge crosses chunks
//! # Ok(()) }
//! ```

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rayon::prelude::*;
use serde_json::{json, Map, Value};
use zv_core::data_type::DataType;
use zv_core::metadata::ExtensionMetadata;
use zv_core::store::Store;

use crate::blob::{join, Blobs};
use crate::document::{Attribute, AttributeValues, GeometryDocument};
use crate::error::{Error, Result};
use crate::geometry::Geometry;
use crate::layout::attributes::{
    encode_present_mask, f64_to_le, le_to_f64, AttributeRows, Dictionary,
};
use crate::layout::cross_chunk::CrossChunkLinks;
use crate::layout::fragment_index::FragmentIndex;
use crate::layout::groups::Groups;
use crate::layout::links::LinkRows;
use crate::layout::manifest::Manifest;
use crate::metadata::{chunk_of, Axis, ChunkKey, ZV_VERSION};

fn bad(reason: impl Into<String>) -> Error {
    Error::InvalidInput(reason.into())
}

/// The most bins a chunk may have (each is a fragment of every point-cloud chunk).
pub const MAX_BINS_PER_CHUNK: u64 = 1 << 21;

/// Coordinates must satisfy `|x / bin| < COORDINATE_LIMIT` (bin = chunk without bins), so
/// that chunk and bin coordinates are exact integers.
pub const COORDINATE_LIMIT: f64 = (1u64 << 52) as f64;

/// Spare objects allowed beyond twice the vertices: object ids are dense indices (every id
/// below the largest costs an offset and a manifest), so `B ≤ 2·(vertices + polylines) +
/// SPARE_OBJECTS`, and likewise for groups.
pub const SPARE_OBJECTS: u64 = 1 << 20;

/// What to do with vertices outside the given bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutOfBounds {
    /// Refuse the data (the default).
    #[default]
    Raise,
    /// Drop such vertices and their attributes (point clouds only).
    Ignore,
    /// Grow the bounds.
    Expand,
}

impl OutOfBounds {
    /// Parses `raise`, `ignore`, `expand`.
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "raise" => Ok(OutOfBounds::Raise),
            "ignore" => Ok(OutOfBounds::Ignore),
            "expand" => Ok(OutOfBounds::Expand),
            other => Err(bad(format!(
                "out_of_bounds `{other}` (expected raise, ignore, expand)"
            ))),
        }
    }
}

/// The compression of the blobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Compression {
    /// The spec's table: blosc zstd level 5, byte shuffle (bit shuffle for links).
    #[default]
    SpecDefault,
    /// No compression (`bytes` only).
    None,
    /// zstd at a level.
    Zstd(i32),
    /// blosc lz4 level 5, byte shuffle (bit shuffle for links).
    BloscLz4,
    /// gzip at a level.
    Gzip(u32),
}

/// The codecs of every blob: a compression and an optional `crc32c` checksum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CodecChoice {
    /// The compression.
    pub compression: Compression,
    /// Whether every blob carries a CRC32C checksum.
    pub crc32c: bool,
}

impl CodecChoice {
    /// Parses `spec-default`, `none`, `zstd` (or `zstd:LEVEL`), `blosc-lz4` (or `lz4`), `gzip`
    /// (or `gzip:LEVEL`), each optionally followed by `+crc32c`.
    pub fn parse(s: &str) -> Result<Self> {
        let (base, crc32c) = match s.strip_suffix("+crc32c") {
            Some(b) => (b, true),
            None => (s, false),
        };
        let (name, level) = match base.split_once(':') {
            Some((n, l)) => (
                n,
                Some(
                    l.parse::<i32>()
                        .map_err(|_| bad(format!("codec level `{l}` is not an integer")))?,
                ),
            ),
            None => (base, None),
        };
        let compression = match name {
            "spec-default" | "default" | "blosc-zstd" => Compression::SpecDefault,
            "none" | "raw" => Compression::None,
            "zstd" => Compression::Zstd(level.unwrap_or(3)),
            "blosc-lz4" | "lz4" => Compression::BloscLz4,
            "gzip" => Compression::Gzip(level.unwrap_or(5).clamp(0, 9) as u32),
            other => return Err(bad(format!("codecs `{other}` (expected spec-default, none, zstd, blosc-lz4, gzip, optionally +crc32c)"))),
        };
        Ok(Self {
            compression,
            crc32c,
        })
    }

    /// The codec list of a blob whose payload has elements of `typesize` bytes; `links`
    /// selects bit shuffle for the blosc choices.
    pub fn codecs(&self, typesize: usize, links: bool) -> Vec<ExtensionMetadata> {
        let mut out = vec![ExtensionMetadata::new("bytes")];
        let shuffle = if links { "bitshuffle" } else { "shuffle" };
        match self.compression {
            Compression::SpecDefault => out.push(ExtensionMetadata::with_configuration(
                "blosc",
                json!({"cname": "zstd", "clevel": 5, "shuffle": shuffle, "typesize": typesize, "blocksize": 0}),
            )),
            Compression::BloscLz4 => out.push(ExtensionMetadata::with_configuration(
                "blosc",
                json!({"cname": "lz4", "clevel": 5, "shuffle": shuffle, "typesize": typesize, "blocksize": 0}),
            )),
            Compression::None => {}
            Compression::Zstd(level) => out.push(ExtensionMetadata::with_configuration("zstd", json!({"level": level, "checksum": false}))),
            Compression::Gzip(level) => out.push(ExtensionMetadata::with_configuration("gzip", json!({"level": level}))),
        }
        if self.crc32c {
            out.push(ExtensionMetadata::new("crc32c"));
        }
        out
    }
}

/// Options of a new store.
#[derive(Debug, Clone, PartialEq)]
pub struct WriterOptions {
    /// The geometry.
    pub geometry: Geometry,
    /// The axes (default `x, y, z, w, …`, as many as `chunk_shape` has values).
    pub axes: Option<Vec<Axis>>,
    /// The level-0 chunk shape (≥ 2 values, all > 0).
    pub chunk_shape: Vec<f64>,
    /// The bin shape (must divide the chunk shape).
    pub bin_shape: Option<Vec<f64>>,
    /// The bounds (inferred from the data when absent).
    pub bounds: Option<[Vec<f64>; 2]>,
    /// The out-of-bounds policy.
    pub out_of_bounds: OutOfBounds,
    /// The vertex data type (float16, float32 or float64).
    pub vertex_type: DataType,
    /// The codecs.
    pub codecs: CodecChoice,
    /// The coordinate reference system (opaque).
    pub crs: Option<Value>,
}

impl WriterOptions {
    /// Options with defaults: axes `x, y, z…`, no bins, inferred bounds, `raise`, float32,
    /// the spec's codecs.
    pub fn new(geometry: Geometry, chunk_shape: Vec<f64>) -> Self {
        Self {
            geometry,
            axes: None,
            chunk_shape,
            bin_shape: None,
            bounds: None,
            out_of_bounds: OutOfBounds::Raise,
            vertex_type: DataType::Float32,
            codecs: CodecChoice::default(),
            crs: None,
        }
    }

    /// The options of a geometry document.
    pub fn from_document(doc: &GeometryDocument) -> Result<Self> {
        let mut o = Self::new(doc.geometry.clone(), doc.chunk_shape.clone());
        o.axes = doc.axes.clone();
        o.bin_shape = doc.bin_shape.clone();
        o.bounds = doc.bounds.clone();
        if let Some(dt) = doc.vertex_dtype {
            o.vertex_type = dt;
        }
        if let Some(c) = &doc.codecs {
            o.codecs = CodecChoice::parse(c)?;
        }
        if let Some(p) = &doc.out_of_bounds {
            o.out_of_bounds = OutOfBounds::parse(p)?;
        }
        o.crs = doc.crs.clone();
        Ok(o)
    }

    fn axes_or_default(&self) -> Vec<Axis> {
        self.axes.clone().unwrap_or_else(|| {
            let names = ["x", "y", "z", "w"];
            (0..self.chunk_shape.len())
                .map(|i| Axis::space(names.get(i).copied().unwrap_or(&format!("d{i}"))))
                .collect()
        })
    }

    fn validate(&self) -> Result<()> {
        let n = self.chunk_shape.len();
        if n < 2 {
            return Err(bad(format!(
                "chunk_shape {:?}: at least 2 dimensions are needed",
                self.chunk_shape
            )));
        }
        if self
            .chunk_shape
            .iter()
            .any(|&c| !(c > 0.0 && c.is_finite()))
        {
            return Err(bad(format!(
                "chunk_shape {:?} must be positive and finite",
                self.chunk_shape
            )));
        }
        if let Some(axes) = &self.axes {
            if axes.len() != n {
                return Err(bad(format!(
                    "{} axes for a {n}-dimensional chunk_shape",
                    axes.len()
                )));
            }
            let mut names: Vec<&str> = axes.iter().map(|a| a.name.as_str()).collect();
            names.sort_unstable();
            names.dedup();
            if names.len() != n {
                return Err(bad("axis names must be unique"));
            }
        }
        if let Some(b) = &self.bin_shape {
            if b.len() != n || b.iter().any(|&x| !(x > 0.0 && x.is_finite())) {
                return Err(bad(format!(
                    "bin_shape {b:?} must have {n} positive values"
                )));
            }
            let mut product = 1u64;
            for (c, x) in self.chunk_shape.iter().zip(b) {
                let r = c / x;
                if (r - r.round()).abs() > 1e-9 || r.round() < 1.0 {
                    return Err(bad(format!(
                        "bin_shape {b:?} does not divide chunk_shape {:?}",
                        self.chunk_shape
                    )));
                }
                product = product
                    .checked_mul(r.round().min(u64::MAX as f64) as u64)
                    .filter(|&p| p <= MAX_BINS_PER_CHUNK)
                    .ok_or_else(|| {
                        bad(format!(
                            "bin_shape {b:?} makes more than {MAX_BINS_PER_CHUNK} bins per chunk of {:?} (use larger bins)",
                            self.chunk_shape
                        ))
                    })?;
            }
        }
        if let Some([lo, hi]) = &self.bounds {
            if lo.len() != n
                || hi.len() != n
                || lo
                    .iter()
                    .zip(hi)
                    .any(|(a, b)| !(a <= b && a.is_finite() && b.is_finite()))
            {
                return Err(bad(format!(
                    "bounds {lo:?}..{hi:?} must have {n} finite, ordered values per side"
                )));
            }
        }
        if !matches!(
            self.vertex_type,
            DataType::Float16 | DataType::Float32 | DataType::Float64
        ) {
            return Err(bad(format!(
                "vertex dtype {} is not float16, float32 or float64",
                self.vertex_type
            )));
        }
        if self.out_of_bounds == OutOfBounds::Ignore && self.geometry != Geometry::PointCloud {
            return Err(bad("out_of_bounds `ignore` is only allowed for point clouds (dropping vertices would break links)"));
        }
        if let Geometry::Other(g) = &self.geometry {
            return Err(bad(format!("unknown geometry `{g}`")));
        }
        Ok(())
    }
}

/// What [`ZvWriter::finish`] wrote.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WriteSummary {
    /// Vertex rows written.
    pub vertices: u64,
    /// Occupied chunks.
    pub chunks: usize,
    /// Objects in the object index (0 without one).
    pub objects: u64,
    /// Intra-chunk link rows.
    pub intra_links: u64,
    /// Cross-chunk link records.
    pub cross_chunk_links: u64,
    /// Groups.
    pub groups: u64,
}

/// The schema of one vertex (or link) attribute, fixed by its first batch.
#[derive(Debug, Clone, PartialEq)]
enum ColumnKind {
    Numeric {
        data_type: DataType,
        channels: usize,
    },
    Categorical,
}

#[derive(Debug, Clone)]
struct Column {
    name: String,
    kind: ColumnKind,
    channel_names: Option<Vec<String>>,
    /// Categorical: provisional code of each category, in arrival order.
    categories: Vec<String>,
    lookup: HashMap<String, u32>,
    /// Categorical: whether a missing value was seen.
    has_missing: bool,
}

const MISSING_CODE: u32 = u32::MAX;

impl Column {
    fn new(name: &str, a: &Attribute) -> Result<Self> {
        let kind = match &a.values {
            AttributeValues::Numeric { rows, present } => {
                if present.is_some() {
                    return Err(bad(format!("attribute `{name}`: missing (null) values are only allowed in object attributes and in string attributes")));
                }
                ColumnKind::Numeric {
                    data_type: rows.data_type(),
                    channels: rows.channels(),
                }
            }
            AttributeValues::Categorical(_) => ColumnKind::Categorical,
        };
        if let (Some(c), ColumnKind::Numeric { channels, .. }) = (&a.channel_names, &kind) {
            if c.len() != *channels {
                return Err(bad(format!(
                    "attribute `{name}`: {} channel names for {channels} channels",
                    c.len()
                )));
            }
        }
        Ok(Self {
            name: name.to_owned(),
            kind,
            channel_names: a.channel_names.clone(),
            categories: Vec::new(),
            lookup: HashMap::new(),
            has_missing: false,
        })
    }

    fn record_len(&self) -> usize {
        match self.kind {
            ColumnKind::Numeric {
                data_type,
                channels,
            } => data_type.size().unwrap_or(1) * channels,
            ColumnKind::Categorical => 4,
        }
    }

    fn check(&self, a: &Attribute) -> Result<()> {
        let same = match (&self.kind, &a.values) {
            (
                ColumnKind::Numeric {
                    data_type,
                    channels,
                },
                AttributeValues::Numeric { rows, present },
            ) => {
                present.is_none() && *data_type == rows.data_type() && *channels == rows.channels()
            }
            (ColumnKind::Categorical, AttributeValues::Categorical(_)) => true,
            _ => false,
        };
        if !same {
            return Err(bad(format!(
                "attribute `{}` changes type or width between batches (or has null values)",
                self.name
            )));
        }
        Ok(())
    }

    /// The record bytes of row `r` (provisional codes for categorical values).
    fn push_row(&mut self, a: &Attribute, r: usize, out: &mut Vec<u8>) {
        match &a.values {
            AttributeValues::Numeric { rows, .. } => {
                out.extend_from_slice(rows.row_bytes(r).unwrap_or_default())
            }
            AttributeValues::Categorical(v) => {
                let code = match v.get(r).and_then(Option::as_ref) {
                    None => {
                        self.has_missing = true;
                        MISSING_CODE
                    }
                    Some(s) => match self.lookup.get(s) {
                        Some(&c) => c,
                        None => {
                            let c = self.categories.len() as u32;
                            self.categories.push(s.clone());
                            self.lookup.insert(s.clone(), c);
                            c
                        }
                    },
                };
                out.extend_from_slice(&code.to_le_bytes());
            }
        }
    }
}

/// Final encoding of a column: dictionary and the provisional-code remapping.
struct Finished {
    data_type: DataType,
    channels: usize,
    dictionary: Option<Dictionary>,
    remap: Vec<i64>,
    missing: i64,
}

impl Column {
    fn finish(&self) -> Finished {
        match self.kind {
            ColumnKind::Numeric {
                data_type,
                channels,
            } => Finished {
                data_type,
                channels,
                dictionary: None,
                remap: Vec::new(),
                missing: -1,
            },
            ColumnKind::Categorical => {
                let mut sorted: Vec<(usize, &String)> =
                    self.categories.iter().enumerate().collect();
                sorted.sort_by(|a, b| a.1.cmp(b.1));
                let mut remap = vec![0i64; self.categories.len()];
                for (new, (old, _)) in sorted.iter().enumerate() {
                    remap[*old] = new as i64;
                }
                let n = sorted.len();
                let data_type = if self.has_missing {
                    signed_code_type(n)
                } else if n <= 256 {
                    DataType::UInt8
                } else if n <= 65536 {
                    DataType::UInt16
                } else {
                    DataType::UInt32
                };
                Finished {
                    data_type,
                    channels: 1,
                    dictionary: Some(Dictionary {
                        categories: sorted
                            .iter()
                            .map(|(_, s)| Value::from(s.as_str()))
                            .collect(),
                        missing_code: self.has_missing.then_some(-1),
                        ordered: false,
                    }),
                    remap,
                    missing: -1,
                }
            }
        }
    }
}

/// Encodes the record bytes of one column for the given rows, with missing values (code -1)
/// switching the dictionary to a signed type.
fn encode_column(
    col: &Column,
    fin: &Finished,
    records: &[&[u8]],
) -> (AttributeRows, Option<Dictionary>) {
    match col.kind {
        ColumnKind::Numeric {
            data_type,
            channels,
        } => {
            let mut le = Vec::with_capacity(records.len() * col.record_len());
            for r in records {
                le.extend_from_slice(r);
            }
            (
                AttributeRows::from_le(data_type, channels, le)
                    .unwrap_or_else(|_| AttributeRows::empty(data_type, channels)),
                None,
            )
        }
        ColumnKind::Categorical => {
            let codes: Vec<f64> = records
                .iter()
                .map(|r| {
                    let c = u32::from_le_bytes([r[0], r[1], r[2], r[3]]);
                    if c == MISSING_CODE {
                        fin.missing as f64
                    } else {
                        fin.remap.get(c as usize).copied().unwrap_or(0) as f64
                    }
                })
                .collect();
            let dt = fin.data_type;
            let dict = fin.dictionary.clone();
            (
                AttributeRows::from_f64s(dt, 1, &codes)
                    .unwrap_or_else(|_| AttributeRows::empty(dt, 1)),
                dict,
            )
        }
    }
}

/// Checks a batch's attributes against the schema fixed by the first non-empty batch:
/// `rows` values each, the same names, types and widths. Returns the schema to install when
/// none is fixed yet and the batch has rows (the caller installs it once the whole batch has
/// passed); a batch without rows fixes nothing and is not compared.
fn check_schema(
    schema: &Option<Vec<Column>>,
    attributes: &BTreeMap<String, Attribute>,
    rows: usize,
    what: &str,
) -> Result<Option<Vec<Column>>> {
    for (name, a) in attributes {
        if a.values.len() != rows {
            return Err(bad(format!(
                "{what} attribute `{name}` has {} values for {rows} rows",
                a.values.len()
            )));
        }
    }
    if rows == 0 {
        return Ok(None);
    }
    match schema {
        None => Ok(Some(
            attributes
                .iter()
                .map(|(n, a)| Column::new(n, a))
                .collect::<Result<_>>()?,
        )),
        Some(cols) => {
            let names: Vec<&String> = attributes.keys().collect();
            let known: Vec<&String> = cols.iter().map(|c| &c.name).collect();
            if names != known {
                return Err(bad(format!(
                    "every batch must carry the same {what} attributes ({known:?}), got {names:?}"
                )));
            }
            for (c, a) in cols.iter().zip(attributes.values()) {
                c.check(a)?;
            }
            Ok(None)
        }
    }
}

/// Per-chunk spill state.
#[derive(Debug, Clone)]
struct SpillChunk {
    idx: u32,
    file: PathBuf,
    rows: u64,
    /// polylines: segments (fragments) so far
    segments: u64,
}

/// The streaming writer. See the [module docs](self).
pub struct ZvWriter {
    blobs: Blobs,
    opts: WriterOptions,
    ndim: usize,
    vsize: usize,
    bins_per_chunk: Vec<u64>,
    bin_shape: Vec<f64>,
    spill_dir: tempfile::TempDir,
    chunks: HashMap<ChunkKey, SpillChunk>,
    chunk_order: Vec<ChunkKey>,
    columns: Option<Vec<Column>>,
    link_columns: Option<Vec<Column>>,
    /// link attribute records, in link order
    link_records: Vec<u8>,
    n_vertices: u64,
    seen: Option<(Vec<f64>, Vec<f64>)>,
    bounds: Option<[Vec<f64>; 2]>,
    objects_given: Option<bool>,
    max_object: Option<u64>,
    /// skeletons: the object of each vertex (for validation)
    vertex_object: Vec<u64>,
    edges: Vec<[u64; 2]>,
    face_arity: Option<usize>,
    faces: Vec<u64>,
    /// polylines: the pieces, (chunk index, fragment), polyline after polyline in path order
    polyline_pieces: Vec<(u32, u32)>,
    /// polylines: where each polyline's pieces start in `polyline_pieces`
    polyline_starts: Vec<u64>,
    /// polylines: cross-chunk records (chunk A, row, chunk B, row), chunks as indices
    polyline_ccl: Vec<[u32; 4]>,
    /// the number of objects asked for with [`ZvWriter::set_num_objects`]
    num_objects_hint: u64,
    object_attributes: BTreeMap<String, Attribute>,
    fragment_attributes: BTreeMap<String, Attribute>,
    groups: BTreeMap<u64, Vec<u64>>,
    group_attributes: BTreeMap<String, Attribute>,
}

impl std::fmt::Debug for ZvWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZvWriter")
            .field("geometry", &self.opts.geometry)
            .field("vertices", &self.n_vertices)
            .field("chunks", &self.chunk_order.len())
            .finish()
    }
}

fn io(e: std::io::Error) -> Error {
    Error::InvalidInput(format!("spill directory: {e}"))
}

impl ZvWriter {
    /// Starts a new store in `store`, which must not already hold a root `zarr.json`.
    pub fn create(store: Arc<dyn Store>, options: WriterOptions) -> Result<Self> {
        crate::link_plugins();
        options.validate()?;
        let blobs = Blobs::new(store);
        if blobs.node("")?.is_some() {
            return Err(bad(
                "the store already holds a root zarr.json (write into an empty store)",
            ));
        }
        let ndim = options.chunk_shape.len();
        let bin_shape = options
            .bin_shape
            .clone()
            .unwrap_or_else(|| options.chunk_shape.clone());
        let bins_per_chunk = options
            .chunk_shape
            .iter()
            .zip(&bin_shape)
            .map(|(c, b)| (c / b).round().max(1.0) as u64)
            .collect();
        let spill_dir = tempfile::Builder::new()
            .prefix("zv-spill-")
            .tempdir()
            .map_err(io)?;
        Ok(Self {
            blobs,
            ndim,
            vsize: options.vertex_type.size().unwrap_or(4),
            bins_per_chunk,
            bin_shape,
            bounds: options.bounds.clone(),
            opts: options,
            spill_dir,
            chunks: HashMap::new(),
            chunk_order: Vec::new(),
            columns: None,
            link_columns: None,
            link_records: Vec::new(),
            n_vertices: 0,
            seen: None,
            objects_given: None,
            max_object: None,
            vertex_object: Vec::new(),
            edges: Vec::new(),
            face_arity: None,
            faces: Vec::new(),
            polyline_pieces: Vec::new(),
            polyline_starts: Vec::new(),
            polyline_ccl: Vec::new(),
            num_objects_hint: 0,
            object_attributes: BTreeMap::new(),
            fragment_attributes: BTreeMap::new(),
            groups: BTreeMap::new(),
            group_attributes: BTreeMap::new(),
        })
    }

    /// Whether the store has objects (an object index): always, except for point clouds
    /// written without object ids.
    fn has_objects(&self) -> bool {
        self.opts.geometry != Geometry::PointCloud || self.objects_given == Some(true)
    }

    fn linked(&self) -> bool {
        matches!(
            self.opts.geometry,
            Geometry::Graph | Geometry::Skeleton | Geometry::Mesh
        )
    }

    /// Converts a position to the vertex type: its stored bytes and the stored values.
    fn convert(&self, p: &[f64], what: &str) -> Result<(Vec<u8>, Vec<f64>)> {
        if p.len() != self.ndim {
            return Err(bad(format!(
                "{what} has {} coordinates, the store has {} axes",
                p.len(),
                self.ndim
            )));
        }
        let mut bytes = Vec::with_capacity(self.ndim * self.vsize);
        let mut stored = Vec::with_capacity(self.ndim);
        self.convert_into(p, || what.to_owned(), &mut bytes, &mut stored)?;
        Ok((bytes, stored))
    }

    /// Appends the stored bytes and values of position `p` to `bytes` and `stored`; a
    /// non-finite coordinate, or one the vertex type cannot hold, is an error naming `what()`.
    fn convert_into(
        &self,
        p: &[f64],
        what: impl Fn() -> String,
        bytes: &mut Vec<u8>,
        stored: &mut Vec<f64>,
    ) -> Result<()> {
        for &x in p {
            if !x.is_finite() {
                return Err(bad(format!("{} has a non-finite coordinate {x}", what())));
            }
            let at = bytes.len();
            f64_to_le(self.opts.vertex_type, x, bytes);
            let back = le_to_f64(self.opts.vertex_type, &bytes[at..]);
            if !back.is_finite() {
                return Err(bad(format!(
                    "{}: {x} does not fit {}",
                    what(),
                    self.opts.vertex_type
                )));
            }
            stored.push(back);
        }
        Ok(())
    }

    /// Whether `p` is inside the given bounds (always true without bounds).
    fn inside(&self, p: &[f64]) -> bool {
        match &self.bounds {
            None => true,
            Some([lo, hi]) => p
                .iter()
                .zip(lo.iter().zip(hi))
                .all(|(x, (a, b))| a <= x && x <= b),
        }
    }

    fn note_position(&mut self, p: &[f64]) {
        match &mut self.seen {
            None => self.seen = Some((p.to_vec(), p.to_vec())),
            Some((lo, hi)) => {
                for (i, &x) in p.iter().enumerate() {
                    lo[i] = lo[i].min(x);
                    hi[i] = hi[i].max(x);
                }
            }
        }
        if self.opts.out_of_bounds == OutOfBounds::Expand {
            if let Some([lo, hi]) = &mut self.bounds {
                for (i, &x) in p.iter().enumerate() {
                    lo[i] = lo[i].min(x);
                    hi[i] = hi[i].max(x);
                }
            }
        }
    }

    /// The chunk of `p` (the reader's rule, [`chunk_of`]).
    fn chunk_of(&self, p: &[f64]) -> ChunkKey {
        ChunkKey(chunk_of(p, &self.opts.chunk_shape))
    }

    /// Checks that a (stored) position has exact integer chunk and bin coordinates.
    fn check_range(&self, p: &[f64], what: impl FnOnce() -> String) -> Result<()> {
        match p
            .iter()
            .zip(&self.bin_shape)
            .find(|(x, b)| (*x / *b).abs() >= COORDINATE_LIMIT)
        {
            Some((x, b)) => Err(bad(format!(
                "{} has coordinate {x}, too far from the origin for bins of {b} (|x / bin| must be below 2^52)",
                what()
            ))),
            None => Ok(()),
        }
    }

    /// The bin of `p` within its chunk, row-major (last axis fastest). Positions are checked
    /// by [`ZvWriter::check_range`] first; a bin that rounding puts outside the chunk is
    /// clamped to the chunk's edge bin.
    fn bin_of(&self, p: &[f64], key: &ChunkKey) -> u64 {
        let mut idx = 0u64;
        for (((x, bin), c), &bpc) in p
            .iter()
            .zip(&self.bin_shape)
            .zip(&key.0)
            .zip(&self.bins_per_chunk)
        {
            let b = (x / bin).floor() as i128;
            let local = (b - *c as i128 * bpc as i128).clamp(0, bpc as i128 - 1) as u64;
            idx = idx.saturating_mul(bpc).saturating_add(local);
        }
        idx
    }

    fn chunk_index(&mut self, key: &ChunkKey) -> u32 {
        if let Some(c) = self.chunks.get(key) {
            return c.idx;
        }
        let idx = self.chunk_order.len() as u32;
        let file = self.spill_dir.path().join(format!("c{idx}.spill"));
        self.chunks.insert(
            key.clone(),
            SpillChunk {
                idx,
                file,
                rows: 0,
                segments: 0,
            },
        );
        self.chunk_order.push(key.clone());
        idx
    }

    fn record_len(&self) -> usize {
        24 + self.ndim * self.vsize
            + self
                .columns
                .as_ref()
                .map_or(0, |c| c.iter().map(Column::record_len).sum())
    }

    fn append(&mut self, grouped: BTreeMap<ChunkKey, Vec<u8>>) -> Result<()> {
        let rl = self.record_len();
        for (key, bytes) in grouped {
            let Some(c) = self.chunks.get_mut(&key) else {
                continue;
            };
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&c.file)
                .map_err(io)?;
            f.write_all(&bytes).map_err(io)?;
            c.rows += (bytes.len() / rl) as u64;
        }
        Ok(())
    }

    /// Adds vertex rows (point clouds, graphs, skeletons, meshes) with their object ids
    /// (`None`: no objects for point clouds, object 0 otherwise) and vertex attributes (one
    /// row per vertex). Returns the global index of the first vertex (edges and faces refer to
    /// vertices by global index, in the order they were added). The whole batch is checked
    /// before any of it is kept: a refused batch changes nothing. The first batch with rows
    /// fixes the vertex attribute schema, and for point clouds whether batches carry object
    /// ids (an empty batch with `Some` ids also fixes that; one with `None` fixes nothing).
    pub fn add_vertices(
        &mut self,
        positions: &[Vec<f64>],
        object_ids: Option<&[u64]>,
        attributes: &BTreeMap<String, Attribute>,
    ) -> Result<u64> {
        let mut flat = Vec::with_capacity(positions.len() * self.ndim);
        for (i, p) in positions.iter().enumerate() {
            if p.len() != self.ndim {
                return Err(bad(format!(
                    "vertex {} has {} coordinates, the store has {} axes",
                    self.n_vertices + i as u64,
                    p.len(),
                    self.ndim
                )));
            }
            flat.extend_from_slice(p);
        }
        self.add_vertices_flat(&flat, object_ids, attributes)
    }

    /// [`ZvWriter::add_vertices`] with the coordinates flat (`ndim` values per vertex), which
    /// avoids one allocation per vertex for large batches.
    pub fn add_vertices_flat(
        &mut self,
        coords: &[f64],
        object_ids: Option<&[u64]>,
        attributes: &BTreeMap<String, Attribute>,
    ) -> Result<u64> {
        if self.opts.geometry.is_sequential() {
            return Err(bad(format!(
                "{} geometry takes polylines, not vertices",
                self.opts.geometry.name()
            )));
        }
        let nd = self.ndim;
        if coords.len() % nd != 0 {
            return Err(bad(format!(
                "{} coordinates are not whole vertices of {nd} axes",
                coords.len()
            )));
        }
        let n = coords.len() / nd;
        let first = self.n_vertices;
        if let Some(ids) = object_ids {
            if ids.len() != n {
                return Err(bad(format!("{} object ids for {n} vertices", ids.len())));
            }
        }
        let given = object_ids.is_some();
        if n == 0 {
            // an empty batch fixes no schema; empty object ids (an explicit statement, unlike
            // `None`) make a point cloud one with objects
            check_schema(&None, attributes, 0, "vertex")?;
            if given {
                if self.objects_given == Some(false) {
                    return Err(bad(
                        "either every batch of points has object ids or none has",
                    ));
                }
                self.objects_given = Some(true);
            }
            return Ok(first);
        }
        if self.opts.geometry == Geometry::PointCloud {
            if let Some(prev) = self.objects_given {
                if prev != given {
                    return Err(bad(
                        "either every batch of points has object ids or none has",
                    ));
                }
            }
        }
        let new_schema = check_schema(&self.columns, attributes, n, "vertex")?;
        // convert and check every row before keeping anything
        let vs = self.vsize;
        let mut bytes = Vec::with_capacity(n * nd * vs);
        let mut stored = Vec::with_capacity(n * nd);
        let mut inside = Vec::with_capacity(n);
        for i in 0..n {
            let what = || format!("vertex {}", first + i as u64);
            self.convert_into(&coords[i * nd..(i + 1) * nd], what, &mut bytes, &mut stored)?;
            let p = &stored[i * nd..];
            let ok = self.inside(p);
            if !ok && self.opts.out_of_bounds == OutOfBounds::Raise {
                return Err(bad(format!(
                    "vertex {} at {p:?} is outside the bounds {:?}",
                    first + i as u64,
                    self.bounds
                )));
            }
            if ok || self.opts.out_of_bounds != OutOfBounds::Ignore {
                self.check_range(p, what)?;
            }
            inside.push(ok);
        }
        // the whole batch is valid: keep it
        if let Some(schema) = new_schema {
            self.columns = Some(schema);
        }
        self.objects_given = Some(given || self.opts.geometry != Geometry::PointCloud);
        let objects_mode = self.has_objects();
        let skeleton = self.opts.geometry == Geometry::Skeleton;
        let mut grouped: HashMap<ChunkKey, Vec<u8>> = HashMap::new();
        let mut cols = self.columns.take().unwrap_or_default();
        for i in 0..n {
            if !inside[i] && self.opts.out_of_bounds == OutOfBounds::Ignore {
                continue;
            }
            let p = &stored[i * nd..(i + 1) * nd];
            self.note_position(p);
            let key = self.chunk_of(p);
            self.chunk_index(&key);
            let gid = self.n_vertices;
            let object = object_ids.map_or(0, |ids| ids[i]);
            let key1 = if objects_mode {
                object
            } else {
                self.bin_of(p, &key)
            };
            let rec = grouped.entry(key).or_default();
            rec.extend_from_slice(&key1.to_le_bytes());
            rec.extend_from_slice(&gid.to_le_bytes());
            rec.extend_from_slice(&gid.to_le_bytes());
            rec.extend_from_slice(&bytes[i * nd * vs..(i + 1) * nd * vs]);
            for (c, a) in cols.iter_mut().zip(attributes.values()) {
                c.push_row(a, i, rec);
            }
            if objects_mode {
                self.max_object = Some(self.max_object.map_or(object, |m| m.max(object)));
            }
            if skeleton {
                self.vertex_object.push(object);
            }
            self.n_vertices += 1;
        }
        self.columns = Some(cols);
        self.append(grouped.into_iter().collect())?;
        Ok(first)
    }

    /// Adds polylines (lines, polylines, streamlines); each is one object, in order. Vertex
    /// attributes have one row per vertex, over the polylines of the batch in order. Each
    /// polyline is split where it crosses a bin boundary; consecutive pieces in different
    /// chunks get a cross-chunk record from the last vertex of one to the first of the next.
    pub fn add_polylines(
        &mut self,
        polylines: &[Vec<Vec<f64>>],
        attributes: &BTreeMap<String, Attribute>,
    ) -> Result<()> {
        if !self.opts.geometry.is_sequential() {
            return Err(bad(format!(
                "{} geometry takes vertices, not polylines",
                self.opts.geometry.name()
            )));
        }
        let total: usize = polylines.iter().map(Vec::len).sum();
        let new_schema = check_schema(&self.columns, attributes, total, "vertex")?;
        let mut converted = Vec::with_capacity(polylines.len());
        for (pi, pl) in polylines.iter().enumerate() {
            let oid = self.polyline_starts.len() + pi;
            if self.opts.geometry == Geometry::Line && pl.len() != 2 {
                return Err(bad(format!(
                    "line {oid} has {} vertices (a line has 2)",
                    pl.len()
                )));
            }
            let mut rows = Vec::with_capacity(pl.len());
            for (vi, p) in pl.iter().enumerate() {
                let what = || format!("polyline {oid} vertex {vi}");
                let (bytes, stored) = self.convert(p, &what())?;
                if !self.inside(&stored) && self.opts.out_of_bounds == OutOfBounds::Raise {
                    return Err(bad(format!(
                        "{} at {stored:?} is outside the bounds {:?}",
                        what(),
                        self.bounds
                    )));
                }
                self.check_range(&stored, what)?;
                rows.push((bytes, stored));
            }
            converted.push(rows);
        }
        // the whole batch is valid: keep it
        if let Some(schema) = new_schema {
            self.columns = Some(schema);
        }
        let mut grouped: BTreeMap<ChunkKey, Vec<u8>> = BTreeMap::new();
        let had_schema = self.columns.is_some();
        let mut cols = self.columns.take().unwrap_or_default();
        // rows and segments added to each chunk in this batch (not yet in the spill state)
        let mut pending: HashMap<u32, (u64, u64)> = HashMap::new();
        let mut vrow = 0usize;
        for rows in converted {
            self.polyline_starts.push(self.polyline_pieces.len() as u64);
            // (bin coordinates, chunk index, last row, fragment) of the previous vertex
            let mut prev: Option<(Vec<i64>, u32, u64, u64)> = None;
            for (bytes, stored) in rows {
                self.note_position(&stored);
                let key = self.chunk_of(&stored);
                let bin = chunk_of(&stored, &self.bin_shape);
                let ci = self.chunk_index(&key);
                let base = self
                    .chunks
                    .get(&key)
                    .map_or((0, 0), |c| (c.rows, c.segments));
                let p = pending.entry(ci).or_insert((0, 0));
                let row = base.0 + p.0;
                let frag = match &prev {
                    Some((b, pci, _, f)) if *b == bin && *pci == ci => *f,
                    _ => {
                        let frag = base.1 + p.1;
                        p.1 += 1;
                        if let Some((_, pci, prow, _)) = &prev {
                            if *pci != ci {
                                // rows beyond u32 are refused by `validate` before use
                                self.polyline_ccl.push([*pci, *prow as u32, ci, row as u32]);
                            }
                        }
                        self.polyline_pieces.push((ci, frag as u32));
                        frag
                    }
                };
                p.0 += 1;
                let rec = grouped.entry(key).or_default();
                rec.extend_from_slice(&frag.to_le_bytes());
                rec.extend_from_slice(&row.to_le_bytes());
                rec.extend_from_slice(&self.n_vertices.to_le_bytes());
                rec.extend_from_slice(&bytes);
                for (c, a) in cols.iter_mut().zip(attributes.values()) {
                    c.push_row(a, vrow, rec);
                }
                vrow += 1;
                self.n_vertices += 1;
                prev = Some((bin, ci, row, frag));
            }
        }
        // a batch without vertices fixes no schema
        if had_schema || total > 0 {
            self.columns = Some(cols);
        }
        for (ci, (_, segs)) in &pending {
            if let Some(c) = self
                .chunk_order
                .get(*ci as usize)
                .and_then(|k| self.chunks.get_mut(k))
            {
                c.segments += segs;
            }
        }
        self.append(grouped)?;
        Ok(())
    }

    /// Checks link attributes and keeps their rows.
    fn check_link_columns(
        &mut self,
        attributes: &BTreeMap<String, Attribute>,
        n: usize,
    ) -> Result<()> {
        if let Some(schema) = check_schema(&self.link_columns, attributes, n, "link")? {
            self.link_columns = Some(schema);
        }
        // a batch without links fixes no schema
        if let Some(cols) = &mut self.link_columns {
            for r in 0..n {
                for (c, a) in cols.iter_mut().zip(attributes.values()) {
                    c.push_row(a, r, &mut self.link_records);
                }
            }
        }
        Ok(())
    }

    /// Adds graph edges `[source, target]` or skeleton links `[child, parent]` (global vertex
    /// indices; vertices may be added before or after), with one attribute row per edge.
    ///
    /// A skeleton object may be a forest (several roots): each tree gets its own fragments in
    /// every chunk, so that the implicit sequential parent never joins two trees and zv's
    /// reader gives back exactly these links. The reference reader (0.7.0) takes
    /// `parent = i − 1` over the level's global row order wherever no link is stored, so it
    /// gives every root but the level's first row a parent — for forests and for several
    /// one-tree objects alike.
    pub fn add_edges(
        &mut self,
        edges: &[[u64; 2]],
        attributes: &BTreeMap<String, Attribute>,
    ) -> Result<()> {
        match self.opts.geometry {
            Geometry::Graph => {}
            Geometry::Skeleton if attributes.is_empty() => {}
            Geometry::Skeleton => return Err(bad("skeleton links are mostly implicit and cannot carry link attributes; put them on the child vertex")),
            _ => return Err(bad(format!("{} geometry has no edges", self.opts.geometry.name()))),
        }
        if let Some((i, e)) = edges.iter().enumerate().find(|(_, e)| e[0] == e[1]) {
            return Err(bad(format!(
                "edge {} links vertex {} to itself",
                self.edges.len() + i,
                e[0]
            )));
        }
        self.check_link_columns(attributes, edges.len())?;
        self.edges.extend_from_slice(edges);
        Ok(())
    }

    /// Adds mesh faces (triangles or quads; one arity per store), with one attribute row per
    /// face.
    pub fn add_faces(
        &mut self,
        faces: &[Vec<u64>],
        attributes: &BTreeMap<String, Attribute>,
    ) -> Result<()> {
        if self.opts.geometry != Geometry::Mesh {
            return Err(bad(format!(
                "{} geometry has no faces",
                self.opts.geometry.name()
            )));
        }
        let Some(arity) = self.face_arity.or(faces.first().map(Vec::len)) else {
            return self.check_link_columns(attributes, 0);
        };
        for (i, f) in faces.iter().enumerate() {
            if !(3..=4).contains(&f.len()) || f.len() != arity {
                return Err(bad(format!(
                    "face {} has {} vertices (all faces must be triangles, or all quads)",
                    self.faces.len() / arity.max(1) + i,
                    f.len()
                )));
            }
        }
        self.check_link_columns(attributes, faces.len())?;
        self.face_arity = Some(arity);
        for f in faces {
            self.faces.extend_from_slice(f);
        }
        Ok(())
    }

    /// Sets the object attributes: one row per object, objects being `0..=` the largest object
    /// id (the polylines, for polyline geometries); null rows are stored as absent, with a
    /// `present_mask`.
    pub fn set_object_attributes(&mut self, attributes: BTreeMap<String, Attribute>) {
        self.object_attributes = attributes;
    }

    /// Sets fragment attributes: one value per object, stored on each of its fragments.
    pub fn set_fragment_attributes(&mut self, attributes: BTreeMap<String, Attribute>) {
        self.fragment_attributes = attributes;
    }

    /// Sets the groups (group id → object ids; groups are `0..=` the largest id, missing ids
    /// are empty groups) and their attributes (one row per group).
    pub fn set_groups(
        &mut self,
        groups: BTreeMap<u64, Vec<u64>>,
        attributes: BTreeMap<String, Attribute>,
    ) {
        self.groups = groups;
        self.group_attributes = attributes;
    }

    /// Declares that the store has at least `n` objects: ids up to `n − 1` without vertices
    /// (or polylines past the last one given) are empty objects. The object count is the
    /// largest of this, the largest object id + 1 and the length of the object attributes.
    pub fn set_num_objects(&mut self, n: u64) {
        self.num_objects_hint = n;
    }

    /// The number of objects `B` (0 without objects): see [`ZvWriter::set_num_objects`].
    /// Object ids are dense indices, so `B` may exceed the vertex and polyline count by at
    /// most `vertices + polylines + SPARE_OBJECTS`.
    fn num_objects(&self) -> Result<u64> {
        if !self.has_objects() {
            if self.num_objects_hint > 0 {
                return Err(bad(
                    "set_num_objects needs object ids (this point cloud has none)",
                ));
            }
            return Ok(0);
        }
        let from_ids = if self.opts.geometry.is_sequential() {
            self.polyline_starts.len() as u64
        } else {
            match self.max_object {
                Some(m) => m.checked_add(1).ok_or_else(|| {
                    bad(format!(
                        "object id {m} is too large (object ids are dense indices 0..B)"
                    ))
                })?,
                None => 0,
            }
        };
        let b = self
            .object_attributes
            .values()
            .map(|a| a.values.len() as u64)
            .chain([from_ids, self.num_objects_hint])
            .max()
            .unwrap_or(0);
        let items = self.n_vertices + self.polyline_starts.len() as u64;
        let limit = items.saturating_mul(2).saturating_add(SPARE_OBJECTS);
        if b > limit {
            return Err(bad(format!(
                "{b} objects for {items} vertices: object ids are dense indices 0..B (every id below the largest is an object), so B may be at most {limit}; renumber the objects densely and keep the original ids as an object attribute"
            )));
        }
        Ok(b)
    }

    /// Which of `wanted` have at least one vertex.
    fn objects_with_vertices(&self, wanted: &BTreeSet<u64>) -> Result<BTreeSet<u64>> {
        let mut found = BTreeSet::new();
        if wanted.is_empty() {
            return Ok(found);
        }
        if self.opts.geometry.is_sequential() {
            for &o in wanted {
                let start = self.polyline_starts.get(o as usize).copied();
                let end = self
                    .polyline_starts
                    .get(o as usize + 1)
                    .copied()
                    .unwrap_or(self.polyline_pieces.len() as u64);
                if start.is_some_and(|s| s < end) {
                    found.insert(o);
                }
            }
            return Ok(found);
        }
        let rl = self.record_len();
        for key in &self.chunk_order {
            let raw = std::fs::read(&self.chunks[key].file).map_err(io)?;
            for r in raw.chunks_exact(rl) {
                let o = u64::from_le_bytes(r[..8].try_into().unwrap_or([0; 8]));
                if wanted.contains(&o) {
                    found.insert(o);
                }
            }
        }
        Ok(found)
    }

    /// The range of `polyline_pieces` of each polyline, in order.
    fn polyline_piece_ranges(&self) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
        let n = self.polyline_starts.len();
        (0..n).map(move |o| {
            let end = self
                .polyline_starts
                .get(o + 1)
                .map_or(self.polyline_pieces.len(), |&e| e as usize);
            self.polyline_starts[o] as usize..end
        })
    }

    /// Checks everything that spans batches, before anything is written.
    fn validate(&self) -> Result<(u64, u64)> {
        let n = self.n_vertices;
        if self.chunk_order.len() as u64 > u32::MAX as u64 + 1 {
            return Err(bad(format!(
                "{} occupied chunks (at most 2^32; use a larger chunk_shape)",
                self.chunk_order.len()
            )));
        }
        if let Some((k, c)) = self
            .chunks
            .iter()
            .find(|(_, c)| c.rows > u32::MAX as u64 || c.segments > u32::MAX as u64)
        {
            return Err(bad(format!(
                "chunk {k} has {} vertices in {} pieces (at most 2^32 − 1 each; use a smaller chunk_shape)",
                c.rows, c.segments
            )));
        }
        let has_objects = self.has_objects();
        if !has_objects
            && (!self.object_attributes.is_empty()
                || !self.groups.is_empty()
                || !self.fragment_attributes.is_empty())
        {
            return Err(bad(
                "object attributes, fragment attributes and groups need object ids",
            ));
        }
        for (i, e) in self.edges.iter().enumerate() {
            if e[0] >= n || e[1] >= n {
                return Err(bad(format!(
                    "edge {i} {e:?} names a vertex that does not exist ({n} vertices)"
                )));
            }
        }
        if let Some(a) = self.face_arity {
            for (i, f) in self.faces.chunks(a).enumerate() {
                if let Some(v) = f.iter().find(|&&v| v >= n) {
                    return Err(bad(format!(
                        "face {i} names vertex {v}, which does not exist ({n} vertices)"
                    )));
                }
            }
        }
        if self.opts.geometry == Geometry::Skeleton {
            let mut has_parent = vec![false; n as usize];
            for e in &self.edges {
                if std::mem::replace(&mut has_parent[e[0] as usize], true) {
                    return Err(bad(format!(
                        "skeleton vertex {} has more than one parent",
                        e[0]
                    )));
                }
                if self.vertex_object.get(e[0] as usize) != self.vertex_object.get(e[1] as usize) {
                    return Err(bad(format!("skeleton link {e:?} joins two objects")));
                }
            }
        }
        let b = self.num_objects()?;
        for (name, a) in &self.object_attributes {
            if a.values.len() as u64 != b {
                return Err(bad(format!(
                    "object attribute `{name}` has {} values for {b} objects",
                    a.values.len()
                )));
            }
        }
        for (name, a) in &self.fragment_attributes {
            if a.values.len() as u64 != b {
                return Err(bad(format!(
                    "fragment attribute `{name}` has {} values for {b} objects",
                    a.values.len()
                )));
            }
            // null is allowed only for objects without vertices (they have no fragments)
            if let AttributeValues::Numeric {
                present: Some(p), ..
            } = &a.values
            {
                let nulls: BTreeSet<u64> = p
                    .iter()
                    .enumerate()
                    .filter(|(_, &v)| !v)
                    .map(|(o, _)| o as u64)
                    .collect();
                if let Some(o) = self.objects_with_vertices(&nulls)?.first() {
                    return Err(bad(format!(
                        "fragment attribute `{name}` is null for object {o}, which has vertices"
                    )));
                }
            }
        }
        let g = match self.groups.keys().next_back() {
            None => 0,
            Some(&m) => {
                let members: u64 = self.groups.values().map(|m| m.len() as u64).sum();
                let limit = b
                    .saturating_add(members)
                    .saturating_mul(2)
                    .saturating_add(SPARE_OBJECTS);
                if m >= limit {
                    return Err(bad(format!(
                        "group id {m} is too large: groups are dense indices 0..G, and G may be at most {limit} here; renumber the groups densely"
                    )));
                }
                m + 1
            }
        };
        if self.groups.is_empty() && !self.group_attributes.is_empty() {
            return Err(bad("group attributes need groups"));
        }
        for (gid, members) in &self.groups {
            let mut sorted = members.clone();
            sorted.sort_unstable();
            if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
                return Err(bad(format!("group {gid} lists object {} twice", w[0])));
            }
            if let Some(o) = members.iter().find(|&&o| o >= b) {
                return Err(bad(format!(
                    "group {gid} lists object {o}, which does not exist ({b} objects)"
                )));
            }
        }
        for (name, a) in &self.group_attributes {
            if a.values.len() as u64 != g {
                return Err(bad(format!(
                    "group attribute `{name}` has {} values for {g} groups",
                    a.values.len()
                )));
            }
            if matches!(
                &a.values,
                AttributeValues::Numeric {
                    present: Some(_),
                    ..
                }
            ) {
                return Err(bad(format!("group attribute `{name}` has null values")));
            }
        }
        Ok((b, g))
    }

    /// Skeleton DFS rank of every vertex (roots in index order, children in index order),
    /// and the rank of each root (a tree's vertices have the ranks from its root's up to the
    /// next root's); a cycle is an error.
    fn dfs_ranks(&self) -> Result<(Vec<u64>, Vec<u64>)> {
        let n = self.n_vertices as usize;
        // children of each vertex, as compressed rows
        let mut start = vec![0usize; n + 1];
        let mut has_parent = vec![false; n];
        for e in &self.edges {
            start[e[1] as usize + 1] += 1;
            has_parent[e[0] as usize] = true;
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut children = vec![0u64; self.edges.len()];
        for e in &self.edges {
            children[fill[e[1] as usize]] = e[0];
            fill[e[1] as usize] += 1;
        }
        drop(fill);
        for v in 0..n {
            children[start[v]..start[v + 1]].sort_unstable();
        }
        let mut rank = vec![u64::MAX; n];
        let mut roots = Vec::new();
        let mut next = 0u64;
        let mut stack = Vec::new();
        for root in (0..n).filter(|&v| !has_parent[v]) {
            roots.push(next);
            stack.push(root as u64);
            while let Some(v) = stack.pop() {
                rank[v as usize] = next;
                next += 1;
                stack.extend(
                    children[start[v as usize]..start[v as usize + 1]]
                        .iter()
                        .rev(),
                );
            }
        }
        if let Some(v) = rank.iter().position(|&r| r == u64::MAX) {
            return Err(bad(format!(
                "skeleton vertex {v} is on a cycle (it has no root)"
            )));
        }
        Ok((rank, roots))
    }

    fn codecs(&self, typesize: usize) -> Vec<ExtensionMetadata> {
        self.opts.codecs.codecs(typesize, false)
    }

    /// Validates, then writes every blob and document; the root `zarr.json` comes last.
    pub fn finish(mut self) -> Result<WriteSummary> {
        let (num_objects, num_groups) = self.validate()?;
        let (ranks, root_ranks) = if self.opts.geometry == Geometry::Skeleton {
            let (r, roots) = self.dfs_ranks()?;
            (Some(r), roots)
        } else {
            (None, Vec::new())
        };
        // the tree of a DFS rank
        let tree_of = |rank: u64| root_ranks.partition_point(|&r| r <= rank) as u64;
        let bounds = match (&self.bounds, &self.seen) {
            (Some(b), _) => b.clone(),
            (None, Some((lo, hi))) => [lo.clone(), hi.clone()],
            (None, None) => [vec![0.0; self.ndim], self.opts.chunk_shape.clone()],
        };
        let geometry = self.opts.geometry.clone();
        let objects_mode = self.has_objects();
        let binned = !objects_mode;
        let linked = self.linked();
        let nbins: u64 = self.bins_per_chunk.iter().product();
        let rl = self.record_len();
        let vbytes = self.ndim * self.vsize;
        let columns = self.columns.clone().unwrap_or_default();
        let finished: Vec<Finished> = columns.iter().map(Column::finish).collect();
        let frag_attrs: Vec<(String, Attribute)> =
            self.fragment_attributes.clone().into_iter().collect();
        let keys = self.chunk_order.clone();
        let vtype = self.opts.vertex_type;

        // Polylines: the object of each piece (fragment) of each chunk.
        let mut segment_owner: Vec<Vec<u64>> = Vec::new();
        if geometry.is_sequential() && !frag_attrs.is_empty() {
            segment_owner = keys
                .iter()
                .map(|k| vec![0; self.chunks[k].segments as usize])
                .collect();
            for (oid, w) in self.polyline_piece_ranges().enumerate() {
                for &(ci, f) in &self.polyline_pieces[w] {
                    if let Some(slot) = segment_owner[ci as usize].get_mut(f as usize) {
                        *slot = oid as u64;
                    }
                }
            }
        }
        // Linked geometries: (chunk index << 32 | row) of every vertex, by global index.
        let loc: Vec<AtomicU64> = if linked {
            (0..self.n_vertices).map(|_| AtomicU64::new(0)).collect()
        } else {
            Vec::new()
        };

        // Phase 1: every chunk's vertex blobs, in parallel.
        struct ChunkOut {
            /// the object of each fragment (objects only)
            objects: Vec<u64>,
            /// row ranges of the fragments (linked geometries only)
            spans: Vec<(u64, u64)>,
            rows: u64,
        }
        let outs: Vec<ChunkOut> = keys
            .par_iter()
            .enumerate()
            .map(|(ci, key)| -> Result<ChunkOut> {
                let spill = &self.chunks[key];
                let raw = std::fs::read(&spill.file).map_err(io)?;
                let mut recs: Vec<&[u8]> = raw.chunks_exact(rl).collect();
                let field = |r: &[u8], i: usize| {
                    u64::from_le_bytes([
                        r[i],
                        r[i + 1],
                        r[i + 2],
                        r[i + 3],
                        r[i + 4],
                        r[i + 5],
                        r[i + 6],
                        r[i + 7],
                    ])
                };
                // the fragment of a record: its bin or object (skeletons: object and tree)
                let group_key = |r: &[u8]| -> (u64, u64) {
                    match &ranks {
                        Some(rk) => (field(r, 0), tree_of(rk[field(r, 16) as usize])),
                        None => (field(r, 0), 0),
                    }
                };
                match &ranks {
                    Some(rk) => recs.sort_by_key(|r| (field(r, 0), rk[field(r, 16) as usize])),
                    None => recs.sort_by_key(|r| (field(r, 0), field(r, 8))),
                }
                // fragments
                let mut objects = Vec::new();
                let mut spans = Vec::new();
                let mut counts = Vec::new();
                if binned {
                    let mut per_bin = vec![0u64; nbins as usize];
                    for r in &recs {
                        per_bin[(field(r, 0) as usize).min(nbins as usize - 1)] += 1;
                    }
                    counts = per_bin;
                } else {
                    let mut i = 0;
                    while i < recs.len() {
                        let k = group_key(recs[i]);
                        let mut j = i + 1;
                        while j < recs.len() && group_key(recs[j]) == k {
                            j += 1;
                        }
                        objects.push(k.0);
                        spans.push((i as u64, j as u64));
                        counts.push((j - i) as u64);
                        i = j;
                    }
                }
                let name = key.to_string();
                // vertices
                let mut v = Vec::with_capacity(recs.len() * vbytes);
                for r in &recs {
                    v.extend_from_slice(&r[24..24 + vbytes]);
                }
                self.blobs.write_bytes(
                    &join(&["0/vertices", &name]),
                    &v,
                    &self.codecs(self.vsize),
                )?;
                drop(v);
                let fi = FragmentIndex::consecutive(&counts).map_err(|source| Error::Blob {
                    key: name.clone(),
                    source,
                })?;
                self.blobs.write_bytes(
                    &join(&["0/vertex_fragments", &name]),
                    &fi.encode(),
                    &self.codecs(8),
                )?;
                // vertex attributes
                let mut off = 24 + vbytes;
                for (c, fin) in columns.iter().zip(&finished) {
                    let len = c.record_len();
                    let cells: Vec<&[u8]> = recs.iter().map(|r| &r[off..off + len]).collect();
                    off += len;
                    let (rows, _) = encode_column(c, fin, &cells);
                    let ts = rows.data_type().size().unwrap_or(1);
                    self.blobs.write_bytes(
                        &join(&["0/vertex_attributes", &c.name, &name]),
                        &rows.encode(),
                        &self.codecs(ts),
                    )?;
                }
                // fragment attributes: the value of each fragment's object
                for (fname, a) in &frag_attrs {
                    let owners = if geometry.is_sequential() {
                        &segment_owner[ci]
                    } else {
                        &objects
                    };
                    let rows = gather_rows(a, owners)?;
                    let ts = rows.data_type().size().unwrap_or(1);
                    self.blobs.write_bytes(
                        &join(&["0/fragment_attributes", fname, &name]),
                        &rows.encode(),
                        &self.codecs(ts),
                    )?;
                }
                if linked {
                    for (i, r) in recs.iter().enumerate() {
                        loc[field(r, 16) as usize]
                            .store(((ci as u64) << 32) | i as u64, Ordering::Relaxed);
                    }
                } else {
                    spans = Vec::new();
                }
                Ok(ChunkOut {
                    objects,
                    spans,
                    rows: recs.len() as u64,
                })
            })
            .collect::<Result<_>>()?;
        let total_rows: u64 = outs.iter().map(|o| o.rows).sum();

        // Object manifests, encoded as the manifest-block stream and its offsets.
        let sid = self.ndim;
        let mut manifest_data = Vec::new();
        let mut manifest_offsets = Vec::new();
        if objects_mode {
            let mut push = |refs: &[(Vec<i64>, u64)]| -> Result<()> {
                manifest_offsets.extend_from_slice(&(manifest_data.len() as i64).to_le_bytes());
                Manifest::from_refs(refs)
                    .encode_into(&mut manifest_data, sid)
                    .map_err(|source| Error::Blob {
                        key: "0/object_index/data".into(),
                        source,
                    })
            };
            let mut written = 0u64;
            if geometry.is_sequential() {
                for w in self.polyline_piece_ranges() {
                    let refs: Vec<(Vec<i64>, u64)> = self.polyline_pieces[w]
                        .iter()
                        .map(|&(ci, f)| (keys[ci as usize].0.clone(), f as u64))
                        .collect();
                    push(&refs)?;
                    written += 1;
                }
            } else {
                // (object, chunk in key order, fragment), sorted
                let mut order: Vec<usize> = (0..keys.len()).collect();
                order.sort_by(|&a, &b| keys[a].cmp(&keys[b]));
                let mut all: Vec<(u64, u32, u32)> = Vec::new();
                for (pos, &ci) in order.iter().enumerate() {
                    for (f, &obj) in outs[ci].objects.iter().enumerate() {
                        all.push((obj, pos as u32, f as u32));
                    }
                }
                all.sort_unstable();
                let mut i = 0;
                while i < all.len() {
                    let obj = all[i].0;
                    while written < obj {
                        push(&[])?;
                        written += 1;
                    }
                    let mut refs = Vec::new();
                    while i < all.len() && all[i].0 == obj {
                        refs.push((keys[order[all[i].1 as usize]].0.clone(), all[i].2 as u64));
                        i += 1;
                    }
                    push(&refs)?;
                    written += 1;
                }
            }
            while written < num_objects {
                push(&[])?;
                written += 1;
            }
        }

        // Connectivity.
        let mut summary = WriteSummary {
            vertices: total_rows,
            chunks: keys.len(),
            objects: if objects_mode { num_objects } else { 0 },
            groups: num_groups,
            ..WriteSummary::default()
        };
        let link_width = match geometry {
            Geometry::Mesh => self.face_arity.unwrap_or(3),
            _ => 2,
        };
        let mut ccl = CrossChunkLinks::new(link_width, sid);
        let mut ccl_link_index: Vec<usize> = Vec::new();
        // per chunk: (vertex fragment of the first endpoint, link index)
        let mut intra: Vec<Vec<(u32, usize)>> = vec![Vec::new(); keys.len()];
        let ccl_err = |source| Error::Blob {
            key: "0/cross_chunk_links/0/data".into(),
            source,
        };
        let place = |g: u64| -> (usize, u64) {
            let v = loc[g as usize].load(Ordering::Relaxed);
            ((v >> 32) as usize, v & 0xFFFF_FFFF)
        };
        let link = |li: usize| -> &[u64] {
            match geometry {
                Geometry::Mesh => &self.faces[li * link_width..(li + 1) * link_width],
                _ => &self.edges[li],
            }
        };
        let num_links = match geometry {
            Geometry::Mesh => self.faces.len() / link_width,
            _ => self.edges.len(),
        };
        if geometry.is_sequential() {
            for &[a, ra, b, rb] in &self.polyline_ccl {
                ccl.push(&[
                    (&keys[a as usize].0, ra as u64),
                    (&keys[b as usize].0, rb as u64),
                ])
                .map_err(ccl_err)?;
            }
        } else if linked {
            // the fragment holding a row (fragments are consecutive ranges)
            let frag_of = |ci: usize, row: u64| -> u32 {
                outs[ci].spans.partition_point(|&(_, end)| end <= row) as u32
            };
            let mut ends = Vec::with_capacity(link_width);
            for li in 0..num_links {
                ends.clear();
                ends.extend(link(li).iter().map(|&g| place(g)));
                let ci = ends[0].0;
                let same = ends.iter().all(|e| e.0 == ci);
                if geometry == Geometry::Skeleton && same {
                    let (rc, rp) = (ends[0].1, ends[1].1);
                    if rc > 0 && rp == rc - 1 && frag_of(ci, rp) == frag_of(ci, rc) {
                        continue; // implicit sequential parent
                    }
                }
                if same {
                    intra[ci].push((frag_of(ci, ends[0].1), li));
                } else {
                    let eps: Vec<(&[i64], u64)> =
                        ends.iter().map(|e| (keys[e.0].0.as_slice(), e.1)).collect();
                    ccl.push(&eps).map_err(ccl_err)?;
                    ccl_link_index.push(li);
                }
            }
        }
        // intra links per chunk, ordered by the vertex fragment of their first endpoint
        let link_cols = self.link_columns.clone().unwrap_or_default();
        let link_fin: Vec<Finished> = link_cols.iter().map(Column::finish).collect();
        let lrl: usize = link_cols.iter().map(Column::record_len).sum();
        let link_cell = |li: usize, col: usize| -> &[u8] {
            let off: usize = link_cols[..col].iter().map(Column::record_len).sum();
            let at = li * lrl + off;
            &self.link_records[at..at + link_cols[col].record_len()]
        };
        let intra_counts: Vec<u64> = intra
            .par_iter_mut()
            .enumerate()
            .map(|(ci, links)| -> Result<u64> {
                if links.is_empty() {
                    return Ok(0);
                }
                links.sort_by_key(|l| l.0);
                let name = keys[ci].to_string();
                let values: Vec<i64> = links
                    .iter()
                    .flat_map(|l| link(l.1).iter().map(|&g| place(g).1 as i64))
                    .collect();
                let rows = LinkRows::new(link_width, values).map_err(|source| Error::Blob {
                    key: name.clone(),
                    source,
                })?;
                self.blobs.write_bytes(
                    &join(&["0/links/0", &name]),
                    &rows.encode(),
                    &self.opts.codecs.codecs(8, true),
                )?;
                let nfr = outs[ci].spans.len().max(1);
                let mut per_frag = vec![0u64; nfr];
                for l in links.iter() {
                    per_frag[(l.0 as usize).min(nfr - 1)] += 1;
                }
                let lf = FragmentIndex::consecutive(&per_frag).map_err(|source| Error::Blob {
                    key: name.clone(),
                    source,
                })?;
                self.blobs.write_bytes(
                    &join(&["0/link_fragments", &name]),
                    &lf.encode(),
                    &self.codecs(8),
                )?;
                for (col, (c, fin)) in link_cols.iter().zip(&link_fin).enumerate() {
                    let cells: Vec<&[u8]> = links.iter().map(|l| link_cell(l.1, col)).collect();
                    let (rows, _) = encode_column(c, fin, &cells);
                    let ts = rows.data_type().size().unwrap_or(1);
                    self.blobs.write_bytes(
                        &join(&["0/link_attributes", &c.name, "0", &name]),
                        &rows.encode(),
                        &self.codecs(ts),
                    )?;
                }
                Ok(links.len() as u64)
            })
            .collect::<Result<_>>()?;
        summary.intra_links = intra_counts.iter().sum();
        // the records as the blob's bytes (the records themselves are no longer needed)
        let num_ccl = ccl.len();
        let ccl_bytes = ccl.encode();
        drop(ccl);
        summary.cross_chunk_links = num_ccl as u64;

        // Level-global arrays.
        let mut arrays_present = vec!["vertices".to_owned()];
        let write_group = |path: &str, attrs: Value| -> Result<()> {
            self.blobs
                .write_group(path, attrs.as_object().cloned().unwrap_or_default())
        };
        write_group(
            "0/vertices",
            json!({"zv_array": "vertices", "dtype": vtype.name(), "encoding": "raw"}),
        )?;
        write_group(
            "0/vertex_fragments",
            json!({"zv_array": "vertex_fragments", "encoding": "fragment_index_v1"}),
        )?;
        if !columns.is_empty() {
            write_group("0/vertex_attributes", json!({}))?;
            if geometry == Geometry::PointCloud {
                arrays_present.push("vertex_attributes".into());
            }
        }
        for (c, fin) in columns.iter().zip(&finished) {
            let mut attrs = Map::new();
            attrs.insert("zv_array".into(), json!("attribute"));
            attrs.insert("name".into(), json!(c.name));
            attrs.insert("dtype".into(), json!(fin.data_type.name()));
            if fin.channels > 1 || c.channel_names.is_some() {
                let names = c
                    .channel_names
                    .clone()
                    .unwrap_or_else(|| (0..fin.channels).map(|i| format!("ch{i}")).collect());
                attrs.insert("channel_names".into(), json!(names));
            }
            if let Some(d) = &fin.dictionary {
                d.to_attributes(&mut attrs);
            }
            self.blobs
                .write_group(&join(&["0/vertex_attributes", &c.name]), attrs)?;
        }
        if !frag_attrs.is_empty() {
            write_group("0/fragment_attributes", json!({}))?;
            for (fname, a) in &frag_attrs {
                let mut attrs = Map::new();
                attrs.insert("zv_array".into(), json!("fragment_attribute"));
                attrs.insert("name".into(), json!(fname));
                attrs.insert("dtype".into(), json!(attribute_type(a).name()));
                if let Some(d) = attribute_dictionary(a) {
                    d.to_attributes(&mut attrs);
                }
                if let Some(c) = &a.channel_names {
                    attrs.insert("channel_names".into(), json!(c));
                }
                self.blobs
                    .write_group(&join(&["0/fragment_attributes", fname]), attrs)?;
            }
        }
        if self.linked() {
            arrays_present.push("links".into());
            write_group("0/links", json!({}))?;
            write_group(
                "0/links/0",
                json!({"zv_array": "links", "dtype": "int64", "link_width": link_width, "level_delta": 0, "num_links": summary.intra_links}),
            )?;
            write_group(
                "0/link_fragments",
                json!({"zv_array": "link_fragments", "encoding": "fragment_index_v1"}),
            )?;
            if !link_cols.is_empty() {
                write_group("0/link_attributes", json!({}))?;
                for (c, fin) in link_cols.iter().zip(&link_fin) {
                    write_group(&join(&["0/link_attributes", &c.name]), json!({}))?;
                    let mut attrs = Map::new();
                    attrs.insert("zv_array".into(), json!("link_attribute"));
                    attrs.insert("name".into(), json!(c.name));
                    attrs.insert("dtype".into(), json!(fin.data_type.name()));
                    attrs.insert("level_delta".into(), json!(0));
                    if let Some(d) = &fin.dictionary {
                        d.to_attributes(&mut attrs);
                    }
                    if let ColumnKind::Numeric { channels, .. } = c.kind {
                        if channels > 1 {
                            let names = c.channel_names.clone().unwrap_or_else(|| {
                                (0..channels).map(|i| format!("ch{i}")).collect()
                            });
                            attrs.insert("channel_names".into(), json!(names));
                        }
                    }
                    self.blobs
                        .write_group(&join(&["0/link_attributes", &c.name, "0"]), attrs)?;
                }
            }
        }
        // cross-chunk links (and their attributes)
        if self.linked() || geometry.is_sequential() {
            write_group("0/cross_chunk_links", json!({}))?;
            write_group(
                "0/cross_chunk_links/0",
                json!({"zv_array": "cross_chunk_links", "level_delta": 0, "link_width": link_width, "num_links": num_ccl, "sid_ndim": sid}),
            )?;
            self.blobs
                .write_bytes("0/cross_chunk_links/0/data", &ccl_bytes, &self.codecs(8))?;
            drop(ccl_bytes);
            if !link_cols.is_empty() {
                write_group("0/cross_chunk_link_attributes", json!({}))?;
                for (col, (c, fin)) in link_cols.iter().zip(&link_fin).enumerate() {
                    let cells: Vec<&[u8]> = ccl_link_index
                        .iter()
                        .map(|&li| link_cell(li, col))
                        .collect();
                    let (rows, _) = encode_column(c, fin, &cells);
                    write_group(
                        &join(&["0/cross_chunk_link_attributes", &c.name]),
                        json!({}),
                    )?;
                    let group = join(&["0/cross_chunk_link_attributes", &c.name, "0"]);
                    let mut attrs = Map::new();
                    attrs.insert("zv_array".into(), json!("cross_chunk_link_attribute"));
                    attrs.insert("name".into(), json!(c.name));
                    attrs.insert("dtype".into(), json!(rows.data_type().name()));
                    attrs.insert("level_delta".into(), json!(0));
                    attrs.insert("num_links".into(), json!(num_ccl));
                    let shape: Vec<u64> = if rows.channels() > 1 {
                        vec![num_ccl as u64, rows.channels() as u64]
                    } else {
                        vec![num_ccl as u64]
                    };
                    attrs.insert("shape".into(), json!(shape));
                    if let Some(d) = &fin.dictionary {
                        d.to_attributes(&mut attrs);
                    }
                    let ts = rows.data_type().size().unwrap_or(1);
                    self.blobs.write_bytes(
                        &join(&[&group, "data"]),
                        &rows.encode(),
                        &self.codecs(ts),
                    )?;
                    self.blobs.write_group(&group, attrs)?;
                }
            }
        }
        if objects_mode {
            arrays_present.push("object_index".into());
            self.blobs
                .write_bytes("0/object_index/data", &manifest_data, &self.codecs(8))?;
            self.blobs
                .write_bytes("0/object_index/offsets", &manifest_offsets, &self.codecs(8))?;
            write_group(
                "0/object_index",
                json!({"zv_array": "object_index", "num_objects": num_objects, "sid_ndim": sid}),
            )?;
            if !self.object_attributes.is_empty() {
                write_group("0/object_attributes", json!({}))?;
            }
            for (name, a) in &self.object_attributes {
                self.write_dense(
                    &join(&["0/object_attributes", name]),
                    name,
                    a,
                    num_objects,
                    true,
                )?;
            }
            if !self.groups.is_empty() || !self.group_attributes.is_empty() {
                let members: Vec<Vec<u64>> = (0..num_groups)
                    .map(|g| self.groups.get(&g).cloned().unwrap_or_default())
                    .collect();
                let (data, offsets) =
                    Groups { members }.encode().map_err(|source| Error::Blob {
                        key: "0/groups/data".into(),
                        source,
                    })?;
                self.blobs
                    .write_bytes("0/groups/data", &data, &self.codecs(8))?;
                self.blobs
                    .write_bytes("0/groups/offsets", &offsets, &self.codecs(8))?;
                write_group(
                    "0/groups",
                    json!({"zv_array": "groups", "num_groups": num_groups}),
                )?;
            }
            if !self.group_attributes.is_empty() {
                write_group("0/group_attributes", json!({}))?;
            }
            for (name, a) in &self.group_attributes {
                self.write_dense(
                    &join(&["0/group_attributes", name]),
                    name,
                    a,
                    num_groups,
                    false,
                )?;
            }
        }
        // level and root documents, the root last
        write_group(
            "0",
            json!({"zarr_vectors_level": {"level": 0, "vertex_count": total_rows, "arrays_present": arrays_present,
                   "coarsening_method": "none", "parent_level": null, "object_sparsity": 1.0}}),
        )?;
        let links_convention = match geometry {
            Geometry::Graph | Geometry::Mesh => "explicit",
            Geometry::Skeleton => "implicit_sequential_with_branches",
            _ => "implicit_sequential",
        };
        let mut zv = Map::new();
        zv.insert("zv_version".into(), json!(ZV_VERSION));
        zv.insert("format_capabilities".into(), json!(["fragment_index"]));
        zv.insert("chunk_shape".into(), json!(self.opts.chunk_shape));
        zv.insert("bounds".into(), json!(bounds));
        zv.insert("geometry_types".into(), json!([geometry.name()]));
        if let Some(b) = &self.opts.bin_shape {
            zv.insert("base_bin_shape".into(), json!(b));
        }
        if let Some(c) = &self.opts.crs {
            zv.insert("crs".into(), c.clone());
        }
        zv.insert("links_convention".into(), json!(links_convention));
        zv.insert("object_index_convention".into(), json!("standard"));
        zv.insert("cross_chunk_strategy".into(), json!("explicit_links"));
        let axes: Vec<Value> = self
            .opts
            .axes_or_default()
            .iter()
            .map(Axis::to_json)
            .collect();
        let mut transforms = vec![json!({"type": "scale", "scale": vec![1.0; self.ndim]})];
        let half: Vec<f64> = self.bin_shape.iter().map(|b| b / 2.0).collect();
        transforms.push(json!({"type": "translation", "translation": half}));
        let root = json!({
            "zarr_vectors": zv,
            "multiscales": [{"version": "0.4", "name": "default", "axes": axes,
                "datasets": [{"path": "0", "coordinateTransformations": transforms}],
                "metadata": {"format": "zarr_vectors"}}],
        });
        self.blobs
            .write_group("", root.as_object().cloned().unwrap_or_default())?;
        // the spill directory is removed when `self` drops
        self.chunks.clear();
        Ok(summary)
    }

    fn write_dense(
        &self,
        group: &str,
        name: &str,
        a: &Attribute,
        rows: u64,
        with_mask: bool,
    ) -> Result<()> {
        let (values, present, dict) = match &a.values {
            AttributeValues::Numeric { rows, present } => (rows.clone(), present.clone(), None),
            AttributeValues::Categorical(v) => {
                let strs: Vec<Option<&str>> = v.iter().map(|s| s.as_deref()).collect();
                let (d, rows) = Dictionary::encode(&strs).map_err(|source| Error::Blob {
                    key: group.into(),
                    source,
                })?;
                (rows, None, Some(d))
            }
        };
        let c = values.channels();
        let shape: Vec<u64> = if c > 1 {
            vec![rows, c as u64]
        } else {
            vec![rows]
        };
        let ts = values.data_type().size().unwrap_or(1);
        self.blobs
            .write_bytes(&join(&[group, "data"]), &values.encode(), &self.codecs(ts))?;
        let mut attrs = Map::new();
        attrs.insert(
            "zv_array".into(),
            json!(if with_mask {
                "object_attribute"
            } else {
                "groupings_attribute"
            }),
        );
        attrs.insert("name".into(), json!(name));
        attrs.insert("dtype".into(), json!(values.data_type().name()));
        attrs.insert("num_channels".into(), json!(c));
        attrs.insert("shape".into(), json!(shape));
        if with_mask {
            attrs.insert("has_present_mask".into(), json!(present.is_some()));
            if let Some(p) = &present {
                self.blobs.write_bytes(
                    &join(&[group, "present_mask"]),
                    &encode_present_mask(p),
                    &self.codecs(1),
                )?;
            }
        }
        if let Some(d) = dict {
            d.to_attributes(&mut attrs);
        }
        if let Some(cn) = &a.channel_names {
            attrs.insert("channel_names".into(), json!(cn));
        }
        self.blobs.write_group(group, attrs)
    }
}

fn signed_code_type(n: usize) -> DataType {
    if n <= 128 {
        DataType::Int8
    } else if n <= 32768 {
        DataType::Int16
    } else {
        DataType::Int32
    }
}

fn attribute_type(a: &Attribute) -> DataType {
    match &a.values {
        AttributeValues::Numeric { rows, .. } => rows.data_type(),
        AttributeValues::Categorical(v) => {
            let strs: Vec<Option<&str>> = v.iter().map(|s| s.as_deref()).collect();
            Dictionary::encode(&strs).map_or(DataType::UInt32, |(_, r)| r.data_type())
        }
    }
}

fn attribute_dictionary(a: &Attribute) -> Option<Dictionary> {
    match &a.values {
        AttributeValues::Numeric { .. } => None,
        AttributeValues::Categorical(v) => {
            let strs: Vec<Option<&str>> = v.iter().map(|s| s.as_deref()).collect();
            Dictionary::encode(&strs).ok().map(|(d, _)| d)
        }
    }
}

/// The rows `objects` of a per-object attribute (categorical values dictionary-encoded over
/// all objects).
fn gather_rows(a: &Attribute, objects: &[u64]) -> Result<AttributeRows> {
    let all = match &a.values {
        AttributeValues::Numeric { rows, .. } => rows.clone(),
        AttributeValues::Categorical(v) => {
            let strs: Vec<Option<&str>> = v.iter().map(|s| s.as_deref()).collect();
            Dictionary::encode(&strs).map_err(|e| bad(e.to_string()))?.1
        }
    };
    all.gather(objects.iter().copied())
        .map_err(|e| bad(e.to_string()))
}

/// Writes a whole geometry document into `store`, `batch` rows (or polylines) at a time
/// through the streaming writer. Everything is validated before the first write.
pub fn write_document(
    store: Arc<dyn Store>,
    doc: &GeometryDocument,
    batch: usize,
) -> Result<WriteSummary> {
    let opts = WriterOptions::from_document(doc)?;
    let mut w = ZvWriter::create(store, opts)?;
    let batch = batch.max(1);
    if doc.geometry.is_sequential() {
        if !doc.vertices.is_empty() {
            return Err(bad(format!(
                "{} geometry takes `polylines`, not `vertices`",
                doc.geometry.name()
            )));
        }
        let mut start_vertex = 0usize;
        for chunk in doc.polylines.chunks(batch) {
            let n: usize = chunk.iter().map(Vec::len).sum();
            let attrs = slice_attributes(&doc.vertex_attributes, start_vertex, n)?;
            w.add_polylines(chunk, &attrs)?;
            start_vertex += n;
        }
        let total: usize = doc.polylines.iter().map(Vec::len).sum();
        for (name, a) in &doc.vertex_attributes {
            if a.values.len() != total {
                return Err(bad(format!(
                    "vertex attribute `{name}` has {} values for {total} vertices",
                    a.values.len()
                )));
            }
        }
    } else {
        if !doc.polylines.is_empty() {
            return Err(bad(format!(
                "{} geometry takes `vertices`, not `polylines`",
                doc.geometry.name()
            )));
        }
        let n = doc.vertices.len();
        for (name, a) in &doc.vertex_attributes {
            if a.values.len() != n {
                return Err(bad(format!(
                    "vertex attribute `{name}` has {} values for {n} vertices",
                    a.values.len()
                )));
            }
        }
        if let Some(ids) = &doc.object_ids {
            if ids.len() != n {
                return Err(bad(format!("{} object ids for {n} vertices", ids.len())));
            }
        }
        let mut start = 0;
        while start < n.max(1) && (start < n || n == 0) {
            let end = (start + batch).min(n);
            let attrs = slice_attributes(&doc.vertex_attributes, start, end - start)?;
            let ids = doc.object_ids.as_ref().map(|ids| &ids[start..end]);
            w.add_vertices(&doc.vertices[start..end], ids, &attrs)?;
            if n == 0 {
                break;
            }
            start = end;
        }
        match doc.geometry {
            Geometry::Mesh => w.add_faces(&doc.faces, &doc.link_attributes)?,
            Geometry::Graph | Geometry::Skeleton => {
                w.add_edges(&doc.edges, &doc.link_attributes)?
            }
            _ => {
                if !doc.edges.is_empty() || !doc.faces.is_empty() {
                    return Err(bad("point clouds have no edges or faces"));
                }
                if !doc.link_attributes.is_empty() {
                    return Err(bad("point clouds have no link attributes"));
                }
            }
        }
    }
    if let Some(n) = doc.num_objects {
        w.set_num_objects(n);
    }
    w.set_object_attributes(doc.object_attributes.clone());
    w.set_fragment_attributes(doc.fragment_attributes.clone());
    w.set_groups(doc.groups.clone(), doc.group_attributes.clone());
    w.finish()
}

/// Rows `start .. start + n` of every attribute.
fn slice_attributes(
    attrs: &BTreeMap<String, Attribute>,
    start: usize,
    n: usize,
) -> Result<BTreeMap<String, Attribute>> {
    let mut out = BTreeMap::new();
    for (name, a) in attrs {
        if a.values.len() < start + n {
            return Err(bad(format!(
                "vertex attribute `{name}` has {} values, fewer than the vertices",
                a.values.len()
            )));
        }
        let values = match &a.values {
            AttributeValues::Numeric { rows, present } => AttributeValues::Numeric {
                rows: rows
                    .gather(start as u64..(start + n) as u64)
                    .map_err(|e| bad(e.to_string()))?,
                present: present.as_ref().map(|p| p[start..start + n].to_vec()),
            },
            AttributeValues::Categorical(v) => {
                AttributeValues::Categorical(v[start..start + n].to_vec())
            }
        };
        out.insert(
            name.clone(),
            Attribute {
                values,
                channel_names: a.channel_names.clone(),
            },
        );
    }
    Ok(out)
}
