//! The rasteriser: dots, line segments (a DDA over the segment clipped to the canvas) and
//! filled triangles (pixel centres tested against the edge functions) on a [`Canvas`] of
//! [`Ink`], the last primitive drawn winning a pixel.
//!
//! Coordinates are continuous pixel coordinates ([`crate::Projection::to_pixel`]): pixel
//! `(i, j)` covers `[i, i + 1) × [j, j + 1)`; the canvas' right and bottom edges belong to
//! the last column and row. Every loop is bounded by the canvas: segments are clipped before
//! they are stepped, triangles scan only the pixels of their box inside the canvas.

use crate::project::clamp_cell;

/// What a drawn pixel holds: a colour (by object) or an attribute value (coloured through
/// the colormap once the value range is known; NaN is "no value").
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Ink {
    /// An RGB colour.
    Rgb([u8; 3]),
    /// An attribute value.
    Value(f32),
}

impl Ink {
    /// The ink at `t` ∈ [0, 1] between `self` and `other`: values are interpolated, colours
    /// switch at the middle.
    pub fn mix(self, other: Ink, t: f64) -> Ink {
        match (self, other) {
            (Ink::Value(a), Ink::Value(b)) => Ink::Value(a + (b - a) * t as f32),
            _ if t < 0.5 => self,
            _ => other,
        }
    }
}

/// A vertex in pixel space with its ink.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Vert {
    /// Column coordinate.
    pub x: f64,
    /// Row coordinate.
    pub y: f64,
    /// The ink.
    pub ink: Ink,
}

/// A grid of pixels, each empty or holding the ink drawn last.
#[derive(Debug, Clone, PartialEq)]
pub struct Canvas {
    width: u32,
    height: u32,
    cells: Vec<Option<Ink>>,
}

impl Canvas {
    /// An empty canvas.
    pub fn new(width: u32, height: u32) -> Self {
        Self {
            width,
            height,
            cells: vec![None; width as usize * height as usize],
        }
    }

    /// Width in pixels.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height in pixels.
    pub fn height(&self) -> u32 {
        self.height
    }

    /// The ink of pixel `(x, y)` (`None`: empty or outside).
    pub fn get(&self, x: u32, y: u32) -> Option<Ink> {
        if x >= self.width || y >= self.height {
            return None;
        }
        self.cells[y as usize * self.width as usize + x as usize]
    }

    /// The cells, row after row.
    pub fn cells(&self) -> &[Option<Ink>] {
        &self.cells
    }

    /// Sets pixel `(x, y)` (ignored outside the canvas).
    pub fn plot(&mut self, x: u32, y: u32, ink: Ink) {
        if x < self.width && y < self.height {
            self.cells[y as usize * self.width as usize + x as usize] = Some(ink);
        }
    }

    /// A dot at the pixel holding `v` (nothing if `v` is outside the canvas).
    pub fn dot(&mut self, v: &Vert) {
        if self.inside(v.x, v.y) {
            let (x, y) = self.cell(v.x, v.y);
            self.plot(x, y, v.ink);
        }
    }

    /// The segment from `a` to `b`: the part inside the canvas, one pixel per step of the
    /// longer axis, inks interpolated.
    pub fn line(&mut self, a: &Vert, b: &Vert) {
        let Some((t0, t1)) = self.clip(a, b) else {
            return;
        };
        let at = |t: f64| (a.x + (b.x - a.x) * t, a.y + (b.y - a.y) * t);
        let (x0, y0) = at(t0);
        let (x1, y1) = at(t1);
        let steps = (x1 - x0).abs().max((y1 - y0).abs()).ceil().max(1.0);
        // bounded: the clipped segment is at most width + height pixels long
        let n = steps.min(f64::from(self.width) + f64::from(self.height) + 2.0) as u32;
        for i in 0..=n {
            let s = f64::from(i) / f64::from(n);
            let t = t0 + (t1 - t0) * s;
            // stepped between the clipped ends: far endpoints would cost precision
            let (cx, cy) = self.cell(x0 + (x1 - x0) * s, y0 + (y1 - y0) * s);
            self.plot(cx, cy, a.ink.mix(b.ink, t));
        }
    }

