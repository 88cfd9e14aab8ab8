//! # zv-io — file formats in and out of ZV stores
//!
//! Converters between the files people hold vector data in and ZV stores, one module per
//! format, each behind a Cargo feature:
//!
//! | module | feature | import | export |
//! |---|---|---|---|
//! | [`ply`] | `ply` | point clouds and meshes (ascii, binary LE/BE) | the same |
//! | [`csv`] | `csv` | point clouds, one row per point; graphs with an edge list | the same (edges: `NAME.edges.csv`) |
//! | [`swc`] | `swc` | skeletons (neuron morphologies) | the same |
//! | [`obj`] | `obj` | meshes (`f`), polylines (`l`), point clouds | the same |
//! | [`stl`] | `stl` | triangle meshes (ascii, binary), shared vertices merged | binary |
//! | [`trk`] | `trk` | TrackVis streamlines, per-point scalars, per-streamline properties | the same |
//! | [`tck`] | `tck` | MRtrix streamlines (positions only) | the same |
//! | [`las`] | `las` | LAS/LAZ lidar point clouds, standard dimensions, header kept | LAS or LAZ |
//!
//! Every import streams: the file is read in batches handed to the streaming writer
//! ([`zv_format::writer::ZvWriter`]), which holds at most its memory budget of vertex records
//! (SWC files, small by nature, are read whole to check the parent tree first). Nothing is
//! written to the store before the whole file has been read and checked, so a malformed file
//! leaves the store as it was; every error names the file and the line or byte offset.
//! Exports stream out of the reader in bounded memory: point clouds, meshes, graphs and
//! skeletons chunk by chunk ([`zv_format::export::points`], [`zv_format::export::links`];
//! vertices get level-global numbers from a survey of the chunks, links between chunks are
//! numbered through them), polylines and streamlines a batch of objects at a time
//! ([`zv_format::export::polylines`]), LAS and LAZ chunk by chunk into a seekable output
//! ([`export_file`]; the `las` writer seeks back to its header when it closes; [`export`]
//! to a plain writer assembles a LAS or LAZ file in memory first).
//!
//! Crates used: `csv` (BurntSushi's, for CSV quoting and records); `las` (with `laz`, the
//! pure-Rust LAZ codec) for LAS and LAZ records and headers. PLY, SWC, OBJ, STL, TRK
//! and TCK are read and written here: see each module for why (for TRK and TCK, no
//! maintained Rust crate exists).
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("points.ply");
//! std::fs::write(&path, "ply\nformat ascii 1.0\nelement vertex 2\nproperty float x\n\
//!     property float y\nproperty float z\nproperty uchar red\nend_header\n1 2 3 255\n4 5 6 0\n")?;
//! let store = Arc::new(zv_store_mem::MemoryStore::new());
//! let summary = zv_io::import_file(&path, zv_io::Format::Ply, store.clone(), &Default::default())?;
//! assert_eq!(summary.vertices, 2);
//! let zv = zv_format::ZvStore::open(store)?;
//! let mut out = Vec::new();
//! zv_io::export(&zv, zv_io::Format::Csv, &mut out, "points.csv", &Default::default())?;
//! assert_eq!(String::from_utf8(out)?, "x,y,z,red\n1,2,3,255\n4,5,6,0\n");
//! # Ok(()) }
//! ```

pub mod error;
mod level;
pub mod options;
#[cfg(all(
    test,
    feature = "csv",
    feature = "obj",
    feature = "stl",
    feature = "swc",
    feature = "trk",
    feature = "tck"
))]
mod oracle;
#[cfg(any(
    feature = "csv",
    feature = "ply",
    feature = "obj",
    feature = "stl",
    feature = "swc"
))]
mod points;
#[cfg(any(feature = "swc", feature = "trk", feature = "tck", feature = "las"))]
mod root_attrs;
pub mod sink;
mod source;
#[cfg(any(feature = "trk", feature = "tck"))]
mod streamlines;

#[cfg(feature = "csv")]
pub mod csv;
#[cfg(feature = "las")]
pub mod las;
#[cfg(feature = "obj")]
pub mod obj;
#[cfg(feature = "ply")]
pub mod ply;
#[cfg(feature = "stl")]
pub mod stl;
#[cfg(feature = "swc")]
pub mod swc;
#[cfg(feature = "tck")]
pub mod tck;
#[cfg(feature = "trk")]
pub mod trk;

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use zv_core::store::Store;
use zv_format::writer::WriteSummary;
use zv_format::ZvStore;

pub use error::{Error, Location, Result};
pub use options::{ExportOptions, ImportOptions, PlyEncoding};

