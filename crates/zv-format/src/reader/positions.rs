//! Columnar results: positions as one flat `f64` buffer ([`Positions`]) and `(chunk, row)`
//! references as a chunk table with per-entry columns ([`ChunkRefs`]).
//!
//! Positions are `f64` whatever the stored vertex type (`float16`, `float32` and `float64` all
//! convert exactly), `ndim` values per point, back to back; [`Level::vertex_type`] says how
//! they were stored. A row is a `&[f64]` slice of the buffer: nothing is allocated per point.
//!
//! [`Level::vertex_type`]: super::Level::vertex_type

use std::fmt;
use std::ops::Index;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::metadata::ChunkKey;

/// Points as one flat buffer of `len() × ndim()` values (row-major).
///
/// ```
/// use zv_format::reader::Positions;
/// let p = Positions::from_flat(2, vec![1.0, 2.0, 3.0, 4.0])?;
/// assert_eq!((p.len(), p.ndim()), (2, 2));
/// assert_eq!(p[1], [3.0, 4.0]);
/// assert!(p.iter().all(|row| row.iter().all(|x| *x > 0.0)));
/// assert_eq!(p, vec![vec![1.0, 2.0], vec![3.0, 4.0]]);
/// # Ok::<(), zv_format::Error>(())
/// ```
#[derive(Clone, Default)]
pub struct Positions {
    ndim: usize,
    values: Vec<f64>,
}

impl Positions {
    /// No points, of `ndim` values each.
    pub fn new(ndim: usize) -> Self {
        Self {
            ndim,
            values: Vec::new(),
        }
    }

    /// No points yet, with room for `rows` of them.
    pub fn with_capacity(ndim: usize, rows: usize) -> Self {
        Self {
            ndim,
            values: Vec::with_capacity(rows.saturating_mul(ndim)),
        }
    }

    /// Points from a flat buffer; its length must be whole rows of `ndim` values.
    pub fn from_flat(ndim: usize, values: Vec<f64>) -> Result<Self> {
        if (ndim == 0 && !values.is_empty()) || (ndim > 0 && values.len() % ndim != 0) {
            return Err(Error::InvalidInput(format!(
                "{} values are not whole rows of {ndim}",
                values.len()
            )));
        }
        Ok(Self { ndim, values })
    }

    /// Points from rows, which must all have the same length.
    pub fn from_rows(rows: &[Vec<f64>]) -> Result<Self> {
        let ndim = rows.first().map_or(0, Vec::len);
        let mut out = Self::with_capacity(ndim, rows.len());
        for r in rows {
            if r.len() != ndim {
                return Err(Error::InvalidInput(format!(
                    "a row of {} values among rows of {ndim}",
                    r.len()
                )));
            }
            out.values.extend_from_slice(r);
        }
        Ok(out)
    }

    /// The number of points.
    pub fn len(&self) -> usize {
        self.values.len().checked_div(self.ndim).unwrap_or(0)
    }

    /// Whether there are no points.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The values per point.
    pub fn ndim(&self) -> usize {
        self.ndim
    }

    /// Point `i`, or `None` past the end.
    pub fn get(&self, i: usize) -> Option<&[f64]> {
        let start = i.checked_mul(self.ndim)?;
        self.values.get(start..start.checked_add(self.ndim)?)
    }

    /// Point `i`. Like slice indexing, an index past the end panics; [`Positions::get`] does
    /// not.
    pub fn row(&self, i: usize) -> &[f64] {
        &self.values[i * self.ndim..(i + 1) * self.ndim]
    }

    /// The points in order, each a slice of `ndim` values.
    pub fn iter(&self) -> std::slice::ChunksExact<'_, f64> {
        self.values.chunks_exact(self.ndim.max(1))
    }

    /// Whether some point equals `row`.
    pub fn contains(&self, row: &[f64]) -> bool {
        self.iter().any(|p| p == row)
    }

    /// The flat buffer (row-major).
    pub fn as_flat(&self) -> &[f64] {
        &self.values
    }

    /// The flat buffer (row-major), taken.
    pub fn into_flat(self) -> Vec<f64> {
        self.values
    }

    /// Every point as its own `Vec` (a copy, for callers that want rows).
    pub fn to_rows(&self) -> Vec<Vec<f64>> {
        self.iter().map(<[f64]>::to_vec).collect()
    }

    /// The flat buffer, for appending whole rows.
    pub(crate) fn values_mut(&mut self) -> &mut Vec<f64> {
        &mut self.values
    }
}

