//! `zv bench object`: the point workloads of `zv bench suite` (write 1M points, read all, 1%
//! box, read every object) on an object store URL, zv and (when asked) zarr-vectors 0.9.2 on
//! the same server, with the request counts of a counting proxy in front of it
//! (`tests/interop/fault_proxy.py`, `/__proxy/stats`) and each time as a ratio to its floor,
//! `requests × delay ÷ concurrency`: the time a client keeping `concurrency` requests in
//! flight needs when every request takes `delay`. `scripts/bench-object.sh` starts the S3
//! server and the delaying proxy and runs this.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;

use zv_format::writer::ZvWriter;
use zv_format::{Geometry, ZvStore};

use super::inputs::Inputs;
use super::peers::{Peer, PeerPhase};
use super::stats::Samples;
use super::suite::{intensity, options, BOX_HI, BOX_LO, CHUNK};
use crate::CliResult;

/// Arguments of `zv bench object`.
#[derive(Debug, clap::Args)]
pub(crate) struct ObjectArgs {
    /// Where the stores go (`s3://bucket/prefix`); configured by the environment
    /// (`AWS_ENDPOINT_URL`, …) so that the peers reach the same server.
    #[arg(long)]
    url: String,
    /// The counting proxy in front of the server (`http://127.0.0.1:PORT`).
    #[arg(long)]
    proxy: String,
    /// The proxy's delay per request, in milliseconds (for the floors).
    #[arg(long)]
    delay_ms: f64,
    /// Requests in flight the floors assume (zv's `concurrency` storage option).
    #[arg(long, default_value_t = zv_core::store::DEFAULT_CONCURRENCY)]
    concurrency: usize,
    /// Number of points.
    #[arg(long, default_value_t = 1_000_000)]
    points: usize,
    /// Object ids are uniform in [0, OBJECTS).
    #[arg(long, default_value_t = 1000)]
    objects: u64,
    /// Repetitions of every figure.
    #[arg(long, default_value_t = 3)]
    reps: usize,
    /// Python peers to run (zv09).
    #[arg(long, value_delimiter = ',')]
    peers: Vec<String>,
    /// Python of zarr-vectors 0.9.2 with an object-store client (obstore).
    #[arg(long, default_value = ".venv-zv09-s3/bin/python")]
    zv09_python: PathBuf,
    /// The peer runner script.
    #[arg(long, default_value = "scripts/bench/peer.py")]
    peer_script: PathBuf,
    /// Directory for the peers' inputs.
    #[arg(long, default_value = "/tmp/zv-bench-object")]
    dir: PathBuf,
    /// Also write the figures as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Pack every chunk-grid array in shards of this many chunks per dimension (ZV 0.9,
    /// `sharding_indexed`), zv's store and the peers' alike (their `shard_shape=`).
    #[arg(long, value_delimiter = ',')]
    shard_shape: Option<Vec<u64>>,
}

/// One figure: times and the proxy's counts of each repetition.
#[derive(Default)]
struct Figure {
    times: Samples,
    requests: Vec<u64>,
    peak: Vec<u64>,
}

/// The proxy's counts: all requests, the most in flight at once.
fn proxy(url: &str, what: &str) -> CliResult<(u64, u64)> {
    let addr = url.trim_start_matches("http://").trim_end_matches('/');
    let method = if what == "stats" { "GET" } else { "POST" };
    let mut s = TcpStream::connect(addr).map_err(|e| format!("the proxy at {url}: {e}"))?;
    // a proxy that stops answering is an error, not a benchmark that never ends
    let limit = Some(std::time::Duration::from_secs(120));
    s.set_read_timeout(limit)?;
    s.set_write_timeout(limit)?;
    write!(
        s,
        "{method} /__proxy/{what} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
    )?;
    let mut answer = String::new();
    s.read_to_string(&mut answer)?;
    let body = answer.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    if what != "stats" {
        return Ok((0, 0));
    }
    let doc: serde_json::Value =
        serde_json::from_str(body).map_err(|e| format!("the proxy's stats: {e}: {answer}"))?;
    Ok((
        doc["total"].as_u64().unwrap_or(0),
        doc["peak_in_flight"].as_u64().unwrap_or(0),
    ))
}

