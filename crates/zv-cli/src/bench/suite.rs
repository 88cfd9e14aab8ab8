//! `zv bench suite`: the workloads of the speed issue, each timed against its file-system
//! floor measured in the same run (and, when asked, against the Python peers on the same
//! inputs), reported as minimum and median of the repetitions with ratios.
//!
//! Workloads (defaults): 1,000,000 float32 xyz points uniform in `[0,1000)^3`, chunk 100^3,
//! object ids uniform in `[0,1000)`, one float32 attribute `intensity`; 2,000 random-walk
//! polylines of 100 vertices; a 1%-volume box at (400,400,400) with side 215.44.
//!
//! Floors: a write's floor re-creates the files zv just wrote (their bytes read beforehand)
//! with one create + write + rename each and one `syncfs`, into a fresh tree on the same
//! location; a read's floor reads the files the read needs (all files of the store; for the
//! box, the files of the chunks the box intersects) with one `read` each. A read and its floor
//! are timed in turn, the floor first in every other repetition, so that neither is always
//! the one that finds the other's caches warm.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use zv_format::document::{Attribute, AttributeValues};
use zv_format::layout::attributes::AttributeRows;
use zv_format::writer::{CodecChoice, FormatVersion, WriterOptions, ZvWriter};
use zv_format::{Geometry, ZvStore};

use super::floor::{list_files, read_files, Snapshot};
use super::inputs::{Inputs, EXTENT};
use super::peers::{Peer, PeerPhase};
use super::stats::{ratios, Samples};
use crate::CliResult;

/// Arguments of `zv bench suite`.
#[derive(Debug, clap::Args)]
pub(crate) struct SuiteArgs {
    /// Directory for the stores and floors (put it on tmpfs or on disk); created.
    #[arg(long)]
    dir: PathBuf,
    /// Number of points.
    #[arg(long, default_value_t = 1_000_000)]
    points: usize,
    /// Object ids are uniform in [0, OBJECTS).
    #[arg(long, default_value_t = 1000)]
    objects: u64,
    /// Number of polylines.
    #[arg(long, default_value_t = 2000)]
    polylines: usize,
    /// Vertices per polyline.
    #[arg(long, default_value_t = 100)]
    length: usize,
    /// Repetitions of every figure.
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// Codec choice of the zv stores (none = uncompressed).
    #[arg(long, default_value = "none")]
    codecs: String,
    /// The layout of zv's stores: 0.7 or 0.9 (with `--peers zv09`, zv and zarr-vectors 0.9.2
    /// then each write and read the 0.9 layout).
    #[arg(long, default_value = "0.7")]
    format_version: String,
    /// Python peers to run on the same inputs (comma-separated): zv09 (zarr-vectors 0.9.2
    /// from PyPI), ref07 (the 0.7.0 reference).
    #[arg(long, value_delimiter = ',')]
    peers: Vec<String>,
    /// The peer phases to run (comma-separated: write_points, read_points, box,
    /// read_objects, write_polylines); all when not given. The reference's read_objects
    /// takes many minutes on the default workload.
    #[arg(long, value_delimiter = ',')]
    peer_phases: Vec<String>,
    /// Python of zarr-vectors 0.9.2.
    #[arg(long, default_value = ".venv-zv09/bin/python")]
    zv09_python: PathBuf,
    /// Python of the 0.7.0 reference.
    #[arg(long, default_value = ".venv-ref/bin/python")]
    ref_python: PathBuf,
    /// The peer runner script.
    #[arg(long, default_value = "scripts/bench/peer.py")]
    peer_script: PathBuf,
    /// Also write the figures as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Measure the reads only, on the point store a previous run left in `--dir` (written
    /// once if it is missing); the write figures are skipped. For profiling the reads.
    #[arg(long)]
    reads_only: bool,
    /// The zv phases to measure, each with its floor (comma-separated, the names of
    /// `--peer-phases`); all when not given. For profiling one figure.
    #[arg(long, value_delimiter = ',')]
    phases: Vec<String>,
}

impl SuiteArgs {
    /// The writer options of zv's stores of `geometry`.
    fn writer_options(&self, geometry: Geometry) -> CliResult<WriterOptions> {
        let mut opts = options(geometry, &self.codecs)?;
        opts.format_version = FormatVersion::parse(&self.format_version)?;
        Ok(opts)
    }

