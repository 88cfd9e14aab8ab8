//! Regular chunk grids, hyperrectangle regions and copies between C-order buffers.

use std::fmt;

/// Why a region was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid region {region}: {reason}")]
pub struct RegionError {
    /// The region as text.
    pub region: String,
    /// Why.
    pub reason: String,
}

/// An axis-aligned hyperrectangle of array elements: `start[i] .. start[i] + shape[i]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Region {
    start: Vec<u64>,
    shape: Vec<u64>,
}

impl Region {
    /// A region from its start and shape (same length; the end must not overflow).
    pub fn new(start: Vec<u64>, shape: Vec<u64>) -> Result<Self, RegionError> {
        let r = Self { start, shape };
        if r.start.len() != r.shape.len() {
            return Err(r.error("start and shape have different lengths"));
        }
        if r.start
            .iter()
            .zip(&r.shape)
            .any(|(s, n)| s.checked_add(*n).is_none())
        {
            return Err(r.error("end overflows"));
        }
        Ok(r)
    }

    /// The region covering an array of `shape`.
    pub fn whole(shape: &[u64]) -> Self {
        Self {
            start: vec![0; shape.len()],
            shape: shape.to_vec(),
        }
    }

    /// Parses `a:b,c:d,…` against an array of `array_shape`. Each dimension is `a:b`
    /// (half-open), `a:` or `:b` (open ends), `:` (whole dimension) or `i` (one index). A
    /// 0-d array takes the empty string.
    pub fn parse(text: &str, array_shape: &[u64]) -> Result<Self, RegionError> {
        let err = |reason: String| RegionError {
            region: text.to_owned(),
            reason,
        };
        let text = text.trim();
        let parts: Vec<&str> = if text.is_empty() {
            Vec::new()
        } else {
            text.split(',').map(str::trim).collect()
        };
        if parts.len() != array_shape.len() {
            return Err(err(format!(
                "{} dimensions given, the array has {}",
                parts.len(),
                array_shape.len()
            )));
        }
        let mut start = Vec::new();
        let mut shape = Vec::new();
        for (part, &extent) in parts.iter().zip(array_shape) {
            let num = |s: &str, default: u64| -> Result<u64, RegionError> {
                if s.is_empty() {
                    Ok(default)
                } else {
                    s.parse()
                        .map_err(|_| err(format!("`{s}` is not a non-negative integer")))
                }
            };
            let (a, b) = match part.split_once(':') {
                Some((a, b)) => (num(a, 0)?, num(b, extent)?),
                None => {
                    let i = num(part, 0)?;
                    (i, i.saturating_add(1))
                }
            };
            if a > b {
                return Err(err(format!("`{part}`: start is after end")));
            }
            start.push(a);
            shape.push(b - a);
        }
        let region = Self::new(start, shape)?;
        region.check_within(array_shape)?;
        Ok(region)
    }

    /// The first element.
    pub fn start(&self) -> &[u64] {
        &self.start
    }

    /// The extent along each dimension.
    pub fn shape(&self) -> &[u64] {
        &self.shape
    }

    /// The end (exclusive) along each dimension.
    pub fn end(&self) -> Vec<u64> {
        self.start
            .iter()
            .zip(&self.shape)
            .map(|(s, n)| s + n)
            .collect()
    }

    /// The number of dimensions.
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// The number of elements (`None` on overflow).
    pub fn num_elements(&self) -> Option<u64> {
        self.shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d))
    }

    /// Whether the region holds no element.
    pub fn is_empty(&self) -> bool {
        self.shape.contains(&0)
    }

    /// Checks that the region lies within an array of `array_shape`.
    pub fn check_within(&self, array_shape: &[u64]) -> Result<(), RegionError> {
        if self.ndim() != array_shape.len() {
            return Err(self.error(format!(
                "{} dimensions, the array has {}",
                self.ndim(),
                array_shape.len()
            )));
        }
        for (i, (e, &n)) in self.end().iter().zip(array_shape).enumerate() {
            if *e > n {
                return Err(self.error(format!(
                    "dimension {i} ends at {e}, beyond the array extent {n}"
                )));
            }
        }
        Ok(())
    }

    /// The intersection with `other`, or `None` if they do not overlap (or either is empty).
    pub fn intersect(&self, other: &Region) -> Option<Region> {
        if self.ndim() != other.ndim() {
            return None;
        }
        let mut start = Vec::with_capacity(self.ndim());
        let mut shape = Vec::with_capacity(self.ndim());
        for i in 0..self.ndim() {
            let a = self.start[i].max(other.start[i]);
            let b = (self.start[i] + self.shape[i]).min(other.start[i] + other.shape[i]);
            if a >= b {
                return None;
            }
            start.push(a);
            shape.push(b - a);
        }
        Some(Region { start, shape })
    }

    fn error(&self, reason: impl Into<String>) -> RegionError {
        RegionError {
            region: self.to_string(),
            reason: reason.into(),
        }
    }
}

