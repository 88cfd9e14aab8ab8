//! The vertex order of skeletons: a depth-first order over each object's trees (roots in
//! index order, each vertex's children in the order of their link rows, as the reference's
//! writer numbers them: "parent-grouped, stable order"), so that most parents are the previous
//! row and the links stay implicit; each tree is its own fragment (see
//! `docs/format-decisions.md`).

use super::ZvWriter;
use crate::error::{Error, InputItem, Result};
use crate::geometry::Geometry;

/// The DFS rank of every vertex and the rank of each tree's root.
#[derive(Debug, Clone)]
pub(super) struct SkeletonOrder {
    rank: Vec<u64>,
    /// A tree's vertices have the ranks from its root's up to the next root's.
    roots: Vec<u64>,
}

impl SkeletonOrder {
    /// The order of `n` vertices linked by `[child, parent]` links (checked: every vertex
    /// exists and has at most one parent); a cycle is an error.
    pub(super) fn new(n: usize, links: impl Iterator<Item = [u64; 2]> + Clone) -> Result<Self> {
        // children of each vertex, as compressed rows
        let mut start = vec![0usize; n + 1];
        let mut has_parent = vec![false; n];
        let mut count = 0;
        for e in links.clone() {
            count += 1;
            start[e[1] as usize + 1] += 1;
            has_parent[e[0] as usize] = true;
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut children = vec![0u64; count];
        for e in links {
            children[fill[e[1] as usize]] = e[0];
            fill[e[1] as usize] += 1;
        }
        // children stay in link-row order (the fill is stable), as the reference visits them
        drop(fill);
        let mut rank = vec![u64::MAX; n];
        let mut roots = Vec::new();
        let mut next = 0u64;
        let mut stack = Vec::new();
        for root in (0..n).filter(|&v| !has_parent[v]) {
            roots.push(next);
            stack.push(root as u64);
            while let Some(v) = stack.pop() {
                rank[v as usize] = next;
                next += 1;
                stack.extend(
                    children[start[v as usize]..start[v as usize + 1]]
                        .iter()
                        .rev(),
                );
            }
        }
        if let Some(v) = rank.iter().position(|&r| r == u64::MAX) {
            return Err(Error::input(
                InputItem::Vertex(v as u64),
                "skeleton vertex on a cycle (it has no root)",
            ));
        }
        Ok(Self { rank, roots })
    }

    /// The DFS rank of vertex `v`.
    pub(super) fn rank(&self, v: u64) -> u64 {
        self.rank[v as usize]
    }

    /// The tree of vertex `v` (trees numbered in root order).
    pub(super) fn tree(&self, v: u64) -> u64 {
        let rank = self.rank(v);
        self.roots.partition_point(|&r| r <= rank) as u64
    }
}

impl ZvWriter {
    /// The DFS order of a skeleton's vertices (none for other geometries).
    pub(super) fn skeleton_order(&self) -> Result<Option<SkeletonOrder>> {
        if self.opts.geometry != Geometry::Skeleton {
            return Ok(None);
        }
        SkeletonOrder::new(self.n_vertices as usize, self.links.edges()).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_follow_the_trees_depth_first() {
        // 0 ← 2 ← 1, 3 is a second root with child 4
        let order = SkeletonOrder::new(5, [[2, 0], [1, 2], [4, 3]].into_iter()).unwrap();
        let ranks: Vec<u64> = (0..5).map(|v| order.rank(v)).collect();
        assert_eq!(ranks, vec![0, 2, 1, 3, 4]);
        let trees: Vec<u64> = (0..5).map(|v| order.tree(v)).collect();
        assert_eq!(trees, vec![1, 1, 1, 2, 2]);
        // children in link-row order, not index order (the example: the reference
        // reads vertices 0, 2, 1)
        let order = SkeletonOrder::new(3, [[2, 0], [1, 0]].into_iter()).unwrap();
        assert_eq!(
            (0..3).map(|v| order.rank(v)).collect::<Vec<_>>(),
            vec![0, 2, 1]
        );
        let err = SkeletonOrder::new(3, [[1, 2], [2, 1]].into_iter()).unwrap_err();
        assert!(err.to_string().contains("cycle"), "{err}");
    }
}
