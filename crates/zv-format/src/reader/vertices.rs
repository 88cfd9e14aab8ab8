//! Vertex rows: the decoded `vertices/<key>` blob of one chunk.

use std::ops::Range;

use zv_core::data_type::DataType;

use super::Positions;
use crate::error::{Error, Result};
use crate::layout::attributes::{gather_rows, le_to_f64};
use crate::layout::LayoutError;

/// Vertex rows of one chunk (little-endian values of the level's vertex data type).
#[derive(Debug, Clone, PartialEq)]
pub struct Vertices {
    ndim: usize,
    data_type: DataType,
    bytes: Vec<u8>,
}

impl Vertices {
    /// Rows from the decoded blob; the length must be whole rows of `ndim` values.
    pub fn decode(bytes: Vec<u8>, ndim: usize, data_type: DataType, key: &str) -> Result<Self> {
        if bytes.starts_with(b"DRACO") {
            return Err(Error::Unsupported {
                key: key.to_owned(),
                what: "Draco-encoded vertices (this build reads raw vertices only)".into(),
            });
        }
        let row = ndim * data_type.size().unwrap_or(4);
        if row == 0 || bytes.len() % row != 0 {
            return Err(Error::Blob {
                key: key.to_owned(),
                source: LayoutError::Invalid {
                    what: "vertices",
                    reason: format!(
                        "{} bytes are not whole rows of {ndim} × {data_type}",
                        bytes.len()
                    ),
                },
            });
        }
        Ok(Self {
            ndim,
            data_type,
            bytes,
        })
    }

