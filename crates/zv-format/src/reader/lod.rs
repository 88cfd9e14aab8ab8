//! Levels of detail: choosing a level by vertex budget or by spatial resolution, and drilling
//! between levels through the cross-level links (`links/±1/<key>` rows with the same chunk key
//! on both levels, `cross_chunk_links/±1/data` records for the others).

use std::collections::BTreeSet;

use super::ZvStore;
use crate::error::{Error, Result};
use crate::metadata::ChunkKey;

/// A vertex of a level: its chunk and row.
pub type VertexRef = (ChunkKey, u64);

impl ZvStore {
    /// The finest level whose `vertex_count` is at most `budget` (the coarsest level when none
    /// is).
    pub fn level_for_budget(&self, budget: u64) -> Result<u32> {
        let mut chosen = self.level_ids()[self.level_ids().len() - 1];
        for &id in self.level_ids().iter().rev() {
            if self.level(id)?.metadata().vertex_count <= budget {
                chosen = id;
            }
        }
        Ok(chosen)
    }

    /// The coarsest level whose bins are at most `size` wide on every axis, i.e. whose
    /// metavertex spacing still resolves `size` (level 0 when none is).
    pub fn level_for_resolution(&self, size: f64) -> Result<u32> {
        let mut chosen = self.level_ids()[0];
        for &id in self.level_ids() {
            if self.level(id)?.bin_shape().iter().all(|&b| b <= size) {
                chosen = id;
            }
        }
        Ok(chosen)
    }

    /// The vertices of level `level + delta` linked to vertex `v` of `level` under `delta`
    /// (`+1`: its parent; `-1`: its children), from `links/<delta>` and
    /// `cross_chunk_links/<delta>` of `level`, in stored order.
    pub fn linked(&self, level: u32, delta: i32, v: &VertexRef) -> Result<Vec<VertexRef>> {
        let l = self.level(level)?;
        let mut out = Vec::new();
        if let Some(rows) = l.cross_level_links(delta, &v.0, 2)? {
            for g in &rows.groups {
                for r in g.chunks_exact(2) {
                    if r[0] == v.1 as i64 {
                        out.push((v.0.clone(), r[1] as u64));
                    }
                }
            }
        }
        if let Some(c) = l.cross_chunk_links(delta)? {
            for r in 0..c.links.len() {
                let (Some((a, ra)), Some((b, rb))) =
                    (c.links.endpoint(r, 0), c.links.endpoint(r, 1))
                else {
                    continue;
                };
                if a == v.0.coords() && ra == v.1 {
                    out.push((ChunkKey(b.to_vec()), rb));
                }
            }
        }
        Ok(out)
    }

    /// The parent of vertex `v` of `level` at `level + 1` (its `+1` link), if any.
    pub fn parent(&self, level: u32, v: &VertexRef) -> Result<Option<VertexRef>> {
        Ok(self.linked(level, 1, v)?.into_iter().next())
    }

    /// The children of vertex `v` of `level` at `level − 1`: its `-1` links when the store
    /// stores them (`explicit`), else the `+1` links of level `level − 1` inverted (a scan of
    /// that level's `+1` links for this chunk and its cross-chunk records). Sorted.
    pub fn children(&self, level: u32, v: &VertexRef) -> Result<Vec<VertexRef>> {
        let one = BTreeSet::from([v.clone()]);
        Ok(self.children_of_all(level, &one)?.into_iter().collect())
    }

    /// The vertex of level `to` (at or above `level`) that vertex `v` of `level` coarsens
    /// into: its parents composed level by level (`None` when a level has none, e.g. its
    /// object was dropped).
    pub fn ancestor(&self, level: u32, v: &VertexRef, to: u32) -> Result<Option<VertexRef>> {
        if to < level {
            return Err(Error::InvalidInput(format!(
                "the ancestor of a level-{level} vertex at level {to}: a coarser level is needed"
            )));
        }
        let mut at = v.clone();
        for l in level..to {
            match self.parent(l, &at)? {
                Some(p) => at = p,
                None => return Ok(None),
            }
        }
        Ok(Some(at))
    }

    /// The vertices of level `to` (at or below `level`) that vertex `v` of `level` stands
    /// for: its children composed level by level (one pass over each level's links for the
    /// whole frontier). Sorted.
    pub fn descendants(&self, level: u32, v: &VertexRef, to: u32) -> Result<Vec<VertexRef>> {
        if to > level {
            return Err(Error::InvalidInput(format!(
                "the descendants of a level-{level} vertex at level {to}: a finer level is needed"
            )));
        }
        let mut frontier = BTreeSet::from([v.clone()]);
        for l in (to + 1..=level).rev() {
            if frontier.is_empty() {
                break;
            }
            frontier = self.children_of_all(l, &frontier)?;
        }
        Ok(frontier.into_iter().collect())
    }

    /// The children at `level − 1` of every vertex of `vs` (at `level`), as [`ZvStore::children`]
    /// finds them, in one pass over the links of each chunk involved and the cross-chunk
    /// records.
    fn children_of_all(&self, level: u32, vs: &BTreeSet<VertexRef>) -> Result<BTreeSet<VertexRef>> {
        let mut out = BTreeSet::new();
        if level == 0 || vs.is_empty() {
            return Ok(out);
        }
        let keys: BTreeSet<&ChunkKey> = vs.iter().map(|(k, _)| k).collect();
        let has = |k: &[i64], r: u64| vs.contains(&(ChunkKey(k.to_vec()), r));
        let here = self.level(level)?;
        // explicit storage: the -1 links of `level`; else the +1 links of `level − 1` inverted
        let (l, delta, from, to) =
            if here.link_deltas()?.contains(&-1) || here.cross_chunk_deltas()?.contains(&-1) {
                (here, -1, 0, 1)
            } else {
                (self.level(level - 1)?, 1, 1, 0)
            };
        // ragged rows pair vertices of chunks with the same key: only those blobs can hold them
        for key in keys {
            if let Some(rows) = l.cross_level_links(delta, key, 2)? {
                for g in &rows.groups {
                    for r in g.chunks_exact(2) {
                        if has(&key.0, r[from] as u64) {
                            out.insert((key.clone(), r[to] as u64));
                        }
                    }
                }
            }
        }
        if let Some(c) = l.cross_chunk_links(delta)? {
            for r in 0..c.links.len() {
                let (Some(e0), Some(e1)) = (c.links.endpoint(r, 0), c.links.endpoint(r, 1)) else {
                    continue;
                };
                let ((a, ra), (b, rb)) = if from == 0 { (e0, e1) } else { (e1, e0) };
                if has(a, ra) {
                    out.insert((ChunkKey(b.to_vec()), rb));
                }
            }
        }
        Ok(out)
    }
}
