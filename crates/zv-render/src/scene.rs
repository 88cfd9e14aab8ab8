//! One chunk at a time: its vertices projected to pixels with their ink, and the dots,
//! segments and triangles its geometry makes ([`ChunkDraw`]); plus the vertices it holds of
//! the links drawn last ([`crate::links`]).

use std::collections::HashMap;

use zv_format::layout::fragment_index::FragmentIndex;
use zv_format::metadata::ChunkKey;
use zv_format::reader::{chunk_parents, AttributeInfo};
use zv_format::{Geometry, Level};

use crate::color::{object_color, NO_OBJECT};
use crate::error::{RenderError, Result};
use crate::links::{Deferred, Found, Seen};
use crate::project::Projection;
use crate::raster::{Ink, Vert};

/// The `(fragment, object id)` pairs of each chunk, by chunk coordinates.
pub(crate) type FragmentObjects = HashMap<Vec<i64>, Vec<(u64, u64)>>;

/// How vertices are inked.
#[derive(Debug)]
pub(crate) enum Paint {
    /// By object: the `(fragment, object id)` pairs of each chunk (`None`: no object index).
    Object(Option<FragmentObjects>),
    /// By the value of a vertex attribute.
    Attribute(AttributeInfo),
}

/// What every chunk of a rendering shares.
#[derive(Debug)]
pub(crate) struct Scene {
    pub level: Level,
    pub projection: Projection,
    /// The box (all axes), if any: vertices outside are not drawn.
    pub bounds: Option<(Vec<f64>, Vec<f64>)>,
    pub paint: Paint,
    pub fill: bool,
    pub deferred: Deferred,
    /// The `link_width` of `links/0` (explicit geometries).
    pub link_width: usize,
}

/// What one chunk draws.
#[derive(Debug, Default)]
pub(crate) struct ChunkDraw {
    pub dots: Vec<Vert>,
    pub segments: Vec<[Vert; 2]>,
    pub triangles: Vec<[Vert; 3]>,
    pub found: Found,
    /// Vertices inside the box.
    pub inside: u64,
    /// The smallest and largest attribute value inside the box.
    pub range: Option<(f64, f64)>,
}

impl Scene {
    /// Whether `p` is inside the box (always without one).
    fn keep(&self, p: &[f64]) -> bool {
        self.bounds.as_ref().is_none_or(|(lo, hi)| {
            p.iter()
                .zip(lo.iter().zip(hi))
                .all(|(x, (a, b))| a <= x && x <= b)
        })
    }

    /// Reads chunk `key` and lists what it draws.
    pub(crate) fn chunk(&self, key: &ChunkKey) -> Result<ChunkDraw> {
        let mut out = ChunkDraw::default();
        let Some(vertices) = self.level.vertices(key)? else {
            return Ok(out);
        };
        let n = vertices.len();
        let geometry = self.level.geometry();
        let coords = key.coords().to_vec();
        let needs_fragments = matches!(self.paint, Paint::Object(Some(_)))
            || geometry.is_sequential()
            || *geometry == Geometry::Skeleton
            || self.deferred.ends_needed.contains_key(&coords);
        let fragments = if needs_fragments {
            Some(self.level.fragments(key, n as u64)?)
        } else {
            None
        };
        let inks = self.inks(key, n, fragments.as_ref())?;
        // positions and inks, one pass
        let mut verts = Vec::with_capacity(n);
        let mut kept = Vec::with_capacity(n);
        let mut p = Vec::with_capacity(vertices.ndim());
        for (r, ink) in inks.iter().enumerate() {
            p.clear();
            vertices.push_row(r, &mut p);
            let (x, y) = self.projection.to_pixel(&p).unwrap_or((f64::NAN, f64::NAN));
            let keep = self.keep(&p);
            if keep {
                out.inside += 1;
                if let Ink::Value(v) = ink {
                    widen(&mut out.range, f64::from(*v));
                }
            }
            verts.push(Vert { x, y, ink: *ink });
            kept.push(keep);
        }
        self.primitives(key, &verts, &kept, fragments.as_ref(), &mut out)?;
        self.remember(&coords, &verts, &kept, fragments.as_ref(), &mut out);
        Ok(out)
    }

    /// The ink of each of the `n` rows of chunk `key`.
    fn inks(
        &self,
        key: &ChunkKey,
        n: usize,
        fragments: Option<&FragmentIndex>,
    ) -> Result<Vec<Ink>> {
        match &self.paint {
            Paint::Object(None) => Ok(vec![Ink::Rgb(NO_OBJECT); n]),
            Paint::Object(Some(map)) => {
                let mut inks = vec![Ink::Rgb(NO_OBJECT); n];
                if let (Some(pairs), Some(fragments)) = (map.get(key.coords()), fragments) {
                    for &(f, id) in pairs {
                        let Some(rows) = fragments.get(f as usize) else {
                            continue;
                        };
                        let ink = Ink::Rgb(object_color(id));
                        for r in rows.iter() {
                            if let Some(slot) = inks.get_mut(r as usize) {
                                *slot = ink;
                            }
                        }
                    }
                }
                Ok(inks)
            }
            Paint::Attribute(info) => {
                let Some(rows) = self.level.vertex_attribute(info, key, n as u64)? else {
                    return Ok(vec![Ink::Value(f32::NAN); n]);
                };
                if rows.channels() != 1 {
                    return Err(RenderError::UnsupportedAttribute {
                        name: info.name.clone(),
                        reason: format!(
                            "it has {} channels; give a one-channel attribute",
                            rows.channels()
                        ),
                    });
                }
                Ok((0..n)
                    .map(|r| Ink::Value(rows.get_f64(r, 0).map_or(f32::NAN, |v| v as f32)))
                    .collect())
            }
        }
    }