impl fmt::Display for Region {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .start
            .iter()
            .zip(&self.shape)
            .map(|(s, n)| format!("{s}:{}", s.saturating_add(*n)))
            .collect();
        write!(f, "[{}]", parts.join(","))
    }
}

/// A regular chunk grid over an array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegularGrid {
    array_shape: Vec<u64>,
    chunk_shape: Vec<u64>,
}

impl RegularGrid {
    /// A grid of `chunk_shape` chunks (no zero extent, same length as `array_shape`; checked by
    /// the array metadata).
    pub fn new(array_shape: Vec<u64>, chunk_shape: Vec<u64>) -> Self {
        Self {
            array_shape,
            chunk_shape,
        }
    }

    /// The array shape.
    pub fn array_shape(&self) -> &[u64] {
        &self.array_shape
    }

    /// The chunk shape.
    pub fn chunk_shape(&self) -> &[u64] {
        &self.chunk_shape
    }

    /// The number of chunks along each dimension.
    pub fn grid_shape(&self) -> Vec<u64> {
        self.array_shape
            .iter()
            .zip(&self.chunk_shape)
            .map(|(a, c)| a.div_ceil((*c).max(1)))
            .collect()
    }

    /// Whether chunk `coords` lies in the grid (no allocation; the same test as
    /// [`RegularGrid::chunk_region`] returning `Some`).
    pub fn contains_chunk(&self, coords: &[u64]) -> bool {
        coords.len() == self.chunk_shape.len()
            && coords
                .iter()
                .zip(&self.chunk_shape)
                .zip(&self.array_shape)
                .all(|((&c, &cs), &n)| c.checked_mul(cs).is_some_and(|s| s < n))
    }

    /// The elements of chunk `coords` that lie inside the array (edge chunks are clipped).
    pub fn chunk_region(&self, coords: &[u64]) -> Option<Region> {
        if coords.len() != self.chunk_shape.len() {
            return None;
        }
        let mut start = Vec::with_capacity(coords.len());
        let mut shape = Vec::with_capacity(coords.len());
        for ((&c, &cs), &n) in coords.iter().zip(&self.chunk_shape).zip(&self.array_shape) {
            let s = c.checked_mul(cs)?;
            if s >= n {
                return None;
            }
            start.push(s);
            shape.push(cs.min(n - s));
        }
        Some(Region { start, shape })
    }

    /// The whole (unclipped) box of chunk `coords`.
    pub fn chunk_box(&self, coords: &[u64]) -> Option<Region> {
        let start: Option<Vec<u64>> = coords
            .iter()
            .zip(&self.chunk_shape)
            .map(|(c, s)| c.checked_mul(*s))
            .collect();
        Region::new(start?, self.chunk_shape.clone()).ok()
    }

    /// The coordinates of every chunk that intersects `region`, in C order, produced one at
    /// a time: nothing is materialized beyond the chunk being visited, however large the
    /// region.
    pub fn chunks_in(&self, region: &Region) -> ChunksIn {
        if region.is_empty() || region.ndim() != self.chunk_shape.len() {
            return ChunksIn::default();
        }
        let lo: Vec<u64> = region
            .start()
            .iter()
            .zip(&self.chunk_shape)
            .map(|(s, c)| s / c.max(&1))
            .collect();
        let hi: Vec<u64> = region
            .end()
            .iter()
            .zip(&self.chunk_shape)
            .map(|(e, c)| (e - 1) / c.max(&1))
            .collect();
        ChunksIn {
            next: Some(lo.clone()),
            lo,
            hi,
        }
    }
}

/// The chunks that intersect a region, in C order (see [`RegularGrid::chunks_in`]).
#[derive(Debug, Clone, Default)]
pub struct ChunksIn {
    lo: Vec<u64>,
    hi: Vec<u64>,
    next: Option<Vec<u64>>,
}

impl Iterator for ChunksIn {
    type Item = Vec<u64>;

    fn next(&mut self) -> Option<Vec<u64>> {
        let current = self.next.take()?;
        // odometer, last dimension fastest
        let mut following = current.clone();
        let mut d = following.len();
        while d > 0 {
            d -= 1;
            if following[d] < self.hi[d] {
                following[d] += 1;
                self.next = Some(following);
                return Some(current);
            }
            following[d] = self.lo[d];
        }
        Some(current)
    }
}

