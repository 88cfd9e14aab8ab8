//! `zv convert legacy SRC DST`, and legacy arrays (zarr 0.4, bcolz 1.x) in `zv zarr info/get`
//! (Cargo feature `legacy`).

use std::io::{BufWriter, Write};
use std::path::Path;

use clap::Subcommand;
use serde_json::Value;
use zv_core::grid::Region;
use zv_core::metadata::to_pretty;
use zv_core::node::NodePath;
use zv_legacy::convert::{self, ChunkAction};
use zv_legacy::dtype::ElementType;
use zv_legacy::{Legacy, LegacyArray};

use crate::CliResult;

#[derive(Debug, Subcommand)]
pub(crate) enum ConvertCommand {
    /// Convert a zarr 0.4 array or a bcolz carray to a Zarr v3 array, a bcolz ctable to a
    /// group with one array per column. Blosc frames pass through without recompression
    /// where the chunk geometry allows.
    #[command(
        after_help = "Examples:\n  zv convert legacy old.zarr new.zarr\n  zv convert legacy bcolz:table.bcolz table.zarr --overwrite --json"
    )]
    Legacy {
        /// The legacy directory (`legacy-zarr:` / `bcolz:` prefixes accepted; the format is
        /// otherwise detected by its file names).
        src: String,
        /// The new Zarr v3 store: a path, file:///path or memory://name (must be empty).
        dst: String,
        /// Print the counts as JSON on stdout.
        #[arg(long)]
        json: bool,
        /// Replace whatever the target holds (a store, or what an interrupted conversion left).
        #[arg(long)]
        overwrite: bool,
    },
}

pub(crate) fn run(command: ConvertCommand) -> CliResult {
    match command {
        ConvertCommand::Legacy {
            src,
            dst,
            json,
            overwrite,
        } => convert_legacy(&src, &dst, json, overwrite),
    }
}

/// A legacy array named by a store argument: a `legacy-zarr:` / `bcolz:` prefix, or a plain
/// path to a directory whose file names say it is one. `None` for anything else.
pub(crate) fn open_arg(arg: &str) -> CliResult<Option<Legacy>> {
    if let Some((format, path)) = zv_legacy::strip_prefix(arg) {
        return Ok(Some(zv_legacy::open_as(Path::new(path), format)?));
    }
    if arg.contains("://") {
        return Ok(None);
    }
    if zv_legacy::detect(Path::new(arg)).is_none() {
        return Ok(None);
    }
    Ok(Some(zv_legacy::open(Path::new(arg))?))
}

fn open_src(src: &str) -> CliResult<Legacy> {
    match open_arg(src)? {
        Some(l) => Ok(l),
        None => Ok(zv_legacy::open(Path::new(src))?),
    }
}

/// Converts `src` into the empty (or, with `overwrite`, any) store `dst`. A local directory
/// is written through an empty shadow (`zv_store_fs::Shadow::empty`) that replaces it in one
/// atomic exchange once complete: a failure or a crash at any moment leaves `dst` as it was.
/// Other stores are written in place (emptied first with `overwrite`), and emptied again if
/// the conversion fails.
fn convert_legacy(src: &str, dst: &str, json: bool, overwrite: bool) -> CliResult {
    let legacy = open_src(src)?;
    let target = zv_core::plugin::open_store(dst)?;
    let non_empty = !target
        .list_prefix(&zv_core::key::StorePrefix::root())?
        .is_empty();
    if non_empty && !overwrite {
        return Err(format!("{dst} is not empty (use --overwrite to replace it)").into());
    }
    let url = zv_core::plugin::StoreUrl::parse(dst)?;
    if url.scheme != "file" {
        if non_empty {
            crate::clear_store(target.as_ref())?;
        }
        return convert_into(&legacy, target.as_ref(), dst, json).inspect_err(|_| {
            let _ = target.delete_prefix(&zv_core::key::StorePrefix::root());
        });
    }
    let dir = Path::new(&url.location);
    std::fs::create_dir_all(dir).map_err(|e| format!("{dst}: {e}"))?;
    let shadow = zv_store_fs::Shadow::empty(dir)?;
    let staging = zv_store_fs::FilesystemStore::new(shadow.path())?;
    convert_into(&legacy, &staging, dst, json)?;
    shadow.publish()?;
    Ok(())
}