/// A file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// zv's own "zv-geometry/1" JSON (handled by `zv_format::import` and `zv_format::export`).
    GeometryJson,
    /// PLY.
    Ply,
    /// CSV.
    Csv,
    /// SWC.
    Swc,
    /// STL.
    Stl,
    /// Wavefront OBJ.
    Obj,
    /// TrackVis TRK.
    Trk,
    /// MRtrix TCK.
    Tck,
    /// ASPRS LAS (imports LAZ too: the header says which).
    Las,
    /// LAZ (compressed LAS).
    Laz,
}

impl Format {
    /// Every format, in the order of the docs.
    pub const ALL: [Format; 10] = [
        Format::GeometryJson,
        Format::Ply,
        Format::Csv,
        Format::Swc,
        Format::Stl,
        Format::Obj,
        Format::Trk,
        Format::Tck,
        Format::Las,
        Format::Laz,
    ];

    /// The name used by `--format`.
    pub fn name(self) -> &'static str {
        match self {
            Format::GeometryJson => "geometry-json",
            Format::Ply => "ply",
            Format::Csv => "csv",
            Format::Swc => "swc",
            Format::Stl => "stl",
            Format::Obj => "obj",
            Format::Trk => "trk",
            Format::Tck => "tck",
            Format::Las => "las",
            Format::Laz => "laz",
        }
    }

    /// Parses a `--format` name (`json` is also `geometry-json`).
    pub fn from_name(name: &str) -> Option<Format> {
        match name.to_ascii_lowercase().as_str() {
            "geometry-json" | "json" => Some(Format::GeometryJson),
            "ply" => Some(Format::Ply),
            "csv" => Some(Format::Csv),
            "swc" => Some(Format::Swc),
            "stl" => Some(Format::Stl),
            "obj" => Some(Format::Obj),
            "trk" => Some(Format::Trk),
            "tck" => Some(Format::Tck),
            "las" => Some(Format::Las),
            "laz" => Some(Format::Laz),
            _ => None,
        }
    }

    /// The format of a file by its extension (case-insensitive).
    pub fn from_path(path: &Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Format::from_name(&ext)
    }

    /// Whether this build has the format's converter.
    pub fn available(self) -> bool {
        match self {
            Format::GeometryJson => true,
            Format::Ply => cfg!(feature = "ply"),
            Format::Csv => cfg!(feature = "csv"),
            Format::Swc => cfg!(feature = "swc"),
            Format::Stl => cfg!(feature = "stl"),
            Format::Obj => cfg!(feature = "obj"),
            Format::Trk => cfg!(feature = "trk"),
            Format::Tck => cfg!(feature = "tck"),
            Format::Las | Format::Laz => cfg!(feature = "las"),
        }
    }

    /// The names of the formats this build has, for messages.
    pub fn available_names() -> String {
        Format::ALL
            .iter()
            .filter(|f| f.available())
            .map(|f| f.name())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The error of a format this build does not have (or that has no converter here).
fn not_built(file: &str, format: Format) -> Error {
    Error::Unsupported {
        file: file.to_owned(),
        reason: format!(
            "format {} is not handled here (formats: {})",
            format.name(),
            Format::available_names()
        ),
    }
}

/// Imports the file at `path`, in `format`, into `store` (which must be empty).
pub fn import_file(
    path: &Path,
    format: Format,
    store: Arc<dyn Store>,
    opts: &ImportOptions,
) -> Result<WriteSummary> {
    use zv_format::progress::{Bounded, Progress, Reporter};
    // the file's bytes, advanced as they are read; whatever a format does not read (or
    // reads twice) is made up when the import ends
    let size = std::fs::metadata(path).map_or(0, |m| m.len());
    opts.progress.set_total(size, "bytes");
    let share = Reporter::new(Arc::new(Bounded::new(opts.progress.clone(), size)));
    let opts = &ImportOptions {
        progress: share,
        ..opts.clone()
    };
    let _ = (&store, opts);
    if opts.edges.is_some() && format != Format::Csv {
        return Err(Error::Unsupported {
            file: path.display().to_string(),
            reason: "an edge list goes with a CSV file of nodes".into(),
        });
    }
    if opts.part.is_some()
        && !matches!(
            format,
            Format::Ply | Format::Csv | Format::Trk | Format::Tck
        )
    {
        return Err(Error::Unsupported {
            file: path.display().to_string(),
            reason: "a distributed import (a part) takes point clouds from PLY or CSV files and streamlines from TRK or TCK files".into(),
        });
    }
    match format {
        #[cfg(feature = "ply")]
        Format::Ply => ply::import(path, store, opts),
        #[cfg(feature = "csv")]
        Format::Csv => csv::import(path, store, opts),
        #[cfg(feature = "swc")]
        Format::Swc => swc::import(path, store, opts),
        #[cfg(feature = "stl")]
        Format::Stl => stl::import(path, store, opts),
        #[cfg(feature = "obj")]
        Format::Obj => obj::import(path, store, opts),
        #[cfg(feature = "trk")]
        Format::Trk => trk::import(path, store, opts),
        #[cfg(feature = "tck")]
        Format::Tck => tck::import(path, store, opts),
        #[cfg(feature = "las")]
        Format::Las | Format::Laz => las::import(path, store, opts),
        #[allow(unreachable_patterns)]
        other => Err(not_built(&path.display().to_string(), other)),
    }
}

/// Writes level 0 of `store` in `format` to `out` (`file` names it in errors). LAS and LAZ
/// need a seekable output to stream: here they are assembled in memory first, so prefer
/// [`export_file`] for them.
pub fn export(
    store: &ZvStore,
    format: Format,
    out: &mut dyn Write,
    file: &str,
    opts: &ExportOptions,
) -> Result<()> {
    let opts = &bounded_progress(store, opts);
    let _ = (&store, &out, opts);
    match format {
        #[cfg(feature = "ply")]
        Format::Ply => ply::export(store, out, file, opts),
        #[cfg(feature = "csv")]
        Format::Csv => csv::export(store, out, file, opts),
        #[cfg(feature = "swc")]
        Format::Swc => swc::export(store, out, file, &opts.progress),
        #[cfg(feature = "stl")]
        Format::Stl => stl::export(store, out, file, &opts.progress),
        #[cfg(feature = "obj")]
        Format::Obj => obj::export(store, out, file, &opts.progress),
        #[cfg(feature = "trk")]
        Format::Trk => trk::export(store, out, file, &opts.progress),
        #[cfg(feature = "tck")]
        Format::Tck => tck::export(store, out, file, &opts.progress),
        #[cfg(feature = "las")]
        Format::Las | Format::Laz => {
            las::export(store, out, file, format == Format::Laz, &opts.progress)
        }
        #[allow(unreachable_patterns)]
        other => Err(not_built(file, other)),
    }
}

/// Writes level 0 of `store` in `format` into the file `out` (from its current position;
/// `file` names it in errors). Every format streams in bounded memory, LAS and LAZ too (their
/// writer seeks back to the header when it closes).
pub fn export_file(
    store: &ZvStore,
    format: Format,
    out: &std::fs::File,
    file: &str,
    opts: &ExportOptions,
) -> Result<()> {
    #[cfg(feature = "las")]
    if matches!(format, Format::Las | Format::Laz) {
        let name = error::FileName(file.to_owned());
        let opts = bounded_progress(store, opts);
        let own = out.try_clone().map_err(|e| name.io(e))?;
        let compressed = format == Format::Laz;
        let written = las::export_seekable(
            store,
            std::io::BufWriter::new(own),
            file,
            compressed,
            &opts.progress,
        )?;
        written.into_inner().map_err(|e| name.io(e.into_error()))?;
        return Ok(());
    }
    export(store, format, &mut &*out, file, opts)
}

/// `opts` with its progress advanced once per chunk of level 0 (once per object of
/// polylines) and capped there: an exporter that reads a level twice advances its first pass
/// only.
fn bounded_progress(store: &ZvStore, opts: &ExportOptions) -> ExportOptions {
    use zv_format::progress::{Bounded, Progress, Reporter};
    let (units, unit) = if store.geometry().is_sequential() {
        let objects = store
            .level(0)
            .and_then(|l| l.num_objects())
            .map_or(0, |n| n.unwrap_or(0));
        (objects, "objects")
    } else {
        let chunks = store.level(0).and_then(|l| l.chunk_keys());
        (chunks.map_or(0, |k| k.len() as u64), "chunks")
    };
    opts.progress.set_total(units, unit);
    let share = Reporter::new(Arc::new(Bounded::new(opts.progress.clone(), units)));
    ExportOptions {
        progress: share,
        ..opts.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_by_name_and_extension() {
        for f in Format::ALL {
            assert_eq!(Format::from_name(f.name()), Some(f));
        }
        assert_eq!(Format::from_path(Path::new("a/b.PLY")), Some(Format::Ply));
        assert_eq!(Format::from_path(Path::new("n.swc")), Some(Format::Swc));
        assert_eq!(
            Format::from_path(Path::new("d.json")),
            Some(Format::GeometryJson)
        );
        assert_eq!(Format::from_path(Path::new("t.TRK")), Some(Format::Trk));
        assert_eq!(Format::from_path(Path::new("t.tck")), Some(Format::Tck));
        assert_eq!(Format::from_path(Path::new("noext")), None);
        assert_eq!(Format::from_path(Path::new("x.las")), Some(Format::Las));
        assert_eq!(Format::from_path(Path::new("x.LAZ")), Some(Format::Laz));
        assert_eq!(Format::from_path(Path::new("x.xyz")), None);
    }
}
