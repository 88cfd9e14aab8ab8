//! A byte blob written a piece at a time ([`Blobs::stream_bytes`]): for a blob too large to
//! assemble in memory (the cross-level link records of a large pyramid step), whose size is
//! known before it is written. It is a 1-D `uint8` array like every blob, in as few chunks of
//! at most the given size as hold it, each stored as soon as it is full, the `zarr.json`
//! last; a blob that fits one chunk is laid out exactly as [`Blobs::write_bytes`] lays it out.
//! Chunks are equal in size (the total divided by the chunk count, rounded up), so the last
//! one carries less than a byte of padding per chunk.

use std::borrow::Cow;

use zv_core::array::Array;
use zv_core::codec::ArrayBytes;
use zv_core::data_type::DataType;
use zv_core::key::StoreKey;
use zv_core::metadata::{ArrayMetadata, ExtensionMetadata};

use super::{node_path, zarr_error, Blobs};
use crate::error::{Error, Result};

/// The largest chunk of a streamed record blob (cross-chunk and cross-level link records), so
/// that a level's records go to the store as they are written and are read back a chunk at
/// a time (10 million points make 640 MB of cross-level records).
pub(crate) const RECORD_CHUNK_BYTES: u64 = 32 << 20;

/// A blob being written (see the [module docs](self)).
pub struct BlobStream<'a> {
    blobs: &'a Blobs,
    path: String,
    codecs: Vec<ExtensionMetadata>,
    /// Where the pieces go: a chunked array, or (a ZV 0.9 grid cell) the whole blob in memory.
    target: Target,
    total: u64,
    written: u64,
}

enum Target {
    Chunks {
        array: Box<Array>,
        meta_key: StoreKey,
        chunk: usize,
        next: u64,
        buf: Vec<u8>,
    },
    Cell(Vec<u8>),
}

impl Blobs {
    /// Starts the blob `path` of exactly `total` bytes, encoded with `codecs` and stored in
    /// chunks of at most `chunk_cap` bytes as the pieces arrive ([`BlobStream::write`]); it
    /// exists once [`BlobStream::finish`] has written its `zarr.json`.
    pub fn stream_bytes(
        &self,
        path: &str,
        total: u64,
        chunk_cap: u64,
        codecs: &[ExtensionMetadata],
    ) -> Result<BlobStream<'_>> {
        let node = node_path(path)?;
        let target = if self.grid_cell_target(&node)?.is_some() {
            Target::Cell(Vec::new())
        } else {
            let meta_key = node.metadata_key();
            let chunks = total.div_ceil(chunk_cap.max(1)).max(1);
            let chunk = total.div_ceil(chunks).max(1);
            let meta =
                ArrayMetadata::new(vec![total], vec![chunk], DataType::UInt8, codecs.to_vec())
                    .map_err(|e| Error::metadata(meta_key.as_str(), e.to_string()))?;
            let array = Array::from_metadata(self.store.clone(), &node, meta)
                .map_err(|e| zarr_error(e, &meta_key))?;
            let chunk = usize::try_from(chunk)
                .map_err(|_| Error::InvalidInput(format!("{path}: a chunk of {chunk} bytes")))?;
            Target::Chunks {
                array: Box::new(array),
                meta_key,
                chunk,
                next: 0,
                // filled to `chunk` bytes before it is stored: room for exactly that is
                // reserved at the first write (grown by doubling, it could take twice that)
                buf: Vec::new(),
            }
        };
        Ok(BlobStream {
            blobs: self,
            path: path.to_owned(),
            codecs: codecs.to_vec(),
            target,
            total,
            written: 0,
        })
    }
}

impl BlobStream<'_> {
    /// Appends `bytes`; more than the total announced is an error.
    pub fn write(&mut self, mut bytes: &[u8]) -> Result<()> {
        let n = bytes.len() as u64;
        if self.written + n > self.total {
            return Err(Error::InvalidInput(format!(
                "{}: {} bytes written to a blob of {}",
                self.path,
                self.written + n,
                self.total
            )));
        }
        self.written += n;
        match &mut self.target {
            Target::Cell(all) => all.extend_from_slice(bytes),
            Target::Chunks {
                array,
                meta_key,
                chunk,
                next,
                buf,
            } => {
                if buf.capacity() == 0 && !bytes.is_empty() {
                    buf.try_reserve_exact(*chunk).map_err(|_| {
                        Error::InvalidInput(format!(
                            "{}: a chunk of {chunk} bytes is too large to hold",
                            self.path
                        ))
                    })?;
                }
                while !bytes.is_empty() {
                    let take = (*chunk - buf.len()).min(bytes.len());
                    buf.extend_from_slice(&bytes[..take]);
                    bytes = &bytes[take..];
                    if buf.len() == *chunk {
                        store(array, meta_key, next, buf)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Stores the last chunk (padded with zeros to the chunk size) and the `zarr.json`; fewer
    /// bytes written than announced is an error.
    pub fn finish(self) -> Result<()> {
        if self.written != self.total {
            return Err(Error::InvalidInput(format!(
                "{}: {} bytes written to a blob of {}",
                self.path, self.written, self.total
            )));
        }
        match self.target {
            Target::Cell(all) => self.blobs.write_bytes(&self.path, &all, &self.codecs),
            Target::Chunks {
                array,
                meta_key,
                chunk,
                mut next,
                mut buf,
            } => {
                if !buf.is_empty() {
                    buf.resize(chunk, 0);
                    store(&array, &meta_key, &mut next, &mut buf)?;
                }
                if self.total == 0 {
                    // as an empty blob of `write_bytes`: shape [0], no chunk file
                    let key = array
                        .chunk_key(&[0])
                        .map_err(|e| zarr_error(e, &meta_key))?;
                    self.blobs.store.delete(&key)?;
                }
                array.store_metadata().map_err(|e| zarr_error(e, &meta_key))
            }
        }
    }
}

/// Stores `buf` as chunk `next` of `array`, then empties it and counts the chunk.
fn store(array: &Array, meta_key: &StoreKey, next: &mut u64, buf: &mut Vec<u8>) -> Result<()> {
    array
        .store_chunk(&[*next], ArrayBytes::Fixed(Cow::Borrowed(buf)))
        .map_err(|e| zarr_error(e, meta_key))?;
    *next += 1;
    buf.clear();
    Ok(())
}
