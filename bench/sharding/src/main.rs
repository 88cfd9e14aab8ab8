//! Sharded reads, zv against zarrs, on a 1 GiB uint16 array written once by zarrs (see the
//! README's benchmark section; run through `scripts/bench-sharding.sh`).
//!
//! ```text
//! zv-bench-sharding --dir DIR [--reps N] [--reads N] [--codec bytes|zstd|both] [--cold] [--small] [--keep] [--only zv|zarrs]
//! ```
//!
//! For each inner codec the array is written with zarrs under `DIR` (kept between runs with
//! `--keep`), opened once by each implementation, and read: the whole array, and `--reads`
//! random one-inner-chunk regions one after another. Each figure is measured `--reps` times,
//! alternating which implementation goes first; the report gives min and median and the ratio
//! zarrs/zv (above 1.0: zv is faster). Both must read the same bytes (checksums compared).
//! `--cold` evicts the array's files from the page cache (`posix_fadvise(DONTNEED)`) before
//! every measurement, so a disk directory is read from the disk. `--only` measures one
//! implementation (for profiling; no ratio, no cross-check).

mod read;
mod write;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use read::{Reader, Zarrs, Zv};
use write::{InnerCodec, Layout};

/// Any error, reported by `main`.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

struct Options {
    dir: PathBuf,
    reps: usize,
    reads: usize,
    codecs: Vec<InnerCodec>,
    cold: bool,
    layout: Layout,
    keep: bool,
    only: Option<&'static str>,
}

fn parse_args() -> Result<Options, BoxError> {
    let mut o = Options {
        dir: PathBuf::new(),
        reps: 5,
        reads: 100,
        codecs: vec![InnerCodec::Bytes, InnerCodec::Zstd],
        cold: false,
        layout: Layout::full(),
        keep: false,
        only: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--dir" => o.dir = PathBuf::from(value()?),
            "--reps" => o.reps = value()?.parse()?,
            "--reads" => o.reads = value()?.parse()?,
            "--codec" => {
                o.codecs = match value()?.as_str() {
                    "bytes" => vec![InnerCodec::Bytes],
                    "zstd" => vec![InnerCodec::Zstd],
                    "both" => vec![InnerCodec::Bytes, InnerCodec::Zstd],
                    other => return Err(format!("unknown codec {other}").into()),
                }
            }
            "--cold" => o.cold = true,
            "--small" => o.layout = Layout::small(),
            "--keep" => o.keep = true,
            "--only" => {
                o.only = match value()?.as_str() {
                    "zv" => Some("zv"),
                    "zarrs" => Some("zarrs"),
                    other => return Err(format!("unknown implementation {other}").into()),
                }
            }
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    if o.dir.as_os_str().is_empty() || o.reps == 0 {
        return Err("usage: zv-bench-sharding --dir DIR [--reps N>0] [--reads N] [--codec bytes|zstd|both] [--cold] [--small] [--keep] [--only zv|zarrs]".into());
    }
    Ok(o)
}

/// Every regular file under `dir`.
pub fn files_under(dir: &Path) -> Result<Vec<PathBuf>, BoxError> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let entry = entry?;
            if entry.file_type()?.is_dir() {
                stack.push(entry.path());
            } else {
                out.push(entry.path());
            }
        }
    }
    Ok(out)
}

/// Drops the (clean) pages of every file under `dir` from the page cache.
fn evict(dir: &Path) -> Result<(), BoxError> {
    for path in files_under(dir)? {
        let file = std::fs::File::open(&path)?;
        rustix::fs::fadvise(&file, 0, None, rustix::fs::Advice::DontNeed)?;
    }
    Ok(())
}

/// FNV-1a over 8-byte words (and the tail), continuing from `h`.
fn checksum(h: u64, bytes: &[u8]) -> u64 {
    let mut h = h;
    let words = bytes.chunks_exact(8);
    let tail = words.remainder();
    for w in words {
        let mut a = [0u8; 8];
        a.copy_from_slice(w);
        h = (h ^ u64::from_le_bytes(a)).wrapping_mul(0x0100_0000_01B3);
    }
    for &b in tail {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01B3);
    }
    h
}

/// The start of each of `n` pseudo-random inner chunks (a fixed seed: the same for both).
fn random_inner_chunks(layout: &Layout, n: usize) -> Vec<[u64; 2]> {
    let grid = layout.inner_grid();
    let mut s: u64 = 0x2545_F491_4F6C_DD1D;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let i = (s >> 33) % (grid[0] * grid[1]);
            [
                (i / grid[1]) * layout.inner[0],
                (i % grid[1]) * layout.inner[1],
            ]
        })
        .collect()
}

/// One timed measurement: the full read (`chunks` `None`), or the inner-chunk reads in
/// sequence. The checksum of what was read is computed while the clock is stopped.
fn measure(
    r: &dyn Reader,
    layout: &Layout,
    chunks: Option<&[[u64; 2]]>,
) -> Result<(Duration, u64), BoxError> {
    let mut sum = 0xCBF2_9CE4_8422_2325u64;
    let mut outside = Duration::ZERO;
    let mut sink = |b: &[u8]| {
        let t = Instant::now();
        sum = checksum(sum, b);
        outside += t.elapsed();
    };
    let t0 = Instant::now();
    match chunks {
        None => r.read(&[0, 0], &layout.shape, &mut sink)?,
        Some(starts) => {
            for s in starts {
                r.read(s, &layout.inner, &mut sink)?;
            }
        }
    }
    let total = t0.elapsed();
    Ok((total.saturating_sub(outside), sum))
}

