//! Where a position goes: its stored coordinates (converted to the vertex type), its chunk and
//! bin, the range check that keeps chunk and bin coordinates exact, and the bounds (given,
//! expanded or inferred from the data).

use zv_core::data_type::DataType;

use super::lookup::ChunkLookup;
use super::options::{OutOfBounds, WriterOptions};
use crate::error::{Error, InputItem, Result};
use crate::layout::attributes::f64_to_le;

/// Coordinates must satisfy `|x / bin| < COORDINATE_LIMIT` (bin = chunk without bins), so
/// that chunk and bin coordinates are exact integers.
pub const COORDINATE_LIMIT: f64 = (1u64 << 52) as f64;

/// The chunk and bin grid and the vertex type.
#[derive(Debug, Clone)]
pub(super) struct Grid {
    /// The number of axes.
    pub(super) ndim: usize,
    /// The vertex type.
    pub(super) vertex_type: DataType,
    /// Bytes per coordinate.
    pub(super) vsize: usize,
    chunk_shape: Vec<f64>,
    /// The bin shape (the chunk shape without bins).
    pub(super) bin_shape: Vec<f64>,
    bins_per_chunk: Vec<u64>,
    /// Whether bins are smaller than chunks.
    binned: bool,
}

impl Grid {
    /// The grid of validated options.
    pub(super) fn new(options: &WriterOptions) -> Self {
        let bin_shape = options.bin_shape_or_chunk();
        let bins_per_chunk = options
            .chunk_shape
            .iter()
            .zip(&bin_shape)
            .map(|(c, b)| (c / b).round().max(1.0) as u64)
            .collect();
        Self {
            ndim: options.chunk_shape.len(),
            vertex_type: options.vertex_type,
            vsize: options.vertex_type.size().unwrap_or(4),
            chunk_shape: options.chunk_shape.clone(),
            binned: bin_shape != options.chunk_shape,
            bin_shape,
            bins_per_chunk,
        }
    }

    /// The bytes of one vertex's coordinates.
    pub(super) fn vertex_bytes(&self) -> usize {
        self.ndim * self.vsize
    }

    /// The number of bins of a chunk.
    pub(super) fn bins(&self) -> u64 {
        self.bins_per_chunk.iter().product()
    }

    /// Checks that position `p` (at `item`) has one coordinate per axis.
    pub(super) fn check_arity(&self, p: &[f64], item: impl FnOnce() -> InputItem) -> Result<()> {
        if p.len() != self.ndim {
            return Err(Error::input(
                item(),
                format!(
                    "has {} coordinates, the store has {} axes",
                    p.len(),
                    self.ndim
                ),
            ));
        }
        Ok(())
    }

    /// The stored value of coordinate `x`: the nearest value of the vertex type (a float
    /// type), as `f64` — what the stored bytes read back as.
    #[inline]
    fn stored(&self, x: f64) -> f64 {
        match self.vertex_type {
            DataType::Float32 => f64::from(x as f32),
            DataType::Float16 => half::f16::from_f64(x).to_f64(),
            _ => x,
        }
    }

    /// Writes the stored values of position `p` to `out` (`ndim` values); a non-finite
    /// coordinate, or one the vertex type cannot hold, is an error at `item()`.
    #[inline]
    pub(super) fn store_into(
        &self,
        p: &[f64],
        item: impl Fn() -> InputItem,
        out: &mut [f64],
    ) -> Result<()> {
        for (&x, o) in p.iter().zip(out.iter_mut()) {
            if !x.is_finite() {
                return Err(Error::input(item(), format!("non-finite coordinate {x}")));
            }
            *o = self.stored(x);
            if !o.is_finite() {
                return Err(Error::input(
                    item(),
                    format!("coordinate {x} does not fit {}", self.vertex_type),
                ));
            }
        }
        Ok(())
    }