    /// Whether the zv round measures `phase`.
    fn wants(&self, phase: PeerPhase) -> bool {
        self.phases.is_empty() || self.phases.iter().any(|p| p == phase.arg())
    }
}

pub(super) const CHUNK: f64 = 100.0;
pub(super) const BOX_LO: [f64; 3] = [400.0, 400.0, 400.0];
pub(super) const BOX_HI: [f64; 3] = [615.44, 615.44, 615.44];

/// The figures of a run, by name, in the order measured.
#[derive(Default)]
struct Figures {
    order: Vec<String>,
    samples: BTreeMap<String, Samples>,
    notes: Vec<String>,
    /// The files of zv's point and polyline stores, kept from the first repetition: the
    /// floor of a write is timed before zv's write in every other repetition (zv's stores
    /// are the same every time, which each repetition checks).
    snapshots: BTreeMap<&'static str, Snapshot>,
}

impl Figures {
    fn get(&mut self, name: &str) -> &mut Samples {
        if !self.samples.contains_key(name) {
            self.order.push(name.to_owned());
        }
        self.samples.entry(name.to_owned()).or_default()
    }

    fn check(&mut self, what: &str, got: usize, want: usize) -> CliResult {
        if got != want {
            return Err(format!("{what}: got {got}, expected {want}").into());
        }
        Ok(())
    }
}

fn fresh(path: &Path) -> CliResult {
    if path.exists() {
        std::fs::remove_dir_all(path)?;
    }
    Ok(())
}

fn open_store(path: &Path) -> CliResult<Arc<dyn zv_core::store::Store>> {
    Ok(zv_core::plugin::open_store(&path.to_string_lossy())?)
}

pub(super) fn intensity(inputs: &Inputs) -> CliResult<BTreeMap<String, Attribute>> {
    let rows =
        AttributeRows::from_f64s(zv_core::data_type::DataType::Float32, 1, &inputs.intensity)?;
    let mut attrs = BTreeMap::new();
    attrs.insert(
        "intensity".to_owned(),
        Attribute {
            values: AttributeValues::Numeric {
                rows,
                present: None,
            },
            channel_names: None,
        },
    );
    Ok(attrs)
}

pub(super) fn options(geometry: Geometry, codecs: &str) -> CliResult<WriterOptions> {
    let mut opts = WriterOptions::new(geometry, vec![CHUNK; 3]);
    opts.codecs = CodecChoice::parse(codecs)?;
    opts.bounds = Some([vec![0.0; 3], vec![EXTENT; 3]]);
    Ok(opts)
}

fn write_points(
    path: &Path,
    inputs: &Inputs,
    attrs: &BTreeMap<String, Attribute>,
    opts: &WriterOptions,
) -> CliResult {
    let mut w = ZvWriter::create(open_store(path)?, opts.clone())?;
    w.add_vertices_flat(&inputs.points, Some(&inputs.object_ids), attrs)?;
    w.finish()?;
    Ok(())
}

fn write_polylines(path: &Path, lines: &[Vec<Vec<f64>>], opts: &WriterOptions) -> CliResult {
    let mut w = ZvWriter::create(open_store(path)?, opts.clone())?;
    w.add_polylines(lines, &BTreeMap::new())?;
    w.finish()?;
    Ok(())
}

fn polylines_as_rows(inputs: &Inputs) -> Vec<Vec<Vec<f64>>> {
    inputs
        .offsets
        .windows(2)
        .map(|w| {
            inputs.polylines[w[0] * 3..w[1] * 3]
                .chunks_exact(3)
                .map(<[f64]>::to_vec)
                .collect()
        })
        .collect()
}

