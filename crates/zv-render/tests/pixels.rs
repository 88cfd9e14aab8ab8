//! Rendered pictures, decoded from PNG, checked pixel by pixel against the geometry: drawn
//! pixels fall where the geometry projects and nowhere else.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use zv_core::data_type::DataType;
use zv_format::document::{Attribute, AttributeValues};
use zv_format::layout::attributes::AttributeRows;
use zv_format::writer::{WriterOptions, ZvWriter};
use zv_format::{Geometry, ZvStore};
use zv_render::{render, viridis, ColorBy, RenderError, RenderOptions, LEGEND_HEIGHT};

type Store = Arc<dyn zv_core::store::Store>;

fn store() -> Store {
    Arc::new(zv_store_mem::MemoryStore::new())
}

/// A writer over `[0, 40]²` (bounds given) with chunks of `chunk`.
fn writer(s: &Store, geometry: Geometry, chunk: f64) -> ZvWriter {
    let mut o = WriterOptions::new(geometry, vec![chunk, chunk]);
    o.bounds = Some([vec![0.0, 0.0], vec![40.0, 40.0]]);
    ZvWriter::create(s.clone(), o).unwrap()
}

fn float_attr(values: &[f64]) -> BTreeMap<String, Attribute> {
    let rows = AttributeRows::from_f64s(DataType::Float32, 1, values).unwrap();
    BTreeMap::from([(
        "v".to_owned(),
        Attribute {
            values: AttributeValues::Numeric {
                rows,
                present: None,
            },
            channel_names: None,
        },
    )])
}

/// A decoded PNG: width, height, RGBA bytes.
struct Decoded {
    width: u32,
    height: u32,
    rgba: Vec<u8>,
}

impl Decoded {
    fn pixel(&self, x: u32, y: u32) -> [u8; 4] {
        let i = (y * self.width + x) as usize * 4;
        self.rgba[i..i + 4].try_into().unwrap()
    }

    /// The opaque pixels of rows `0..rows`.
    fn drawn(&self, rows: u32) -> BTreeSet<(u32, u32)> {
        let mut out = BTreeSet::new();
        for y in 0..rows.min(self.height) {
            for x in 0..self.width {
                let a = self.pixel(x, y)[3];
                assert!(a == 0 || a == 255, "alpha {a} at ({x}, {y})");
                if a == 255 {
                    out.insert((x, y));
                }
            }
        }
        out
    }
}

fn rendered(s: &Store, options: &RenderOptions) -> Decoded {
    let image = render(&ZvStore::open(s.clone()).unwrap(), options).unwrap();
    let png = image.to_png().unwrap();
    let mut reader = png::Decoder::new(std::io::Cursor::new(png))
        .read_info()
        .unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgba);
    buf.truncate(info.buffer_size());
    Decoded {
        width: info.width,
        height: info.height,
        rgba: buf,
    }
}

fn options(size: u32) -> RenderOptions {
    RenderOptions {
        size,
        ..Default::default()
    }
}

#[test]
fn a_square_of_points_fills_exactly_its_projected_square() {
    let s = store();
    let mut w = writer(&s, Geometry::PointCloud, 10.0);
    // points at pixel centres 10.5 … 29.5 on both axes: a 20 × 20 square, in four chunks
    let mut pts = Vec::new();
    for i in 0..20 {
        for j in 0..20 {
            pts.push(vec![10.5 + f64::from(i), 10.5 + f64::from(j)]);
        }
    }
    w.add_vertices(&pts, None, &BTreeMap::new()).unwrap();
    w.finish().unwrap();
    // one unit per pixel: x → column, y → row 39 − y
    let d = rendered(&s, &options(40));
    assert_eq!((d.width, d.height), (40, 40));
    let expected: BTreeSet<(u32, u32)> = (10..30)
        .flat_map(|x| (10..30).map(move |y| (x, y)))
        .collect();
    assert_eq!(d.drawn(40), expected);
    // twice the size: every other pixel of the doubled square, still inside it
    let d = rendered(&s, &options(80));
    let drawn = d.drawn(80);
    assert_eq!(drawn.len(), 400);
    assert!(drawn
        .iter()
        .all(|&(x, y)| (21..60).contains(&x) && (20..60).contains(&y)));
}