struct Row {
    what: String,
    zv: Vec<Duration>,
    zarrs: Vec<Duration>,
}

fn stats(v: &[Duration]) -> (f64, f64) {
    let mut s: Vec<f64> = v.iter().map(Duration::as_secs_f64).collect();
    s.sort_by(f64::total_cmp);
    (s[0], s[s.len() / 2])
}

fn run_codec(o: &Options, codec: InnerCodec) -> Result<Vec<Row>, BoxError> {
    let root = o.dir.join(format!("sharding-bench-{}.zarr", codec.slug()));
    if !o.keep || !root.join("zarr.json").exists() {
        if root.exists() {
            std::fs::remove_dir_all(&root)?;
        }
        let t = Instant::now();
        write::write_with_zarrs(&root, &o.layout, codec)?;
        let stored: u64 = files_under(&root)?
            .iter()
            .map(|p| std::fs::metadata(p).map(|m| m.len()))
            .sum::<Result<_, _>>()?;
        eprintln!(
            "wrote {} with zarrs in {:.1} s: {} MiB stored for {} MiB of data",
            root.display(),
            t.elapsed().as_secs_f64(),
            stored >> 20,
            o.layout.nbytes() >> 20
        );
    }
    let zv = Zv::open(&root)?;
    let zarrs = Zarrs::open(&root)?;
    let chunks = random_inner_chunks(&o.layout, o.reads);
    let mut rows = Vec::new();
    for (what, sel) in [
        ("full read".to_owned(), None),
        (
            format!("{} inner-chunk reads", o.reads),
            Some(chunks.as_slice()),
        ),
    ] {
        let mut row = Row {
            what: format!("{} {what}", codec.name()),
            zv: vec![],
            zarrs: vec![],
        };
        let mut sums = [None, None];
        for rep in 0..o.reps {
            let order: [(usize, &dyn Reader); 2] = if rep % 2 == 0 {
                [(0, &zv), (1, &zarrs)]
            } else {
                [(1, &zarrs), (0, &zv)]
            };
            for (k, r) in order {
                if o.only.is_some_and(|n| n != r.name()) {
                    continue;
                }
                if o.cold {
                    evict(&root)?;
                }
                let (d, sum) = measure(r, &o.layout, sel)?;
                if *sums[k].get_or_insert(sum) != sum {
                    return Err(format!(
                        "{}: {} read different values across repetitions",
                        row.what,
                        r.name()
                    )
                    .into());
                }
                if k == 0 {
                    row.zv.push(d)
                } else {
                    row.zarrs.push(d)
                }
            }
        }
        if o.only.is_none() && sums[0] != sums[1] {
            return Err(format!(
                "{}: zv and zarrs read different values ({:?})",
                row.what, sums
            )
            .into());
        }
        eprintln!(
            "{}: checksums equal ({:016x})",
            row.what,
            sums[0].or(sums[1]).unwrap_or(0)
        );
        rows.push(row);
    }
    if !o.keep {
        std::fs::remove_dir_all(&root)?;
    }
    Ok(rows)
}

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), BoxError> {
    let o = parse_args()?;
    let l = &o.layout;
    println!(
        "# sharded reads, zv vs zarrs: uint16 {}x{} ({} MiB), shards {}x{}, inner chunks {}x{}, written by zarrs",
        l.shape[0], l.shape[1], l.nbytes() >> 20, l.shard[0], l.shard[1], l.inner[0], l.inner[1]
    );
    println!(
        "# dir {}, {} reps, {} threads, page cache {}",
        o.dir.display(),
        o.reps,
        rayon::current_num_threads(),
        if o.cold {
            "evicted before each measurement"
        } else {
            "warm"
        }
    );
    let mut rows = Vec::new();
    for &codec in &o.codecs {
        rows.extend(run_codec(&o, codec)?);
    }
    println!("| workload | zv min s | zv median s | zarrs min s | zarrs median s | zarrs/zv (median) | zarrs/zv (min) |");
    println!("|---|---|---|---|---|---|---|");
    for r in &rows {
        if o.only.is_some() {
            let (v, name) = if r.zv.is_empty() {
                (&r.zarrs, "zarrs")
            } else {
                (&r.zv, "zv")
            };
            let (min, med) = stats(v);
            println!(
                "| {} ({name} only) | min {min:.4} | median {med:.4} |",
                r.what
            );
            continue;
        }
        let (zmin, zmed) = stats(&r.zv);
        let (rmin, rmed) = stats(&r.zarrs);
        println!(
            "| {} | {zmin:.4} | {zmed:.4} | {rmin:.4} | {rmed:.4} | {:.2} | {:.2} |",
            r.what,
            rmed / zmed,
            rmin / zmin
        );
    }
    Ok(())
}
