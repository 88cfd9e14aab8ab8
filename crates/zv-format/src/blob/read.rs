//! Reading a whole 1-D blob array into memory through its `zv_core` [`Array`] handle.
//!
//! A one-chunk array (every blob zv and the reference write) is one chunk read, and its decoded
//! chunk becomes the blob without a copy. An array of several chunks is assembled in order:
//! the output is reserved fallibly from the shape first (a hostile shape is an error, not an
//! abort), the stored chunks come from one listing, and gaps hold the fill value.

use zv_core::array::Array;
use zv_core::codec::ArrayBytes;
use zv_core::data_type::DataType;
use zv_core::key::StoreKey;

use super::zarr_error;
use crate::error::{Error, Result};

/// A decoded blob array: bytes (fixed-size elements, little-endian) or byte strings
/// (`variable_length_bytes`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlobData {
    /// The bytes of a fixed-size array (for ZV's `uint8` blobs, the payload).
    Bytes(Vec<u8>),
    /// The elements of a `variable_length_bytes` array.
    Elements(Vec<Vec<u8>>),
}

impl BlobData {
    /// The bytes of a byte blob; variable-length elements are an error naming `meta_key`.
    pub(super) fn into_bytes(self, meta_key: &StoreKey) -> Result<Vec<u8>> {
        match self {
            BlobData::Bytes(b) => Ok(b),
            BlobData::Elements(_) => Err(Error::metadata(
                meta_key.as_str(),
                "expected a byte blob, found variable-length elements",
            )),
        }
    }
}

/// The elements of a one-chunk 1-D `variable_length_bytes` array, flat: their bytes back to
/// back and `n + 1` offsets (element `i` is `data[offsets[i]..offsets[i + 1]]`), without a
/// copy per element; `None` when the array is not of that kind or its chunk is not stored
/// (the caller reads it whole).
pub(super) fn read_flat_elements(array: &Array) -> Result<Option<(Vec<u8>, Vec<usize>)>> {
    let n = array.shape().first().copied().unwrap_or(0);
    let one_chunk = array.grid().grid_shape().first().copied() == Some(1);
    if !array.data_type().is_variable() || !one_chunk {
        return Ok(None);
    }
    let err = |e| zarr_error(e, &array.path().metadata_key());
    let Some(ArrayBytes::Variable { data, offsets }) =
        array.retrieve_chunk_if_exists(&[0]).map_err(err)?
    else {
        return Ok(None);
    };
    let Some(bounds) = usize::try_from(n).ok().and_then(|n| offsets.get(..=n)) else {
        return Ok(None);
    };
    let mut data = data.into_owned();
    let bounds = bounds.to_vec();
    data.truncate(bounds.last().copied().unwrap_or(0));
    Ok(Some((data, bounds)))
}

/// Reads every element of the 1-D `array`.
pub(super) fn read_whole(array: &Array) -> Result<BlobData> {
    // the key is only built for an error
    let err = |e| zarr_error(e, &array.path().metadata_key());
    let n = array.shape().first().copied().unwrap_or(0);
    let nchunks = array.grid().grid_shape().first().copied().unwrap_or(0);
    if nchunks == 1 {
        // the usual blob: its one chunk, decoded, is the blob
        if let Some(chunk) = array.retrieve_chunk_if_exists(&[0]).map_err(err)? {
            let mut out = Assembler::whole(array.data_type(), chunk, n);
            out.make_little_endian();
            return Ok(out.finish());
        }
    }
    let stored = if nchunks > 1 {
        array.stored_chunks().map_err(err)?
    } else {
        Vec::new()
    };
    let cs = array.grid().chunk_shape().first().copied().unwrap_or(1);
    // Missing chunks read as the fill value, but only so much of it: the shape alone (with
    // nothing stored to confirm it) must not size an allocation.
    let covered = (stored.len() as u64).saturating_mul(cs).min(n);
    let fill_bytes = (n - covered).saturating_mul(array.data_type().size().unwrap_or(8) as u64);
    if fill_bytes > MAX_FILL_BYTES {
        return Err(Error::inconsistent(
            array.path().metadata_key().as_str(),
            format!(
                "shape [{n}] is too large: with {} stored chunk(s) of {cs} elements it needs {fill_bytes} bytes of fill for missing chunks, more than the {MAX_FILL_BYTES} a blob may take from its metadata alone",
                stored.len()
            ),
        ));
    }
    let mut out = Assembler::reserve(array, n)?;
    for coords in stored {
        let start = coords.first().copied().unwrap_or(0).saturating_mul(cs);
        out.fill_to(start.min(n));
        // a chunk deleted since the listing holds the fill value, like any missing chunk
        if let Some(chunk) = array.retrieve_chunk_if_exists(&coords).map_err(err)? {
            let take = (n - start.min(n)).min(cs);
            let key = array.chunk_key(&coords).map_err(err)?;
            out.push_chunk(&chunk, take, &key)?;
        }
    }
    out.fill_to(n);
    out.make_little_endian();
    Ok(out.finish())
}