    /// The filled triangle `a b c`: every pixel whose centre is inside or on an edge, inks
    /// interpolated barycentrically, then its edges (so that triangles thinner than a pixel
    /// still show).
    pub fn triangle(&mut self, a: &Vert, b: &Vert, c: &Vert) {
        let area = edge(a, b, c.x, c.y);
        if area != 0.0 && area.is_finite() {
            let lo_x = a.x.min(b.x).min(c.x).floor().max(0.0);
            let hi_x = a.x.max(b.x).max(c.x).ceil().min(f64::from(self.width));
            let lo_y = a.y.min(b.y).min(c.y).floor().max(0.0);
            let hi_y = a.y.max(b.y).max(c.y).ceil().min(f64::from(self.height));
            let (x0, x1, y0, y1) = (lo_x as u32, hi_x as u32, lo_y as u32, hi_y as u32);
            for py in y0..y1 {
                for px in x0..x1 {
                    let (x, y) = (f64::from(px) + 0.5, f64::from(py) + 0.5);
                    let wa = edge(b, c, x, y) / area;
                    let wb = edge(c, a, x, y) / area;
                    let wc = edge(a, b, x, y) / area;
                    if wa >= 0.0 && wb >= 0.0 && wc >= 0.0 {
                        self.plot(px, py, barycentric(a, b, c, wa, wb, wc));
                    }
                }
            }
        }
        self.line(a, b);
        self.line(b, c);
        self.line(c, a);
    }

    /// Whether `(x, y)` lies on the canvas (right and bottom edges included).
    fn inside(&self, x: f64, y: f64) -> bool {
        (0.0..=f64::from(self.width)).contains(&x) && (0.0..=f64::from(self.height)).contains(&y)
    }

    /// The pixel holding `(x, y)`, clamped to the canvas.
    fn cell(&self, x: f64, y: f64) -> (u32, u32) {
        (clamp_cell(x, self.width), clamp_cell(y, self.height))
    }

    /// The parameter interval of segment `a b` inside the canvas (Liang–Barsky), if any.
    fn clip(&self, a: &Vert, b: &Vert) -> Option<(f64, f64)> {
        let (dx, dy) = (b.x - a.x, b.y - a.y);
        let (w, h) = (f64::from(self.width), f64::from(self.height));
        let mut t0: f64 = 0.0;
        let mut t1: f64 = 1.0;
        for (p, q) in [(-dx, a.x), (dx, w - a.x), (-dy, a.y), (dy, h - a.y)] {
            if !(p.is_finite() && q.is_finite()) {
                return None;
            }
            if p == 0.0 {
                if q < 0.0 {
                    return None;
                }
            } else {
                let r = q / p;
                if p < 0.0 {
                    t0 = t0.max(r);
                } else {
                    t1 = t1.min(r);
                }
            }
        }
        (t0 <= t1).then_some((t0, t1))
    }
}

/// Twice the signed area of `(a, b, (x, y))`.
fn edge(a: &Vert, b: &Vert, x: f64, y: f64) -> f64 {
    (b.x - a.x) * (y - a.y) - (b.y - a.y) * (x - a.x)
}