/// The files of the chunks that intersect the closed box (either layout).
fn box_files(store: &Path) -> CliResult<Vec<PathBuf>> {
    let lo: Vec<i64> = BOX_LO.iter().map(|v| (v / CHUNK).floor() as i64).collect();
    let hi: Vec<i64> = BOX_HI.iter().map(|v| (v / CHUNK).floor() as i64).collect();
    let mut keys = BTreeSet::new();
    for i in lo[0]..=hi[0] {
        for j in lo[1]..=hi[1] {
            for k in lo[2]..=hi[2] {
                keys.insert(format!("{i}.{j}.{k}"));
            }
        }
    }
    // a 0.7 chunk is a node `<array>/<i.j.k>/…`, a 0.9 cell a chunk file `<array>/c/<i>/<j>/<k>`
    Ok(list_files(store)?
        .into_iter()
        .filter(|rel| {
            let parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            parts.iter().any(|c| keys.contains(c))
                || matches!(parts.as_slice(), [.., c, i, j, k] if c == "c"
                    && keys.contains(&format!("{i}.{j}.{k}")))
        })
        .collect())
}

fn zv_round(a: &SuiteArgs, inputs: &Inputs, rep: usize, figures: &mut Figures) -> CliResult {
    let attrs = intensity(inputs)?;
    let popts = a.writer_options(Geometry::PointCloud)?;
    let note = format!("zv's stores: ZV {} layout", a.format_version);
    if popts.format_version != FormatVersion::V0_7 && !figures.notes.contains(&note) {
        figures.notes.push(note);
    }
    let points = a.dir.join("zv-points.zarr");
    let reads = [
        PeerPhase::ReadPoints,
        PeerPhase::Box,
        PeerPhase::ReadObjects,
    ];
    let write = a.wants(PeerPhase::WritePoints) && !a.reads_only;
    if write {
        timed_write(a, "write points", &points, rep, figures, |_| {
            write_points(&points, inputs, &attrs, &popts)
        })?;
    } else if reads.iter().any(|&p| a.wants(p)) && !points.join("zarr.json").exists() {
        fresh(&points)?;
        write_points(&points, inputs, &attrs, &popts)?;
    }
    if reads.iter().any(|&p| a.wants(p)) {
        read_round(a, inputs, &points, rep % 2 == 1, figures)?;
    }
    if a.reads_only {
        return Ok(());
    }
    if a.wants(PeerPhase::WritePolylines) {
        polyline_round(a, inputs, rep, figures)?;
    }
    Ok(())
}

/// Times zv's write `write` of the store `store` (figure `name`) and its floor, the same
/// files re-created by a plain loop (figure `NAME: floor`): zv first in even repetitions,
/// the floor first in odd ones (from the files of an earlier repetition; zv's store must
/// then have the same files).
fn timed_write(
    a: &SuiteArgs,
    name: &'static str,
    store: &Path,
    rep: usize,
    figures: &mut Figures,
    write: impl FnOnce(&mut Figures) -> CliResult,
) -> CliResult {
    let floor = a.dir.join(format!("floor-{}", name.replace(' ', "-")));
    let floor_name = format!("{name}: floor");
    let floor_first = rep % 2 == 1 && figures.snapshots.contains_key(name);
    if floor_first {
        fresh(&floor)?;
        let snapshot = &figures.snapshots[name];
        let secs = time_secs(|| snapshot.write_to(&floor))?;
        figures.get(&floor_name).push(secs);
    }
    fresh(store)?;
    let t = std::time::Instant::now();
    write(figures)?;
    figures.get(name).push(t.elapsed().as_secs_f64());
    let snapshot = Snapshot::take(store)?;
    if name == "write points" && figures.notes.is_empty() {
        figures.notes.push(format!(
            "point store: {} files, {} bytes",
            snapshot.len(),
            snapshot.bytes()
        ));
    }
    if floor_first {
        if figures.snapshots.get(name) != Some(&snapshot) {
            return Err(format!("{name}: zv's store differs from the one of repetition 1").into());
        }
        return Ok(());
    }
    fresh(&floor)?;
    let secs = time_secs(|| snapshot.write_to(&floor))?;
    figures.get(&floor_name).push(secs);
    figures.snapshots.insert(name, snapshot);
    Ok(())
}

/// The seconds `f` takes.
fn time_secs<T, E: Into<Box<dyn std::error::Error + Send + Sync>>>(
    f: impl FnOnce() -> Result<T, E>,
) -> CliResult<f64> {
    let t = std::time::Instant::now();
    f().map_err(Into::into)?;
    Ok(t.elapsed().as_secs_f64())
}

