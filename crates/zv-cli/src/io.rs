//! `zv import FILE STORE` and `zv export STORE [FILE]` in every format of `zv-io`: the format
//! comes from `--format`, else the file's extension; zv-geometry/1 JSON (`.json`, or any
//! extension zv-io does not know) keeps its own path in `main.rs`.

use std::path::Path;
use std::sync::Arc;

use clap::Args;
use zv_io::{ExportOptions, Format, ImportOptions, PlyEncoding};

use crate::CliResult;

/// The options of `zv import` for the file formats of zv-io.
#[derive(Debug, Args)]
pub(crate) struct ImportArgs {
    /// The file's format: geometry-json, ply, csv, swc, stl, obj, trk, tck, las, laz (default: from the extension; JSON otherwise).
    #[arg(long)]
    pub(crate) format: Option<String>,
    /// The level-0 chunk shape, e.g. 64,64,64 (default: a power of two per quarter of the first batch's extent).
    #[arg(long, value_delimiter = ',')]
    pub(crate) chunk_shape: Option<Vec<f64>>,
    /// CSV: the position columns, in axis order (default x,y,z, or x,y).
    #[arg(long, value_delimiter = ',')]
    pub(crate) columns: Option<Vec<String>>,
    /// CSV: an edge list (columns source,target naming the nodes' `id`s, or their row indices; other numeric columns become edge attributes) that makes the store a graph.
    #[arg(long)]
    pub(crate) edges: Option<String>,
    /// The stored vertex type: float32 or float64 (default: the file's, float64 for text formats).
    #[arg(long)]
    pub(crate) vertex_dtype: Option<String>,
    /// Write part K of N of a distributed write (PLY or CSV points, TRK or TCK streamlines): keep the points, or the streamline pieces, in the chunks part K owns; `zv commit STORE` once all N parts have run.
    #[arg(long, value_name = "K/N")]
    pub(crate) part: Option<String>,
}

/// The options of `zv export` for the file formats of zv-io.
#[derive(Debug, Args)]
pub(crate) struct ExportArgs {
    /// The output file (or `-o FILE`; stdout without either).
    pub(crate) file: Option<String>,
    /// The output format: geometry-json, ply, csv, swc, stl, obj, trk, tck, las, laz (default: from the file's extension, else geometry-json).
    #[arg(long)]
    pub(crate) format: Option<String>,
    /// PLY: ascii, binary_little_endian (default) or binary_big_endian.
    #[arg(long, default_value = "binary_little_endian")]
    pub(crate) ply_encoding: String,
}

/// The format named by `--format`, else by the extension of `path`; `None`: zv-geometry/1 JSON.
fn format_of(name: Option<&str>, path: Option<&str>) -> CliResult<Option<Format>> {
    let f = match name {
        Some(n) => Some(Format::from_name(n).ok_or_else(|| {
            format!(
                "unknown format `{n}` (formats: {})",
                Format::available_names()
            )
        })?),
        None => path.and_then(|p| Format::from_path(Path::new(p))),
    };
    Ok(f.filter(|f| *f != Format::GeometryJson))
}

/// Whether `zv import` goes through zv-io (else the JSON path).
pub(crate) fn import_format(file: &str, args: &ImportArgs) -> CliResult<Option<Format>> {
    format_of(args.format.as_deref(), Some(file))
}

/// The writer options `zv import` shares with the JSON path.
pub(crate) struct WriteArgs<'a> {
    /// Vertices per batch.
    pub(crate) batch: usize,
    /// The writer's memory budget.
    pub(crate) memory_budget: u64,
    /// The codec choice.
    pub(crate) codecs: Option<&'a str>,
    /// The on-disk layout (`0.7` or `0.9`).
    pub(crate) format_version: &'a str,
    /// The shard shape of a 0.9 store's chunk-grid arrays.
    pub(crate) shard_shape: Option<Vec<u64>>,
}

