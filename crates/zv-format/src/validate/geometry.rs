//! Geometry rules: finite coordinates (level 3); every vertex inside its chunk, its bin (for
//! undifferentiated binned point clouds) and the root bounds — all vertices, not a spot
//! check — and the geometry ↔ links convention and link width tables (level 4).

use super::finding::*;
use crate::geometry::Geometry;
use crate::layout::fragment_index::FragmentIndex;
use crate::metadata::{ChunkKey, RootMetadata};
use crate::names;
use crate::reader::{Level, Vertices};

/// How the vertices of a level are placed: what the level-4 position checks compare with.
#[derive(Debug, Clone)]
pub(crate) struct Placement {
    /// Whether the level-4 checks run (non-finite coordinates are always checked).
    enabled: bool,
    chunk_shape: Vec<f64>,
    bounds: [Vec<f64>; 2],
    /// `(bin shape, bins per chunk)` when fragment f is bin f (undifferentiated point
    /// clouds with more than one bin per chunk).
    bins: Option<(Vec<f64>, Vec<u64>)>,
}

impl Placement {
    /// The placement rules of `level`.
    pub(crate) fn new(level: &Level, enabled: bool) -> Self {
        let root = level.root();
        let chunk_shape = level.chunk_shape();
        let bin_shape = level.bin_shape();
        let bpc: Vec<u64> = chunk_shape
            .iter()
            .zip(&bin_shape)
            .map(|(c, b)| (c / b).round().max(1.0) as u64)
            .collect();
        let undifferentiated =
            *level.geometry() == Geometry::PointCloud && !level.has_object_index().unwrap_or(true);
        let binned = bpc.iter().product::<u64>() > 1;
        Self {
            enabled,
            chunk_shape,
            bounds: root.bounds.clone(),
            bins: (undifferentiated && binned).then_some((bin_shape, bpc)),
        }
    }

    /// The number of bins per chunk when fragments are bins.
    pub(crate) fn bins_per_chunk(&self) -> Option<u64> {
        self.bins.as_ref().map(|(_, b)| b.iter().product())
    }
}

/// A tolerance for float32 round-off of a stored coordinate near `scale`.
fn tolerance(p: f64, scale: f64) -> f64 {
    1e-6 * p.abs().max(scale.abs()).max(1.0)
}

/// Whether `p` lies in `[lo, hi]` up to round-off.
fn within(p: f64, lo: f64, hi: f64, scale: f64) -> bool {
    let t = tolerance(p, scale);
    p >= lo - t && p <= hi + t
}

/// Counts violations of one rule in a chunk; reports the first with the count.
struct Tally<'a> {
    rule: &'a Rule,
    count: u64,
    first: Option<String>,
}

impl<'a> Tally<'a> {
    fn new(rule: &'a Rule) -> Self {
        Self {
            rule,
            count: 0,
            first: None,
        }
    }

    fn hit(&mut self, what: impl FnOnce() -> String) {
        if self.first.is_none() {
            self.first = Some(what());
        }
        self.count += 1;
    }

    fn report(self, key: &str, out: &mut Vec<Finding>) {
        if let Some(first) = self.first {
            let more = match self.count {
                1 => String::new(),
                n => format!(" ({n} vertices in all)"),
            };
            out.push(Finding::new(self.rule, key, format!("{first}{more}")));
        }
    }
}

