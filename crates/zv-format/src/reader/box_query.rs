//! Bounding-box queries ([`BoxHits`]): the points inside an axis-aligned box, reading only
//! the chunks that intersect it and, for binned point clouds, scanning only the bins that do.

use std::collections::BTreeMap;

use rayon::prelude::*;

use super::{AttributeInfo, Level};
use crate::error::{Error, Result};
use crate::geometry::Geometry;
use crate::layout::attributes::AttributeRows;
use crate::metadata::{chunk_of, ChunkKey};

/// The points of a bounding-box query.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BoxHits {
    /// `(chunk, row)` of each point.
    pub rows: Vec<(ChunkKey, u64)>,
    /// The positions.
    pub positions: Vec<Vec<f64>>,
    /// The requested vertex attributes, row-aligned.
    pub vertex_attributes: BTreeMap<String, AttributeRows>,
}

impl Level {
    /// The points inside the axis-aligned box `[lo, hi]` (inclusive), with the vertex
    /// attributes named in `attributes`. Only chunks that intersect the box are read; for
    /// binned point clouds (one fragment per bin), only the bins that intersect it are
    /// scanned.
    pub fn query_box_with(&self, lo: &[f64], hi: &[f64], attributes: &[&str]) -> Result<BoxHits> {
        let ndim = self.root.ndim();
        if lo.len() != ndim
            || hi.len() != ndim
            || lo.iter().zip(hi).any(|(a, b)| {
                !matches!(
                    a.partial_cmp(b),
                    Some(std::cmp::Ordering::Less | std::cmp::Ordering::Equal)
                )
            })
        {
            return Err(Error::InvalidInput(format!(
                "box {lo:?}..{hi:?} must have {ndim} ordered bounds"
            )));
        }
        let cs = self.chunk_shape();
        let clo = chunk_of(lo, &cs);
        let chi = chunk_of(hi, &cs);
        let keys: Vec<ChunkKey> = self
            .chunk_keys()?
            .into_iter()
            .filter(|k| {
                let c = &k.coords()[k.arity() - ndim..];
                c.iter()
                    .zip(clo.iter().zip(&chi))
                    .all(|(x, (a, b))| a <= x && x <= b)
            })
            .collect();
        let infos: Vec<AttributeInfo> = attributes
            .iter()
            .map(|n| self.vertex_attribute_info(n))
            .collect::<Result<_>>()?;
        let binned = self.binned_fragments()?;
        let bin_shape = self.bin_shape();
        let per_chunk: Vec<BoxHits> = keys
            .par_iter()
            .map(|k| -> Result<BoxHits> {
                let mut hits = BoxHits::default();
                let Some(v) = self.vertices(k)? else {
                    return Ok(hits);
                };
                let rows: Vec<u64> = match &binned {
                    Some(bpc) => {
                        let frags = self.fragments(k, v.len() as u64)?;
                        let origin: Vec<f64> = k.coords()[k.arity() - ndim..]
                            .iter()
                            .zip(&cs)
                            .map(|(c, s)| *c as f64 * s)
                            .collect();
                        // fragments are bins only when there is one per bin
                        let is_bins = frags.len() as u64 == bpc.iter().product::<u64>();
                        let mut rows = Vec::new();
                        for (f, fr) in frags.iter().enumerate() {
                            if fr.is_empty()
                                || (is_bins && bin_outside(f, bpc, &origin, &bin_shape, lo, hi))
                            {
                                continue;
                            }
                            rows.extend(fr.iter());
                        }
                        rows
                    }
                    None => (0..v.len() as u64).collect(),
                };
                let mut kept = Vec::new();
                for r in rows {
                    let Some(p) = v.row(r as usize) else { continue };
                    if p.iter()
                        .zip(lo.iter().zip(hi))
                        .all(|(x, (a, b))| a <= x && x <= b)
                    {
                        kept.push(r);
                        hits.rows.push((k.clone(), r));
                        hits.positions.push(p);
                    }
                }
                for info in &infos {
                    if let Some(a) = self.vertex_attribute(info, k, v.len() as u64)? {
                        let picked = self.gather_vertex_rows(info, k, &a, kept.iter().copied())?;
                        hits.vertex_attributes.insert(info.name.clone(), picked);
                    }
                }
                Ok(hits)
            })
            .collect::<Result<_>>()?;
        let mut out = BoxHits::default();
        for h in per_chunk {
            out.rows.extend(h.rows);
            out.positions.extend(h.positions);
            for (name, rows) in h.vertex_attributes {
                self.append_rows(&mut out.vertex_attributes, &name, rows)?;
            }
        }
        Ok(out)
    }

    /// The points inside `[lo, hi]` (inclusive), without attributes.
    pub fn query_box(&self, lo: &[f64], hi: &[f64]) -> Result<BoxHits> {
        self.query_box_with(lo, hi, &[])
    }

    /// Bins per chunk when a chunk's fragments may be its bins: level 0 of an
    /// undifferentiated point cloud with more than one bin per chunk (and a bin count that
    /// fits a fragment index); else `None`. The query still checks, per chunk, that there is
    /// exactly one fragment per bin (stores may omit empty bins) before pruning by bin.
    fn binned_fragments(&self) -> Result<Option<Vec<u64>>> {
        if self.id != 0 || self.geometry != Geometry::PointCloud || self.has_object_index {
            return Ok(None);
        }
        let bpc: Vec<u64> = self
            .chunk_shape()
            .iter()
            .zip(self.bin_shape())
            .map(|(c, b)| {
                let r = (c / b).round();
                if r.is_finite() && r >= 1.0 && r <= u32::MAX as f64 {
                    r as u64
                } else {
                    0
                }
            })
            .collect();
        let product = bpc
            .iter()
            .try_fold(1u64, |acc, &b| acc.checked_mul(b).filter(|&p| p > 0));
        Ok(match product {
            Some(p) if p > 1 && p <= u32::MAX as u64 => Some(bpc),
            _ => None,
        })
    }
}

/// Whether bin `f` of a chunk (row-major local bin coordinates, last axis fastest) lies
/// entirely outside `[lo, hi]`. The bin's edges are widened by a relative tolerance: writers
/// assign bins with `floor(x / bin)`, which rounding can put one bin off the edges rebuilt
/// here (and clamps to the chunk's edge bins), so a bin is only skipped when it is clearly
/// outside; the exact point test follows.
fn bin_outside(f: usize, bpc: &[u64], origin: &[f64], bin: &[f64], lo: &[f64], hi: &[f64]) -> bool {
    let mut rest = f as u64;
    let mut local = vec![0u64; bpc.len()];
    for d in (0..bpc.len()).rev() {
        local[d] = rest % bpc[d].max(1);
        rest /= bpc[d].max(1);
    }
    if rest > 0 {
        return false; // more fragments than bins: not a bin layout, keep it
    }
    (0..bpc.len()).any(|d| {
        let a = origin[d] + local[d] as f64 * bin[d];
        let b = a + bin[d];
        let tol = 1e-9 * (a.abs() + b.abs() + bin[d].abs());
        b < lo[d] - tol || a > hi[d] + tol
    })
}