/// The polyline write and its floor.
fn polyline_round(a: &SuiteArgs, inputs: &Inputs, rep: usize, figures: &mut Figures) -> CliResult {
    let lines = polylines_as_rows(inputs);
    let opts = a.writer_options(Geometry::Streamline)?;
    let polylines = a.dir.join("zv-lines.zarr");
    timed_write(a, "write polylines", &polylines, rep, figures, |_| {
        write_polylines(&polylines, &lines, &opts)
    })
}

/// The read figures on the point store at `points`, each with its floor (timed first when
/// `floor_first`).
fn read_round(
    a: &SuiteArgs,
    inputs: &Inputs,
    points: &Path,
    floor_first: bool,
    figures: &mut Figures,
) -> CliResult {
    let n = inputs.num_points();
    let url = points.to_string_lossy();
    if a.wants(PeerPhase::ReadPoints) {
        let all = list_files(points)?;
        let floor = |f: &mut Figures| {
            f.get("read all points: floor")
                .time(|| read_files(points, &all))
        };
        if floor_first {
            floor(figures)?;
        }
        let got = figures
            .get("read all points")
            .time(|| -> CliResult<usize> {
                let level = ZvStore::open_url(&url)?.level(0)?;
                let points = level.points(&["intensity"])?;
                Ok(points.positions.len())
            })?;
        figures.check("read all points", got, n)?;
        if !floor_first {
            floor(figures)?;
        }
    }
    if a.wants(PeerPhase::Box) {
        let in_box = box_files(points)?;
        let floor = |f: &mut Figures| f.get("1% box: floor").time(|| read_files(points, &in_box));
        if floor_first {
            floor(figures)?;
        }
        let got = figures.get("1% box").time(|| -> CliResult<usize> {
            let level = ZvStore::open_url(&url)?.level(0)?;
            Ok(level
                .query_box_with(&BOX_LO, &BOX_HI, &["intensity"])?
                .positions
                .len())
        })?;
        figures.check("1% box", got, inputs.count_in_box(&BOX_LO, &BOX_HI))?;
        if !floor_first {
            floor(figures)?;
        }
    }
    if a.wants(PeerPhase::ReadObjects) {
        let got = figures
            .get("read all objects")
            .time(|| -> CliResult<usize> {
                let level = ZvStore::open_url(&url)?.level(0)?;
                let ids: Vec<u64> = (0..a.objects).collect();
                Ok(level.objects(&ids)?.iter().map(|o| o.vertices.len()).sum())
            })?;
        figures.check("read all objects", got, n)?;
    }
    // the columnar reads (positions as stored, float32, as the peers return them), measured
    // after the others so that those keep their conditions
    if a.wants(PeerPhase::ReadPoints) {
        let got = figures
            .get("read all points (columns)")
            .time(|| -> CliResult<usize> {
                let level = ZvStore::open_url(&url)?.level(0)?;
                Ok(level.point_columns(None, &["intensity"], false)?.len())
            })?;
        figures.check("read all points (columns)", got, n)?;
    }
    if a.wants(PeerPhase::Box) {
        let got = figures
            .get("1% box (columns)")
            .time(|| -> CliResult<usize> {
                let level = ZvStore::open_url(&url)?.level(0)?;
                let bbox = Some((&BOX_LO[..], &BOX_HI[..]));
                Ok(level.point_columns(bbox, &["intensity"], false)?.len())
            })?;
        figures.check(
            "1% box (columns)",
            got,
            inputs.count_in_box(&BOX_LO, &BOX_HI),
        )?;
    }
    Ok(())
}

fn peer_round(a: &SuiteArgs, peer: &Peer, inputs_dir: &Path, figures: &mut Figures) -> CliResult {
    for phase in PeerPhase::ALL {
        if !a.peer_phases.is_empty() && !a.peer_phases.iter().any(|p| p == phase.arg()) {
            continue;
        }
        let store = a
            .dir
            .join(format!("{}-{}.zarr", peer.short, phase.store_name()));
        match peer.run(phase, inputs_dir, &store.to_string_lossy(), &a.codecs)? {
            Some(outcome) => {
                figures
                    .get(&format!("{}: {}", peer.short, phase.figure()))
                    .push(outcome.seconds);
                if let Some(note) = outcome.note {
                    if !figures.notes.contains(&note) {
                        figures.notes.push(note);
                    }
                }
            }
            None => {
                let note = format!("{}: {} unsupported", peer.short, phase.figure());
                if !figures.notes.contains(&note) {
                    figures.notes.push(note);
                }
            }
        }
    }
    Ok(())
}