    /// The number of rows.
    pub fn len(&self) -> usize {
        self.bytes.len() / self.row_width().max(1)
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The value count per row.
    pub fn ndim(&self) -> usize {
        self.ndim
    }

    /// The element data type.
    pub fn data_type(&self) -> DataType {
        self.data_type
    }

    /// The decoded payload size.
    pub fn byte_len(&self) -> usize {
        self.bytes.len()
    }

    /// The rows as stored: little-endian values of [`Vertices::data_type`], row-major.
    pub fn as_le_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The byte width of one value.
    fn value_width(&self) -> usize {
        self.data_type.size().unwrap_or(4)
    }

    /// The byte width of one row.
    fn row_width(&self) -> usize {
        self.ndim * self.value_width()
    }

    /// The little-endian bytes of row `i`.
    pub fn row_bytes(&self, i: usize) -> Option<&[u8]> {
        let w = self.row_width();
        // a row number past any blob is no row (not an overflow)
        let start = i.checked_mul(w)?;
        self.bytes.get(start..start.checked_add(w)?)
    }

    /// Writes row `i` as `f64` values to `out` (`ndim` slots); `false` (nothing written) if
    /// there is no such row or `out` has another length.
    pub fn row_into(&self, i: usize, out: &mut [f64]) -> bool {
        match self.row_bytes(i) {
            Some(b) if out.len() == self.ndim => {
                self.decode_into(b, out);
                true
            }
            _ => false,
        }
    }

    /// Row `i` as `f64` values (exact for float16/32/64).
    pub fn row(&self, i: usize) -> Option<Vec<f64>> {
        let mut out = Vec::with_capacity(self.ndim);
        self.push_row(i, &mut out).then_some(out)
    }

    /// Every row, each its own `Vec` ([`Vertices::positions`] has them in one buffer).
    pub fn rows(&self) -> Vec<Vec<f64>> {
        self.positions().to_rows()
    }

    /// Every row as `f64` values, in one buffer.
    pub fn positions(&self) -> Positions {
        let mut out = Positions::new(self.ndim);
        self.push_all(out.values_mut());
        out
    }

    /// The smallest and largest value of each column (NaN values ignored), or `None`
    /// without rows: one pass over the rows, allocating two rows.
    pub fn extent(&self) -> Option<(Vec<f64>, Vec<f64>)> {
        let w = self.row_width();
        if self.is_empty() || w == 0 {
            return None;
        }
        let mut lo = vec![f64::INFINITY; self.ndim];
        let mut hi = vec![f64::NEG_INFINITY; self.ndim];
        if self.data_type == DataType::Float32 && self.ndim == 3 {
            // the commonest case, with the row width known to the compiler
            let (l, h) = extent_f32::<3>(&self.bytes);
            return Some((l.map(f64::from).to_vec(), h.map(f64::from).to_vec()));
        }
        if self.data_type == DataType::Float32 {
            // the common case, without a per-row decode: f32 bounds widen exactly to f64
            let mut l32 = vec![f32::INFINITY; self.ndim];
            let mut h32 = vec![f32::NEG_INFINITY; self.ndim];
            for bytes in self.bytes.chunks_exact(w) {
                for ((l, h), c) in l32
                    .iter_mut()
                    .zip(h32.iter_mut())
                    .zip(bytes.chunks_exact(4))
                {
                    let x = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                    *l = l.min(x);
                    *h = h.max(x);
                }
            }
            for (d, (l, h)) in l32.iter().zip(&h32).enumerate() {
                lo[d] = f64::from(*l);
                hi[d] = f64::from(*h);
            }
            return Some((lo, hi));
        }
        let mut row = vec![0.0; self.ndim];
        for bytes in self.bytes.chunks_exact(w) {
            self.decode_into(bytes, &mut row);
            for ((l, h), x) in lo.iter_mut().zip(hi.iter_mut()).zip(&row) {
                *l = l.min(*x);
                *h = h.max(*x);
            }
        }
        Some((lo, hi))
    }

    /// Whether row `i` lies inside the closed box `[lo, hi]` (`ndim` values each, else no
    /// row is; a missing row is not). `scratch` holds `ndim` values for the types decoded through `f64`.
    #[inline]
    pub(crate) fn row_in_box(&self, i: usize, lo: &[f64], hi: &[f64], scratch: &mut [f64]) -> bool {
        if lo.len() != self.ndim || hi.len() != self.ndim {
            return false;
        }
        if self.data_type == DataType::Float32 {
            let Some(b) = self.row_bytes(i) else {
                return false;
            };
            // f32 values widen exactly to f64, so the test is the f64 one
            return b.chunks_exact(4).zip(lo.iter().zip(hi)).all(|(c, (a, h))| {
                let x = f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]]));
                *a <= x && x <= *h
            });
        }
        self.row_into(i, scratch)
            && scratch
                .iter()
                .zip(lo.iter().zip(hi))
                .all(|(x, (a, b))| a <= x && x <= b)
    }

    /// Appends to `out` the rows of `rows` that lie inside `[lo, hi]` (closed; a NaN
    /// coordinate is outside), ascending: the rows [`Vertices::row_in_box`] keeps. Rows past
    /// the blob are not kept. Three float32 axes, the commonest case, are tested in one loop
    /// with the row width known to the compiler.
    pub(crate) fn push_rows_in_box(
        &self,
        rows: std::ops::Range<usize>,
        lo: &[f64],
        hi: &[f64],
        out: &mut Vec<u64>,
    ) {
        if let (DataType::Float32, 3, Ok(lo), Ok(hi)) = (
            self.data_type,
            self.ndim,
            <[f64; 3]>::try_from(lo),
            <[f64; 3]>::try_from(hi),
        ) {
            let end = rows.end.min(self.len());
            let start = rows.start.min(end);
            let bytes = self.bytes.get(start * 12..end * 12).unwrap_or_default();
            for (i, row) in bytes.chunks_exact(12).enumerate() {
                let x = |d: usize| {
                    let c = &row[4 * d..4 * d + 4];
                    // f32 values widen exactly to f64, so the test is the f64 one
                    f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                };
                let (a, b, c) = (x(0), x(1), x(2));
                // every comparison made (no early exit): the loop stays free of branches
                let inside = (lo[0] <= a)
                    & (a <= hi[0])
                    & (lo[1] <= b)
                    & (b <= hi[1])
                    & (lo[2] <= c)
                    & (c <= hi[2]);
                if inside {
                    out.push((start + i) as u64);
                }
            }
            return;
        }
        let mut p = vec![0.0; self.ndim];
        // rows past the blob are never inside
        for r in rows.start..rows.end.min(self.len()) {
            if self.row_in_box(r, lo, hi, &mut p) {
                out.push(r as u64);
            }
        }
    }

    /// The relative rounding step of the vertex type (its machine epsilon).
    pub fn epsilon(&self) -> f64 {
        match self.data_type {
            DataType::Float16 => 2f64.powi(-10),
            DataType::Float32 => f64::from(f32::EPSILON),
            _ => f64::EPSILON,
        }
    }

    /// Rows `rows` of these (in that order, repeats allowed), `None` if one is outside them.
    pub fn select(&self, rows: &[u64]) -> Option<Self> {
        Some(Self {
            ndim: self.ndim,
            data_type: self.data_type,
            bytes: gather_rows(&self.bytes, self.row_width(), rows)?,
        })
    }

    /// Appends row `i` as `f64` values to `out`; `false` (nothing appended) past the end.
    pub fn push_row(&self, i: usize, out: &mut Vec<f64>) -> bool {
        self.row_bytes(i).is_some_and(|b| self.append(b, out))
    }

    /// Appends rows `rows` as `f64` values to `out`; `false` (nothing appended) if they are
    /// not all rows of the blob.
    pub fn push_rows(&self, rows: Range<u64>, out: &mut Vec<f64>) -> bool {
        self.rows_bytes(rows).is_some_and(|b| self.append(b, out))
    }

    /// Appends every row as `f64` values to `out`.
    pub fn push_all(&self, out: &mut Vec<f64>) {
        self.append(&self.bytes, out);
    }

    /// Writes rows `rows` as `f64` values to `out`, which must hold exactly as many values;
    /// `false` (nothing written) if the rows are not all rows of the blob or `out` has
    /// another length.
    #[inline]
    pub fn write_rows(&self, rows: Range<u64>, out: &mut [f64]) -> bool {
        match self.rows_bytes(rows) {
            Some(b) if out.len().checked_mul(self.value_width()) == Some(b.len()) => {
                self.decode_into(b, out);
                true
            }
            _ => false,
        }
    }

    /// The bytes of rows `rows`, if they are all rows of the blob.
    pub(crate) fn rows_bytes(&self, rows: Range<u64>) -> Option<&[u8]> {
        let w = self.row_width() as u64;
        let a = usize::try_from(rows.start.checked_mul(w)?).ok()?;
        let b = usize::try_from(rows.end.checked_mul(w)?).ok()?;
        self.bytes.get(a..b)
    }

    /// Appends the values of `bytes` (whole values of the vertex type) as `f64` to `out`.
    fn append(&self, bytes: &[u8], out: &mut Vec<f64>) -> bool {
        match self.data_type {
            DataType::Float32 => out.extend(
                bytes
                    .chunks_exact(4)
                    .map(|c| f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]]))),
            ),
            DataType::Float64 => out.extend(
                bytes
                    .chunks_exact(8)
                    .map(|c| f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])),
            ),
            dt => out.extend(
                bytes
                    .chunks_exact(self.value_width())
                    .map(|c| le_to_f64(dt, c)),
            ),
        }
        true
    }

    /// Writes the values of `bytes` (whole values of the vertex type) as `f64` to `out` (one
    /// slot per value).
    fn decode_into(&self, bytes: &[u8], out: &mut [f64]) {
        match self.data_type {
            DataType::Float32 => {
                for (o, c) in out.iter_mut().zip(bytes.chunks_exact(4)) {
                    *o = f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]]));
                }
            }
            DataType::Float64 => {
                for (o, c) in out.iter_mut().zip(bytes.chunks_exact(8)) {
                    *o = f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
                }
            }
            dt => {
                for (o, c) in out.iter_mut().zip(bytes.chunks_exact(self.value_width())) {
                    *o = le_to_f64(dt, c);
                }
            }
        }
    }
}