    /// Appends the stored bytes of a stored position to `out`.
    pub(super) fn put(&self, stored: &[f64], out: &mut Vec<u8>) {
        match self.vertex_type {
            DataType::Float32 => {
                for &v in stored {
                    out.extend_from_slice(&(v as f32).to_le_bytes());
                }
            }
            DataType::Float64 => {
                for &v in stored {
                    out.extend_from_slice(&v.to_le_bytes());
                }
            }
            vt => {
                for &v in stored {
                    f64_to_le(vt, v, out);
                }
            }
        }
    }

    /// The first coordinate of `p` too far from the origin, with its bin (`|x / bin|` must be
    /// below [`COORDINATE_LIMIT`]).
    fn too_far(&self, p: &[f64]) -> Option<(f64, f64)> {
        p.iter()
            .zip(&self.bin_shape)
            .find(|(x, b)| (*x / *b).abs() >= COORDINATE_LIMIT)
            .map(|(x, b)| (*x, *b))
    }

    /// Checks that a (stored) position has exact integer chunk and bin coordinates, returning
    /// the coordinate too far from the origin and its bin if one is, and writes its chunk
    /// coordinates to `out` ([`Grid::chunk_into`]); without bins (bin = chunk) one division
    /// per axis serves both.
    #[inline]
    pub(super) fn chunk_in_range(&self, p: &[f64], out: &mut [i64]) -> Option<(f64, f64)> {
        if self.binned {
            let far = self.too_far(p);
            self.chunk_into(p, out);
            return far;
        }
        for ((x, c), o) in p.iter().zip(&self.chunk_shape).zip(out.iter_mut()) {
            let q = x / c;
            if q.abs() >= COORDINATE_LIMIT {
                return Some((*x, *c));
            }
            *o = floor_i64(q);
        }
        None
    }

    /// Writes the chunk coordinates of the vertex at `p` (as given, before it is stored in
    /// the vertex type) to `out`: the chunk the vertex goes to.
    pub(super) fn chunk_of_given(&self, p: &[f64], out: &mut [i64]) {
        floor_div(p.iter().map(|&x| self.stored(x)), &self.chunk_shape, out);
    }

    /// Writes the chunk coordinates of `p` to `out`: the reader's rule,
    /// [`chunk_of`](crate::metadata::chunk_of), `floor(p / chunk_shape)` per axis.
    pub(super) fn chunk_into(&self, p: &[f64], out: &mut [i64]) {
        floor_div(p.iter().copied(), &self.chunk_shape, out);
    }

    /// The chunk lookup of a store with these options: dense over the chunks inside the
    /// bounds when they are given and cannot grow (every vertex kept is inside them).
    pub(super) fn lookup(&self, options: &WriterOptions) -> ChunkLookup {
        let dense = match (&options.bounds, options.out_of_bounds) {
            (Some([lo, hi]), OutOfBounds::Raise | OutOfBounds::Ignore) => {
                let mut range = (vec![0; self.ndim], vec![0; self.ndim]);
                self.chunk_into(lo, &mut range.0);
                self.chunk_into(hi, &mut range.1);
                Some(range)
            }
            _ => None,
        };
        ChunkLookup::new(self.ndim, dense)
    }

    /// Writes the global bin coordinates of `p` to `out`.
    pub(super) fn bin_into(&self, p: &[f64], out: &mut [i64]) {
        floor_div(p.iter().copied(), &self.bin_shape, out);
    }

    /// The bin of `p` within its chunk, row-major (last axis fastest). Positions are checked
    /// by [`Grid::chunk_in_range`] first; a bin that rounding puts outside the chunk is clamped
    /// to the chunk's edge bin.
    pub(super) fn bin_of(&self, p: &[f64], chunk: &[i64]) -> u64 {
        let mut idx = 0u64;
        for (((x, bin), c), &bpc) in p
            .iter()
            .zip(&self.bin_shape)
            .zip(chunk)
            .zip(&self.bins_per_chunk)
        {
            let b = (x / bin).floor() as i128;
            let local = (b - *c as i128 * bpc as i128).clamp(0, bpc as i128 - 1) as u64;
            idx = idx.saturating_mul(bpc).saturating_add(local);
        }
        idx
    }
}

