//! # zv-render — a picture of a ZV store
//!
//! [`render`] projects one level of a store onto two of its axes and rasterises it into an
//! RGBA [`Image`] ([`Image::to_png`] encodes it): points as one-pixel dots; lines, polylines,
//! streamlines, skeletons and graphs as segments between linked vertices; meshes as triangle
//! edges, or filled ([`RenderOptions::fill`]). Colours come from the object id (a fixed
//! palette of twelve colours, picked by a hash of the id) or from a one-channel numeric vertex
//! attribute through the viridis colormap, with a legend band under the picture: a colour
//! bar, the minimum under its left end and the maximum under its right end, in a built-in
//! bitmap font (module `legend`).
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use zv_format::writer::{WriterOptions, ZvWriter};
//! use zv_format::{Geometry, ZvStore};
//! use zv_render::{render, RenderOptions};
//! // two points in memory, at opposite corners of the store's bounds
//! let store: Arc<dyn zv_format::zv_core::store::Store> = Arc::new(zv_store_mem::MemoryStore::new());
//! let mut w = ZvWriter::create(store.clone(), WriterOptions::new(Geometry::PointCloud, vec![10.0, 10.0]))?;
//! w.add_vertices(&[vec![0.0, 0.0], vec![10.0, 5.0]], None, &Default::default())?;
//! w.finish()?;
//!
//! let image = render(&ZvStore::open(store)?, &RenderOptions { size: 64, ..Default::default() })?;
//! assert_eq!((image.width(), image.height()), (64, 32)); // the bounds' aspect ratio
//! assert_eq!(image.pixel(0, 31)[3], 255);  // (0, 0): bottom left, drawn
//! assert_eq!(image.pixel(63, 0)[3], 255);  // (10, 5): top right, drawn
//! assert_eq!(image.pixel(32, 16)[3], 0);   // nothing else
//! let png: Vec<u8> = image.to_png()?;
//! # assert!(png.starts_with(b"\x89PNG"));
//! # Ok(()) }
//! ```
//!
//! ## The view
//!
//! The picture is fitted to the store's bounds on the two axes (or to the box given,
//! [`RenderOptions::bbox`]), keeping the aspect ratio; [`RenderOptions::size`] is its longer
//! side. The first axis runs to the right, the second upwards. The background is
//! transparent (so that the picture sits on light and dark pages alike); drawn pixels are
//! opaque, and where primitives overlap the one drawn last (chunks in key order, then the
//! links between chunks) wins.
//!
//! ## Reading
//!
//! Chunks are read a few at a time (twice the worker threads, in parallel), projected and
//! drawn, then dropped: memory is the canvas plus the chunks in flight, never the level's
//! vertices. Links that leave a chunk (module `links`) are drawn at the end from the few
//! vertices they name. With a box, only the chunks that meet it are read, and vertices
//! outside it are not drawn (a segment or face is drawn when one of its vertices is inside).
//! Without [`RenderOptions::level`], the finest level whose `vertex_count` is at most four
//! times the picture's pixels is rendered ([`zv_format::ZvStore::level_for_budget`]);
//! [`Image::level`] says which.
//!
//! ## Speed
//!
//! `zv render` on 10 million random points (`zv bench stream-points`: float32, 1000 chunks,
//! spec-default codecs; on the tmpfs `/dev/shm`, release build, 2 cores), 1024 × 1024
//! pixels, minimum / median of 3 runs:
//!
//! | colouring | time | peak RSS |
//! |---|---|---|
//! | by object (no object index: one colour) | 1.10 s / 1.39 s | 25 MB |
//! | by a float32 attribute | 1.91 s / 2.04 s | 25 MB |
//! | by object, a box of 1/16 of the volume (625,006 points) | 0.40 s / 0.41 s | 23 MB |

mod color;
mod error;
mod image;
mod legend;
mod links;
mod project;
mod raster;
mod scene;

use rayon::prelude::*;
use zv_format::metadata::{chunk_of, ChunkKey};
use zv_format::{Geometry, Level, ZvStore};

pub use color::{object_color, viridis};
pub use error::{RenderError, Result};
pub use image::Image;
pub use legend::LEGEND_HEIGHT;
pub use project::{Projection, MAX_SIZE};
pub use raster::{Canvas, Ink, Vert};

use links::{Deferred, Found};
use scene::{widen, ChunkDraw, Paint, Scene};