/// Reads the 1-D `array` of fixed-size elements a stored chunk at a time, in order, handing
/// `each` the little-endian bytes of each chunk's elements (the last one trimmed to the shape)
/// and the blob's size in bytes: no more than one chunk is held. An array of one chunk, with
/// a chunk not stored (whose gap holds the fill value) or of variable-length elements is read
/// whole ([`read_whole`]) and handed over at once.
pub(super) fn read_pieces(array: &Array, each: &mut super::PieceVisitor<'_>) -> Result<()> {
    let err = |e| zarr_error(e, &array.path().metadata_key());
    let n = array.shape().first().copied().unwrap_or(0);
    let nchunks = array.grid().grid_shape().first().copied().unwrap_or(0);
    let es = array.data_type().size();
    let stored = match es {
        Some(_) if nchunks > 1 => array.stored_chunks().map_err(err)?,
        _ => Vec::new(),
    };
    let every = stored.len() as u64 == nchunks
        && stored.iter().enumerate().all(|(i, c)| c[..] == [i as u64]);
    let (Some(es), true) = (es, every && nchunks > 1) else {
        let whole = read_whole(array)?.into_bytes(&array.path().metadata_key())?;
        // named by its first chunk (a blob of one chunk is that chunk)
        let key = array
            .chunk_key(&vec![0; array.grid().grid_shape().len()])
            .map_or_else(
                |_| array.path().metadata_key().as_str().to_owned(),
                |k| k.as_str().to_owned(),
            );
        return each(&whole, whole.len() as u64, &key);
    };
    let total = n.saturating_mul(es as u64);
    let cs = array.grid().chunk_shape().first().copied().unwrap_or(1);
    let fill = array.metadata().fill_value.as_bytes().to_vec();
    for coords in stored {
        let start = coords[0].saturating_mul(cs).min(n);
        let take = usize::try_from((n - start).min(cs)).unwrap_or(usize::MAX);
        let key = array.chunk_key(&coords).map_err(err)?;
        // a chunk deleted since the listing holds the fill value, like any missing chunk
        let chunk = array.retrieve_chunk_if_exists(&coords).map_err(err)?;
        let mut piece = match &chunk {
            Some(ArrayBytes::Fixed(b)) => {
                std::borrow::Cow::Borrowed(b.get(..take.saturating_mul(es)).ok_or_else(|| {
                    Error::inconsistent(key.as_str(), "chunk shorter than its shape")
                })?)
            }
            Some(ArrayBytes::Variable { .. }) => {
                return Err(Error::inconsistent(
                    key.as_str(),
                    "decoded elements do not match the data type",
                ))
            }
            None => std::borrow::Cow::Owned(fill.repeat(take)),
        };
        if cfg!(target_endian = "big") {
            let w = array.data_type().component_size().unwrap_or(1);
            if w > 1 {
                piece.to_mut().chunks_exact_mut(w).for_each(<[u8]>::reverse);
            }
        }
        each(&piece, total, key.as_str())?;
    }
    Ok(())
}

/// The most fill a blob's missing chunks may add (64 MiB): more is refused, since nothing
/// stored confirms it (zv and the reference write every blob chunk that holds data; a
/// writer may leave out chunks that are all fill value, which are small in ZV's layout).
pub const MAX_FILL_BYTES: u64 = 64 << 20;

/// The elements read so far, with the fill element for gaps.
struct Assembler {
    data_type: DataType,
    /// Bytes of fixed-size elements (native order until [`Assembler::make_little_endian`]).
    bytes: Vec<u8>,
    /// Variable-length elements.
    elements: Vec<Vec<u8>>,
    /// The number of elements so far.
    len: u64,
    /// The bytes of one fill element.
    fill: Vec<u8>,
}

