//! `zv bench lod-bytes`: what one box query costs at each level of a store — points returned,
//! read requests and bytes read, counted through [`zv_core::metered::MeteredStore`] — so the
//! saving of a level-of-detail query at a coarse pyramid level can be quoted against level 0.

use std::sync::Arc;
use std::time::Instant;

use zv_core::metered::MeteredStore;
use zv_core::store::Store;
use zv_format::ZvStore;

use crate::CliResult;

/// One level's figures.
struct Row {
    level: u32,
    points: usize,
    reads: u64,
    bytes: u64,
    seconds: f64,
}

/// Parses `x0,y0,…,x1,y1,…` (low corner, then high corner) for `ndim` axes.
fn parse_box(text: &str, ndim: usize) -> CliResult<(Vec<f64>, Vec<f64>)> {
    let v: Vec<f64> = text
        .split(',')
        .map(|s| s.trim().parse::<f64>())
        .collect::<Result<_, _>>()
        .map_err(|e| format!("--box {text:?}: {e}"))?;
    if v.len() != 2 * ndim {
        return Err(format!(
            "--box {text:?}: {} numbers, expected {} (low corner, then high corner)",
            v.len(),
            2 * ndim
        )
        .into());
    }
    Ok((v[..ndim].to_vec(), v[ndim..].to_vec()))
}

/// Runs the box query on every level of `url` and prints one row per level.
pub(crate) fn run(url: &str, box_text: &str, json: bool) -> CliResult {
    let inner = zv_core::plugin::open_store(url)?;
    let metered = Arc::new(MeteredStore::new(inner));
    let zv = ZvStore::open(Arc::clone(&metered) as Arc<dyn Store>)?;
    let (lo, hi) = parse_box(box_text, zv.root().ndim())?;
    let mut rows = Vec::new();
    for &level in zv.level_ids() {
        metered.reset();
        let start = Instant::now();
        let hits = zv.level(level)?.query_box_with(&lo, &hi, &[])?;
        let seconds = start.elapsed().as_secs_f64();
        let m = metered.meter();
        rows.push(Row {
            level,
            points: hits.positions.len(),
            reads: m.reads,
            bytes: m.bytes_read,
            seconds,
        });
    }
    let base = rows.first().map_or(0, |r| r.bytes).max(1) as f64;
    if json {
        let levels: Vec<_> = rows
            .iter()
            .map(|r| {
                serde_json::json!({
                    "level": r.level, "points": r.points, "reads": r.reads,
                    "bytes_read": r.bytes, "seconds": r.seconds,
                    "level0_bytes_ratio": base / r.bytes.max(1) as f64,
                })
            })
            .collect();
        return crate::print_json(&serde_json::json!({ "box": [lo, hi], "levels": levels }));
    }
    println!("level      points      reads      bytes read   level 0 ÷ this   seconds");
    for r in &rows {
        println!(
            "{:>5} {:>11} {:>10} {:>15} {:>16.1} {:>9.3}",
            r.level,
            r.points,
            r.reads,
            r.bytes,
            base / r.bytes.max(1) as f64,
            r.seconds
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parse_box;

    #[test]
    fn a_box_is_two_corners() {
        assert_eq!(
            parse_box("0,1,2,3,4,5", 3).unwrap(),
            (vec![0.0, 1.0, 2.0], vec![3.0, 4.0, 5.0])
        );
        assert!(parse_box("0,1,2", 3).is_err());
        assert!(parse_box("0,a", 1).is_err());
    }
}