/// How vertices are coloured.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ColorBy {
    /// By object id (one colour for vertices of a level without an object index).
    #[default]
    Object,
    /// By the value of a one-channel numeric vertex attribute, through viridis.
    Attribute(String),
}

impl ColorBy {
    /// Parses `object` or `attribute:NAME`.
    pub fn parse(text: &str) -> Result<Self> {
        match text.split_once(':') {
            None if text == "object" => Ok(ColorBy::Object),
            Some(("attribute", name)) if !name.is_empty() => Ok(ColorBy::Attribute(name.into())),
            _ => Err(RenderError::InvalidOption(format!(
                "--color {text}: give `object` or `attribute:NAME`"
            ))),
        }
    }
}

/// What to render.
#[derive(Debug, Clone, PartialEq)]
pub struct RenderOptions {
    /// The level (`None`: the finest within the vertex budget, see the crate docs).
    pub level: Option<u32>,
    /// The horizontal and vertical axis by name (`None`: the store's first two axes).
    pub axes: Option<[String; 2]>,
    /// The colouring.
    pub color: ColorBy,
    /// A box `(low corner, high corner)` over all axes: the view, and what is read.
    pub bbox: Option<(Vec<f64>, Vec<f64>)>,
    /// The longer side of the picture in pixels (1 to [`MAX_SIZE`]).
    pub size: u32,
    /// Fill mesh triangles instead of drawing their edges.
    pub fill: bool,
}

impl Default for RenderOptions {
    fn default() -> Self {
        Self {
            level: None,
            axes: None,
            color: ColorBy::Object,
            bbox: None,
            size: 1024,
            fill: false,
        }
    }
}

/// Vertices per pixel of the level chosen without [`RenderOptions::level`].
pub const BUDGET_PER_PIXEL: u64 = 4;

/// Renders a level of `store` (see the crate docs).
pub fn render(store: &ZvStore, options: &RenderOptions) -> Result<Image> {
    let root = store.root();
    let axes = resolve_axes(store, options.axes.as_ref())?;
    let bbox = check_box(store, options.bbox.as_ref(), axes)?;
    let view = match &bbox {
        Some((lo, hi)) => Some(([lo[axes[0]], lo[axes[1]]], [hi[axes[0]], hi[axes[1]]])),
        None => {
            let (lo, hi) = (&root.bounds[0], &root.bounds[1]);
            let pick = |v: &[f64], a: usize| v.get(a).copied().unwrap_or(f64::NAN);
            let lo = [pick(lo, axes[0]), pick(lo, axes[1])];
            let hi = [pick(hi, axes[0]), pick(hi, axes[1])];
            let ok = (0..2).all(|d| lo[d].is_finite() && hi[d].is_finite() && lo[d] <= hi[d]);
            ok.then_some((lo, hi))
        }
    };
    let level_id = match options.level {
        Some(l) => l,
        None => {
            let pixels = match view {
                Some((lo, hi)) => {
                    let p = Projection::fit(axes, lo, hi, options.size)?;
                    u64::from(p.width) * u64::from(p.height)
                }
                None => u64::from(options.size).pow(2),
            };
            store.level_for_budget(pixels.saturating_mul(BUDGET_PER_PIXEL))?
        }
    };
    let level = store.level(level_id)?;
    let (lo, hi) = match view {
        Some(v) => v,
        None => extent(&level, axes)?,
    };
    let projection = Projection::fit(axes, lo, hi, options.size)?;
    let scene = Scene {
        paint: paint(&level, &options.color)?,
        deferred: deferred(&level)?,
        link_width: if level.geometry().has_explicit_links() {
            level.link_width()?
        } else {
            2
        },
        level,
        projection,
        bounds: bbox,
        fill: options.fill,
    };
    draw_level(&scene, level_id)
}

/// Reads and draws every chunk of the scene, then the deferred links, and colours the canvas.
fn draw_level(scene: &Scene, level_id: u32) -> Result<Image> {
    let keys = chunk_keys(&scene.level, scene.bounds.as_ref())?;
    let p = &scene.projection;
    let mut canvas = Canvas::new(p.width, p.height);
    let mut found = Found::default();
    let mut range = None;
    let mut inside = 0u64;
    let batch = (rayon::current_num_threads() * 2).max(2);
    for window in keys.chunks(batch) {
        let draws: Vec<Result<ChunkDraw>> = window.par_iter().map(|k| scene.chunk(k)).collect();
        for d in draws {
            let d = d?;
            paint_draw(&mut canvas, &d);
            inside += d.inside;
            if let Some((a, b)) = d.range {
                widen(&mut range, a);
                widen(&mut range, b);
            }
            found.extend(d.found);
        }
    }
    let mut last = ChunkDraw::default();
    for corners in links::primitives(&scene.deferred, &found) {
        scene.polygon(&corners, &mut last);
    }
    paint_draw(&mut canvas, &last);
    let attribute = matches!(scene.paint, Paint::Attribute(_));
    let mut image = compose(&canvas, attribute.then(|| range.unwrap_or((0.0, 0.0))));
    image.level = level_id;
    image.vertices = inside;
    Ok(image)
}