/// Runs `f` between a reset and a reading of the proxy's counts.
fn counted<T>(a: &ObjectArgs, fig: &mut Figure, f: impl FnOnce() -> CliResult<T>) -> CliResult<T> {
    proxy(&a.proxy, "reset")?;
    let out = fig.times.time(f)?;
    let (n, peak) = proxy(&a.proxy, "stats")?;
    fig.requests.push(n);
    fig.peak.push(peak);
    Ok(out)
}

fn check(what: &str, got: usize, want: usize) -> CliResult {
    if got != want {
        return Err(format!("{what}: got {got}, expected {want}").into());
    }
    Ok(())
}

fn wipe(url: &str) -> CliResult {
    let store = zv_core::plugin::open_store(url)?;
    store.delete_prefix(&zv_core::key::StorePrefix::root())?;
    Ok(())
}

fn zv_round(a: &ObjectArgs, inputs: &Inputs, figs: &mut BTreeMap<String, Figure>) -> CliResult {
    let url = format!("{}/zv-points.zarr", a.url.trim_end_matches('/'));
    let attrs = intensity(inputs)?;
    let n = inputs.num_points();
    wipe(&url)?;
    counted(a, figs.entry("write points".into()).or_default(), || {
        let store = zv_core::plugin::open_store(&url)?;
        let mut opts = options(Geometry::PointCloud, "none")?;
        opts.shard_shape = a.shard_shape.clone();
        let mut w = ZvWriter::create(store, opts)?;
        w.add_vertices_flat(&inputs.points, Some(&inputs.object_ids), &attrs)?;
        w.finish()?;
        Ok(())
    })?;
    let got = counted(a, figs.entry("read all points".into()).or_default(), || {
        let level = ZvStore::open_url(&url)?.level(0)?;
        Ok(level.points(&["intensity"])?.positions.len())
    })?;
    check("read all points", got, n)?;
    let got = counted(a, figs.entry("1% box".into()).or_default(), || {
        let level = ZvStore::open_url(&url)?.level(0)?;
        let hits = level.query_box_with(&BOX_LO, &BOX_HI, &["intensity"])?;
        Ok(hits.positions.len())
    })?;
    check("1% box", got, inputs.count_in_box(&BOX_LO, &BOX_HI))?;
    let got = counted(
        a,
        figs.entry("read all objects".into()).or_default(),
        || {
            let level = ZvStore::open_url(&url)?.level(0)?;
            let ids: Vec<u64> = (0..a.objects).collect();
            Ok(level.objects(&ids)?.iter().map(|o| o.vertices.len()).sum())
        },
    )?;
    check("read all objects", got, n)
}

fn peer_round(a: &ObjectArgs, peer: &Peer, figs: &mut BTreeMap<String, Figure>) -> CliResult {
    let url = format!("{}/{}-points.zarr", a.url.trim_end_matches('/'), peer.short);
    wipe(&url)?;
    let phases = [
        PeerPhase::WritePoints,
        PeerPhase::ReadPoints,
        PeerPhase::Box,
        PeerPhase::ReadObjects,
    ];
    for phase in phases {
        let fig = figs
            .entry(format!("{}: {}", peer.short, phase.figure()))
            .or_default();
        proxy(&a.proxy, "reset")?;
        let outcome = peer
            .run(phase, &a.dir, &url, "none")?
            .ok_or_else(|| format!("peer {}: {} unsupported", peer.short, phase.arg()))?;
        if let Some(note) = outcome.note {
            return Err(note.into());
        }
        fig.times.push(outcome.seconds);
        let (n, peak) = proxy(&a.proxy, "stats")?;
        fig.requests.push(n);
        fig.peak.push(peak);
    }
    Ok(())
}

