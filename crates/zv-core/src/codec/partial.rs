//! Partial decoding: reading part of a chunk through byte ranges of its stored value, and
//! assembling decoded pieces into a region.
//!
//! An array→bytes codec that can decode part of a chunk from byte ranges (such as
//! `sharding_indexed`, which stores an index and independently encoded inner chunks) says so
//! with [`ArrayToBytesCodec::supports_partial_decode`](super::ArrayToBytesCodec) and implements
//! `partial_decode`; it reads through a [`ChunkReader`], which the array layer binds to the
//! chunk's store key ([`StoreChunkReader`]) and which nests ([`SubReader`]) for a codec inside
//! another.

use bytes::Bytes;

use super::{ArrayBytes, ChunkRepresentation, CodecError};
use crate::grid::{box_runs, Region};
use crate::key::StoreKey;
use crate::store::{ByteRange, ReadableStore};

/// Reads byte ranges of one encoded chunk.
pub trait ChunkReader: Sync {
    /// The bytes of `range`, or `None` if the chunk is not stored. A range outside the
    /// chunk is an error.
    fn read(&self, range: ByteRange) -> Result<Option<Bytes>, CodecError>;

    /// Ranges at most this many bytes apart are best read with one request
    /// ([`ReadableStore::coalesce_gap`](crate::store::ReadableStore::coalesce_gap)).
    fn coalesce_gap(&self) -> u64 {
        0
    }
}

/// A [`ChunkReader`] over the value of one store key: whole reads are one `get`, other ranges
/// one `get_range`.
pub struct StoreChunkReader<'a> {
    store: &'a dyn ReadableStore,
    key: &'a StoreKey,
}

impl<'a> StoreChunkReader<'a> {
    /// A reader of the value of `key` in `store`.
    pub fn new(store: &'a dyn ReadableStore, key: &'a StoreKey) -> Self {
        Self { store, key }
    }
}

impl ChunkReader for StoreChunkReader<'_> {
    fn read(&self, range: ByteRange) -> Result<Option<Bytes>, CodecError> {
        let whole = ByteRange::FromStart {
            offset: 0,
            length: None,
        };
        let value = if range == whole {
            self.store.get(self.key)?
        } else {
            self.store.get_range(self.key, range)?
        };
        Ok(value)
    }

    fn coalesce_gap(&self) -> u64 {
        self.store.coalesce_gap()
    }
}

/// A [`ChunkReader`] over an encoded chunk already in memory (read whole once, decoded in
/// parts later): ranges are slices of it, without a copy.
pub struct BytesChunkReader<'a> {
    bytes: &'a Bytes,
}

impl<'a> BytesChunkReader<'a> {
    /// A reader of `bytes`.
    pub fn new(bytes: &'a Bytes) -> Self {
        Self { bytes }
    }
}

impl ChunkReader for BytesChunkReader<'_> {
    fn read(&self, range: ByteRange) -> Result<Option<Bytes>, CodecError> {
        let len = self.bytes.len() as u64;
        let Some(r) = range.to_range(len) else {
            return Err(CodecError::corrupt(
                "partial read",
                format!("byte range {range:?} is outside a value of {len} bytes"),
            ));
        };
        // both ends are at most `len`, which is a usize
        Ok(Some(self.bytes.slice(r.start as usize..r.end as usize)))
    }
}

/// The bytes `offset .. offset + len` of another reader, read as a value of their own (an
/// inner chunk inside a shard). Ranges are checked against `len` before reading.
pub struct SubReader<'a> {
    base: &'a dyn ChunkReader,
    offset: u64,
    len: u64,
}

impl<'a> SubReader<'a> {
    /// The part `offset .. offset + len` of `base`.
    pub fn new(base: &'a dyn ChunkReader, offset: u64, len: u64) -> Self {
        Self { base, offset, len }
    }
}

impl ChunkReader for SubReader<'_> {
    fn read(&self, range: ByteRange) -> Result<Option<Bytes>, CodecError> {
        let Some(r) = range.to_range(self.len) else {
            return Err(CodecError::corrupt(
                "partial read",
                format!(
                    "byte range {range:?} is outside an inner value of {} bytes",
                    self.len
                ),
            ));
        };
        let start = self
            .offset
            .checked_add(r.start)
            .ok_or_else(|| CodecError::Overflow(format!("byte range {range:?}")))?;
        let value = self.base.read(ByteRange::FromStart {
            offset: start,
            length: Some(r.end - r.start),
        })?;
        match value {
            Some(v) if v.len() as u64 != r.end - r.start => Err(CodecError::corrupt(
                "partial read",
                format!("read {} bytes of {}", v.len(), r.end - r.start),
            )),
            other => Ok(other),
        }
    }

    fn coalesce_gap(&self) -> u64 {
        self.base.coalesce_gap()
    }
}