/// Draws one chunk's primitives: triangles first, then segments, then dots.
fn paint_draw(canvas: &mut Canvas, d: &ChunkDraw) {
    for [a, b, c] in &d.triangles {
        canvas.triangle(a, b, c);
    }
    for [a, b] in &d.segments {
        canvas.line(a, b);
    }
    for v in &d.dots {
        canvas.dot(v);
    }
}

/// The picture of `canvas`, values coloured over `range` with a legend band when given.
fn compose(canvas: &Canvas, range: Option<(f64, f64)>) -> Image {
    let (w, h) = (canvas.width(), canvas.height());
    let band = if range.is_some() { LEGEND_HEIGHT } else { 0 };
    let mut image = Image::new(w, h + band);
    let (min, max) = range.unwrap_or((0.0, 0.0));
    for (i, cell) in canvas.cells().iter().enumerate() {
        let (x, y) = ((i % w as usize) as u32, (i / w as usize) as u32);
        match cell {
            None => {}
            Some(Ink::Rgb(c)) => image.set(x, y, *c),
            Some(Ink::Value(v)) => {
                image.set(x, y, viridis(color::normalise(f64::from(*v), min, max)))
            }
        }
    }
    if let Some((min, max)) = range {
        legend::draw(&mut image, h, min, max);
        image.value_range = Some((min, max));
    }
    image
}

