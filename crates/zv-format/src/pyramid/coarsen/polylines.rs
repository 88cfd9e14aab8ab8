//! Polylines, streamlines and lines: each kept object's polyline is coarsened in path order
//! into runs, one metavertex per run. What it keeps:
//!
//! - the endpoints: the first and the last vertex of a polyline are runs of their own, so
//!   their positions and attribute values are kept exactly;
//! - the order: interior vertices are merged only with their interior neighbours in the same
//!   coarse bin — consecutive vertices, never a vertex the path left the bin before (a path
//!   that leaves a bin and comes back gets a second metavertex there: no back-and-forth);
//! - connectivity: the metavertices of a polyline, in run order, are one polyline written as
//!   the object of the same id, so it stays one connected path, and its pieces in different
//!   chunks are joined by cross-chunk records as the writer joins any polyline's;
//! - per run, as for points ([`super::points`]): position the mean of the run's positions
//!   (inside the bin), numeric vertex attributes the mean, categorical ones the mode;
//! - object ids: dropped objects (and objects without vertices) are empty polylines.
//!
//! A polyline of `n` vertices becomes at most `n` metavertices (at least `min(n, 2)`): a line
//! (two vertices, both endpoints) is kept whole, so a line pyramid thins lines by object
//! sparsity only; a dropped line is an empty line (the writer allows them at pyramid levels).
//! Objects are read through their manifests ([`crate::Level::objects`]), a batch of objects at
//! a time; a chunk that objects of several batches cross is read once per batch.

use std::collections::BTreeMap;

use super::points::{column_kinds, PointCoarsener};
use super::{bin_of, kept, OBJECT_BATCH};
use crate::error::Result;
use crate::metadata::ChunkKey;
use crate::pyramid::links::{set_parent, ParentMap};
use crate::pyramid::source::SourceLevel;
use crate::writer::ZvWriter;

/// Whether vertex `r` of a polyline of `n` vertices starts a run, given whether it lies in
/// the same coarse bin as vertex `r − 1`: every vertex does, except an interior vertex after
/// an interior vertex of its bin.
pub(crate) fn starts_run(r: usize, n: usize, same_bin_as_previous: bool) -> bool {
    !(r >= 2 && r + 1 < n && same_bin_as_previous)
}

/// Writes the coarse polylines of every object of `source` (those `keep` drops, empty) into
/// `writer`, and returns each fine vertex's metavertex.
pub(crate) fn coarsen_level(
    source: &SourceLevel,
    keep: &[bool],
    bin_shape: &[f64],
    writer: &mut ZvWriter,
) -> Result<ParentMap> {
    let ndim = bin_shape.len();
    let names = source.columns();
    let mut parents: BTreeMap<ChunkKey, Vec<u64>> = BTreeMap::new();
    let mut written = 0u64;
    let (mut bin, mut prev) = (Vec::new(), Vec::new());
    let ids: Vec<u64> = (0..source.num_objects).collect();
    for batch in ids.chunks(OBJECT_BATCH) {
        let objects = source.objects(&kept(source, keep, batch))?;
        let mut coarsener: Option<PointCoarsener> = None;
        // offsets of the coarse polylines (every object of the batch), in runs
        let mut offsets = Vec::with_capacity(batch.len() + 1);
        offsets.push(0usize);
        let mut runs = 0usize;
        let mut slots: Vec<Vec<usize>> = Vec::with_capacity(objects.len());
        let mut next = objects.iter().peekable();
        for &o in batch {
            if let Some((_, chunk)) = next.next_if(|(obj, _)| obj.id == o) {
                let c = coarsener.get_or_insert_with(|| {
                    PointCoarsener::new(bin_shape.to_vec(), names.clone(), column_kinds(chunk))
                });
                let n = chunk.rows(ndim);
                let mut of_rows = Vec::with_capacity(n);
                for r in 0..n {
                    bin_of(
                        &chunk.positions[r * ndim..(r + 1) * ndim],
                        bin_shape,
                        &mut bin,
                    );
                    if starts_run(r, n, r > 0 && bin == prev) {
                        runs += 1;
                    }
                    // a run lies in one bin: its accumulator is its own
                    of_rows.push(c.add(chunk, r, Some(runs as u64 - 1)));
                    std::mem::swap(&mut bin, &mut prev);
                }
                slots.push(of_rows);
            }
            offsets.push(runs);
        }
        let Some(c) = coarsener else {
            writer.add_polylines_flat(&[], &offsets, &BTreeMap::new())?;
            continue;
        };
        // metavertices in (run, bin) order: run order
        let m = c.finish(false)?;
        for ((obj, _), of_rows) in objects.iter().zip(&slots) {
            for ((key, row), &slot) in obj.rows.iter().zip(of_rows) {
                set_parent(&mut parents, key, row, written + m.rank[slot]);
            }
        }
        writer.add_polylines_flat(&m.positions, &offsets, &m.attributes)?;
        written += m.rank.len() as u64;
    }
    Ok(ParentMap::from_rows(parents))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_are_runs_and_interior_vertices_merge_in_order() {
        // bins along a path of 7: A A A B A A A
        let bins = ['A', 'A', 'A', 'B', 'A', 'A', 'A'];
        let mut runs = 0;
        let ids: Vec<usize> = (0..bins.len())
            .map(|r| {
                if starts_run(r, bins.len(), r > 0 && bins[r] == bins[r - 1]) {
                    runs += 1;
                }
                runs - 1
            })
            .collect();
        // first alone, 1-2 merged, 3 alone (B), 4-5 merged (back in A: a new run), last alone
        assert_eq!(ids, vec![0, 1, 1, 2, 3, 3, 4]);
        assert!(starts_run(0, 1, false));
        assert!(starts_run(1, 2, true));
    }
}