    /// The dots, segments and triangles of the chunk's own geometry.
    fn primitives(
        &self,
        key: &ChunkKey,
        verts: &[Vert],
        kept: &[bool],
        fragments: Option<&FragmentIndex>,
        out: &mut ChunkDraw,
    ) -> Result<()> {
        let geometry = self.level.geometry();
        let segment = |a: u64, b: u64, out: &mut ChunkDraw| {
            let (a, b) = (a as usize, b as usize);
            if a < verts.len() && b < verts.len() && (kept[a] || kept[b]) {
                out.segments.push([verts[a], verts[b]]);
            }
        };
        match geometry {
            Geometry::PointCloud => {
                out.dots
                    .extend(verts.iter().zip(kept).filter(|(_, &k)| k).map(|(v, _)| *v));
            }
            g if g.is_sequential() => {
                for f in fragments.into_iter().flat_map(FragmentIndex::iter) {
                    let mut prev = None;
                    for r in f.iter() {
                        if let Some(p) = prev {
                            segment(p, r, out);
                        }
                        prev = Some(r);
                    }
                }
            }
            Geometry::Skeleton => {
                let n = verts.len() as u64;
                let stored = match self.level.links(key, self.link_width, n)? {
                    Some(rows) => {
                        let f = fragments.cloned().unwrap_or_default();
                        self.level.skeleton_parents(key, &f, &rows)?
                    }
                    None => Vec::new(),
                };
                let empty = FragmentIndex::default();
                let parents = chunk_parents(n, fragments.unwrap_or(&empty), &stored);
                for (child, parent) in parents {
                    let remote = self
                        .deferred
                        .remote_children
                        .contains(&(key.coords().to_vec(), child));
                    if !remote {
                        segment(child, parent, out);
                    }
                }
            }
            _ => {
                let n = verts.len() as u64;
                let Some(rows) = self.level.links(key, self.link_width, n)? else {
                    return Ok(());
                };
                for row in rows.rows() {
                    let idx: Option<Vec<usize>> = row
                        .iter()
                        .map(|&v| usize::try_from(v).ok().filter(|&i| i < verts.len()))
                        .collect();
                    // links naming rows outside the chunk are not drawn (`zv validate` reports them)
                    let Some(idx) = idx else { continue };
                    if !idx.iter().any(|&i| kept[i]) {
                        continue;
                    }
                    let corners: Vec<Seen> = idx.iter().map(|&i| (verts[i], kept[i])).collect();
                    self.polygon(&corners, out);
                }
            }
        }
        Ok(())
    }

    /// A link of two or more vertices: a segment, a mesh face (filled or as edges) or a
    /// polygon's edges.
    pub(crate) fn polygon(&self, corners: &[Seen], out: &mut ChunkDraw) {
        if !corners.iter().any(|c| c.1) {
            return;
        }
        let v: Vec<Vert> = corners.iter().map(|c| c.0).collect();
        match v.len() {
            0 | 1 => {}
            2 => out.segments.push([v[0], v[1]]),
            n if self.fill && *self.level.geometry() == Geometry::Mesh => {
                for i in 1..n - 1 {
                    out.triangles.push([v[0], v[i], v[i + 1]]);
                }
            }
            n => {
                for i in 0..n {
                    out.segments.push([v[i], v[(i + 1) % n]]);
                }
            }
        }
    }

    /// Remembers the chunk's vertices that deferred links name.
    fn remember(
        &self,
        coords: &[i64],
        verts: &[Vert],
        kept: &[bool],
        fragments: Option<&FragmentIndex>,
        out: &mut ChunkDraw,
    ) {
        if let (Some(ends), Some(fragments)) = (self.deferred.ends_needed.get(coords), fragments) {
            for &(f, last) in ends {
                let Some(rows) = fragments.get(f as usize) else {
                    continue;
                };
                let row = if last {
                    rows.iter().last()
                } else {
                    rows.iter().next()
                };
                if let Some(r) = row.map(|r| r as usize).filter(|&r| r < verts.len()) {
                    out.found
                        .ends
                        .insert((coords.to_vec(), f, last), (verts[r], kept[r]));
                }
            }
        }
        if let Some(rows) = self.deferred.rows_needed.get(coords) {
            for &r in rows {
                if let Some(i) = usize::try_from(r).ok().filter(|&i| i < verts.len()) {
                    out.found
                        .rows
                        .insert((coords.to_vec(), r), (verts[i], kept[i]));
                }
            }
        }
    }
}

/// Widens `range` to hold `v` (NaN ignored).
pub(crate) fn widen(range: &mut Option<(f64, f64)>, v: f64) {
    if v.is_nan() {
        return;
    }
    *range = Some(match *range {
        None => (v, v),
        Some((a, b)) => (a.min(v), b.max(v)),
    });
}