/// The axis indices of `names` (default: the first two axes).
fn resolve_axes(store: &ZvStore, names: Option<&[String; 2]>) -> Result<[usize; 2]> {
    let axes = &store.root().axes;
    let list = || {
        axes.iter()
            .map(|a| a.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some(names) = names else {
        if axes.len() < 2 && store.root().ndim() < 2 {
            return Err(RenderError::InvalidOption(format!(
                "the store has one axis ({}); a picture needs two",
                list()
            )));
        }
        return Ok([0, 1]);
    };
    let find = |n: &str| {
        axes.iter()
            .position(|a| a.name == n)
            .ok_or_else(|| RenderError::UnknownAxis {
                axis: n.to_owned(),
                axes: list(),
            })
    };
    let found = [find(&names[0])?, find(&names[1])?];
    if found[0] == found[1] {
        return Err(RenderError::InvalidOption(format!(
            "--axes {},{}: give two different axes",
            names[0], names[1]
        )));
    }
    Ok(found)
}

/// Checks the box: one low and one high value per axis, ordered, with an area on the
/// projected axes.
fn check_box(
    store: &ZvStore,
    bbox: Option<&(Vec<f64>, Vec<f64>)>,
    axes: [usize; 2],
) -> Result<Option<(Vec<f64>, Vec<f64>)>> {
    let Some((lo, hi)) = bbox else {
        return Ok(None);
    };
    let ndim = store.root().ndim();
    if lo.len() != ndim || hi.len() != ndim {
        return Err(RenderError::InvalidOption(format!(
            "--box needs {} values (low corner, then high corner, {ndim} axes), got {}",
            2 * ndim,
            lo.len() + hi.len()
        )));
    }
    for d in 0..ndim {
        if !(lo[d].is_finite() && hi[d].is_finite()) || lo[d] > hi[d] {
            return Err(RenderError::EmptyBox(format!(
                "{} is [{}, {}] on axis {d}; give finite bounds, low ≤ high",
                "the box", lo[d], hi[d]
            )));
        }
    }
    for &a in &axes {
        if lo[a] >= hi[a] {
            return Err(RenderError::EmptyBox(format!(
                "the box has no extent on axis {a} ([{}, {}]), one of the two drawn",
                lo[a], hi[a]
            )));
        }
    }
    Ok(Some((lo.clone(), hi.clone())))
}

/// The chunks to read: all of them, or those that meet the box.
fn chunk_keys(level: &Level, bbox: Option<&(Vec<f64>, Vec<f64>)>) -> Result<Vec<ChunkKey>> {
    let keys = level.chunk_keys()?;
    let Some((lo, hi)) = bbox else {
        return Ok(keys);
    };
    let cs = level.chunk_shape();
    let (clo, chi) = (chunk_of(lo, &cs), chunk_of(hi, &cs));
    let ndim = lo.len();
    Ok(keys
        .into_iter()
        .filter(|k| {
            let c = &k.coords()[k.arity().saturating_sub(ndim)..];
            c.iter()
                .zip(clo.iter().zip(&chi))
                .all(|(x, (a, b))| a <= x && x <= b)
        })
        .collect())
}

/// The extent of the level's vertices on `axes` (for stores whose bounds are unusable): one
/// pass over the chunks, one at a time.
fn extent(level: &Level, axes: [usize; 2]) -> Result<([f64; 2], [f64; 2])> {
    let mut lo = [f64::INFINITY; 2];
    let mut hi = [f64::NEG_INFINITY; 2];
    for k in level.chunk_keys()? {
        let Some((a, b)) = level.vertices(&k)?.and_then(|v| v.extent()) else {
            continue;
        };
        for d in 0..2 {
            lo[d] = lo[d].min(a.get(axes[d]).copied().unwrap_or(f64::INFINITY));
            hi[d] = hi[d].max(b.get(axes[d]).copied().unwrap_or(f64::NEG_INFINITY));
        }
    }
    if (0..2).any(|d| lo[d] > hi[d]) {
        return Ok(([0.0; 2], [1.0; 2]));
    }
    Ok((lo, hi))
}

/// The most manifest references the renderer expands for a level of `vertices` vertices.
fn reference_limit(vertices: u64) -> u64 {
    vertices.saturating_mul(4).saturating_add(1 << 20)
}

/// How vertices are inked (checks the attribute).
fn paint(level: &Level, color: &ColorBy) -> Result<Paint> {
    match color {
        ColorBy::Object => {
            let Some(index) = level.shared_object_index()? else {
                return Ok(Paint::Object(None));
            };
            let limit = reference_limit(level.metadata().vertex_count);
            let mut map = scene::FragmentObjects::new();
            let mut count = 0u64;
            for (id, m) in index.manifests.iter().enumerate() {
                if !index.contains(id as u64) {
                    continue;
                }
                for (coords, f) in m.refs() {
                    count += 1;
                    if count > limit {
                        return Err(RenderError::InvalidOption(format!(
                            "the object index of level {} names more than {limit} fragments; \
                             check the store with `zv validate`",
                            level.id()
                        )));
                    }
                    map.entry(coords.to_vec()).or_default().push((f, id as u64));
                }
            }
            Ok(Paint::Object(Some(map)))
        }
        ColorBy::Attribute(name) => {
            let names = level.vertex_attribute_names()?;
            if !names.iter().any(|n| n == name) {
                return Err(RenderError::UnknownAttribute {
                    name: name.clone(),
                    level: level.id(),
                    available: if names.is_empty() {
                        "none".into()
                    } else {
                        names.join(", ")
                    },
                });
            }
            let info = level.vertex_attribute_info(name)?;
            let numeric = info.data_type.size().is_some()
                && !matches!(
                    info.data_type,
                    zv_format::zv_core::data_type::DataType::Complex64
                        | zv_format::zv_core::data_type::DataType::Complex128
                );
            if !numeric {
                return Err(RenderError::UnsupportedAttribute {
                    name: name.clone(),
                    reason: format!("its data type is {}, not a number", info.data_type),
                });
            }
            if let Some(c) = info.channels().filter(|&c| c != 1) {
                return Err(RenderError::UnsupportedAttribute {
                    name: name.clone(),
                    reason: format!("it has {c} channels; give a one-channel attribute"),
                });
            }
            Ok(Paint::Attribute(info))
        }
    }
}

/// What the links that leave a chunk need remembered.
fn deferred(level: &Level) -> Result<Deferred> {
    let g = level.geometry();
    if g.is_sequential() {
        if let Some(index) = level.shared_object_index()? {
            let limit = reference_limit(level.metadata().vertex_count);
            return Deferred::from_manifests(&index, limit);
        }
        return Deferred::from_records(level, false);
    }
    if *g == Geometry::PointCloud {
        return Ok(Deferred::default());
    }
    Deferred::from_records(level, *g == Geometry::Skeleton)
}
