//! What a new store is to be: [`WriterOptions`] (geometry, axes, chunk and bin shapes, bounds,
//! vertex type, codecs), their parsing and validation, and the [`WriteSummary`] of a finished
//! write.

use serde_json::{json, Value};
use zv_core::data_type::DataType;
use zv_core::metadata::ExtensionMetadata;

use crate::document::GeometryDocument;
use crate::error::{Error, InputItem, Result};
use crate::geometry::Geometry;
use crate::metadata::Axis;

/// The default [`WriterOptions::memory_budget`]: 1 GiB.
pub const DEFAULT_MEMORY_BUDGET: u64 = 1 << 30;

/// The most bins a chunk may have (each is a fragment of every point-cloud chunk).
pub const MAX_BINS_PER_CHUNK: u64 = 1 << 21;

/// An error in option `name`.
fn bad_option(name: &'static str, reason: impl Into<String>) -> Error {
    Error::input(InputItem::Option(name), reason)
}

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
            other => Err(bad_option(
                "out_of_bounds",
                format!("`{other}` (expected raise, ignore, expand)"),
            )),
        }
    }

    /// The name [`OutOfBounds::parse`] reads back.
    pub fn name(self) -> &'static str {
        match self {
            OutOfBounds::Raise => "raise",
            OutOfBounds::Ignore => "ignore",
            OutOfBounds::Expand => "expand",
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
        let (name, level) =
            match base.split_once(':') {
                Some((n, l)) => (
                    n,
                    Some(l.parse::<i32>().map_err(|_| {
                        bad_option("codecs", format!("level `{l}` is not an integer"))
                    })?),
                ),
                None => (base, None),
            };
        let compression = match name {
            "spec-default" | "default" | "blosc-zstd" => Compression::SpecDefault,
            "none" | "raw" => Compression::None,
            "zstd" => Compression::Zstd(level.unwrap_or(3)),
            "blosc-lz4" | "lz4" => Compression::BloscLz4,
            "gzip" => Compression::Gzip(level.unwrap_or(5).clamp(0, 9) as u32),
            other => return Err(bad_option("codecs", format!("`{other}` (expected spec-default, none, zstd, blosc-lz4, gzip, optionally +crc32c)"))),
        };
        Ok(Self {
            compression,
            crc32c,
        })
    }

    /// The text [`CodecChoice::parse`] reads back as this choice.
    pub fn spec(&self) -> String {
        let base = match self.compression {
            Compression::SpecDefault => "spec-default".to_owned(),
            Compression::None => "none".to_owned(),
            Compression::Zstd(level) => format!("zstd:{level}"),
            Compression::BloscLz4 => "blosc-lz4".to_owned(),
            Compression::Gzip(level) => format!("gzip:{level}"),
        };
        if self.crc32c {
            base + "+crc32c"
        } else {
            base
        }
    }

    /// The codec list of a blob whose payload has elements of `typesize` bytes; `links`
    /// selects bit shuffle for the blosc choices.
    pub fn codecs(&self, typesize: usize, links: bool) -> Vec<ExtensionMetadata> {
        let mut out = vec![ExtensionMetadata::new("bytes")];
        let shuffle = if links { "bitshuffle" } else { "shuffle" };
        let blosc = |cname: &str| {
            ExtensionMetadata::with_configuration(
                "blosc",
                json!({"cname": cname, "clevel": 5, "shuffle": shuffle, "typesize": typesize, "blocksize": 0}),
            )
        };
        match self.compression {
            Compression::SpecDefault => out.push(blosc("zstd")),
            Compression::BloscLz4 => out.push(blosc("lz4")),
            Compression::None => {}
            Compression::Zstd(level) => out.push(ExtensionMetadata::with_configuration(
                "zstd",
                json!({"level": level, "checksum": false}),
            )),
            Compression::Gzip(level) => out.push(ExtensionMetadata::with_configuration(
                "gzip",
                json!({"level": level}),
            )),
        }
        if self.crc32c {
            out.push(ExtensionMetadata::new("crc32c"));
        }
        out
    }
}

/// The on-disk layout a writer writes (`docs/format-decisions.md`, "Writing ZV 0.9").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FormatVersion {
    /// ZV 0.7 as the 0.7.0 reference reads it: one array node per chunk and per-array group
    /// documents.
    V0_7,
    /// ZV 0.9 as zarr-vectors 0.9.2 reads it (the default): one chunk-grid `variable_length_bytes` array
    /// per per-chunk array, `vlen_manifests_v2` object index, flat dense attributes with
    /// fill-value absence, `variable_length_bytes` groups, links in the `links/0` family of
    /// offsets segments and link attributes mirroring them. Every geometry; categorical
    /// link attributes are refused.
    #[default]
    V0_9,
}