/// Converts `legacy` into `target` (named `dst` in messages), with a progress bar, and
/// reports the counts (on stderr, or as JSON on stdout with `json`).
fn convert_into(
    legacy: &Legacy,
    target: &dyn zv_core::store::Store,
    dst: &str,
    json: bool,
) -> CliResult {
    use zv_format::progress::Progress;
    let bar = crate::progress::Bar::new("convert");
    bar.set_total(convert::total_chunks(legacy), "chunks");
    let mut written = 0u64;
    let report = convert::convert(legacy, target, &mut |event| {
        written += event.bytes;
        if event.action == ChunkAction::Reencoded {
            bar.set_message(format!("{} (re-encoding)", event.array));
        } else {
            bar.set_message(event.array.to_string());
        }
        bar.advance(1);
    });
    bar.finish();
    let report = report?;
    let missing: u64 = report.arrays.iter().map(|a| a.missing).sum();
    if json {
        return crate::print_json(&serde_json::json!({
            "store": dst,
            "arrays": report.arrays.len(),
            "chunks_passed_through": report.passed_through(),
            "chunks_reencoded": report.reencoded(),
            "chunks_not_stored": missing,
            "bytes_written": written,
        }));
    }
    crate::progress::note(format_args!(
        "converted {} array(s) to {dst}: {} chunks passed through, {} re-encoded, {} not stored (fill value), {written} bytes",
        report.arrays.len(),
        report.passed_through(),
        report.reencoded(),
        missing
    ));
    Ok(())
}

/// The array at `node`: the root of a carray or zarr 0.4 array, a column of a ctable.
fn array_at<'a>(legacy: &'a Legacy, node: &str) -> CliResult<&'a LegacyArray> {
    let path = NodePath::new(node)?;
    match legacy {
        Legacy::Array(a) if path.is_root() => Ok(a),
        Legacy::Table(t) => path
            .name()
            .filter(|_| path.parent().is_some_and(|p| p.is_root()))
            .and_then(|n| t.column(n.as_str()))
            .ok_or_else(|| format!("the ctable has no column `{node}`").into()),
        Legacy::Array(_) => Err(format!("no node `{node}` (a legacy array has only `/`)").into()),
    }
}

/// `zv zarr info` of a legacy array: the `zarr.json` its conversion writes.
pub(crate) fn info(legacy: &Legacy, node: &str, with_children: bool) -> CliResult {
    let path = NodePath::new(node)?;
    let (metadata, children) = match legacy {
        Legacy::Table(t) if path.is_root() => (
            convert::v3_group_metadata(t.attributes()),
            t.columns()
                .map(|(n, _)| serde_json::json!({"name": n, "node_type": "array"}))
                .collect(),
        ),
        _ => (convert::v3_metadata(array_at(legacy, node)?)?, Vec::new()),
    };
    let doc = if with_children {
        serde_json::json!({"metadata": metadata, "children": children})
    } else {
        metadata
    };
    std::io::stdout().write_all(&to_pretty(&doc))?;
    Ok(())
}

/// `zv zarr get` of a legacy array.
pub(crate) fn get(legacy: &Legacy, node: &str, region: Option<&str>, raw: bool) -> CliResult {
    let array = array_at(legacy, node)?;
    let region = match region {
        Some(r) => Region::parse(r, array.shape())?,
        None => Region::whole(array.shape()),
    };
    let data = array.read_region(&region)?;
    let dtype = array.dtype();
    let item = dtype.size();
    let mut out = BufWriter::new(std::io::stdout().lock());
    if raw {
        match dtype.element {
            ElementType::Zarr(dt) => out.write_all(&crate::zarr::to_little_endian(&data, dt))?,
            ElementType::FixedBytes(_) => out.write_all(&data)?,
        }
    } else {
        let element = |i: usize| -> Value {
            dtype.element_json(data.get(i * item..(i + 1) * item).unwrap_or(&[]))
        };
        crate::zarr::write_json(&mut out, region.shape(), &element)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(())
}