fn median(v: &[u64]) -> u64 {
    let mut v = v.to_vec();
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

fn report(a: &ObjectArgs, order: &[String], figs: &BTreeMap<String, Figure>) -> serde_json::Value {
    println!(
        "delay {} ms per request; floor = requests x delay / {} in flight",
        a.delay_ms, a.concurrency
    );
    println!(
        "{:<28} {:>9} {:>9} {:>9} {:>6} {:>9} {:>9}",
        "figure", "min s", "median s", "requests", "peak", "floor s", "min/floor"
    );
    let mut out = serde_json::Map::new();
    for name in order {
        let Some(f) = figs.get(name) else { continue };
        let requests = median(&f.requests);
        let floor = requests as f64 * a.delay_ms / 1000.0 / a.concurrency as f64;
        let ratio = f.times.min() / floor;
        println!(
            "{name:<28} {:>9.3} {:>9.3} {requests:>9} {:>6} {floor:>9.3} {ratio:>9.1}",
            f.times.min(),
            f.times.median(),
            median(&f.peak),
        );
        out.insert(
            name.clone(),
            serde_json::json!({"min": f.times.min(), "median": f.times.median(),
                "requests": requests, "peak_in_flight": median(&f.peak),
                "floor": floor, "min_over_floor": ratio}),
        );
    }
    let mut ratios = serde_json::Map::new();
    for peer in &a.peers {
        println!(
            "\n{:<40} {:>9} {:>9}",
            format!("{peer} / zv"),
            "min",
            "median"
        );
        for (name, f) in figs {
            let Some(zv) = name
                .strip_prefix(&format!("{peer}: "))
                .and_then(|p| figs.get(p))
            else {
                continue;
            };
            let (rmin, rmed) = (
                f.times.min() / zv.times.min(),
                f.times.median() / zv.times.median(),
            );
            println!("{name:<40} {rmin:>9.1} {rmed:>9.1}");
            ratios.insert(
                name.clone(),
                serde_json::json!({"min": rmin, "median": rmed}),
            );
        }
    }
    serde_json::json!({"delay_ms": a.delay_ms, "concurrency": a.concurrency,
        "points": a.points, "shard_shape": a.shard_shape, "figures": out, "peer_over_zv": ratios})
}

/// Runs the object-store benchmark.
pub(crate) fn run(a: &ObjectArgs) -> CliResult {
    let inputs = Inputs::generate(a.points, a.objects, 0, 2);
    let peers = a
        .peers
        .iter()
        .map(|name| match name.as_str() {
            // every object in one read, as zv reads them (one read per id costs a request
            // per chunk an object touches, for every object: hours behind a delay)
            "zv09" => Ok(
                Peer::new(name, &a.zv09_python, &a.zv09_python, &a.peer_script)?
                    .with_args(&["--objects", "all"]),
            ),
            other => Err(format!("unknown peer `{other}` (known here: zv09)").into()),
        })
        .collect::<CliResult<Vec<_>>>()?;
    if !peers.is_empty() {
        inputs.write_for_peers(&a.dir, CHUNK, &BOX_LO, &BOX_HI, a.shard_shape.as_deref())?;
    }
    let mut figs = BTreeMap::new();
    let mut order: Vec<String> = [
        "write points",
        "read all points",
        "1% box",
        "read all objects",
    ]
    .map(str::to_owned)
    .to_vec();
    for peer in &a.peers {
        for o in order.clone().iter().take(4) {
            order.push(format!("{peer}: {o}"));
        }
    }
    for rep in 0..a.reps {
        eprintln!("repetition {}/{}", rep + 1, a.reps);
        zv_round(a, &inputs, &mut figs)?;
        for peer in &peers {
            peer_round(a, peer, &mut figs)?;
        }
    }
    let doc = report(a, &order, &figs);
    if let Some(path) = &a.json {
        std::fs::write(path, serde_json::to_vec_pretty(&doc)?)?;
    }
    Ok(())
}
