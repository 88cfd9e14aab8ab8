//! The binary framings ZV puts inside its `uint8` blobs (`docs/format-decisions.md`, "ZV
//! layer"), as pure encode/decode functions with no I/O.
//!
//! | module | blob | layout |
//! |---|---|---|
//! | [`fragment_index`] | `vertex_fragments/<key>`, `link_fragments/<key>` | fragment index v1 |
//! | [`manifest`] | `object_index/data` (+ `offsets`), `object_index/manifests` | object manifests, the manifest-block stream |
//! | [`groups`] | `groups/data` + `groups/offsets` | ragged object-id lists |
//! | [`links`] | `links/0/<key>`, `links/±N/<key>` | link rows, the cross-level ragged blob |
//! | [`cross_chunk`] | `cross_chunk_links/<d>/data` | cross-chunk link records |
//! | [`offset_links`] | `links/0/<offsets>/<key>` (ZV 0.9) | where a link record is filed, `perm_idx` codes |
//! | [`cross_level`] | `links/±N/<offsets>/<key>` (ZV 0.9) | where a cross-level pair is filed (chunk scales, anchors) |
//! | [`attributes`] | `vertex_attributes/…`, `object_attributes/…/data`, … | typed rows, dense arrays, dictionary encoding |
//!
//! Every decoder validates sizes before it allocates or indexes (allocations are bounded by a
//! small multiple of the input size) and returns a [`LayoutError`] on bad input; the reader
//! adds the store key. All integers and floats are little-endian and unaligned.

pub mod attributes;
pub mod cross_chunk;
pub mod cross_level;
pub mod fragment_index;
pub mod groups;
pub mod links;
pub mod manifest;
pub mod offset_links;

/// Why a blob could not be decoded (or a value could not be encoded).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LayoutError {
    /// The blob ends before a field.
    #[error("{what}: truncated: {needed} bytes needed at offset {offset}, the blob has {len}")]
    Truncated {
        /// The structure being decoded.
        what: &'static str,
        /// Where the field starts.
        offset: usize,
        /// How many bytes the field needs.
        needed: usize,
        /// The blob length.
        len: usize,
    },
    /// Bytes follow the end of the structure where none are allowed.
    #[error("{what}: {extra} trailing bytes after the end at offset {end}")]
    TrailingBytes {
        /// The structure being decoded.
        what: &'static str,
        /// Where the structure ends.
        end: usize,
        /// How many bytes follow.
        extra: usize,
    },
    /// A field has an invalid value.
    #[error("{what}: {reason}")]
    Invalid {
        /// The structure being decoded or encoded.
        what: &'static str,
        /// What is wrong.
        reason: String,
    },
}

pub(crate) fn invalid(what: &'static str, reason: impl Into<String>) -> LayoutError {
    LayoutError::Invalid {
        what,
        reason: reason.into(),
    }
}

/// A checked little-endian reader over a blob.
#[derive(Debug, Clone)]
pub(crate) struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
    what: &'static str,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(buf: &'a [u8], what: &'static str) -> Self {
        Self { buf, pos: 0, what }
    }

    pub(crate) fn at(buf: &'a [u8], pos: usize, what: &'static str) -> Self {
        Self { buf, pos, what }
    }

    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    pub(crate) fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    /// Fails unless `n` more bytes are available.
    pub(crate) fn need(&self, n: usize) -> Result<(), LayoutError> {
        if n <= self.remaining() {
            Ok(())
        } else {
            Err(LayoutError::Truncated {
                what: self.what,
                offset: self.pos,
                needed: n,
                len: self.buf.len(),
            })
        }
    }

    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], LayoutError> {
        self.need(n)?;
        let out = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], LayoutError> {
        let s = self.take(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    pub(crate) fn u8(&mut self) -> Result<u8, LayoutError> {
        Ok(self.array::<1>()?[0])
    }

    pub(crate) fn u16(&mut self) -> Result<u16, LayoutError> {
        Ok(u16::from_le_bytes(self.array()?))
    }

    pub(crate) fn u32(&mut self) -> Result<u32, LayoutError> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    pub(crate) fn i64(&mut self) -> Result<i64, LayoutError> {
        Ok(i64::from_le_bytes(self.array()?))
    }

    /// A non-negative int64 (`field` names it in errors).
    pub(crate) fn index(&mut self, field: &str) -> Result<u64, LayoutError> {
        let at = self.pos;
        let v = self.i64()?;
        u64::try_from(v)
            .map_err(|_| invalid(self.what, format!("{field} {v} at offset {at} is negative")))
    }
}

/// The little-endian int64 at the start of `b` (0 if `b` is shorter): for decoders that
/// checked the length of a whole section before reading its values one by one.
#[inline]
pub(crate) fn le_i64(b: &[u8]) -> i64 {
    b.first_chunk::<8>().map_or(0, |a| i64::from_le_bytes(*a))
}

/// Reads `n` little-endian int64 values that must fill `bytes` exactly.
pub(crate) fn i64s(bytes: &[u8], what: &'static str) -> Result<Vec<i64>, LayoutError> {
    if bytes.len() % 8 != 0 {
        return Err(invalid(
            what,
            format!(
                "{} bytes is not a whole number of int64 values",
                bytes.len()
            ),
        ));
    }
    Ok(bytes.chunks_exact(8).map(le_i64).collect())
}

/// Appends int64 values little-endian.
pub(crate) fn put_i64s(out: &mut Vec<u8>, values: impl IntoIterator<Item = i64>) {
    for v in values {
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// Int64 values as little-endian bytes.
pub(crate) fn encode_i64s(values: &[i64]) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 * values.len());
    put_i64s(&mut out, values.iter().copied());
    out
}

/// A `u64` that must fit an int64 field.
pub(crate) fn to_i64(v: u64, what: &'static str) -> Result<i64, LayoutError> {
    i64::try_from(v).map_err(|_| invalid(what, format!("{v} does not fit an int64")))
}