/// Checks the positions of one chunk's vertices: finite, and (when enabled) inside the
/// chunk `key`, inside the bounds, and inside the bin of their fragment.
pub(crate) fn check_positions(
    placement: &Placement,
    key: &ChunkKey,
    vertices: &Vertices,
    fragments: Option<&FragmentIndex>,
    blob: &str,
    out: &mut Vec<Finding>,
) {
    let positions = vertices.positions();
    let ndim = positions.ndim();
    let coords = key.coords();
    let offset = coords.len().saturating_sub(ndim);
    let mut finite = Tally::new(&NON_FINITE);
    let mut chunk = Tally::new(&VERTEX_CHUNK);
    let mut bounds = Tally::new(&VERTEX_BOUNDS);
    for (r, p) in positions.iter().enumerate() {
        if p.iter().any(|x| !x.is_finite()) {
            finite.hit(|| format!("row {r} has a non-finite coordinate {p:?}"));
            continue;
        }
        if !placement.enabled {
            continue;
        }
        let inside = p.iter().enumerate().all(|(d, &x)| {
            let cs = placement.chunk_shape.get(d).copied().unwrap_or(1.0);
            let k = coords.get(offset + d).copied().unwrap_or(0) as f64;
            within(x, k * cs, (k + 1.0) * cs, cs)
        });
        if !inside {
            chunk.hit(|| {
                format!(
                    "row {r} at {p:?} lies outside chunk {key} (chunk shape {:?})",
                    placement.chunk_shape
                )
            });
        }
        let [lo, hi] = &placement.bounds;
        let in_bounds = p.iter().enumerate().all(|(d, &x)| {
            let (l, h) = (lo.get(d).copied(), hi.get(d).copied());
            match (l, h) {
                (Some(l), Some(h)) => within(x, l, h, h - l),
                _ => true,
            }
        });
        if !in_bounds {
            bounds.hit(|| format!("row {r} at {p:?} lies outside the bounds {lo:?}..{hi:?}"));
        }
    }
    let mut bin = Tally::new(&VERTEX_BIN);
    if let (true, Some((bin_shape, bpc)), Some(frags)) =
        (placement.enabled, &placement.bins, fragments)
    {
        if frags.len() as u64 == bpc.iter().product::<u64>() {
            for (f, rows) in frags.iter().enumerate() {
                let local = unravel(f as u64, bpc);
                for r in rows.iter() {
                    let Some(p) = positions.get(r as usize) else {
                        continue;
                    };
                    let inside = p.iter().enumerate().all(|(d, &x)| {
                        let k = coords.get(offset + d).copied().unwrap_or(0);
                        let b = bin_shape[d];
                        let cell = (k * bpc[d] as i64 + local[d] as i64) as f64;
                        !x.is_finite() || within(x, cell * b, (cell + 1.0) * b, b)
                    });
                    if !inside {
                        bin.hit(|| {
                            format!("row {r} at {p:?} of fragment {f} lies outside bin {f} {local:?} (bin shape {bin_shape:?})")
                        });
                    }
                }
            }
        }
    }
    for t in [finite, chunk, bounds, bin] {
        t.report(blob, out);
    }
}

/// The local bin coordinates of bin index `f` (row-major, last axis fastest).
fn unravel(mut f: u64, bpc: &[u64]) -> Vec<u64> {
    let mut out = vec![0; bpc.len()];
    for d in (0..bpc.len()).rev() {
        let n = bpc[d].max(1);
        out[d] = f % n;
        f /= n;
    }
    out
}

/// The `links_convention` values a geometry allows (`None`: any).
fn allowed_conventions(geometry: &str) -> Option<&'static [&'static str]> {
    match geometry {
        "line" | "polyline" | "streamline" => Some(&["implicit_sequential"]),
        "graph" | "mesh" => Some(&["explicit"]),
        "skeleton" => Some(&["implicit_sequential_with_branches", "explicit"]),
        _ => None,
    }
}

/// The level-4 store rules: geometry ↔ links convention, link width per geometry, links in
/// point clouds.
pub(crate) fn check_conformance(root: &RootMetadata, levels: &[Level], out: &mut Vec<Finding>) {
    let composite = levels
        .first()
        .and_then(|l| l.children_of("").ok())
        .is_some_and(|c| c.iter().any(|n| n == "geometry_index"));
    for g in &root.geometry_types {
        if let Some(allowed) = allowed_conventions(g) {
            if !composite && !allowed.contains(&root.links_convention.as_str()) {
                out.push(Finding::new(
                    &LINKS_CONVENTION,
                    "zarr.json",
                    format!(
                        "geometry `{g}` needs links_convention {}, the store says `{}`",
                        allowed.join(" or "),
                        root.links_convention
                    ),
                ));
            }
        }
    }
    let geometry = root.geometry_types.first().map(String::as_str);
    for level in levels {
        if !level.link_deltas().unwrap_or_default().contains(&0) {
            continue;
        }
        let key = level.p(&[names::LINKS, "0", "zarr.json"]);
        if geometry.is_none_or(|g| g == "point_cloud") && root.geometry_types.len() <= 1 {
            out.push(Finding::new(
                &POINT_CLOUD_LINKS,
                &key,
                "a point cloud has intra-chunk links",
            ));
        }
        let Ok(width) = level.declared_link_width() else {
            continue;
        };
        // the reader's rule (Geometry::link_widths), reported here instead of refused
        let ok = level
            .geometry()
            .link_widths()
            .is_none_or(|allowed| allowed.contains(&width));
        if !ok && !composite {
            out.push(Finding::new(
                &LINK_WIDTH,
                &key,
                format!(
                    "`link_width` {width} does not fit geometry `{}`",
                    geometry.unwrap_or("")
                ),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unravel_is_row_major_last_axis_fastest() {
        assert_eq!(unravel(0, &[2, 2, 2]), vec![0, 0, 0]);
        assert_eq!(unravel(1, &[2, 2, 2]), vec![0, 0, 1]);
        assert_eq!(unravel(6, &[2, 2, 2]), vec![1, 1, 0]);
    }

    #[test]
    fn tolerance_accepts_round_off_only() {
        assert!(within(10.000_001, 0.0, 10.0, 10.0));
        assert!(!within(10.1, 0.0, 10.0, 10.0));
        assert!(allowed_conventions("point_cloud").is_none());
        assert_eq!(allowed_conventions("graph"), Some(&["explicit"][..]));
    }
}