impl FormatVersion {
    /// Parses `0.7` or `0.9`.
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "0.7" => Ok(Self::V0_7),
            "0.9" => Ok(Self::V0_9),
            other => Err(bad_option(
                "format_version",
                format!("`{other}` (expected 0.7 or 0.9)"),
            )),
        }
    }

    /// The text [`FormatVersion::parse`] reads back.
    pub fn name(self) -> &'static str {
        match self {
            Self::V0_7 => "0.7",
            Self::V0_9 => "0.9",
        }
    }

    /// The format version of a store in `layout` (what a level added to it is written in).
    pub fn of_layout(layout: crate::metadata::Layout) -> Self {
        match layout {
            crate::metadata::Layout::PerChunkNodes => Self::V0_7,
            crate::metadata::Layout::ChunkGrid => Self::V0_9,
        }
    }

    /// The geometries this build writes in this layout.
    pub fn writes(self, geometry: &Geometry) -> bool {
        match self {
            Self::V0_7 => true,
            Self::V0_9 => matches!(
                geometry,
                Geometry::PointCloud
                    | Geometry::Line
                    | Geometry::Polyline
                    | Geometry::Streamline
                    | Geometry::Graph
                    | Geometry::Skeleton
                    | Geometry::Mesh
            ),
        }
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
    /// How many bytes of vertex records (24 bytes of bookkeeping, the stored coordinates and
    /// the attribute cells per vertex) the writer holds in memory before it spills them to
    /// temporary files ([`DEFAULT_MEMORY_BUDGET`] by default). The store written is the same
    /// whatever the budget.
    pub memory_budget: u64,
    /// The on-disk layout ([`FormatVersion::V0_9`] by default).
    pub format_version: FormatVersion,
    /// ZV 0.9 only: pack the cells of every chunk-grid array in shards of this many chunks
    /// per dimension (the `sharding_indexed` codec, as zarr-vectors 0.9.2's `shard_shape=`
    /// writes them; `None`, the default, is one stored object per cell).
    pub shard_shape: Option<Vec<u64>>,
    /// ZV 0.7 only: the largest chunk, in bytes, of the level's cross-chunk record blob
    /// (`cross_chunk_links/0/data`), which is written a chunk at a time and read back a chunk
    /// at a time, so that a level's records are never held twice (32 MiB by default; a blob
    /// that fits one chunk is one chunk, as the reference writes it).
    pub record_chunk_bytes: u64,
}