/// Pairs of (figure, baseline) whose ratio the report prints.
fn comparisons(figures: &Figures) -> Vec<(String, String)> {
    let mut out = vec![
        ("write points".to_owned(), "write points: floor".to_owned()),
        (
            "read all points".to_owned(),
            "read all points: floor".to_owned(),
        ),
        ("1% box".to_owned(), "1% box: floor".to_owned()),
        (
            "read all points (columns)".to_owned(),
            "read all points: floor".to_owned(),
        ),
        ("1% box (columns)".to_owned(), "1% box: floor".to_owned()),
        ("read all objects".to_owned(), "read all points".to_owned()),
        (
            "write polylines".to_owned(),
            "write polylines: floor".to_owned(),
        ),
    ];
    for name in &figures.order {
        if let Some((peer, phase)) = name.split_once(": ") {
            if figures.samples.contains_key(phase)
                && !phase.contains("floor")
                && peer != "read all points"
            {
                // the peers return positions as stored: compared with zv's columnar reads
                let columns = format!("{phase} (columns)");
                let ours = if figures.samples.contains_key(&columns) {
                    columns
                } else {
                    phase.to_owned()
                };
                out.push((name.clone(), ours));
            }
        }
    }
    out
}

fn report(figures: &Figures) -> serde_json::Value {
    println!("{:<34} {:>10} {:>10}", "figure", "min s", "median s");
    let mut json_figures = serde_json::Map::new();
    for name in &figures.order {
        let s = &figures.samples[name];
        println!("{name:<34} {:>10.4} {:>10.4}", s.min(), s.median());
        json_figures.insert(
            name.clone(),
            serde_json::json!({"min": s.min(), "median": s.median()}),
        );
    }
    println!("\n{:<52} {:>9} {:>9}", "ratio", "min", "median");
    let mut json_ratios = serde_json::Map::new();
    for (a, b) in comparisons(figures) {
        let (Some(sa), Some(sb)) = (figures.samples.get(&a), figures.samples.get(&b)) else {
            continue;
        };
        if sa.is_empty() || sb.is_empty() {
            continue;
        }
        let (rmin, rmed) = ratios(sa, sb);
        let label = format!("{a} / {b}");
        println!("{label:<52} {rmin:>9.3} {rmed:>9.3}");
        json_ratios.insert(label, serde_json::json!({"min": rmin, "median": rmed}));
    }
    for note in &figures.notes {
        println!("note: {note}");
    }
    serde_json::json!({"figures": json_figures, "ratios": json_ratios, "notes": figures.notes})
}

/// Runs the suite.
pub(crate) fn run(a: &SuiteArgs) -> CliResult {
    std::fs::create_dir_all(&a.dir)?;
    let inputs = Inputs::generate(a.points, a.objects, a.polylines, a.length);
    let peers = a
        .peers
        .iter()
        .map(|name| Peer::new(name, &a.zv09_python, &a.ref_python, &a.peer_script))
        .collect::<CliResult<Vec<_>>>()?;
    let inputs_dir = a.dir.join("inputs");
    for (list, flag) in [(&a.peer_phases, "--peer-phases"), (&a.phases, "--phases")] {
        if let Some(bad) = list
            .iter()
            .find(|p| !PeerPhase::ALL.iter().any(|phase| phase.arg() == p.as_str()))
        {
            return Err(format!("unknown phase {bad:?} ({flag})").into());
        }
    }
    if !peers.is_empty() {
        inputs.write_for_peers(&inputs_dir, CHUNK, &BOX_LO, &BOX_HI, None)?;
    }
    let mut figures = Figures::default();
    for rep in 0..a.reps {
        eprintln!("repetition {}/{}", rep + 1, a.reps);
        zv_round(a, &inputs, rep, &mut figures)?;
        for peer in &peers {
            peer_round(a, peer, &inputs_dir, &mut figures)?;
        }
    }
    let doc = report(&figures);
    if let Some(path) = &a.json {
        std::fs::write(path, serde_json::to_vec_pretty(&doc)?)?;
    }
    Ok(())
}