impl Index<usize> for Positions {
    type Output = [f64];

    fn index(&self, i: usize) -> &[f64] {
        self.row(i)
    }
}

impl<'a> IntoIterator for &'a Positions {
    type Item = &'a [f64];
    type IntoIter = std::slice::ChunksExact<'a, f64>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// Equal when the points are (an empty result equals any other empty one).
impl PartialEq for Positions {
    fn eq(&self, other: &Self) -> bool {
        self.values == other.values && (self.ndim == other.ndim || self.values.is_empty())
    }
}

impl PartialEq<Vec<Vec<f64>>> for Positions {
    fn eq(&self, other: &Vec<Vec<f64>>) -> bool {
        self.len() == other.len() && self.iter().zip(other).all(|(a, b)| a == b.as_slice())
    }
}

impl fmt::Debug for Positions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// References into the chunks of a level as columns: a table of chunk keys, and for each
/// entry the index of its chunk in that table and a number — a row of the chunk (the rows of
/// [`super::Points`] and [`super::Object`]) or a fragment (an object's fragments).
///
/// Results read together share one table, so no key is stored per entry. Two values are
/// equal when their entries are, whatever their tables.
#[derive(Clone, Default)]
pub struct ChunkRefs {
    keys: Arc<[ChunkKey]>,
    chunk: Vec<u32>,
    number: Vec<u64>,
}

impl ChunkRefs {
    /// No entries yet, over the chunk table `keys`.
    pub fn new(keys: Arc<[ChunkKey]>) -> Self {
        Self {
            keys,
            chunk: Vec::new(),
            number: Vec::new(),
        }
    }

    /// The entries `(chunk[i], number[i])` over the chunk table `keys` (every `chunk[i]` must
    /// index `keys`, and the columns must have one length).
    pub(crate) fn from_columns(keys: Arc<[ChunkKey]>, chunk: Vec<u32>, number: Vec<u64>) -> Self {
        Self {
            keys,
            chunk,
            number,
        }
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.chunk.len()
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.chunk.is_empty()
    }

    /// Entry `i`: its chunk and its number, or `None` past the end.
    pub fn get(&self, i: usize) -> Option<(&ChunkKey, u64)> {
        let c = *self.chunk.get(i)? as usize;
        Some((self.keys.get(c)?, *self.number.get(i)?))
    }

    /// The entries in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&ChunkKey, u64)> + '_ {
        self.chunk
            .iter()
            .zip(&self.number)
            .map(|(&c, &n)| (&self.keys[c as usize], n))
    }

    /// The chunk table (may hold chunks no entry refers to).
    pub fn keys(&self) -> &[ChunkKey] {
        &self.keys
    }

    /// For each entry, the index of its chunk in [`ChunkRefs::keys`].
    pub fn chunk_indices(&self) -> &[u32] {
        &self.chunk
    }

    /// For each entry, its row (or fragment) number within its chunk.
    pub fn numbers(&self) -> &[u64] {
        &self.number
    }

    /// The entries as `(chunk, number)` pairs (a copy).
    pub fn to_vec(&self) -> Vec<(ChunkKey, u64)> {
        self.iter().map(|(k, n)| (k.clone(), n)).collect()
    }

    /// Appends the entries `numbers` of chunk `chunk` of the table.
    pub(crate) fn extend(&mut self, chunk: u32, numbers: impl IntoIterator<Item = u64>) {
        self.number.extend(numbers);
        self.chunk.resize(self.number.len(), chunk);
    }

    /// Room for `n` more entries.
    pub(crate) fn reserve(&mut self, n: usize) {
        self.chunk.reserve(n);
        self.number.reserve(n);
    }
}

impl PartialEq for ChunkRefs {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len()
            && (Arc::ptr_eq(&self.keys, &other.keys) && self.chunk == other.chunk
                || self.iter().zip(other.iter()).all(|(a, b)| a == b))
            && self.number == other.number
    }
}

impl fmt::Debug for ChunkRefs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}
