//! What an import or export is asked to do: [`ImportOptions`], [`ExportOptions`].

use zv_core::data_type::DataType;
use zv_format::progress::Reporter;
use zv_format::writer::{CodecChoice, FormatVersion, DEFAULT_MEMORY_BUDGET};

/// Options of an import.
#[derive(Debug, Clone)]
pub struct ImportOptions {
    /// The level-0 chunk shape; `None`: chosen from the first batch of vertices (see
    /// [`crate::sink::auto_chunk_shape`]).
    pub chunk_shape: Option<Vec<f64>>,
    /// The vertex data type; `None`: the format's (see each module).
    pub vertex_type: Option<DataType>,
    /// The codecs of the blobs.
    pub codecs: CodecChoice,
    /// The writer's memory budget (bytes of vertex records held before spilling).
    pub memory_budget: u64,
    /// Vertices (or records) given to the writer per batch.
    pub batch: usize,
    /// CSV: the position columns, in axis order (default `x, y, z`, or `x, y`).
    pub columns: Option<Vec<String>>,
    /// CSV: an edge list (`source,target` columns naming the nodes' `id`s, or their row
    /// indices when the nodes have no `id` column) that makes the store a graph.
    pub edges: Option<std::path::PathBuf>,
    /// The on-disk layout written (ZV 0.7 by default).
    pub format_version: FormatVersion,
    /// ZV 0.9: the shard shape of the chunk-grid arrays, in chunks per dimension
    /// (`zv_format::writer::WriterOptions::shard_shape`; unsharded by default).
    pub shard_shape: Option<Vec<u64>>,
    /// Where the import reports progress: the file's size in bytes, then the bytes read
    /// (nowhere by default).
    pub progress: Reporter,
    /// A part of a distributed write ([`zv_format::parts`]): `(part, parts)`. The import
    /// stages the write (or joins the one staged with the same options), keeps the points
    /// whose chunk the part owns and stores the part's receipt; `zv_format::parts::commit`
    /// makes the store once every part has run. Point clouds from PLY and CSV files, and
    /// streamlines from TRK and TCK files (without per-streamline values).
    pub part: Option<(u32, u32)>,
}

impl Default for ImportOptions {
    fn default() -> Self {
        Self {
            chunk_shape: None,
            vertex_type: None,
            codecs: CodecChoice::default(),
            memory_budget: DEFAULT_MEMORY_BUDGET,
            batch: 1 << 16,
            columns: None,
            edges: None,
            format_version: FormatVersion::default(),
            shard_shape: None,
            progress: Reporter::default(),
            part: None,
        }
    }
}

/// The encoding of an exported PLY file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PlyEncoding {
    /// Text.
    Ascii,
    /// Binary, little endian (the default).
    #[default]
    BinaryLittleEndian,
    /// Binary, big endian.
    BinaryBigEndian,
}

impl PlyEncoding {
    /// Parses `ascii`, `binary_little_endian` (or `binary`, `le`), `binary_big_endian` (or
    /// `be`).
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "ascii" => Some(Self::Ascii),
            "binary_little_endian" | "binary" | "le" => Some(Self::BinaryLittleEndian),
            "binary_big_endian" | "be" => Some(Self::BinaryBigEndian),
            _ => None,
        }
    }

    /// The `format` word of the PLY header.
    pub fn header_name(self) -> &'static str {
        match self {
            Self::Ascii => "ascii",
            Self::BinaryLittleEndian => "binary_little_endian",
            Self::BinaryBigEndian => "binary_big_endian",
        }
    }
}

/// Options of an export.
#[derive(Debug, Clone, Default)]
pub struct ExportOptions {
    /// PLY: the encoding.
    pub ply_encoding: PlyEncoding,
    /// Where the export reports progress: the chunks of level 0, then one per chunk read
    /// (nowhere by default).
    pub progress: Reporter,
}