impl WriterOptions {
    /// Options with defaults: axes `x, y, z…`, no bins, inferred bounds, `raise`, float32,
    /// the spec's codecs, a memory budget of [`DEFAULT_MEMORY_BUDGET`], record chunks of
    /// 32 MiB.
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
            memory_budget: DEFAULT_MEMORY_BUDGET,
            format_version: FormatVersion::default(),
            shard_shape: None,
            record_chunk_bytes: crate::blob::RECORD_CHUNK_BYTES,
        }
    }

    /// These options in the layout `version` (builder style: `WriterOptions::new(g,
    /// chunk).with_format_version(FormatVersion::V0_7)`).
    #[must_use]
    pub fn with_format_version(mut self, version: FormatVersion) -> Self {
        self.format_version = version;
        self
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

    /// The axes, or the default `x, y, z, w, d4, …`.
    pub(super) fn axes_or_default(&self) -> Vec<Axis> {
        self.axes.clone().unwrap_or_else(|| {
            let names = ["x", "y", "z", "w"];
            (0..self.chunk_shape.len())
                .map(|i| Axis::space(names.get(i).copied().unwrap_or(&format!("d{i}"))))
                .collect()
        })
    }

    /// The bin shape: the given one, or the chunk shape.
    pub(super) fn bin_shape_or_chunk(&self) -> Vec<f64> {
        self.bin_shape
            .clone()
            .unwrap_or_else(|| self.chunk_shape.clone())
    }

    /// Checks every option, and that they agree with each other.
    pub(crate) fn validate(&self) -> Result<()> {
        self.check_chunk_shape()?;
        self.check_axes()?;
        self.check_bin_shape()?;
        self.check_bounds()?;
        if !matches!(
            self.vertex_type,
            DataType::Float16 | DataType::Float32 | DataType::Float64
        ) {
            return Err(bad_option(
                "vertex_type",
                format!("{} is not float16, float32 or float64", self.vertex_type),
            ));
        }
        if self.out_of_bounds == OutOfBounds::Ignore && self.geometry != Geometry::PointCloud {
            return Err(bad_option(
                "out_of_bounds",
                "`ignore` is only allowed for point clouds (dropping vertices would break links)",
            ));
        }
        if let Geometry::Other(g) = &self.geometry {
            return Err(bad_option("geometry", format!("unknown geometry `{g}`")));
        }
        self.check_shard_shape()?;
        if !self.format_version.writes(&self.geometry) {
            return Err(bad_option(
                "format_version",
                format!(
                    "this build does not write {} stores in the ZV 0.9 layout yet (write 0.7)",
                    self.geometry.name()
                ),
            ));
        }
        Ok(())
    }

    fn check_shard_shape(&self) -> Result<()> {
        let Some(shard) = &self.shard_shape else {
            return Ok(());
        };
        if self.format_version != FormatVersion::V0_9 {
            return Err(bad_option(
                "shard_shape",
                "shards are written in the ZV 0.9 layout only (format version 0.9)",
            ));
        }
        if shard.len() != self.chunk_shape.len() {
            return Err(bad_option(
                "shard_shape",
                format!(
                    "{shard:?} has {} values, the chunk shape {}",
                    shard.len(),
                    self.chunk_shape.len()
                ),
            ));
        }
        crate::blob::grid_shards::check_shard_shape(shard)
            .map_err(|e| bad_option("shard_shape", e.to_string()))
    }

    fn check_chunk_shape(&self) -> Result<()> {
        let c = &self.chunk_shape;
        if c.len() < 2 {
            return Err(bad_option(
                "chunk_shape",
                format!("{c:?}: at least 2 dimensions are needed"),
            ));
        }
        if c.iter().any(|&x| !(x > 0.0 && x.is_finite())) {
            return Err(bad_option(
                "chunk_shape",
                format!("{c:?} must be positive and finite"),
            ));
        }
        Ok(())
    }

    fn check_axes(&self) -> Result<()> {
        let n = self.chunk_shape.len();
        let Some(axes) = &self.axes else {
            return Ok(());
        };
        if axes.len() != n {
            return Err(bad_option(
                "axes",
                format!("{} axes for a {n}-dimensional chunk_shape", axes.len()),
            ));
        }
        let mut names: Vec<&str> = axes.iter().map(|a| a.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        if names.len() != n {
            return Err(bad_option("axes", "axis names must be unique"));
        }
        Ok(())
    }

    fn check_bin_shape(&self) -> Result<()> {
        let n = self.chunk_shape.len();
        let Some(b) = &self.bin_shape else {
            return Ok(());
        };
        if b.len() != n || b.iter().any(|&x| !(x > 0.0 && x.is_finite())) {
            return Err(bad_option(
                "bin_shape",
                format!("{b:?} must have {n} positive values"),
            ));
        }
        let mut product = 1u64;
        for (c, x) in self.chunk_shape.iter().zip(b) {
            let r = c / x;
            if (r - r.round()).abs() > 1e-9 || r.round() < 1.0 {
                return Err(bad_option(
                    "bin_shape",
                    format!("{b:?} does not divide chunk_shape {:?}", self.chunk_shape),
                ));
            }
            product = product
                .checked_mul(r.round().min(u64::MAX as f64) as u64)
                .filter(|&p| p <= MAX_BINS_PER_CHUNK)
                .ok_or_else(|| {
                    bad_option(
                        "bin_shape",
                        format!(
                            "{b:?} makes more than {MAX_BINS_PER_CHUNK} bins per chunk of {:?} (use larger bins)",
                            self.chunk_shape
                        ),
                    )
                })?;
        }
        Ok(())
    }

    fn check_bounds(&self) -> Result<()> {
        let n = self.chunk_shape.len();
        if let Some([lo, hi]) = &self.bounds {
            if lo.len() != n
                || hi.len() != n
                || lo
                    .iter()
                    .zip(hi)
                    .any(|(a, b)| !(a <= b && a.is_finite() && b.is_finite()))
            {
                return Err(bad_option(
                    "bounds",
                    format!("{lo:?}..{hi:?} must have {n} finite, ordered values per side"),
                ));
            }
        }
        Ok(())
    }
}

/// What [`ZvWriter::finish`](super::ZvWriter::finish) wrote.
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