impl Assembler {
    /// The first `n` elements of one decoded chunk (the chunk's buffer is kept, not copied).
    fn whole(data_type: DataType, chunk: ArrayBytes<'static>, n: u64) -> Self {
        let count = usize::try_from(n).unwrap_or(usize::MAX);
        let (bytes, elements) = match chunk {
            ArrayBytes::Fixed(b) => {
                let es = data_type.size().unwrap_or(1);
                let mut bytes = b.into_owned();
                bytes.truncate(count.saturating_mul(es));
                (bytes, Vec::new())
            }
            ArrayBytes::Variable { data, offsets } => {
                let bounds = offsets.get(..=count).unwrap_or(&offsets);
                (Vec::new(), elements_of(&data, bounds).collect())
            }
        };
        Self {
            data_type,
            bytes,
            elements,
            len: n,
            fill: Vec::new(),
        }
    }

    /// Room for the `n` elements of `array`, reserved before anything is read: the size is
    /// dictated by the metadata, so a shape too large for memory is an error naming the
    /// array's `zarr.json`.
    fn reserve(array: &Array, n: u64) -> Result<Self> {
        let data_type = array.data_type();
        let es = data_type.size();
        let mut bytes = Vec::new();
        let mut elements: Vec<Vec<u8>> = Vec::new();
        let total = es.map_or(Some(n), |es| n.checked_mul(es as u64));
        let reserved = match (total.and_then(|t| usize::try_from(t).ok()), es) {
            (Some(t), Some(_)) => bytes.try_reserve_exact(t).is_ok(),
            (Some(t), None) => elements.try_reserve_exact(t).is_ok(),
            (None, _) => false,
        };
        if !reserved {
            return Err(Error::inconsistent(
                array.path().metadata_key().as_str(),
                format!("shape [{n}] is too large to read into memory"),
            ));
        }
        Ok(Self {
            data_type,
            bytes,
            elements,
            len: 0,
            fill: array.metadata().fill_value.as_bytes().to_vec(),
        })
    }

    /// Appends fill elements up to element `end`.
    fn fill_to(&mut self, end: u64) {
        let count = end.saturating_sub(self.len);
        if self.data_type.is_variable() {
            for _ in 0..count {
                self.elements.push(self.fill.clone());
            }
        } else if self.fill.iter().all(|&b| b == 0) {
            let count = usize::try_from(count).unwrap_or(usize::MAX);
            let len = self.bytes.len();
            self.bytes
                .resize(len.saturating_add(count.saturating_mul(self.fill.len())), 0);
        } else {
            for _ in 0..count {
                self.bytes.extend_from_slice(&self.fill);
            }
        }
        self.len = self.len.max(end);
    }

    /// Appends the first `take` elements of a decoded chunk (`key` names it in errors).
    fn push_chunk(&mut self, chunk: &ArrayBytes<'_>, take: u64, key: &StoreKey) -> Result<()> {
        let count = usize::try_from(take).unwrap_or(usize::MAX);
        match (chunk, self.data_type.size()) {
            (ArrayBytes::Fixed(b), Some(es)) => {
                let part = b.get(..count.saturating_mul(es)).ok_or_else(|| {
                    Error::inconsistent(key.as_str(), "chunk shorter than its shape")
                })?;
                self.bytes.extend_from_slice(part);
            }
            (ArrayBytes::Variable { data, offsets }, None) => {
                let bounds = offsets.get(..=count).ok_or_else(|| {
                    Error::inconsistent(key.as_str(), "chunk shorter than its shape")
                })?;
                self.elements.extend(elements_of(data, bounds));
            }
            _ => {
                return Err(Error::inconsistent(
                    key.as_str(),
                    "decoded elements do not match the data type",
                ))
            }
        }
        self.len += take;
        Ok(())
    }

    /// Puts fixed-size elements in little-endian order (decoded chunks are in native order).
    fn make_little_endian(&mut self) {
        if cfg!(target_endian = "big") {
            let w = self.data_type.component_size().unwrap_or(1);
            if w > 1 {
                self.bytes.chunks_exact_mut(w).for_each(<[u8]>::reverse);
            }
        }
    }

    fn finish(self) -> BlobData {
        if self.data_type.is_variable() {
            BlobData::Elements(self.elements)
        } else {
            BlobData::Bytes(self.bytes)
        }
    }
}

/// The elements of variable-length bytes between consecutive `bounds` (offsets into `data`,
/// checked by the codec chain: non-decreasing and within `data`).
fn elements_of<'a>(data: &'a [u8], bounds: &'a [usize]) -> impl Iterator<Item = Vec<u8>> + 'a {
    bounds
        .windows(2)
        .map(|w| data.get(w[0]..w[1]).unwrap_or_default().to_vec())
}
