//! The `zv` command.
//!
//! ```text
//! zv demo [DIR]                                   write and read back a demo store
//! zv dump STORE [--compact]                     a ZV store's content as JSON (zv-dump/1)
//! zv import FILE STORE [--format F] [--batch N] [--codecs C]   write a store from a file (.json, .ply, .csv, .swc, .stl, .obj, .trk, .tck, .las, .laz)
//! zv export STORE [FILE] [--format F] [-o FILE]  level 0 as zv-geometry/1 JSON, PLY, CSV, SWC, STL, OBJ, TRK, TCK, LAS or LAZ
//! zv validate STORE [--level 1..5] [--json]    check a ZV store (exit 0 valid, 1 invalid, 2 could not run)
//! zv info STORE [--json]                        a ZV store's summary: geometry, levels, arrays, sizes
//! zv pyramid STORE --levels "2,2;2,1" [...]     add coarser levels 1..N to a store
//! zv migrate STORE OUT --to 0.9|0.7 [--json]      a store rewritten in the other layout (ZV 0.7 <-> 0.9)
//! zv zarr info STORE [NODE] [--children]          metadata of a Zarr v3 node, as JSON
//! zv zarr get STORE ARRAY [--region R] [--raw]    values of an array region (JSON or raw LE bytes)
//! zv convert legacy SRC DST [--json]              a zarr 0.4 / bcolz 1.x array (or ctable) to Zarr v3
//! zv ls STORE [PATH] [--json]                   the children of a group
//! zv completions bash|zsh|fish                    a shell completion script
//! ```
//!
//! Errors go to stderr with exit status 1 (2 for usage errors); the command never panics on
//! bad input. Writing into a closed pipe (`zv dump STORE | head`) ends it quietly, status 0.
//! Long commands draw a progress bar on stderr when it is a terminal (`progress.rs`); the
//! global `--quiet` silences bars and informational lines. See `docs/cli.md`.

