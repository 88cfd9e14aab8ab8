//! Colours: a fixed palette of distinguishable colours picked by a hash of the object id,
//! and the viridis colormap for attribute values.

/// Twelve distinguishable colours (Tableau 10 and two more), readable on white and on black.
const PALETTE: [[u8; 3]; 12] = [
    [31, 119, 180],
    [255, 127, 14],
    [44, 160, 44],
    [214, 39, 40],
    [148, 103, 189],
    [140, 86, 75],
    [227, 119, 194],
    [127, 127, 127],
    [188, 189, 34],
    [23, 190, 207],
    [0, 0, 139],
    [139, 69, 19],
];

/// The colour of vertices without an object (point clouds without an object index).
pub(crate) const NO_OBJECT: [u8; 3] = [31, 119, 180];

/// The colour of a vertex whose attribute value is NaN.
pub(crate) const NO_VALUE: [u8; 3] = [160, 160, 160];

/// The palette colour of object `id`: a multiplicative hash of the id, so that neighbouring
/// ids get unrelated colours and a given id always the same one.
pub fn object_color(id: u64) -> [u8; 3] {
    let h = id.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    PALETTE[((h >> 32) % PALETTE.len() as u64) as usize]
}

/// Matplotlib's viridis at eleven evenly spaced stops (0, 0.1, …, 1), interpolated linearly
/// in between.
const VIRIDIS: [[u8; 3]; 11] = [
    [0x44, 0x01, 0x54],
    [0x48, 0x24, 0x75],
    [0x41, 0x44, 0x87],
    [0x35, 0x5f, 0x8d],
    [0x2a, 0x78, 0x8e],
    [0x21, 0x91, 0x8c],
    [0x22, 0xa8, 0x84],
    [0x44, 0xbf, 0x70],
    [0x7a, 0xd1, 0x51],
    [0xbd, 0xdf, 0x26],
    [0xfd, 0xe7, 0x25],
];

/// The viridis colour at `t` (clamped to [0, 1]; NaN is [`NO_VALUE`]).
pub fn viridis(t: f64) -> [u8; 3] {
    if t.is_nan() {
        return NO_VALUE;
    }
    let x = t.clamp(0.0, 1.0) * (VIRIDIS.len() - 1) as f64;
    let i = (x.floor() as usize).min(VIRIDIS.len() - 2);
    let f = x - i as f64;
    let (a, b) = (VIRIDIS[i], VIRIDIS[i + 1]);
    let mut out = [0u8; 3];
    for c in 0..3 {
        out[c] = (f64::from(a[c]) + (f64::from(b[c]) - f64::from(a[c])) * f).round() as u8;
    }
    out
}

/// The colormap position of `v` in `[min, max]` (0 when the range is empty).
pub(crate) fn normalise(v: f64, min: f64, max: f64) -> f64 {
    if v.is_nan() {
        return f64::NAN;
    }
    if max > min {
        ((v - min) / (max - min)).clamp(0.0, 1.0)
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn viridis_ends_and_middle() {
        assert_eq!(viridis(0.0), [0x44, 0x01, 0x54]);
        assert_eq!(viridis(1.0), [0xfd, 0xe7, 0x25]);
        assert_eq!(viridis(0.5), [0x21, 0x91, 0x8c]);
        assert_eq!(viridis(-3.0), viridis(0.0));
        assert_eq!(viridis(f64::NAN), NO_VALUE);
    }

    #[test]
    fn object_colours_are_stable_and_varied() {
        assert_eq!(object_color(7), object_color(7));
        let distinct: std::collections::BTreeSet<[u8; 3]> = (0..12).map(object_color).collect();
        assert!(distinct.len() >= 6, "{distinct:?}");
    }

    #[test]
    fn normalise_maps_the_range_onto_zero_one() {
        assert_eq!(normalise(2.0, 2.0, 4.0), 0.0);
        assert_eq!(normalise(4.0, 2.0, 4.0), 1.0);
        assert_eq!(normalise(3.0, 3.0, 3.0), 0.0);
        assert!(normalise(f64::NAN, 0.0, 1.0).is_nan());
    }
}