/// The ink at barycentric weights `(wa, wb, wc)`.
fn barycentric(a: &Vert, b: &Vert, c: &Vert, wa: f64, wb: f64, wc: f64) -> Ink {
    match (a.ink, b.ink, c.ink) {
        (Ink::Value(va), Ink::Value(vb), Ink::Value(vc)) => {
            Ink::Value((f64::from(va) * wa + f64::from(vb) * wb + f64::from(vc) * wc) as f32)
        }
        _ if wa >= wb && wa >= wc => a.ink,
        _ if wb >= wc => b.ink,
        _ => c.ink,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RED: Ink = Ink::Rgb([255, 0, 0]);

    fn v(x: f64, y: f64) -> Vert {
        Vert { x, y, ink: RED }
    }

    fn drawn(c: &Canvas) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        for y in 0..c.height() {
            for x in 0..c.width() {
                if c.get(x, y).is_some() {
                    out.push((x, y));
                }
            }
        }
        out
    }

    #[test]
    fn dots_fall_in_their_pixel_and_edges_clamp() {
        let mut c = Canvas::new(4, 4);
        c.dot(&v(1.5, 2.2));
        c.dot(&v(4.0, 4.0)); // the far corner belongs to the last pixel
        c.dot(&v(4.5, 1.0)); // outside
        assert_eq!(drawn(&c), vec![(1, 2), (3, 3)]);
    }

    #[test]
    fn a_diagonal_is_one_pixel_per_column() {
        let mut c = Canvas::new(8, 8);
        c.line(&v(0.5, 0.5), &v(7.5, 7.5));
        assert_eq!(drawn(&c), (0..8).map(|i| (i, i)).collect::<Vec<_>>());
    }

    #[test]
    fn a_horizontal_line_is_gap_free() {
        let mut c = Canvas::new(10, 3);
        c.line(&v(9.5, 1.5), &v(0.5, 1.5));
        assert_eq!(drawn(&c), (0..10).map(|i| (i, 1)).collect::<Vec<_>>());
    }

    #[test]
    fn segments_are_clipped_without_stepping_outside() {
        let mut c = Canvas::new(4, 4);
        c.line(&v(-1e6, 2.5), &v(1e6, 2.5));
        assert_eq!(drawn(&c), (0..4).map(|i| (i, 2)).collect::<Vec<_>>());
        // far beyond: precision is lost, but the line stays on its row and ends at once
        let mut c = Canvas::new(4, 4);
        c.line(&v(-1e300, 2.5), &v(1e300, 2.5));
        assert!(drawn(&c).iter().all(|&(_, y)| y == 2));
        let mut c = Canvas::new(4, 4);
        c.line(&v(-5.0, -5.0), &v(-1.0, 10.0));
        c.line(&v(f64::NAN, 0.0), &v(1.0, 1.0));
        assert!(drawn(&c).is_empty());
    }

    #[test]
    fn values_are_interpolated_along_a_line() {
        let mut c = Canvas::new(11, 1);
        let a = Vert {
            x: 0.5,
            y: 0.5,
            ink: Ink::Value(0.0),
        };
        let b = Vert {
            x: 10.5,
            y: 0.5,
            ink: Ink::Value(10.0),
        };
        c.line(&a, &b);
        for i in 0..11 {
            assert_eq!(c.get(i, 0), Some(Ink::Value(i as f32)));
        }
    }

    #[test]
    fn a_filled_triangle_covers_its_interior_only() {
        let mut c = Canvas::new(10, 10);
        // right triangle: the pixels with x ≥ y below the diagonal of a 8 × 8 square
        c.triangle(&v(1.0, 1.0), &v(9.0, 1.0), &v(9.0, 9.0));
        for y in 0..10u32 {
            for x in 0..10u32 {
                let inside = (1..9).contains(&x) && (1..9).contains(&y) && x >= y;
                let on_edge = (x == 9 && (1..=9).contains(&y)) || (y == 1 && (1..=9).contains(&x));
                let got = c.get(x, y).is_some();
                if inside {
                    assert!(got, "({x}, {y}) inside");
                }
                if got {
                    // the fill, or the outline (diagonal and the two far edges)
                    assert!(inside || on_edge || x + 1 >= y && x <= y + 1, "({x}, {y})");
                }
            }
        }
    }

    #[test]
    fn a_degenerate_triangle_draws_its_outline() {
        let mut c = Canvas::new(5, 5);
        c.triangle(&v(0.5, 2.5), &v(4.5, 2.5), &v(2.5, 2.5));
        assert_eq!(drawn(&c), (0..5).map(|i| (i, 2)).collect::<Vec<_>>());
    }
}