#[test]
fn a_box_restricts_and_frames_the_picture() {
    let s = store();
    let mut w = writer(&s, Geometry::PointCloud, 10.0);
    let pts: Vec<Vec<f64>> = (0..40)
        .map(|i| vec![f64::from(i) + 0.5, f64::from(i) + 0.5])
        .collect();
    w.add_vertices(&pts, None, &BTreeMap::new()).unwrap();
    w.finish().unwrap();
    let mut o = options(20);
    o.bbox = Some((vec![10.0, 10.0], vec![30.0, 30.0]));
    let image = render(&ZvStore::open(s.clone()).unwrap(), &o).unwrap();
    assert_eq!(image.vertices, 20);
    let d = rendered(&s, &o);
    assert_eq!((d.width, d.height), (20, 20));
    let expected: BTreeSet<(u32, u32)> = (0..20).map(|i| (i, 19 - i)).collect();
    assert_eq!(d.drawn(20), expected);
}

#[test]
fn a_diagonal_polyline_across_chunks_draws_the_diagonal_only() {
    let s = store();
    let mut w = writer(&s, Geometry::Polyline, 10.0);
    // five vertices along the diagonal through four chunks: the links between chunks come
    // from the manifest order
    let line: Vec<Vec<f64>> = [0.5, 9.5, 18.5, 27.5, 39.5]
        .iter()
        .map(|&t| vec![t, t])
        .collect();
    w.add_polylines(&[line], &BTreeMap::new()).unwrap();
    w.finish().unwrap();
    let d = rendered(&s, &options(40));
    let expected: BTreeSet<(u32, u32)> = (0..40).map(|i| (i, 39 - i)).collect();
    assert_eq!(d.drawn(40), expected);
}

#[test]
fn a_filled_mesh_triangle_covers_its_interior() {
    let s = store();
    let mut w = writer(&s, Geometry::Mesh, 20.0);
    let corners = vec![vec![2.0, 2.0], vec![38.0, 2.0], vec![38.0, 38.0]];
    w.add_vertices(&corners, Some(&[0, 0, 0]), &BTreeMap::new())
        .unwrap();
    w.add_faces(&[vec![0, 1, 2]], &BTreeMap::new()).unwrap();
    w.finish().unwrap();
    // the triangle in pixels: x in [2, 38], row = 40 − y, below the diagonal x ≥ y
    let inside =
        |x: f64, y: f64, m: f64| x >= 2.0 - m && x <= 38.0 + m && y >= 2.0 - m && x - y >= -m;
    for fill in [true, false] {
        let mut o = options(40);
        o.fill = fill;
        let d = rendered(&s, &o);
        let drawn = d.drawn(40);
        for &(px, py) in &drawn {
            let (x, y) = (f64::from(px) + 0.5, 40.0 - f64::from(py) - 0.5);
            assert!(inside(x, y, 1.0), "fill {fill}: ({px}, {py}) is outside");
        }
        let interior = (0..40u32)
            .flat_map(|px| (0..40u32).map(move |py| (px, py)))
            .filter(|&(px, py)| inside(f64::from(px) + 0.5, 40.0 - f64::from(py) - 0.5, -1.5));
        let (covered, missed): (Vec<_>, Vec<_>) = interior.partition(|p| drawn.contains(p));
        if fill {
            assert!(missed.is_empty(), "not filled: {missed:?}");
        } else {
            // edges only: the inside is empty
            assert!(covered.is_empty(), "edges drawn inside: {covered:?}");
            assert!(drawn.contains(&(20, 38)) && drawn.contains(&(38, 20)));
        }
    }
}