mod bench;
mod demo;
mod info;
mod io;
#[cfg(feature = "legacy")]
mod legacy;
mod ls;
mod migrate;
mod parts;
mod progress;
mod pyramid;
mod render;
mod storage;
mod validate;
mod zarr;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// zv: Zarr Vectors (ZV 0.7) and Zarr v3 stores from the command line.
#[derive(Debug, Parser)]
#[command(
    name = "zv",
    version,
    about,
    after_help = "Examples:\n  zv import scan.ply scan.zarr\n  zv info scan.zarr\n  zv validate scan.zarr --json\n\nExit status: 0 success (a valid store for validate), 1 failure (an invalid store for validate), 2 usage error (validate: could not run)."
)]
struct Cli {
    /// Print no progress bars and no informational lines (errors are still printed).
    #[arg(long, short, global = true)]
    quiet: bool,
    /// An option of object stores (s3://, gs://, az://, http(s)://), KEY=VALUE, repeatable:
    /// aws_endpoint=http://127.0.0.1:9000, region=eu-west-1, allow_http=true, … (over the
    /// AWS_*, GOOGLE_*, AZURE_* environment variables).
    #[arg(long = "storage-option", global = true, value_name = "KEY=VALUE")]
    storage_options: Vec<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Write a demo ZV store (helical streamlines) into DIR (default ./zv-demo), read it back and check it.
    #[command(after_help = "Examples:\n  zv demo\n  zv demo /tmp/helix.zarr --json")]
    Demo {
        /// Where to write the demo store.
        #[arg(default_value = "zv-demo")]
        dir: String,
        /// Print what was written and read back as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print a ZV store's content as JSON ("zv-dump/1", see the fixtures README).
    #[command(
        after_help = "Examples:\n  zv dump scan.zarr | head\n  zv dump scan.zarr --compact > scan.dump.json"
    )]
    Dump {
        /// The store: a path, file:///path or memory://name.
        store: String,
        /// Write compact JSON instead of indented JSON.
        #[arg(long)]
        compact: bool,
    },
    /// Write a store from a file: zv-geometry/1 JSON, PLY, CSV, SWC, STL, OBJ, TRK, TCK, LAS or LAZ (by extension or --format).
    #[command(
        after_help = "Examples:\n  zv import scan.ply scan.zv\n  zv import cells.csv cells.zv --columns px,py,pz --chunk-shape 100,100,100\n  zv import neuron.swc neuron.zv\n  zv import tile.laz tile.zv\n  zv import doc.json store.zv"
    )]
    Import {
        /// The file.
        file: String,
        /// The new store: a path, file:///path or memory://name.
        store: String,
        /// Rows (or polylines) per batch given to the streaming writer.
        #[arg(long, default_value_t = 1_000_000)]
        batch: usize,
        /// Override the document's codecs: spec-default, none, zstd[:L], blosc-lz4, gzip[:L], +crc32c.
        #[arg(long)]
        codecs: Option<String>,
        /// Bytes of vertex records the writer holds in memory before spilling to temporary files.
        #[arg(long, default_value_t = zv_format::writer::DEFAULT_MEMORY_BUDGET)]
        memory_budget: u64,
        /// Replace an existing store at the target.
        #[arg(long)]
        overwrite: bool,
        /// The on-disk layout: 0.9 (the default, as zarr-vectors 0.9.2 reads it), or 0.7 (as the
        /// 0.7.0 reference reads it).
        #[arg(long, default_value = "0.9")]
        format_version: String,
        /// With --format-version 0.9: pack the cells of every chunk-grid array in shards of
        /// this many chunks per dimension (e.g. 8,8,8), as zarr-vectors' `shard_shape=`.
        #[arg(long, value_delimiter = ',')]
        shard_shape: Option<Vec<u64>>,
        /// Print the summary as JSON on stdout.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        io: io::ImportArgs,
    },
    /// Commit a distributed write once every part has run (`zv import --part K/N` or `zv pyramid --step S --part K/N` on N machines, then this once).
    #[command(
        after_help = "Examples:\n  zv import points.csv s3://bucket/cells.zv --chunk-shape 100,100,100 --part 0/2   # machine A\n  zv import points.csv s3://bucket/cells.zv --chunk-shape 100,100,100 --part 1/2   # machine B\n  zv commit s3://bucket/cells.zv"
    )]
    Commit {
        /// The store the parts wrote into.
        store: String,
        /// Print the summary as JSON on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Export level 0 of a store: zv-geometry/1 JSON, PLY, CSV, SWC, STL, OBJ, TRK, TCK, LAS or LAZ (by extension or --format).
    #[command(
        after_help = "Examples:\n  zv export scan.zv scan.ply --ply-encoding ascii\n  zv export cells.zv cells.csv\n  zv export tile.zv tile.las\n  zv export store.zv > doc.json"
    )]
    Export {
        /// The store: a path, file:///path or memory://name.
        store: String,
        /// Write to this file instead of stdout.
        #[arg(long, short)]
        output: Option<String>,
        #[command(flatten)]
        io: io::ExportArgs,
    },
    /// Check a ZV store at a conformance level (exit 0 valid, 1 invalid, 2 could not run).
    #[command(
        after_help = "Examples:\n  zv validate scan.zarr\n  zv validate scan.zarr --level 3 --json\n\nExit status: 0 valid, 1 invalid, 2 could not run (no store there, or not a ZV 0.7 store)."
    )]
    Validate {
        /// The store: a path, file:///path or memory://name.
        store: String,
        /// The conformance level, 1 (structure) to 5 (multiresolution).
        #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u8).range(1..=5))]
        level: u8,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Summarise a ZV store: geometry, axes, bounds, levels, attributes, codecs, sizes.
    #[command(after_help = "Examples:\n  zv info scan.zarr\n  zv info scan.zarr --json")]
    Info {
        /// The store: a path, file:///path or memory://name.
        store: String,
        /// Print the summary as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Add coarser levels 1..N to a store holding level 0 (multiresolution pyramid).
    #[command(
        after_help = "Examples:\n  zv pyramid scan.zarr --levels \"2,1;2,1\"\n  zv pyramid cells.zarr --levels \"2,2\" --sparsity length --json"
    )]
    Pyramid(pyramid::PyramidArgs),
    /// Rewrite a store in the other on-disk layout: ZV 0.7 to 0.9 (as zarr-vectors 0.9.2 reads it) or back.
    #[command(
        after_help = "Examples:\n  zv migrate scan.zarr scan9.zarr --to 0.9\n  zv migrate scan9.zarr scan7.zarr --to 0.7 --json\n\nExit status: 0 migrated, 1 failed (OUT not empty, content the target layout cannot hold: nothing is left at OUT that opens), 2 usage error."
    )]
    Migrate(migrate::MigrateArgs),
    /// Measurements (see scripts/memory-test.sh).
    #[command(
        after_help = "Examples:\n  zv bench stream-points /tmp/p.zarr --points 10000000\n  zv bench suite --dir /tmp/bench --reps 3"
    )]
    Bench {
        #[command(subcommand)]
        command: bench::BenchCommand,
    },
    /// Zarr v3 layer commands.
    #[command(
        after_help = "Examples:\n  zv zarr info scan.zarr 0/vertices --children\n  zv zarr get data.zarr /temperature --region 0:10,0:5"
    )]
    Zarr {
        #[command(subcommand)]
        command: zarr::ZarrCommand,
    },
    /// List the children of a group: `name/` for groups, `name  [shape]  dtype` for arrays.
    #[command(after_help = "Examples:\n  zv ls scan.zarr\n  zv ls scan.zarr 0/vertices --json")]
    Ls {
        /// The store: a path, file:///path or memory://name.
        store: String,
        /// The group (default: the root).
        #[arg(default_value = "")]
        path: String,
        /// Print the children as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Draw a PNG picture of a store: its geometry projected onto two axes.
    #[command(
        after_help = "Examples:\n  zv render store.zv -o preview.png\n  zv render store.zv -o fa.png --color attribute:fa --axes x,z --size 512\n  zv render store.zv -o part.png --box 0,0,0,50,50,100 --level 0"
    )]
    Render(render::RenderArgs),
    /// Print a shell completion script: `zv completions bash > /etc/bash_completion.d/zv`.
    #[command(
        after_help = "Examples:\n  zv completions bash > ~/.local/share/bash-completion/completions/zv\n  zv completions zsh > ~/.zfunc/_zv\n  zv completions fish > ~/.config/fish/completions/zv.fish"
    )]
    Completions {
        /// The shell: bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
    /// Convert other formats to Zarr v3.
    #[cfg(feature = "legacy")]
    #[command(
        after_help = "Examples:\n  zv convert legacy old.zarr new.zarr\n  zv convert legacy bcolz:table.bcolz table.zarr --json"
    )]
    Convert {
        #[command(subcommand)]
        command: legacy::ConvertCommand,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    progress::set_quiet(cli.quiet);
    zv_format::link_plugins();
    if let Err(e) = storage::configure(&cli.storage_options) {
        eprintln!("zv: error: {e}");
        return ExitCode::from(2);
    }
    let result = match cli.command {
        Command::Demo { dir, json } => demo::run(&dir, json),
        Command::Dump { store, compact } => dump(&store, compact),
        Command::Import {
            file,
            store,
            batch,
            codecs,
            memory_budget,
            overwrite,
            format_version,
            shard_shape,
            json,
            io,
        } => import(
            &file,
            &store,
            io::WriteArgs {
                batch,
                memory_budget,
                codecs: codecs.as_deref(),
                format_version: &format_version,
                shard_shape,
            },
            (overwrite, json),
            &io,
        ),
        Command::Export { store, output, io } => export(&store, output, &io),
        Command::Commit { store, json } => parts::commit(&store, json),
        Command::Validate { store, level, json } => return validate::run(&store, level, json),
        Command::Info { store, json } => info::run(&store, json),
        Command::Pyramid(args) => pyramid::run(args),
        Command::Migrate(args) => migrate::run(args),
        Command::Render(args) => render::run(args),
        Command::Bench { command } => bench::run(command),
        Command::Zarr { command } => zarr::run(command),
        Command::Ls { store, path, json } => ls::run(&store, &path, json),
        Command::Completions { shell } => {
            use clap::CommandFactory;
            use std::io::Write;
            // generated into memory: clap_complete panics on a failed write
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "zv", &mut script);
            std::io::stdout()
                .lock()
                .write_all(&script)
                .map_err(Into::into)
        }
        #[cfg(feature = "legacy")]
        Command::Convert { command } => legacy::run(command),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // a closed pipe (`zv dump … | head`) ends the command quietly
        Err(e) if broken_pipe(e.as_ref()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("zv: error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Whether an error is (or was caused by) writing to a closed pipe.
fn broken_pipe(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur = Some(e);
    while let Some(err) = cur {
        let kind = err
            .downcast_ref::<std::io::Error>()
            .map(std::io::Error::kind)
            .or_else(|| {
                err.downcast_ref::<serde_json::Error>()
                    .and_then(serde_json::Error::io_error_kind)
            });
        if kind == Some(std::io::ErrorKind::BrokenPipe) {
            return true;
        }
        cur = err.source();
    }
    false
}

fn dump(store: &str, compact: bool) -> CliResult {
    use std::io::Write;
    let store = zv_format::ZvStore::open_url(store)?;
    // written section by section as the dump is made (a store's dump can be many times its
    // size as one JSON document in memory)
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    zv_format::dump::dump_to(&store, &mut out, !compact)?;
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(())
}

fn import(
    file: &str,
    store: &str,
    write: io::WriteArgs<'_>,
    (overwrite, json): (bool, bool),
    args: &io::ImportArgs,
) -> CliResult {
    let format_version = zv_format::writer::FormatVersion::parse(write.format_version)?;
    let format = io::import_format(file, args)?;
    let doc = match format {
        Some(_) => None,
        None => {
            let bytes = std::fs::read(file).map_err(|e| format!("{file}: {e}"))?;
            let mut doc = zv_format::document::GeometryDocument::from_json(&bytes)?;
            if let Some(c) = write.codecs {
                doc.codecs = Some(c.to_owned());
            }
            Some(doc)
        }
    };
    let target = zv_core::plugin::open_store(store)?;
    if let Some(part) = &args.part {
        // a part writes beside the other parts: the store is shared, not emptied
        parts::parse_part(part)?;
        if overwrite || doc.is_some() {
            return Err("--part takes PLY or CSV point files, without --overwrite".into());
        }
    } else if !target
        .list_prefix(&zv_core::key::StorePrefix::root())?
        .is_empty()
    {
        if !overwrite {
            return Err(format!("{store} is not empty (use --overwrite to replace it)").into());
        }
        clear_store(target.as_ref())?;
    }
    let bar = progress::Bar::new("import");
    let summary = match doc {
        None => {
            let format = format.ok_or("no format")?;
            io::import(file, format, (store, target), args, write, bar.reporter())?
        }
        Some(doc) => zv_format::import::write_document_as(
            target,
            &doc,
            write.batch,
            write.memory_budget,
            (format_version, write.shard_shape.clone()),
        )?,
    };
    bar.finish();
    if let Some(part) = &args.part {
        if json {
            return print_json(&serde_json::json!({
                "store": store,
                "part": part,
                "vertices": summary.vertices,
                "chunks": summary.chunks,
            }));
        }
        progress::note(format_args!(
            "part {part}: wrote {} vertices in {} chunks to {store}; `zv commit {store}` once every part has run",
            summary.vertices, summary.chunks
        ));
        return Ok(());
    }
    if json {
        return print_json(&serde_json::json!({
            "store": store,
            "vertices": summary.vertices,
            "chunks": summary.chunks,
            "objects": summary.objects,
            "intra_chunk_links": summary.intra_links,
            "cross_chunk_links": summary.cross_chunk_links,
            "groups": summary.groups,
        }));
    }
    progress::note(format_args!(
        "wrote {} vertices in {} chunks, {} objects, {} intra-chunk and {} cross-chunk links, {} groups to {store}",
        summary.vertices, summary.chunks, summary.objects, summary.intra_links, summary.cross_chunk_links, summary.groups
    ));
    Ok(())
}

/// Prints `doc` as indented JSON on stdout (the `--json` output of a command).
pub(crate) fn print_json(doc: &serde_json::Value) -> CliResult {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, doc)?;
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(())
}

/// Empties a store so that no moment of the clearing leaves a store that opens with wrong
/// content: the root `zarr.json` (which commits a hierarchy) goes first and is made durable,
/// then everything else.
fn clear_store(target: &dyn zv_core::store::Store) -> CliResult {
    let root = zv_core::key::StoreKey::new(zv_core::node::METADATA_NAME)?;
    target.delete(&root)?;
    target.sync()?;
    target.delete_prefix(&zv_core::key::StorePrefix::root())?;
    Ok(())
}

fn export(store: &str, output: Option<String>, args: &io::ExportArgs) -> CliResult {
    use std::io::Write;
    let output = match (output, &args.file) {
        (Some(_), Some(_)) => return Err("give the output file once (FILE or -o FILE)".into()),
        (o, f) => o.or_else(|| f.clone()),
    };
    let output = output.as_deref();
    let bar = progress::Bar::new("export");
    if io::export(store, output, args, bar.reporter())? {
        return Ok(());
    }
    let store = zv_format::ZvStore::open_url(store)?;
    let chunks = store.level(0)?.chunk_keys()?.len() as u64;
    use zv_format::progress::Progress;
    bar.set_total(chunks, "chunks");
    // written as it is made, the vertices and links from the level's columns; a file only
    // takes its name once complete
    let write = |out: &mut dyn Write| zv_format::export::write_geometry(&store, out);
    match output {
        Some(path) => io::write_atomically(path, |f| {
            let mut out = std::io::BufWriter::with_capacity(1 << 20, f);
            write(&mut out)?;
            out.flush().map_err(|e| zv_format::Error::Io {
                path: path.into(),
                source: e,
            })
        })?,
        None => {
            let mut out = std::io::BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
            write(&mut out)?;
            out.write_all(b"\n")?;
            out.flush()?;
        }
    }
    bar.advance(chunks);
    bar.finish();
    Ok(())
}

/// The error type of the command: any error, shown with its message.
pub(crate) type CliResult<T = ()> = Result<T, Box<dyn std::error::Error + Send + Sync>>;
