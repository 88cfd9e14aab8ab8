//! Skeletons: each kept object's trees are coarsened into runs, one metavertex per run. What
//! it keeps:
//!
//! - the key vertices: roots (no parent), branch points (two or more children) and leaves (no
//!   children) are runs of their own, so their positions and attribute values are kept
//!   exactly;
//! - between them, a chain vertex (one parent, one child) joins its parent's run when the parent
//!   is a chain vertex too and lies in the same coarse bin; a run is therefore a piece of one
//!   branch inside one bin, and a branch that leaves a bin and comes back gets another run;
//! - the tree: the parent of a run's metavertex is the metavertex of the run holding the parent
//!   of the run's top vertex. Contracting edges of a tree leaves a tree, so every object stays a
//!   forest with the same roots; the writer numbers the coarse vertices by its rule (depth
//!   first, children in the order of their link rows) as for any skeleton;
//! - per run, as for points ([`super::points`]): mean position (inside the bin), mean numeric
//!   vertex attributes, mode of categorical ones; the object id.
//!
//! Objects are read through their manifests ([`crate::Level::objects`]), a batch at a time,
//! with their parents by zv's rule.

use std::collections::BTreeMap;

use super::points::{column_kinds, PointCoarsener};
use super::{bin_of, kept, OBJECT_BATCH};
use crate::error::{Error, Result};
use crate::metadata::ChunkKey;
use crate::pyramid::links::{set_parent, ParentMap};
use crate::pyramid::source::SourceLevel;
use crate::writer::ZvWriter;

/// The run of every vertex of one object's forest: `parent[v]` (object-local), `bins[v]`.
/// Returns each vertex's run head (the top vertex of its run), or `None` when the parents
/// loop.
pub(crate) fn run_heads(parent: &[Option<usize>], bins: &[Vec<i64>]) -> Option<Vec<usize>> {
    let n = parent.len();
    let mut children = vec![0u32; n];
    for p in parent.iter().flatten() {
        children[*p] += 1;
    }
    let chain = |v: usize| parent[v].is_some() && children[v] == 1;
    let merges = |v: usize| parent[v].is_some_and(|p| chain(v) && chain(p) && bins[v] == bins[p]);
    let mut head: Vec<Option<usize>> = vec![None; n];
    let mut path = Vec::new();
    for v in 0..n {
        let mut u = v;
        // up while the run continues and the head is unknown; a run never exceeds n vertices
        while head[u].is_none() && merges(u) {
            path.push(u);
            if path.len() > n {
                return None;
            }
            u = parent[u]?;
        }
        let h = head[u].unwrap_or(u);
        head[u] = Some(h);
        for w in path.drain(..) {
            head[w] = Some(h);
        }
    }
    head.into_iter().collect()
}

/// Writes the coarse skeletons of every object `keep` keeps into `writer` and returns each
/// fine vertex's metavertex.
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
    let ids: Vec<u64> = (0..source.num_objects).collect();
    for batch in ids.chunks(OBJECT_BATCH) {
        let objects = source.objects(&kept(source, keep, batch))?;
        let mut coarsener: Option<PointCoarsener> = None;
        let mut runs = 0u64;
        // per object, the accumulator of each vertex; (child run, parent run) as accumulators
        let mut slots: Vec<Vec<usize>> = Vec::with_capacity(objects.len());
        let mut edges: Vec<(usize, usize)> = Vec::new();
        for (obj, chunk) in &objects {
            let n = chunk.rows(ndim);
            let mut parent = vec![None; n];
            for l in obj.links.as_deref().unwrap_or_default() {
                if let [c, p] = l[..] {
                    if let Some(slot) = parent.get_mut(c as usize) {
                        *slot = Some(p as usize).filter(|&p| p < n);
                    }
                }
            }
            let bins: Vec<Vec<i64>> = (0..n)
                .map(|r| {
                    let mut b = Vec::with_capacity(ndim);
                    bin_of(
                        &chunk.positions[r * ndim..(r + 1) * ndim],
                        bin_shape,
                        &mut b,
                    );
                    b
                })
                .collect();
            let heads = run_heads(&parent, &bins).ok_or_else(|| {
                Error::InvalidInput(format!(
                    "level {}: skeleton object {} has a cycle of parents",
                    source.level.id(),
                    obj.id
                ))
            })?;
            let c = coarsener.get_or_insert_with(|| {
                PointCoarsener::new(bin_shape.to_vec(), names.clone(), column_kinds(chunk))
            });
            let mut run_of: Vec<Option<u64>> = vec![None; n];
            let mut of_rows = Vec::with_capacity(n);
            for v in 0..n {
                let run = *run_of[heads[v]].get_or_insert_with(|| {
                    runs += 1;
                    runs - 1
                });
                of_rows.push(c.add(chunk, v, Some(run)));
            }
            for v in (0..n).filter(|&v| heads[v] == v) {
                if let Some(p) = parent[v] {
                    edges.push((of_rows[v], of_rows[p]));
                }
            }
            slots.push(of_rows);
        }
        let Some(c) = coarsener else {
            continue;
        };
        // metavertices in (run, bin) order: run order
        let m = c.finish(false)?;
        let mut object_ids = vec![0u64; m.rank.len()];
        for ((obj, _), of_rows) in objects.iter().zip(&slots) {
            for ((key, row), &slot) in obj.rows.iter().zip(of_rows) {
                set_parent(&mut parents, key, row, written + m.rank[slot]);
                object_ids[m.rank[slot] as usize] = obj.id;
            }
        }
        let first = writer.add_vertices_flat(&m.positions, Some(&object_ids), &m.attributes)?;
        let links: Vec<[u64; 2]> = edges
            .iter()
            .map(|&(c, p)| [first + m.rank[c], first + m.rank[p]])
            .collect();
        writer.add_edges(&links, &BTreeMap::new())?;
        written += m.rank.len() as u64;
    }
    Ok(ParentMap::from_rows(parents))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_vertices_are_runs_and_chains_merge_per_bin() {
        // 0 root → 1 → 2 → 3 (branch) → 4 → 5 leaf, 3 → 6 leaf; bins: all 0 except 2 is 1
        let parent = [None, Some(0), Some(1), Some(2), Some(3), Some(4), Some(3)];
        let bins: Vec<Vec<i64>> = [0, 0, 1, 0, 0, 0, 0].iter().map(|&b| vec![b]).collect();
        let heads = run_heads(&parent, &bins).unwrap();
        // 1 and 2 are chain vertices in different bins; 4 alone (its child 5 is a leaf)
        assert_eq!(heads, vec![0, 1, 2, 3, 4, 5, 6]);
        // a longer chain in one bin merges
        let parent = [None, Some(0), Some(1), Some(2), Some(3)];
        let bins: Vec<Vec<i64>> = vec![vec![0]; 5];
        assert_eq!(run_heads(&parent, &bins).unwrap(), vec![0, 1, 1, 1, 4]);
    }
}
