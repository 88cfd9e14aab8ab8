//! The projection: two axes of the store's space onto pixel columns and rows, fitted to a
//! view box with the aspect ratio kept.
//!
//! Pixel `(0, 0)` is the top-left corner; the first chosen axis grows to the right and the
//! second upwards (image rows count down). A position `x` on the horizontal axis lies in
//! column `floor((x − lo) · scale)`, the right edge `x = hi` in the last column.

use crate::error::{RenderError, Result};

/// Maps positions to pixel coordinates.
#[derive(Debug, Clone, PartialEq)]
pub struct Projection {
    /// The horizontal and vertical axis (indices into a position).
    pub axes: [usize; 2],
    /// The low corner of the view on the two axes.
    pub lo: [f64; 2],
    /// The high corner of the view on the two axes.
    pub hi: [f64; 2],
    /// Pixels per unit of space (the same on both axes).
    pub scale: f64,
    /// Width and height in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

impl Projection {
    /// Fits the view `[lo, hi]` on `axes` into an image whose longer side is `size` pixels.
    /// A view with zero extent on one axis is widened around its centre to 1% of the other
    /// axis' extent (to 1 unit if both are zero); a view that is not finite or has `lo > hi`
    /// is an error.
    pub fn fit(axes: [usize; 2], lo: [f64; 2], hi: [f64; 2], size: u32) -> Result<Self> {
        if size == 0 || size > MAX_SIZE {
            return Err(RenderError::InvalidOption(format!(
                "--size {size}: give 1 to {MAX_SIZE} pixels"
            )));
        }
        let (mut lo, mut hi) = (lo, hi);
        for d in 0..2 {
            if !(lo[d].is_finite() && hi[d].is_finite() && lo[d] <= hi[d]) {
                return Err(RenderError::InvalidView(format!(
                    "the view {:?}..{:?} is not a finite, ordered box",
                    lo, hi
                )));
            }
        }
        let ext = [hi[0] - lo[0], hi[1] - lo[1]];
        for d in 0..2 {
            if ext[d] <= 0.0 {
                let other = ext[1 - d];
                let half = if other > 0.0 { other * 0.005 } else { 0.5 };
                lo[d] -= half;
                hi[d] += half;
            }
        }
        let ext = [hi[0] - lo[0], hi[1] - lo[1]];
        let scale = f64::from(size) / ext[0].max(ext[1]);
        let side = |e: f64| ((e * scale).round() as u32).clamp(1, size);
        Ok(Self {
            axes,
            lo,
            hi,
            scale,
            width: side(ext[0]),
            height: side(ext[1]),
        })
    }

    /// The continuous pixel coordinates of `p` (column, row; a pixel's centre is at `+0.5`),
    /// not clamped; `None` if `p` lacks one of the axes.
    pub fn to_pixel(&self, p: &[f64]) -> Option<(f64, f64)> {
        let x = *p.get(self.axes[0])?;
        let y = *p.get(self.axes[1])?;
        Some((
            (x - self.lo[0]) * self.scale,
            f64::from(self.height) - (y - self.lo[1]) * self.scale,
        ))
    }

    /// Whether `p` lies inside the view on the two axes (edges included).
    pub fn contains(&self, p: &[f64]) -> bool {
        self.axes.iter().enumerate().all(|(d, &a)| {
            p.get(a)
                .is_some_and(|&x| self.lo[d] <= x && x <= self.hi[d])
        })
    }

    /// The pixel that holds `p`, if `p` is inside the view (the high edges fall into the
    /// last column and the top row).
    pub fn pixel(&self, p: &[f64]) -> Option<(u32, u32)> {
        if !self.contains(p) {
            return None;
        }
        let (x, y) = self.to_pixel(p)?;
        Some((clamp_cell(x, self.width), clamp_cell(y, self.height)))
    }
}

/// The largest `--size` accepted (the image is allocated up front).
pub const MAX_SIZE: u32 = 16_384;

/// The cell of continuous coordinate `x` in `0..n` (clamped).
pub(crate) fn clamp_cell(x: f64, n: u32) -> u32 {
    if x.is_nan() {
        return 0;
    }
    (x.floor().max(0.0) as u64).min(u64::from(n.saturating_sub(1))) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longer_side_is_size_and_aspect_is_kept() {
        let p = Projection::fit([0, 1], [0.0, 0.0], [200.0, 100.0], 512).unwrap();
        assert_eq!((p.width, p.height), (512, 256));
        let p = Projection::fit([0, 2], [0.0, 0.0], [10.0, 40.0], 100).unwrap();
        assert_eq!((p.width, p.height), (25, 100));
    }

    #[test]
    fn corners_map_to_corner_pixels() {
        let p = Projection::fit([0, 1], [10.0, 20.0], [20.0, 30.0], 10).unwrap();
        // the low corner is bottom-left, the high corner top-right
        assert_eq!(p.pixel(&[10.0, 20.0]), Some((0, 9)));
        assert_eq!(p.pixel(&[20.0, 30.0]), Some((9, 0)));
        assert_eq!(p.pixel(&[15.5, 25.5]), Some((5, 4)));
        assert_eq!(p.pixel(&[20.1, 25.0]), None);
        assert_eq!(p.pixel(&[15.0]), None);
    }

    #[test]
    fn chosen_axes_are_read() {
        let p = Projection::fit([2, 0], [0.0, 0.0], [4.0, 4.0], 4).unwrap();
        assert_eq!(p.pixel(&[3.5, 100.0, 0.5]), Some((0, 0)));
    }

    #[test]
    fn degenerate_views_are_widened_and_bad_ones_refused() {
        let p = Projection::fit([0, 1], [0.0, 5.0], [100.0, 5.0], 100).unwrap();
        assert_eq!((p.width, p.height), (100, 1));
        assert!(p.pixel(&[50.0, 5.0]).is_some());
        let p = Projection::fit([0, 1], [1.0, 1.0], [1.0, 1.0], 8).unwrap();
        assert_eq!((p.width, p.height), (8, 8));
        assert!(Projection::fit([0, 1], [1.0, 0.0], [0.0, 1.0], 8).is_err());
        assert!(Projection::fit([0, 1], [f64::NAN, 0.0], [1.0, 1.0], 8).is_err());
        assert!(Projection::fit([0, 1], [0.0, 0.0], [1.0, 1.0], 0).is_err());
    }
}