/// The elements of `target` (a box in some coordinate space) assembled from `pieces`: each a
/// box in the same space and its decoded elements (C order, the box's shape, the data type of
/// `repr`). Elements no piece covers are the fill value of `repr`; pieces may extend beyond
/// `target` (only their intersection is copied).
///
/// ```
/// # use std::borrow::Cow;
/// # use zv_core::codec::{assemble, ArrayBytes, ChunkRepresentation};
/// # use zv_core::data_type::{DataType, FillValue};
/// # use zv_core::grid::Region;
/// let repr = ChunkRepresentation::new(vec![1], DataType::UInt8, FillValue::zero(DataType::UInt8))?;
/// let (at, data) = (Region::new(vec![2], vec![3]).unwrap(), ArrayBytes::Fixed(Cow::Owned(vec![7, 8, 9])));
/// let out = assemble(&Region::new(vec![1], vec![3]).unwrap(), &repr, &[(&at, &data)])?;
/// assert_eq!(out, ArrayBytes::Fixed(Cow::Owned(vec![0, 7, 8])));
/// # Ok::<(), zv_core::codec::CodecError>(())
/// ```
pub fn assemble(
    target: &Region,
    repr: &ChunkRepresentation,
    pieces: &[(&Region, &ArrayBytes<'_>)],
) -> Result<ArrayBytes<'static>, CodecError> {
    let target_repr = repr.with_shape(target.shape().to_vec())?;
    let bad = || CodecError::corrupt("assemble", "a piece is smaller than its box");
    let overlaps = pieces.iter().filter_map(|(b, data)| {
        let part = b
            .intersect(target)
            .or_else(|| (target.ndim() == 0 && b.ndim() == 0).then(|| Region::whole(&[])))?;
        let in_src: Vec<u64> = part
            .start()
            .iter()
            .zip(b.start())
            .map(|(p, s)| p - s)
            .collect();
        let in_dst: Vec<u64> = part
            .start()
            .iter()
            .zip(target.start())
            .map(|(p, s)| p - s)
            .collect();
        Some((
            box_runs(b.shape(), &in_src, target.shape(), &in_dst, part.shape()),
            data,
        ))
    });
    match repr.data_type().size() {
        Some(es) => {
            let mut out = ArrayBytes::fill(&target_repr)?;
            let ArrayBytes::Fixed(dst) = &mut out else {
                return Err(bad());
            };
            let dst = dst.to_mut();
            for (runs, data) in overlaps {
                let ArrayBytes::Fixed(src) = data else {
                    return Err(bad());
                };
                for (so, doff, len) in runs {
                    let (s, d, l) = (so * es, doff * es, len * es);
                    let from = src.get(s..s + l).ok_or_else(bad)?;
                    dst.get_mut(d..d + l).ok_or_else(bad)?.copy_from_slice(from);
                }
            }
            Ok(out)
        }
        None => {
            let fill = repr.fill_value().as_bytes();
            let n = target_repr.num_elements_usize();
            let mut elements: Vec<&[u8]> = super::try_vec(n)?;
            elements.resize(n, fill);
            for (runs, data) in overlaps {
                for (so, doff, len) in runs {
                    for i in 0..len {
                        let e = data.element(so + i).ok_or_else(bad)?;
                        *elements.get_mut(doff + i).ok_or_else(bad)? = e;
                    }
                }
            }
            Ok(ArrayBytes::from_elements(elements))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data_type::{DataType, FillValue};
    use std::borrow::Cow;

    struct Whole(Vec<u8>);

    impl ChunkReader for Whole {
        fn read(&self, range: ByteRange) -> Result<Option<Bytes>, CodecError> {
            let r = range
                .to_range(self.0.len() as u64)
                .ok_or_else(|| CodecError::corrupt("test", "range"))?;
            Ok(Some(Bytes::copy_from_slice(
                &self.0[r.start as usize..r.end as usize],
            )))
        }
    }

    #[test]
    fn sub_reader_translates_and_checks_ranges() {
        let base = Whole((0..20).collect());
        let sub = SubReader::new(&base, 5, 10);
        let got = sub.read(ByteRange::Suffix(3)).unwrap().unwrap();
        assert_eq!(&got[..], &[12, 13, 14]);
        let got = sub
            .read(ByteRange::FromStart {
                offset: 2,
                length: None,
            })
            .unwrap()
            .unwrap();
        assert_eq!(&got[..], &[7, 8, 9, 10, 11, 12, 13, 14]);
        assert!(sub.read(ByteRange::Suffix(11)).is_err());
        let nested = SubReader::new(&sub, 8, 2);
        assert_eq!(
            &nested.read(ByteRange::Suffix(2)).unwrap().unwrap()[..],
            &[13, 14]
        );
    }

    #[test]
    fn assemble_variable_and_two_d() {
        let dt = DataType::VariableLengthBytes;
        let repr = ChunkRepresentation::new(vec![1], dt, FillValue::zero(dt)).unwrap();
        let piece = ArrayBytes::from_elements([b"a".as_slice(), b"bc"]);
        let out = assemble(
            &Region::new(vec![0], vec![3]).unwrap(),
            &repr,
            &[(&Region::new(vec![1], vec![2]).unwrap(), &piece)],
        )
        .unwrap();
        assert_eq!(out.element(0), Some(&[][..]));
        assert_eq!(out.element(2), Some(&b"bc"[..]));
        let dt = DataType::UInt8;
        let repr = ChunkRepresentation::new(vec![1, 1], dt, FillValue::zero(dt)).unwrap();
        // a 2x2 piece at (1,1) into the 3x3 box at the origin
        let piece = ArrayBytes::Fixed(Cow::Owned(vec![1, 2, 3, 4]));
        let out = assemble(
            &Region::whole(&[3, 3]),
            &repr,
            &[(&Region::new(vec![1, 1], vec![2, 2]).unwrap(), &piece)],
        )
        .unwrap();
        assert_eq!(
            out,
            ArrayBytes::Fixed(Cow::Owned(vec![0, 0, 0, 0, 1, 2, 0, 3, 4]))
        );
    }
}
