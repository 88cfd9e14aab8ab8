//! Bounding-box queries: the points inside an axis-aligned box ([`BoxHits`], which is
//! [`Points`]), reading only the chunks that intersect it and, for binned point clouds,
//! scanning only the bins that do.
//!
//! The chunks are found without listing the level when that is cheaper: the box's candidate
//! chunk keys are fetched directly when there are few of them next to the chunks the level's
//! bounds span (a missing candidate costs one failed read; a listing costs one entry per
//! chunk of the level). Chunks are read in parallel; nothing is allocated per point.

use rayon::prelude::*;

use super::{Level, Points, Vertices};

use crate::blob::Read;
use crate::error::{Error, Result};
use crate::geometry::Geometry;
use crate::layout::fragment_index::FragmentRows;
use crate::metadata::{chunk_of, ChunkKey, Layout};
use crate::names;

/// The points of a bounding-box query.
pub type BoxHits = Points;

/// The most candidate chunks a box query fetches directly (beyond this it lists the level).
const MAX_CANDIDATES: u128 = 1 << 14;

impl Level {
    /// The points inside the axis-aligned box `[lo, hi]` (inclusive), with the vertex
    /// attributes named in `attributes`. Only chunks that intersect the box are read; for
    /// binned point clouds (one fragment per bin), only the bins that intersect it are
    /// scanned. Points are in chunk key order, and within a chunk in row order (in bin order
    /// for binned point clouds).
    pub fn query_box_with(&self, lo: &[f64], hi: &[f64], attributes: &[&str]) -> Result<BoxHits> {
        let keys = self.box_keys(lo, hi)?;
        let bins = self.binned_fragments()?.map(|bpc| (bpc, self.bin_shape()));
        self.with_store_pool(|| {
            // the attributes' documents are read with their cells
            self.prefetch_cells(&keys, attributes, bins.is_some())?;
            let infos = self.attribute_infos_of(attributes)?;
            let parts = keys
                .par_iter()
                .map(|k| {
                    self.chunk_part(k, &infos, |v| {
                        self.rows_in_box(k, v, lo, hi, bins.as_ref()).map(Some)
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            self.assemble(keys, parts, &infos)
        })
    }

    /// In a sharded ZV 0.9 level, reads ahead the cells of chunks `keys` that a query of part
    /// of the level reads: vertices, the vertex attributes named `attributes`, and with
    /// `fragments` the fragment index ([`GridArray::prefetch`](crate::blob::GridArray::prefetch):
    /// byte ranges of the shards they touch, not whole shards), every array at once (its
    /// document, then its shards' indices, then its cells). Other levels: nothing to do. A name
    /// that is no array here is left to the read that follows to report.
    pub(crate) fn prefetch_cells(
        &self,
        keys: &[ChunkKey],
        attributes: &[&str],
        fragments: bool,
    ) -> Result<()> {
        if self.blobs.layout() != Layout::ChunkGrid || keys.is_empty() {
            return Ok(());
        }
        let mut arrays = vec![self.p(&[names::VERTICES])];
        arrays.extend(
            attributes
                .iter()
                .map(|a| self.p(&[names::VERTEX_ATTRIBUTES, a])),
        );
        if fragments {
            arrays.push(self.p(&[names::VERTEX_FRAGMENTS]));
        }
        // On a store that reads ahead, the first reads of the arrays not opened yet (shard
        // indices, or unsharded cells) are made with their documents, guessed from the
        // vertices' (blob module `primed`): their cells then come with the vertices' cells, a
        // round trip sooner.
        let model = self.blobs.grid(&arrays[0]).ok().flatten();
        let guesses: Vec<Vec<Read>> = arrays
            .iter()
            .enumerate()
            .map(|(i, a)| match &model {
                Some(m) if i > 0 => self.blobs.guessed_reads(m, a, keys),
                _ => Vec::new(),
            })
            .collect();
        let done = arrays
            .par_iter()
            .zip(&guesses)
            .try_for_each(|(a, guessed)| {
                let (grid, ()) = rayon::join(|| self.blobs.grid(a), || self.blobs.prime(guessed));
                match grid {
                    Ok(Some(grid)) => grid.prefetch(keys),
                    Ok(None) | Err(_) => Ok(()),
                }
            });
        // what the arrays' reads did not take (another layout, an error)
        self.blobs.unprime(&guesses.concat());
        done
    }

    /// The rows of chunk `key` (vertices `v`) inside `[lo, hi]`, ascending within each bin;
    /// with `bins` (bins per chunk and bin shape), only the fragments of bins that meet the box
    /// are tested.
    pub(crate) fn rows_in_box(
        &self,
        key: &ChunkKey,
        v: &Vertices,
        lo: &[f64],
        hi: &[f64],
        bins: Option<&(Vec<u64>, Vec<f64>)>,
    ) -> Result<Vec<u64>> {
        let mut kept = Vec::new();
        let Some((bpc, bin_shape)) = bins else {
            v.push_rows_in_box(0..v.len(), lo, hi, &mut kept);
            return Ok(kept);
        };
        let frags = self.fragments(key, v.len() as u64)?;
        let ndim = lo.len();
        let cs = self.chunk_shape();
        let origin: Vec<f64> = key.coords()[key.arity() - ndim..]
            .iter()
            .zip(&cs)
            .map(|(c, s)| *c as f64 * s)
            .collect();
        // fragments are bins only when there is one per bin
        let is_bins = frags.len() as u64 == bpc.iter().product::<u64>();
        let mut p = vec![0.0; v.ndim()];
        for (f, fr) in frags.iter().enumerate() {
            if is_bins && bin_outside(f, bpc, &origin, bin_shape, lo, hi) {
                continue;
            }
            match fr {
                FragmentRows::Range(r) => {
                    let (a, b) = (usize::try_from(r.start), usize::try_from(r.end));
                    if let (Ok(a), Ok(b)) = (a, b) {
                        v.push_rows_in_box(a..b, lo, hi, &mut kept);
                    }
                }
                FragmentRows::Explicit(rows) => {
                    for &r in rows {
                        if v.row_in_box(r as usize, lo, hi, &mut p) {
                            kept.push(r);
                        }
                    }
                }
            }
        }
        Ok(kept)
    }

    /// The chunks a box query over `[lo, hi]` reads, in key order (the bounds are checked:
    /// `ndim` values each, `lo ≤ hi`).
    pub(crate) fn box_keys(&self, lo: &[f64], hi: &[f64]) -> Result<Vec<ChunkKey>> {
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
        Ok(match self.candidate_keys(&clo, &chi) {
            Some(keys) => keys,
            None => self
                .chunk_keys()?
                .into_iter()
                .filter(|k| {
                    let c = &k.coords()[k.arity() - ndim..];
                    c.iter()
                        .zip(clo.iter().zip(&chi))
                        .all(|(x, (a, b))| a <= x && x <= b)
                })
                .collect(),
        })
    }

    /// The keys of the chunks from `clo` to `chi` (chunk coordinates, inclusive) when fetching
    /// them directly is cheaper than listing the level: chunk keys are spatial only (the key
    /// arity is the dimension count), and the candidates are at most a quarter of the chunks
    /// the root bounds span (and at most [`MAX_CANDIDATES`]). `None`: list the level.
    fn candidate_keys(&self, clo: &[i64], chi: &[i64]) -> Option<Vec<ChunkKey>> {
        if self.key_arity != clo.len() {
            return None;
        }
        let cs = self.chunk_shape();
        let span = |a: &[i64], b: &[i64]| -> u128 {
            a.iter()
                .zip(b)
                .map(|(a, b)| (i128::from(*b) - i128::from(*a) + 1).max(0) as u128)
                .fold(1u128, |acc, n| acc.saturating_mul(n))
        };
        let count = span(clo, chi);
        let bounds = span(
            &chunk_of(&self.root.bounds[0], &cs),
            &chunk_of(&self.root.bounds[1], &cs),
        );
        if count > MAX_CANDIDATES || count.saturating_mul(4) > bounds {
            return None;
        }
        let mut keys = vec![ChunkKey(clo.to_vec())];
        for d in 0..clo.len() {
            keys = keys
                .into_iter()
                .flat_map(|k| {
                    (clo[d]..=chi[d]).map(move |c| {
                        let mut k = k.clone();
                        k.0[d] = c;
                        k
                    })
                })
                .collect();
        }
        keys.sort();
        Some(keys)
    }

    /// The points inside `[lo, hi]` (inclusive), without attributes.
    pub fn query_box(&self, lo: &[f64], hi: &[f64]) -> Result<BoxHits> {
        self.query_box_with(lo, hi, &[])
    }

    /// Bins per chunk when a chunk's fragments may be its bins: level 0 of an
    /// undifferentiated point cloud with more than one bin per chunk (and a bin count that
    /// fits a fragment index); else `None`. The query still checks, per chunk, that there is
    /// exactly one fragment per bin (stores may omit empty bins) before pruning by bin.
    pub(crate) fn binned_fragments(&self) -> Result<Option<Vec<u64>>> {
        if self.id != 0 || self.geometry != Geometry::PointCloud {
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
            // the object index is looked for last: a listing
            Some(p) if p > 1 && p <= u32::MAX as u64 && !self.has_object_index()? => Some(bpc),
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
