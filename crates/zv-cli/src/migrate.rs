//! `zv migrate STORE OUT --to 0.9|0.7 [--codecs C] [--shard-shape S,S,S] [--memory-budget N] [--json]`: a store
//! rewritten in the other on-disk layout (`zv_format::migrate`).
//!
//! OUT must be empty. Nothing is written before the source has been checked for what the
//! target layout cannot hold; a migration that fails later deletes what it wrote (and the
//! writer writes the root `zarr.json` last, so no moment leaves a store at OUT that opens).

use clap::Args;
use zv_format::migrate::{migrate, MigrateOptions};
use zv_format::writer::{CodecChoice, FormatVersion};

use crate::CliResult;

/// The arguments of `zv migrate`.
#[derive(Debug, Args)]
pub(crate) struct MigrateArgs {
    /// The store to read (a path, file:///path or memory://name), ZV 0.7 or 0.9.
    store: String,
    /// The new store (must be empty).
    out: String,
    /// The layout to write: 0.9 (as zarr-vectors 0.9.2 reads it) or 0.7.
    #[arg(long, value_parser = ["0.7", "0.9"])]
    to: String,
    /// The codecs of the new store: spec-default, none, zstd[:L], blosc-lz4, gzip[:L], +crc32c.
    #[arg(long, default_value = "spec-default")]
    codecs: String,
    /// Bytes of vertex records the writer holds in memory before spilling to temporary files.
    #[arg(long, default_value_t = zv_format::writer::DEFAULT_MEMORY_BUDGET)]
    memory_budget: u64,
    /// With --to 0.9: pack the cells of every chunk-grid array in shards of this many chunks
    /// per dimension (e.g. 8,8,8), as zarr-vectors' `shard_shape=`.
    #[arg(long, value_delimiter = ',')]
    shard_shape: Option<Vec<u64>>,
    /// Print the summary as JSON on stdout.
    #[arg(long)]
    json: bool,
}

/// Migrates and reports (a line on stderr, or JSON on stdout with `--json`).
pub(crate) fn run(args: MigrateArgs) -> CliResult {
    let mut options = MigrateOptions::new(FormatVersion::parse(&args.to)?);
    options.codecs = CodecChoice::parse(&args.codecs)?;
    options.memory_budget = args.memory_budget;
    options.shard_shape = args.shard_shape;
    let source = zv_format::ZvStore::open_url(&args.store)?;
    zv_format::migrate::check_migratable(&source, options.to)?;
    let target = zv_core::plugin::open_store(&args.out)?;
    let root = zv_core::key::StorePrefix::root();
    if !target.list_prefix(&root)?.is_empty() {
        return Err(format!("{} is not empty (migrate into an empty store)", args.out).into());
    }
    let bar = crate::progress::Bar::new("migrate");
    let summary = match migrate(&source, target.clone(), &options, bar.as_ref()) {
        Ok(s) => s,
        Err(e) => {
            // the root document was not written; remove the rest
            let _ = target.delete_prefix(&root);
            return Err(e.into());
        }
    };
    bar.finish();
    let w = &summary.written;
    if args.json {
        return crate::print_json(&serde_json::json!({
            "store": args.store,
            "out": args.out,
            "from": summary.from,
            "to": summary.to,
            "geometry": summary.geometry.name(),
            "levels": summary.levels,
            "vertices": w.vertices,
            "chunks": w.chunks,
            "objects": w.objects,
            "intra_chunk_links": w.intra_links,
            "cross_chunk_links": w.cross_chunk_links,
            "groups": w.groups,
        }));
    }
    crate::progress::note(format_args!(
        "migrated ZV {} to {}: {} vertices in {} chunks, {} objects, {} intra-chunk and {} cross-chunk links, {} groups to {}",
        summary.from, summary.to, w.vertices, w.chunks, w.objects, w.intra_links,
        w.cross_chunk_links, w.groups, args.out
    ));
    Ok(())
}
