//! The chunk coordinates of a manifest block ([`ChunkCoords`]), held inline for the usual
//! arities: a level's manifests name up to one block per object and chunk, so decoding them
//! must not cost a heap allocation (and a free) per block.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;

/// Coordinates held inline (more go to the heap).
const INLINE: usize = 4;

/// Chunk coordinates: a `[i64]` that needs no heap allocation up to four coordinates. It
/// reads as a slice (`Deref<Target = [i64]>`) and compares, hashes and prints as one.
///
/// ```
/// use zv_format::layout::manifest::ChunkCoords;
/// let c = ChunkCoords::from(vec![1, -2, 3]);
/// assert_eq!(&*c, &[1, -2, 3]);
/// assert_eq!(format!("{c:?}"), "[1, -2, 3]");
/// assert_eq!(c, ChunkCoords::from(&[1, -2, 3][..]));
/// ```
#[derive(Clone)]
pub struct ChunkCoords(Repr);

#[derive(Clone)]
enum Repr {
    /// `values[..len]` (the rest zero).
    Inline { len: u8, values: [i64; INLINE] },
    /// More than [`INLINE`] coordinates.
    Heap(Box<[i64]>),
}

impl ChunkCoords {
    /// `n` coordinates, each the next value of `next` (the first error ends the build).
    pub fn try_from_fn<E>(n: usize, mut next: impl FnMut() -> Result<i64, E>) -> Result<Self, E> {
        if n <= INLINE {
            let mut values = [0i64; INLINE];
            for v in &mut values[..n] {
                *v = next()?;
            }
            return Ok(Self(Repr::Inline {
                len: n as u8,
                values,
            }));
        }
        let values = (0..n).map(|_| next()).collect::<Result<Vec<_>, E>>()?;
        Ok(Self(Repr::Heap(values.into_boxed_slice())))
    }

    /// The coordinates as a slice.
    pub fn as_slice(&self) -> &[i64] {
        match &self.0 {
            Repr::Inline { len, values } => &values[..usize::from(*len)],
            Repr::Heap(values) => values,
        }
    }
}

impl Deref for ChunkCoords {
    type Target = [i64];

    fn deref(&self) -> &[i64] {
        self.as_slice()
    }
}

impl AsRef<[i64]> for ChunkCoords {
    fn as_ref(&self) -> &[i64] {
        self.as_slice()
    }
}

impl From<&[i64]> for ChunkCoords {
    fn from(coords: &[i64]) -> Self {
        let mut it = coords.iter().copied();
        let built: Result<Self, ()> = Self::try_from_fn(coords.len(), || it.next().ok_or(()));
        built.unwrap_or_else(|()| Self(Repr::Heap(coords.into())))
    }
}

impl From<Vec<i64>> for ChunkCoords {
    fn from(coords: Vec<i64>) -> Self {
        if coords.len() > INLINE {
            return Self(Repr::Heap(coords.into_boxed_slice()));
        }
        Self::from(coords.as_slice())
    }
}

impl From<ChunkCoords> for Vec<i64> {
    fn from(coords: ChunkCoords) -> Self {
        coords.as_slice().to_vec()
    }
}

impl PartialEq for ChunkCoords {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for ChunkCoords {}

impl PartialEq<[i64]> for ChunkCoords {
    fn eq(&self, other: &[i64]) -> bool {
        self.as_slice() == other
    }
}

impl PartialEq<Vec<i64>> for ChunkCoords {
    fn eq(&self, other: &Vec<i64>) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Hash for ChunkCoords {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_slice().hash(state);
    }
}

impl fmt::Debug for ChunkCoords {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.as_slice().fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_and_heap_read_alike() {
        for n in 0..8usize {
            let v: Vec<i64> = (0..n as i64).map(|i| i * 7 - 3).collect();
            let a = ChunkCoords::from(v.clone());
            let b = ChunkCoords::from(v.as_slice());
            let mut it = v.iter().copied();
            let c: ChunkCoords =
                ChunkCoords::try_from_fn(n, || it.next().ok_or(())).expect("enough values");
            assert_eq!(&*a, v.as_slice());
            assert_eq!(a, b);
            assert_eq!(a, c);
            assert_eq!(a, v);
            assert_eq!(format!("{a:?}"), format!("{v:?}"));
            assert_eq!(Vec::from(a), v);
        }
        let mut left = 2;
        let short = ChunkCoords::try_from_fn(3, || {
            left -= 1;
            if left < 0 {
                Err("ran out")
            } else {
                Ok(1)
            }
        });
        assert_eq!(short, Err("ran out"));
    }
}