/// `floor(p / shape) as i64` per axis, to `out` (without a call to `floor`: positions are
/// checked by [`Grid::chunk_in_range`], so the quotients are far inside the `i64` range, where
/// truncating and stepping down below a negative fraction is the floor).
fn floor_div(p: impl IntoIterator<Item = f64>, shape: &[f64], out: &mut [i64]) {
    for ((x, s), o) in p.into_iter().zip(shape).zip(out.iter_mut()) {
        *o = floor_i64(x / s);
    }
}

/// `q.floor() as i64` for `|q| < 2^63`.
fn floor_i64(q: f64) -> i64 {
    let t = q as i64;
    if (t as f64) > q {
        t - 1
    } else {
        t
    }
}

/// The error of coordinate `x`, too far from the origin for bins of `bin`.
pub(super) fn too_far(x: f64, bin: f64, item: InputItem) -> Error {
    Error::input(
        item,
        format!("coordinate {x} is too far from the origin for bins of {bin} (|x / bin| must be below 2^52)"),
    )
}

/// The bounds: the given ones (grown under `expand`), and the extent of the data seen.
#[derive(Debug, Clone)]
pub(super) struct Extent {
    policy: OutOfBounds,
    bounds: Option<[Vec<f64>; 2]>,
    seen: Option<(Vec<f64>, Vec<f64>)>,
}

/// Grows `lo..hi` to hold `p`.
#[inline]
pub(super) fn grow(lo: &mut [f64], hi: &mut [f64], p: &[f64]) {
    for ((l, h), &x) in lo.iter_mut().zip(hi.iter_mut()).zip(p) {
        *l = l.min(x);
        *h = h.max(x);
    }
}

impl Extent {
    /// The extent of validated options, before any data.
    pub(super) fn new(options: &WriterOptions) -> Self {
        Self {
            policy: options.out_of_bounds,
            bounds: options.bounds.clone(),
            seen: None,
        }
    }

    /// Whether `p` is inside the bounds (always true without bounds); a position outside is
    /// an error at `item()` under [`OutOfBounds::Raise`].
    #[inline]
    pub(super) fn admit(&self, p: &[f64], item: impl FnOnce() -> InputItem) -> Result<bool> {
        let inside = match &self.bounds {
            None => true,
            Some([lo, hi]) => p
                .iter()
                .zip(lo.iter().zip(hi))
                .all(|(x, (a, b))| a <= x && x <= b),
        };
        if !inside && self.policy == OutOfBounds::Raise {
            return Err(Error::input(
                item(),
                format!("position {p:?} is outside the bounds {:?}", self.bounds),
            ));
        }
        Ok(inside)
    }

    /// Notes a kept position (growing the bounds under [`OutOfBounds::Expand`]).
    pub(super) fn note(&mut self, p: &[f64]) {
        match &mut self.seen {
            None => self.seen = Some((p.to_vec(), p.to_vec())),
            Some((lo, hi)) => grow(lo, hi, p),
        }
        if self.policy == OutOfBounds::Expand {
            if let Some([lo, hi]) = &mut self.bounds {
                grow(lo, hi, p);
            }
        }
    }

    /// The extent of the data seen (`None` before any vertex): the corners of a part's
    /// vertices, for its receipt.
    pub(super) fn seen(&self) -> Option<(Vec<f64>, Vec<f64>)> {
        self.seen.clone()
    }

    /// The bounds to write: the given (or expanded) ones, else those of the data, else the
    /// first chunk.
    pub(super) fn bounds(&self, chunk_shape: &[f64]) -> [Vec<f64>; 2] {
        match (&self.bounds, &self.seen) {
            (Some(b), _) => b.clone(),
            (None, Some((lo, hi))) => [lo.clone(), hi.clone()],
            (None, None) => [vec![0.0; chunk_shape.len()], chunk_shape.to_vec()],
        }
    }
}
