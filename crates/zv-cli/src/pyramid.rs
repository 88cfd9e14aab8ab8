//! `zv pyramid STORE --levels "2,2;2,1" [--chunk-scale 1,2] [--sparsity S] [--seed N]
//! [--cross-level none|implicit|explicit] [--depth N] [--codecs C]`: coarser levels added to a
//! store holding level 0 (`zv_format::pyramid::build_pyramid`).
//!
//! A store in a local directory is never changed in place: the pyramid is built in a
//! hard-linked shadow copy (`zv_store_fs::Shadow`) that replaces the store in one atomic
//! exchange once complete, so a failure or a crash at any moment leaves the store as it was
//! or with the whole pyramid. Other stores (and directories where the shadow cannot be made,
//! e.g. a mount point) are written in place.
//!
//! A point cloud's step can also be built in parts on N machines, as `zv import --part`:
//! `zv pyramid STORE --levels L --step S --part K/N` on each (it stages the step, or joins the
//! one staged, and writes the coarse chunks part K owns), then `zv commit STORE` once
//! (`zv_format::pyramid::parts`); step after step. Parts write the ZV 0.7 layout only: on a
//! ZV 0.9 store (whose levels `zv pyramid` writes in 0.9) `--part` is refused.

use std::sync::Arc;

use clap::Args;
use zv_format::pyramid::{
    build_pyramid_with_progress, CrossLevel, PyramidOptions, SparsityStrategy, Step,
};
use zv_format::writer::CodecChoice;

use crate::CliResult;

/// The arguments of `zv pyramid`.
#[derive(Debug, Args)]
pub(crate) struct PyramidArgs {
    /// The store (a path, file:///path or memory://name), holding level 0 only.
    store: String,
    /// The steps, level 0 → 1 first: `coarsen[,sparsity]` separated by `;` (e.g. "2,2;2,1":
    /// bins twice as wide and half of the objects, then bins twice as wide again).
    #[arg(long)]
    levels: String,
    /// The chunk-scale factor of each step, comma-separated (missing steps take 1).
    #[arg(long, value_delimiter = ',')]
    chunk_scale: Vec<u32>,
    /// Which objects a sparse step keeps: random, length, attribute:NAME or coverage.
    #[arg(long, default_value = "random")]
    sparsity: String,
    /// The seed of the random sparsity strategy.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Cross-level link storage: none, implicit (+1 only) or explicit (+1 and -1).
    #[arg(long, default_value = "explicit")]
    cross_level: String,
    /// cross_level_depth: links ±1 … ±N between levels up to N steps apart (0: no links, -1: every pair of levels).
    #[arg(long, default_value_t = 1, allow_negative_numbers = true)]
    depth: i64,
    /// The codecs of the new levels: spec-default, none, zstd[:L], blosc-lz4, gzip[:L], +crc32c.
    #[arg(long, default_value = "spec-default")]
    codecs: String,
    /// Bytes of vertex records each coarse level's writer holds in memory before spilling
    /// them to temporary files (the levels are the same whatever the budget).
    #[arg(long, default_value_t = zv_format::pyramid::PYRAMID_MEMORY_BUDGET)]
    memory_budget: u64,
    /// Print the new levels as JSON on stdout.
    #[arg(long)]
    json: bool,
    /// Build step S (level S → S + 1) in parts: this machine writes part K of N (`K/N`);
    /// `zv commit STORE` commits the step once every part has run. Point clouds, ZV 0.7 stores.
    #[arg(long, value_name = "K/N", requires = "step")]
    part: Option<String>,
    /// The step a `--part` builds (0: level 0 → 1).
    #[arg(long, requires = "part")]
    step: Option<usize>,
}

/// Builds the pyramid and reports each new level (on stderr, or as JSON on stdout with
/// `--json`).
pub(crate) fn run(args: PyramidArgs) -> CliResult {
    let mut opts = PyramidOptions::new(Step::parse_list(&args.levels)?);
    opts.chunk_scale = args.chunk_scale;
    opts.strategy = SparsityStrategy::parse(&args.sparsity)?;
    opts.seed = args.seed;
    opts.cross_level = CrossLevel::parse(&args.cross_level)?;
    opts.depth = args.depth;
    opts.codecs = CodecChoice::parse(&args.codecs)?;
    opts.memory_budget = args.memory_budget;
    if let (Some(part), Some(step)) = (&args.part, args.step) {
        return build_part(&args.store, &opts, step, part, args.json);
    }
    let url = zv_core::plugin::StoreUrl::parse(&args.store)?;
    let dir = std::path::Path::new(&url.location);
    let bar = crate::progress::Bar::new("pyramid");
    let build = |store| build_pyramid_with_progress(store, &opts, bar.as_ref());
    let summary = if url.scheme == "file" && dir.is_dir() {
        match zv_store_fs::Shadow::create(dir) {
            Ok(shadow) => {
                let store = Arc::new(zv_store_fs::FilesystemStore::new(shadow.path())?);
                let summary = build(store)?;
                shadow.publish()?;
                summary
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Err(e.into()),
            Err(e) => {
                // a warning, printed even with --quiet
                eprintln!("zv: warning: writing the pyramid in place (no shadow copy: {e})");
                build(zv_core::plugin::open_store(&args.store)?)?
            }
        }
    } else {
        build(zv_core::plugin::open_store(&args.store)?)?
    };
    bar.finish();
    if args.json {
        let levels: Vec<serde_json::Value> = summary
            .levels
            .iter()
            .map(|l| {
                serde_json::json!({"level": l.level, "vertices": l.vertices, "chunks": l.chunks,
                    "objects_kept": l.objects_kept, "cross_level_links": l.cross_level_links})
            })
            .collect();
        return crate::print_json(&serde_json::json!({"store": args.store, "levels": levels}));
    }
    for l in &summary.levels {
        crate::progress::note(format_args!(
            "level {}: {} vertices in {} chunks, {} objects kept, {} cross-level links",
            l.level, l.vertices, l.chunks, l.objects_kept, l.cross_level_links
        ));
    }
    Ok(())
}

/// `zv pyramid STORE --step S --part K/N`: stages step `step` (or joins the staged one) and
/// writes part K; reports the metavertices written.
fn build_part(
    store: &str,
    opts: &PyramidOptions,
    step: usize,
    part: &str,
    json: bool,
) -> CliResult {
    let (k, n) = crate::parts::parse_part(part)?;
    let target = zv_core::plugin::open_store(store)?;
    zv_format::pyramid::parts::prepare_level(target.clone(), opts, step, n)?;
    let written = zv_format::pyramid::parts::write_level_part(target, k)?;
    if json {
        return crate::print_json(&serde_json::json!({
            "store": store, "step": step, "part": k, "parts": n, "vertices": written,
        }));
    }
    crate::progress::note(format_args!(
        "step {step}, part {k} of {n}: {written} metavertices (run `zv commit {store}` once every part has run)"
    ));
    Ok(())
}