/// Imports `file` in `format` into the empty `target` (named `store`); removes whatever was
/// written if the import fails.
pub(crate) fn import(
    file: &str,
    format: Format,
    (store, target): (&str, Arc<dyn zv_core::store::Store>),
    args: &ImportArgs,
    write: WriteArgs<'_>,
    progress: zv_format::progress::Reporter,
) -> CliResult<zv_format::writer::WriteSummary> {
    let WriteArgs {
        batch,
        memory_budget,
        codecs,
        format_version,
        shard_shape,
    } = write;
    let mut opts = ImportOptions {
        chunk_shape: args.chunk_shape.clone(),
        columns: args.columns.clone(),
        edges: args.edges.as_ref().map(std::path::PathBuf::from),
        memory_budget,
        batch: batch.clamp(1, 1 << 20),
        format_version: zv_format::writer::FormatVersion::parse(format_version)?,
        shard_shape,
        progress,
        ..Default::default()
    };
    if let Some(c) = codecs {
        opts.codecs = zv_format::writer::CodecChoice::parse(c)?;
    }
    if let Some(p) = &args.part {
        opts.part = Some(crate::parts::parse_part(p)?);
    }
    if let Some(dt) = &args.vertex_dtype {
        opts.vertex_type = Some(
            zv_core::data_type::DataType::from_name(dt)
                .filter(|d| d.is_float())
                .ok_or_else(|| {
                    format!("--vertex-dtype `{dt}` is not float16, float32 or float64")
                })?,
        );
    }
    let _ = store;
    match zv_io::import_file(Path::new(file), format, target.clone(), &opts) {
        Ok(summary) => Ok(summary),
        // a part leaves the shared store as it is: the other parts' chunks stay
        Err(e) if opts.part.is_some() => Err(e.into()),
        Err(e) => {
            // the store was empty: leave it so
            let _ = target.delete_prefix(&zv_core::key::StorePrefix::root());
            Err(e.into())
        }
    }
}

/// `zv export` through zv-io; `Ok(false)`: the format is zv-geometry/1 JSON (not handled here).
pub(crate) fn export(
    store: &str,
    output: Option<&str>,
    args: &ExportArgs,
    progress: zv_format::progress::Reporter,
) -> CliResult<bool> {
    use std::io::Write;
    let Some(format) = format_of(args.format.as_deref(), output)? else {
        return Ok(false);
    };
    let ply_encoding = PlyEncoding::parse(&args.ply_encoding).ok_or_else(|| {
        format!(
            "--ply-encoding `{}` (expected ascii, binary_little_endian, binary_big_endian)",
            args.ply_encoding
        )
    })?;
    let opts = ExportOptions {
        ply_encoding,
        progress,
    };
    let zv = zv_format::ZvStore::open_url(store)?;
    // a graph's CSV is its nodes; its edges go to a second file beside it
    let graph_csv = format == Format::Csv && zv.geometry() == zv_format::Geometry::Graph;
    match output {
        Some(path) => {
            write_atomically(path, |f| zv_io::export_file(&zv, format, f, path, &opts))?;
            if graph_csv {
                let edges = zv_io::csv::edges::edges_path(Path::new(path));
                let name = edges.display().to_string();
                write_atomically(&name, |mut f| {
                    zv_io::csv::edges::export_edges(&zv, &mut f, &name)
                })?;
            }
        }
        None if graph_csv => {
            return Err(
                "a graph exports to CSV as two files (nodes and edges): name the output file"
                    .into(),
            )
        }
        None => {
            let mut out = std::io::stdout().lock();
            zv_io::export(&zv, format, &mut out, "stdout", &opts)?;
            out.flush()?;
        }
    }
    Ok(true)
}

/// Writes `path` through `write` into `PATH.zv-partial`, synced and renamed into place; the
/// partial file is removed if anything fails.
pub(crate) fn write_atomically<E: Into<Box<dyn std::error::Error + Send + Sync>>>(
    path: &str,
    write: impl FnOnce(&std::fs::File) -> Result<(), E>,
) -> CliResult {
    let tmp = format!("{path}.zv-partial");
    let result = std::fs::File::create(&tmp)
        .map_err(|e| format!("{tmp}: {e}").into())
        .and_then(|f| -> CliResult {
            write(&f).map_err(Into::into)?;
            f.sync_all().map_err(|e| format!("{path}: {e}"))?;
            Ok(())
        })
        .and_then(|()| std::fs::rename(&tmp, path).map_err(|e| format!("{path}: {e}").into()));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
