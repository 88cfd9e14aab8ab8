//! Levels of detail: choosing a level by vertex budget or by spatial resolution, and drilling
//! between levels through the cross-level links (`links/±1/<key>` rows with the same chunk key
//! on both levels, `cross_chunk_links/±1/data` records for the others).

use super::ZvStore;
use crate::error::Result;
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
    /// that level's `+1` links for this chunk and its cross-chunk records).
    pub fn children(&self, level: u32, v: &VertexRef) -> Result<Vec<VertexRef>> {
        if level == 0 {
            return Ok(Vec::new());
        }
        let here = self.level(level)?;
        if here.link_deltas()?.contains(&-1) || here.cross_chunk_deltas()?.contains(&-1) {
            return self.linked(level, -1, v);
        }
        let fine = self.level(level - 1)?;
        let mut out = Vec::new();
        // ragged rows pair vertices of chunks with the same key: only one blob can hold them
        if let Some(rows) = fine.cross_level_links(1, &v.0, 2)? {
            for g in &rows.groups {
                for r in g.chunks_exact(2) {
                    if r[1] == v.1 as i64 {
                        out.push((v.0.clone(), r[0] as u64));
                    }
                }
            }
        }
        if let Some(c) = fine.cross_chunk_links(1)? {
            for r in 0..c.links.len() {
                let (Some((a, ra)), Some((b, rb))) =
                    (c.links.endpoint(r, 0), c.links.endpoint(r, 1))
                else {
                    continue;
                };
                if b == v.0.coords() && rb == v.1 {
                    out.push((ChunkKey(a.to_vec()), ra));
                }
            }
        }
        out.sort();
        Ok(out)
    }
}