/// The smallest and largest value of each of the `N` columns of little-endian float32 rows
/// (NaN values ignored).
fn extent_f32<const N: usize>(bytes: &[u8]) -> ([f32; N], [f32; N]) {
    let mut lo = [f32::INFINITY; N];
    let mut hi = [f32::NEG_INFINITY; N];
    for row in bytes.chunks_exact(4 * N) {
        for d in 0..N {
            let c = &row[4 * d..4 * d + 4];
            let x = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            // a comparison is false for NaN, which is thus ignored without the NaN handling
            // of `f32::min` (one instruction each)
            lo[d] = if x < lo[d] { x } else { lo[d] };
            hi[d] = if x > hi[d] { x } else { hi[d] };
        }
    }
    (lo, hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_in_a_box_are_the_rows_each_tested_alone() {
        // float32 with three axes (the fast loop) and the other layouts, with values on the
        // bounds, NaN, infinities and rows past the blob
        let special = [
            0.0,
            1.0,
            -1.0,
            2.5,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            0.5,
        ];
        let mut rng = zv_testkit::data::Rng::new(0x9e37_79b9_7f4a_7c15);
        for (data_type, ndim) in [
            (DataType::Float32, 3),
            (DataType::Float32, 2),
            (DataType::Float64, 3),
            (DataType::Float16, 3),
        ] {
            let rows = 300;
            let mut bytes = Vec::new();
            for _ in 0..rows * ndim {
                let v = special[rng.below(special.len() as u64) as usize];
                crate::layout::attributes::f64_to_le(data_type, v, &mut bytes);
            }
            let v = Vertices::decode(bytes, ndim, data_type, "k").unwrap();
            for (lo, hi) in [
                (0.0, 1.0),
                (-1.0, 2.5),
                (0.5, 0.5),
                (f64::NEG_INFINITY, f64::INFINITY),
            ] {
                let (lo, hi) = (vec![lo; ndim], vec![hi; ndim]);
                for range in [
                    0..rows,
                    17..250,
                    280..rows + 40,
                    5..5,
                    rows + 9..rows + 3,
                    usize::MAX - 1..usize::MAX,
                ] {
                    let mut scratch = vec![0.0; ndim];
                    let want: Vec<u64> = range
                        .clone()
                        .filter(|&r| v.row_in_box(r, &lo, &hi, &mut scratch))
                        .map(|r| r as u64)
                        .collect();
                    let mut got = vec![7];
                    v.push_rows_in_box(range.clone(), &lo, &hi, &mut got);
                    assert_eq!(got[0], 7);
                    assert_eq!(
                        &got[1..],
                        &want[..],
                        "{data_type:?} {ndim} {range:?} {lo:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_row_written_in_place_is_the_row_read() {
        for data_type in [DataType::Float32, DataType::Float64, DataType::Float16] {
            let width = data_type.size().unwrap();
            let values = [1.5f64, -2.0, 0.25, 8.0, 3.0, -0.5];
            let mut bytes = Vec::new();
            for v in values {
                crate::layout::attributes::f64_to_le(data_type, v, &mut bytes);
            }
            assert_eq!(bytes.len(), 6 * width);
            let v = Vertices::decode(bytes, 3, data_type, "k").unwrap();
            let mut out = [0.0; 3];
            for i in 0..2 {
                assert!(v.row_into(i, &mut out), "{data_type:?}");
                assert_eq!(out.to_vec(), v.row(i).unwrap());
                assert_eq!(out.to_vec(), values[i * 3..i * 3 + 3].to_vec());
            }
            assert!(!v.row_into(2, &mut out), "no row 2");
            assert!(!v.row_into(0, &mut [0.0; 2]), "a short output");
        }
    }

    /// Rows of `ndim` values from a small deterministic generator (a NaN now and then).
    fn rows(data_type: DataType, ndim: usize, n: usize) -> (Vertices, Vec<f64>) {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut values = Vec::new();
        let mut bytes = Vec::new();
        for i in 0..n * ndim {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let v = if i % 97 == 5 {
                f64::NAN
            } else {
                (state % 2001) as f64 / 10.0 - 100.0
            };
            crate::layout::attributes::f64_to_le(data_type, v, &mut bytes);
            values.push(v);
        }
        (
            Vertices::decode(bytes, ndim, data_type, "k").unwrap(),
            values,
        )
    }

    #[test]
    fn extents_and_box_tests_agree_with_the_rows_decoded() {
        let (lo, hi) = ([-30.0, -100.0, 12.5, -1.0], [40.0, 25.5, 100.0, 99.0]);
        for data_type in [DataType::Float32, DataType::Float64, DataType::Float16] {
            for ndim in [2, 3, 4] {
                let (v, values) = rows(data_type, ndim, 500);
                let mut want_lo = vec![f64::INFINITY; ndim];
                let mut want_hi = vec![f64::NEG_INFINITY; ndim];
                let mut row = vec![0.0; ndim];
                for i in 0..v.len() {
                    assert!(v.row_into(i, &mut row));
                    for d in 0..ndim {
                        if !row[d].is_nan() {
                            want_lo[d] = want_lo[d].min(row[d]);
                            want_hi[d] = want_hi[d].max(row[d]);
                        }
                    }
                    let inside = (0..ndim).all(|d| lo[d] <= row[d] && row[d] <= hi[d]);
                    let got = v.row_in_box(i, &lo[..ndim], &hi[..ndim], &mut [0.0; 4][..ndim]);
                    assert_eq!(got, inside, "{data_type:?} ndim {ndim} row {i}");
                }
                assert_eq!(values.len(), 500 * ndim);
                assert_eq!(v.extent(), Some((want_lo, want_hi)), "{data_type:?} {ndim}");
                assert!(!v.row_in_box(500, &lo[..ndim], &hi[..ndim], &mut [0.0; 4][..ndim]));
                assert!(!v.row_in_box(0, &lo[..ndim - 1], &hi[..ndim - 1], &mut [0.0; 4][..ndim]));
            }
        }
    }
}