#[test]
fn attribute_colours_map_min_and_max_to_the_colormap_ends() {
    let s = store();
    let mut w = writer(&s, Geometry::PointCloud, 10.0);
    let pts = vec![vec![0.5, 0.5], vec![20.5, 20.5], vec![39.5, 39.5]];
    w.add_vertices(&pts, None, &float_attr(&[-3.0, 1.0, 5.0]))
        .unwrap();
    w.finish().unwrap();
    let mut o = options(40);
    o.color = ColorBy::Attribute("v".into());
    let image = render(&ZvStore::open(s.clone()).unwrap(), &o).unwrap();
    assert_eq!(image.value_range, Some((-3.0, 5.0)));
    let d = rendered(&s, &o);
    assert_eq!((d.width, d.height), (40, 40 + LEGEND_HEIGHT));
    let rgb = |x, y| -> [u8; 3] { d.pixel(x, y)[..3].try_into().unwrap() };
    assert_eq!(rgb(0, 39), viridis(0.0));
    assert_eq!(rgb(39, 0), viridis(1.0));
    assert_eq!(rgb(20, 19), viridis(0.5));
    assert_eq!(d.drawn(40).len(), 3);
    // the legend band has the bar and labels
    assert!(d.drawn(d.height).len() > 3 + 40);
}

#[test]
fn objects_get_their_palette_colours() {
    let s = store();
    let mut w = writer(&s, Geometry::PointCloud, 10.0);
    let pts = vec![vec![0.5, 0.5], vec![39.5, 39.5]];
    w.add_vertices(&pts, Some(&[3, 8]), &BTreeMap::new())
        .unwrap();
    w.finish().unwrap();
    let d = rendered(&s, &options(40));
    assert_eq!(d.pixel(0, 39)[..3], zv_render::object_color(3));
    assert_eq!(d.pixel(39, 0)[..3], zv_render::object_color(8));
}

#[test]
fn bad_options_are_clear_errors() {
    let s = store();
    let mut w = writer(&s, Geometry::PointCloud, 10.0);
    w.add_vertices(&[vec![1.0, 1.0]], None, &float_attr(&[1.0]))
        .unwrap();
    w.finish().unwrap();
    let z = ZvStore::open(s).unwrap();
    let err = |o: RenderOptions| render(&z, &o).unwrap_err();
    let mut o = options(10);
    o.color = ColorBy::Attribute("nope".into());
    let e = err(o);
    assert!(matches!(e, RenderError::UnknownAttribute { .. }), "{e}");
    assert!(e.to_string().contains("vertex attributes: v"), "{e}");
    let mut o = options(10);
    o.axes = Some(["x".into(), "w".into()]);
    let e = err(o);
    assert!(
        e.to_string()
            .contains("unknown axis `w` (the store's axes: x, y)"),
        "{e}"
    );
    let mut o = options(10);
    o.bbox = Some((vec![5.0, 0.0], vec![5.0, 10.0]));
    assert!(matches!(err(o), RenderError::EmptyBox(_)));
    let mut o = options(10);
    o.bbox = Some((vec![5.0, 0.0], vec![4.0, 10.0]));
    assert!(matches!(err(o), RenderError::EmptyBox(_)));
    let mut o = options(10);
    o.bbox = Some((vec![0.0], vec![1.0]));
    assert!(matches!(err(o), RenderError::InvalidOption(_)));
    assert!(matches!(err(options(0)), RenderError::InvalidOption(_)));
    let mut o = options(10);
    o.level = Some(3);
    let e = err(o);
    assert!(e.to_string().contains("3/zarr.json"), "{e}");
    assert!(ColorBy::parse("attribute:").is_err());
    assert_eq!(
        ColorBy::parse("attribute:v").unwrap(),
        ColorBy::Attribute("v".into())
    );
}