/// Runs of consecutive elements for copying a box between two C-order buffers: yields
/// `(src_offset, dst_offset, len)` in elements. `box_start_src` / `box_start_dst` are the box
/// corners in each buffer's coordinates; the caller guarantees the box fits both.
pub fn box_runs(
    src_shape: &[u64],
    box_start_src: &[u64],
    dst_shape: &[u64],
    box_start_dst: &[u64],
    box_shape: &[u64],
) -> Vec<(usize, usize, usize)> {
    let n = box_shape.len();
    if n == 0 {
        return vec![(0, 0, 1)];
    }
    if box_shape.contains(&0) {
        return Vec::new();
    }
    let strides = |shape: &[u64]| -> Vec<u64> {
        let mut s = vec![1u64; shape.len()];
        for i in (0..shape.len().saturating_sub(1)).rev() {
            s[i] = s[i + 1] * shape[i + 1];
        }
        s
    };
    let ss = strides(src_shape);
    let ds = strides(dst_shape);
    let run = box_shape[n - 1] as usize;
    let mut out = Vec::new();
    let mut idx = vec![0u64; n - 1];
    loop {
        let mut so = 0u64;
        let mut doff = 0u64;
        for d in 0..n {
            let i = if d < n - 1 { idx[d] } else { 0 };
            so += (box_start_src[d] + i) * ss[d];
            doff += (box_start_dst[d] + i) * ds[d];
        }
        out.push((so as usize, doff as usize, run));
        let mut d = n - 1;
        loop {
            if d == 0 {
                return out;
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < box_shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_regions() {
        let r = Region::parse("0:10, 5:20", &[10, 30]).unwrap();
        assert_eq!((r.start(), r.shape()), (&[0, 5][..], &[10, 15][..]));
        let r = Region::parse(":,3", &[4, 5]).unwrap();
        assert_eq!((r.start(), r.shape()), (&[0, 3][..], &[4, 1][..]));
        assert!(Region::parse("0:11", &[10]).is_err());
        assert!(Region::parse("5:2", &[10]).is_err());
        assert!(Region::parse("0:1", &[10, 10]).is_err());
        assert!(Region::parse("x", &[10]).is_err());
        assert_eq!(Region::parse("", &[]).unwrap().num_elements(), Some(1));
    }

    #[test]
    fn grid() {
        let g = RegularGrid::new(vec![10, 7], vec![4, 4]);
        assert_eq!(g.grid_shape(), vec![3, 2]);
        let edge = g.chunk_region(&[2, 1]).unwrap();
        assert_eq!((edge.start(), edge.shape()), (&[8, 4][..], &[2, 3][..]));
        assert!(g.chunk_region(&[3, 0]).is_none());
        for coords in [[0, 0], [2, 1], [3, 0], [0, 2], [u64::MAX, 0]] {
            assert_eq!(
                g.contains_chunk(&coords),
                g.chunk_region(&coords).is_some(),
                "{coords:?}"
            );
        }
        assert!(!g.contains_chunk(&[0]));
        assert!(RegularGrid::new(vec![], vec![]).contains_chunk(&[]));
        let r = Region::new(vec![3, 3], vec![2, 2]).unwrap();
        assert_eq!(
            g.chunks_in(&r).collect::<Vec<_>>(),
            vec![vec![0, 0], vec![0, 1], vec![1, 0], vec![1, 1]]
        );
        assert!(g
            .chunks_in(&Region::new(vec![0, 0], vec![0, 3]).unwrap())
            .next()
            .is_none());
        let zero_d = RegularGrid::new(vec![], vec![]);
        assert_eq!(
            zero_d.chunks_in(&Region::whole(&[])).collect::<Vec<_>>(),
            vec![Vec::<u64>::new()]
        );
        // a region of 2^60 chunks is enumerated lazily
        let huge = RegularGrid::new(vec![1 << 60], vec![1]);
        let mut it = huge.chunks_in(&Region::whole(&[1 << 60]));
        assert_eq!(it.next(), Some(vec![0]));
        assert_eq!(it.nth(9), Some(vec![10]));
    }

    #[test]
    fn runs() {
        // copy a 2x2 box from (1,1) of a 3x3 into (0,0) of a 2x2
        let runs = box_runs(&[3, 3], &[1, 1], &[2, 2], &[0, 0], &[2, 2]);
        assert_eq!(runs, vec![(4, 0, 2), (7, 2, 2)]);
    }
}
