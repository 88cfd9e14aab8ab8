//! The `zv` command.
//!
//! ```text
//! zv demo [DIR]                                   write and read back a demo store
//! zv dump STORE [--compact]                     a ZV store's content as JSON (zv-dump/1)
//! zv zarr info STORE [NODE] [--children]          metadata of a Zarr v3 node, as JSON
//! zv zarr get STORE ARRAY [--region R] [--raw]    values of an array region (JSON or raw LE bytes)
//! ```
//!
//! Errors go to stderr with exit status 1 (2 for usage errors); the command never panics on
//! bad input.

mod demo;
mod zarr;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// zv: Zarr Vectors (ZV 0.7) and Zarr v3 stores from the command line.
#[derive(Debug, Parser)]
#[command(name = "zv", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Write a demo store into DIR (default ./zv-demo), read it back and check it.
    Demo {
        /// Where to write the demo store.
        #[arg(default_value = "zv-demo")]
        dir: String,
    },
    /// Print a ZV store's content as JSON ("zv-dump/1", see the fixtures README).
    Dump {
        /// The store: a path, file:///path or memory://name.
        store: String,
        /// Write compact JSON instead of indented JSON.
        #[arg(long)]
        compact: bool,
    },
    /// Zarr v3 layer commands.
    Zarr {
        #[command(subcommand)]
        command: zarr::ZarrCommand,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    zv_format::link_plugins();
    let result = match cli.command {
        Command::Demo { dir } => demo::run(&dir),
        Command::Dump { store, compact } => dump(&store, compact),
        Command::Zarr { command } => zarr::run(command),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("zv: error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn dump(store: &str, compact: bool) -> CliResult {
    use std::io::Write;
    let store = zv_format::ZvStore::open_url(store)?;
    let doc = zv_format::dump::dump(&store)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if compact {
        serde_json::to_writer(&mut out, &doc)?;
    } else {
        serde_json::to_writer_pretty(&mut out, &doc)?;
    }
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(())
}

/// The error type of the command: any error, shown with its message.
pub(crate) type CliResult<T = ()> = Result<T, Box<dyn std::error::Error + Send + Sync>>;
