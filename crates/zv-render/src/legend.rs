//! The legend of an attribute colouring: a viridis bar under the picture with the minimum
//! at its left end and the maximum at its right end, written with a built-in bitmap font.
//!
//! The font is hand-written: the labels need only the ten digits, `.`, `-`, `+` and `e`,
//! thirteen 3 × 5 glyphs that fit in a table of a few lines, where a font crate (and a font
//! file, and a glyph rasteriser) would be a dependency for no gain.

use crate::color::viridis;
use crate::image::Image;

/// The height of the legend band under the picture, in pixels.
pub const LEGEND_HEIGHT: u32 = 30;

/// Margin left and right of the bar.
const MARGIN: u32 = 6;

/// The colour of the labels: a mid grey, readable on light and dark pages.
const TEXT: [u8; 3] = [110, 110, 110];

/// Glyph scale: each font pixel is a `SCALE × SCALE` square.
const SCALE: u32 = 2;

/// The 3 × 5 glyphs: five rows of three bits (most significant bit left).
fn glyph(c: char) -> Option<[u8; 5]> {
    Some(match c {
        '0' => [0b111, 0b101, 0b101, 0b101, 0b111],
        '1' => [0b010, 0b110, 0b010, 0b010, 0b111],
        '2' => [0b111, 0b001, 0b111, 0b100, 0b111],
        '3' => [0b111, 0b001, 0b111, 0b001, 0b111],
        '4' => [0b101, 0b101, 0b111, 0b001, 0b001],
        '5' => [0b111, 0b100, 0b111, 0b001, 0b111],
        '6' => [0b111, 0b100, 0b111, 0b101, 0b111],
        '7' => [0b111, 0b001, 0b010, 0b010, 0b010],
        '8' => [0b111, 0b101, 0b111, 0b101, 0b111],
        '9' => [0b111, 0b101, 0b111, 0b001, 0b111],
        '.' => [0b000, 0b000, 0b000, 0b000, 0b010],
        '-' => [0b000, 0b000, 0b111, 0b000, 0b000],
        '+' => [0b000, 0b010, 0b111, 0b010, 0b000],
        'e' => [0b000, 0b111, 0b111, 0b100, 0b111],
        _ => return None,
    })
}

/// The width in pixels of `text` at the legend's scale (glyphs and one column between).
pub(crate) fn text_width(text: &str) -> u32 {
    let n = text.chars().count() as u32;
    (n * 4).saturating_sub(1) * SCALE
}

/// Draws `text` with its top-left corner at `(x, y)` (characters without a glyph are left
/// blank; pixels outside the image are not drawn).
pub(crate) fn draw_text(image: &mut Image, x: u32, y: u32, text: &str) {
    for (i, c) in text.chars().enumerate() {
        let Some(rows) = glyph(c) else { continue };
        let gx = x + i as u32 * 4 * SCALE;
        for (r, bits) in rows.iter().enumerate() {
            for col in 0..3u32 {
                if bits & (0b100 >> col) == 0 {
                    continue;
                }
                for dy in 0..SCALE {
                    for dx in 0..SCALE {
                        image.set(gx + col * SCALE + dx, y + r as u32 * SCALE + dy, TEXT);
                    }
                }
            }
        }
    }
}

/// A value as a short label: up to four significant digits, in exponent form outside
/// `[0.001, 1e6)`.
pub(crate) fn label(v: f64) -> String {
    let a = v.abs();
    if v == 0.0 {
        return "0".into();
    }
    if !(1e-3..1e6).contains(&a) {
        return format!("{v:.2e}");
    }
    let decimals = (3 - a.log10().floor() as i32).clamp(0, 6) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    }
}

/// Draws the legend into the band of `image` that starts at row `top`: the bar, the
/// minimum under its left end and the maximum under its right end.
pub(crate) fn draw(image: &mut Image, top: u32, min: f64, max: f64) {
    let width = image.width();
    if width <= 2 * MARGIN {
        return;
    }
    let bar = width - 2 * MARGIN;
    for i in 0..bar {
        let t = if bar > 1 {
            f64::from(i) / f64::from(bar - 1)
        } else {
            0.0
        };
        let c = viridis(t);
        for y in top + 4..top + 12 {
            image.set(MARGIN + i, y, c);
        }
    }
    let (lo, hi) = (label(min), label(max));
    draw_text(image, MARGIN, top + 16, &lo);
    let w = text_width(&hi);
    if width >= MARGIN + w {
        draw_text(image, width - MARGIN - w, top + 16, &hi);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_short() {
        assert_eq!(label(0.0), "0");
        assert_eq!(label(1.0), "1");
        assert_eq!(label(0.5), "0.5");
        assert_eq!(label(-12.25), "-12.25");
        assert_eq!(label(1234.5678), "1235");
        assert_eq!(label(3.0e9), "3.00e9");
        assert_eq!(label(-2.5e-5), "-2.50e-5");
        for s in [label(0.123456), label(-1e-9), label(42.0)] {
            assert!(s.chars().all(|c| glyph(c).is_some()), "{s}");
        }
    }

    #[test]
    fn every_label_character_has_a_glyph() {
        for c in "0123456789.-+e".chars() {
            assert!(glyph(c).is_some(), "{c}");
        }
    }

    #[test]
    fn the_legend_stays_inside_its_band() {
        let mut image = Image::new(100, 40 + LEGEND_HEIGHT);
        draw(&mut image, 40, -1.5, 2.25);
        for y in 0..image.height() {
            for x in 0..image.width() {
                if image.pixel(x, y)[3] != 0 {
                    assert!(y >= 40, "({x}, {y}) is above the band");
                }
            }
        }
        // the bar's ends are the colormap's ends
        assert_eq!(image.pixel(MARGIN, 45)[..3], viridis(0.0));
        assert_eq!(image.pixel(100 - MARGIN - 1, 45)[..3], viridis(1.0));
    }
}
