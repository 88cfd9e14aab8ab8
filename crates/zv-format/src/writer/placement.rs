//! Where a position goes: its stored coordinates (converted to the vertex type), its chunk and
//! bin, the range check that keeps chunk and bin coordinates exact, and the bounds (given,
//! expanded or inferred from the data).

use zv_core::data_type::DataType;

use super::options::{OutOfBounds, WriterOptions};
use crate::error::{Error, InputItem, Result};
use crate::layout::attributes::{f64_to_le, le_to_f64};
use crate::metadata::{chunk_of, ChunkKey};

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

    /// Converts a position to the vertex type: its stored bytes and the stored values.
    pub(super) fn convert(&self, p: &[f64], item: InputItem) -> Result<(Vec<u8>, Vec<f64>)> {
        self.check_arity(p, || item.clone())?;
        let mut bytes = Vec::with_capacity(self.vertex_bytes());
        let mut stored = Vec::with_capacity(self.ndim);
        self.convert_into(p, || item.clone(), &mut bytes, &mut stored)?;
        Ok((bytes, stored))
    }

    /// Appends the stored bytes and values of position `p` to `bytes` and `stored`; a
    /// non-finite coordinate, or one the vertex type cannot hold, is an error at `item()`.
    pub(super) fn convert_into(
        &self,
        p: &[f64],
        item: impl Fn() -> InputItem,
        bytes: &mut Vec<u8>,
        stored: &mut Vec<f64>,
    ) -> Result<()> {
        for &x in p {
            if !x.is_finite() {
                return Err(Error::input(item(), format!("non-finite coordinate {x}")));
            }
            let at = bytes.len();
            f64_to_le(self.vertex_type, x, bytes);
            let back = le_to_f64(self.vertex_type, &bytes[at..]);
            if !back.is_finite() {
                return Err(Error::input(
                    item(),
                    format!("coordinate {x} does not fit {}", self.vertex_type),
                ));
            }
            stored.push(back);
        }
        Ok(())
    }

    /// Checks that a (stored) position has exact integer chunk and bin coordinates.
    pub(super) fn check_range(&self, p: &[f64], item: impl FnOnce() -> InputItem) -> Result<()> {
        match p
            .iter()
            .zip(&self.bin_shape)
            .find(|(x, b)| (*x / *b).abs() >= COORDINATE_LIMIT)
        {
            Some((x, b)) => Err(Error::input(
                item(),
                format!("coordinate {x} is too far from the origin for bins of {b} (|x / bin| must be below 2^52)"),
            )),
            None => Ok(()),
        }
    }

    /// The chunk of `p` (the reader's rule, [`chunk_of`]).
    pub(super) fn chunk_of(&self, p: &[f64]) -> ChunkKey {
        ChunkKey(chunk_of(p, &self.chunk_shape))
    }

    /// The global bin coordinates of `p`.
    pub(super) fn bin_coords(&self, p: &[f64]) -> Vec<i64> {
        chunk_of(p, &self.bin_shape)
    }

    /// The bin of `p` within its chunk, row-major (last axis fastest). Positions are checked
    /// by [`Grid::check_range`] first; a bin that rounding puts outside the chunk is clamped
    /// to the chunk's edge bin.
    pub(super) fn bin_of(&self, p: &[f64], key: &ChunkKey) -> u64 {
        let mut idx = 0u64;
        for (((x, bin), c), &bpc) in p
            .iter()
            .zip(&self.bin_shape)
            .zip(&key.0)
            .zip(&self.bins_per_chunk)
        {
            let b = (x / bin).floor() as i128;
            let local = (b - *c as i128 * bpc as i128).clamp(0, bpc as i128 - 1) as u64;
            idx = idx.saturating_mul(bpc).saturating_add(local);
        }
        idx
    }
}

/// The bounds: the given ones (grown under `expand`), and the extent of the data seen.
#[derive(Debug, Clone)]
pub(super) struct Extent {
    policy: OutOfBounds,
    bounds: Option<[Vec<f64>; 2]>,
    seen: Option<(Vec<f64>, Vec<f64>)>,
}

/// Grows `lo..hi` to hold `p`.
fn grow(lo: &mut [f64], hi: &mut [f64], p: &[f64]) {
    for (i, &x) in p.iter().enumerate() {
        lo[i] = lo[i].min(x);
        hi[i] = hi[i].max(x);
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
