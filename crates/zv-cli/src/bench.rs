//! `zv bench`: measurements that need a real program run (e.g. peak memory under
//! `/usr/bin/time -v`).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use clap::Subcommand;
use zv_format::document::{Attribute, AttributeValues};
use zv_format::layout::attributes::AttributeRows;
use zv_format::writer::{CodecChoice, WriterOptions, ZvWriter};
use zv_format::{Geometry, ZvStore};

use crate::CliResult;

mod floor;
mod inputs;
mod lod;
mod object;
mod peers;
mod stats;
mod suite;

#[derive(Debug, Subcommand)]
pub(crate) enum BenchCommand {
    /// The speed suite: zv against the file-system floor (and, with --peers, the Python
    /// peers) on the same deterministic inputs; prints minimum and median of every figure and
    /// the ratios.
    #[command(
        after_help = "Examples:\n  zv bench suite --dir /tmp/bench --reps 3\n  zv bench suite --dir /tmp/bench --peers zv09 --json bench.json"
    )]
    Suite(suite::SuiteArgs),
    /// Read requests and bytes one box query costs at each level of a store (level of
    /// detail: a coarse pyramid level against level 0).
    #[command(
        after_help = "Examples:\n  zv bench lod-bytes /tmp/p.zarr --box 0,0,0,500,500,500\n  zv bench lod-bytes /tmp/p.zarr --box 0,0,0,250,250,250 --json"
    )]
    LodBytes {
        /// The store.
        store: String,
        /// The box: low corner, then high corner (`x0,y0,z0,x1,y1,z1`).
        #[arg(long = "box", allow_hyphen_values = true)]
        region: String,
        /// Print the figures as JSON.
        #[arg(long)]
        json: bool,
    },
    /// The point workloads of the suite on an object store behind a counting, delaying
    /// proxy (scripts/bench-object.sh starts them): times, request counts and ratios to the
    /// floor requests x delay / concurrency, for zv and (with --peers zv09) zarr-vectors 0.9.2.
    #[command(
        after_help = "Examples:\n  zv bench object --url s3://bench/run --proxy http://127.0.0.1:9001 --delay-ms 20 --peers zv09\n  scripts/bench-object.sh   # starts the S3 server and the proxy, then runs the line above"
    )]
    Object(object::ObjectArgs),
    /// Stream random points (with a float32 attribute) into a new store in batches, then read
    /// the row count back.
    #[command(
        after_help = "Examples:\n  zv bench stream-points /tmp/p.zarr --points 10000000\n  zv bench stream-points memory://p --points 100000 --json"
    )]
    StreamPoints {
        /// The new store.
        store: String,
        /// Number of points.
        #[arg(long, default_value_t = 20_000_000)]
        points: u64,
        /// Points per batch.
        #[arg(long, default_value_t = 1_000_000)]
        batch: u64,
        /// Edge of the cubic chunks (points lie in [0, 1000)^3).
        #[arg(long, default_value_t = 100.0)]
        chunk: f64,
        /// Edge of the cubic bins (default: the chunk edge); a pyramid needs bins finer than
        /// its chunks to coarsen without scaling the chunks.
        #[arg(long)]
        bin: Option<f64>,
        /// Codec choice.
        #[arg(long, default_value = "spec-default")]
        codecs: String,
        /// Bytes of vertex records the writer holds in memory before spilling to temporary
        /// files.
        #[arg(long, default_value_t = zv_format::writer::DEFAULT_MEMORY_BUDGET)]
        memory_budget: u64,
        /// Print the figures as JSON.
        #[arg(long)]
        json: bool,
    },
}

/// What `zv bench stream-points` writes.
struct StreamPoints<'a> {
    url: &'a str,
    points: u64,
    batch: u64,
    chunk: f64,
    bin: Option<f64>,
    codecs: &'a str,
    memory_budget: u64,
    json: bool,
}

pub(crate) fn run(command: BenchCommand) -> CliResult {
    match command {
        BenchCommand::Suite(args) => suite::run(&args),
        BenchCommand::LodBytes {
            store,
            region,
            json,
        } => lod::run(&store, &region, json),
        BenchCommand::Object(args) => object::run(&args),
        BenchCommand::StreamPoints {
            store,
            points,
            batch,
            chunk,
            bin,
            codecs,
            memory_budget,
            json,
        } => stream_points(&StreamPoints {
            url: &store,
            points,
            batch,
            chunk,
            bin,
            codecs: &codecs,
            memory_budget,
            json,
        }),
    }
}

fn stream_points(args: &StreamPoints<'_>) -> CliResult {
    let &StreamPoints {
        url,
        points,
        batch,
        chunk,
        bin,
        codecs,
        memory_budget,
        json,
    } = args;
    let store = zv_core::plugin::open_store(url)?;
    let mut opts = WriterOptions::new(Geometry::PointCloud, vec![chunk; 3]);
    opts.codecs = CodecChoice::parse(codecs)?;
    opts.bin_shape = bin.map(|b| vec![b; 3]);
    opts.bounds = Some([vec![0.0; 3], vec![1000.0; 3]]);
    opts.memory_budget = memory_budget;
    let mut writer = ZvWriter::create(Arc::clone(&store), opts)?;
    let start = Instant::now();
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut done = 0u64;
    while done < points {
        let n = batch.min(points - done) as usize;
        let coords: Vec<f64> = (0..n * 3).map(|_| (next() * 1000.0).min(999.999)).collect();
        let intensity: Vec<f64> = (0..n).map(|_| next()).collect();
        let mut attrs = BTreeMap::new();
        attrs.insert(
            "intensity".to_owned(),
            Attribute {
                values: AttributeValues::Numeric {
                    rows: AttributeRows::from_f64s(
                        zv_core::data_type::DataType::Float32,
                        1,
                        &intensity,
                    )?,
                    present: None,
                },
                channel_names: None,
            },
        );
        writer.add_vertices_flat(&coords, None, &attrs)?;
        done += n as u64;
    }
    let streamed = start.elapsed();
    let summary = writer.finish()?;
    let written = start.elapsed();
    let level = ZvStore::open(store)?.level(0)?;
    let mut rows = 0u64;
    for key in level.chunk_keys()? {
        rows += level.vertices(&key)?.map_or(0, |v| v.len() as u64);
    }
    if json {
        crate::print_json(&serde_json::json!({
            "points": points,
            "batch": batch,
            "memory_budget": memory_budget,
            "stream_seconds": streamed.as_secs_f64(),
            "total_seconds": written.as_secs_f64(),
            "chunks": summary.chunks,
            "read_back": rows,
        }))?;
    } else {
        println!(
        "streamed {points} points in batches of {batch} ({:.1} s; memory budget {memory_budget} bytes), finished {} chunks ({:.1} s total, {:.2} M points/s); read back {rows} points",
        streamed.as_secs_f64(),
        summary.chunks,
        written.as_secs_f64(),
        points as f64 / written.as_secs_f64() / 1e6
    );
    }
    if rows != points {
        return Err(format!("read back {rows} points, wrote {points}").into());
    }
    Ok(())
}
