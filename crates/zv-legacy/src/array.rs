//! A read-only chunked array whose chunks are c-blosc 1.x frames, the model both legacy
//! formats share: [`LegacyArray`] (metadata in [`ArrayInfo`], chunks from a
//! [`ChunkSource`]), with chunk, region and whole reads in C order.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use zv_codecs::blosc::{BloscCodec, BloscHeader, MAX_BUFFER_SIZE};
use zv_core::grid::{box_runs, Region, RegularGrid};

use crate::dtype::NumpyDtype;
use crate::error::{Error, Result};

/// How the chunks were compressed, as the metadata says (the frames carry their own).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compression {
    /// The blosc compressor name (`blosclz`, `lz4`, `lz4hc`, `zlib`, `zstd`, …).
    pub cname: String,
    /// The compression level, 0–9.
    pub clevel: u8,
    /// The shuffle: 0 none, 1 byte shuffle, 2 bit shuffle.
    pub shuffle: u8,
}

/// The metadata of a legacy array.
#[derive(Debug, Clone)]
pub struct ArrayInfo {
    /// The array shape.
    pub shape: Vec<u64>,
    /// The chunk shape (bcolz: `[chunklen, shape[1..]]`).
    pub chunk_shape: Vec<u64>,
    /// The element type and stored byte order.
    pub dtype: NumpyDtype,
    /// One element of fill value, in the **stored** byte order.
    pub fill_value: Vec<u8>,
    /// User attributes.
    pub attributes: Map<String, Value>,
    /// The compression the metadata names.
    pub compression: Compression,
    /// The directory the array lives in.
    pub root: PathBuf,
}

impl ArrayInfo {
    /// The regular chunk grid.
    pub fn grid(&self) -> RegularGrid {
        RegularGrid::new(self.shape.clone(), self.chunk_shape.clone())
    }

    /// The fill value in native byte order.
    pub fn fill_value_native(&self) -> Vec<u8> {
        let mut v = self.fill_value.clone();
        self.dtype.swap_to_native(&mut v);
        v
    }

    /// The decoded size of a whole chunk, checked against what one blosc 1.x frame can hold.
    pub(crate) fn chunk_nbytes(&self, meta_file: &Path) -> Result<usize> {
        checked_nbytes(&self.chunk_shape, self.dtype.size())
            .filter(|&n| n <= MAX_BUFFER_SIZE)
            .ok_or_else(|| {
                Error::invalid(
                    meta_file,
                    format!(
                        "chunks of shape {:?} × {} bytes do not fit one blosc frame ({MAX_BUFFER_SIZE} bytes)",
                        self.chunk_shape,
                        self.dtype.size()
                    ),
                )
            })
    }
}

/// `prod(shape) × item` with overflow checks.
pub(crate) fn checked_nbytes(shape: &[u64], item: usize) -> Option<usize> {
    shape
        .iter()
        .try_fold(item as u64, |acc, &d| acc.checked_mul(d))
        .and_then(|n| usize::try_from(n).ok())
}

/// One stored chunk: its blosc frame (header checked against the metadata) and the shape of
/// the data the frame holds (the chunk shape, or fewer rows for bcolz's short last chunk).
#[derive(Debug, Clone)]
pub struct StoredChunk {
    /// The file the frame came from.
    pub path: PathBuf,
    /// The blosc frame.
    pub frame: Vec<u8>,
    /// The shape of the data in the frame (a prefix box of the chunk).
    pub shape: Vec<u64>,
}

/// Where the chunks of a [`LegacyArray`] come from (one implementation per format).
pub trait ChunkSource: Send + Sync + std::fmt::Debug {
    /// The frame of chunk `coords` (inside the grid), or `None` if the chunk is not stored
    /// and reads as the fill value. Implementations check the frame header's sizes against
    /// the metadata and the file size before returning.
    fn stored_chunk(&self, info: &ArrayInfo, coords: &[u64]) -> Result<Option<StoredChunk>>;
}

/// Checks a frame's header against the size the metadata expects (`expected` bytes).
pub(crate) fn check_frame(path: &Path, frame: &[u8], expected: &[usize]) -> Result<BloscHeader> {
    let header =
        BloscHeader::parse(frame).map_err(|r| Error::invalid(path, format!("blosc frame: {r}")))?;
    if !expected.contains(&header.nbytes) {
        return Err(Error::invalid(
            path,
            format!(
                "blosc frame holds {} bytes, the metadata says {}",
                header.nbytes,
                expected
                    .iter()
                    .map(|e| e.to_string())
                    .collect::<Vec<_>>()
                    .join(" or ")
            ),
        ));
    }
    header
        .validate_frame(frame)
        .map_err(|r| Error::invalid(path, format!("blosc frame: {r}")))?;
    Ok(header)
}

/// A read-only legacy array.
#[derive(Debug)]
pub struct LegacyArray {
    info: ArrayInfo,
    source: Box<dyn ChunkSource>,
}

impl LegacyArray {
    /// An array from its metadata and chunk source.
    pub fn new(info: ArrayInfo, source: Box<dyn ChunkSource>) -> Self {
        Self { info, source }
    }

    /// The metadata.
    pub fn info(&self) -> &ArrayInfo {
        &self.info
    }

    /// The shape.
    pub fn shape(&self) -> &[u64] {
        &self.info.shape
    }

    /// The chunk shape.
    pub fn chunk_shape(&self) -> &[u64] {
        &self.info.chunk_shape
    }

    /// The data type.
    pub fn dtype(&self) -> NumpyDtype {
        self.info.dtype
    }

    /// The user attributes.
    pub fn attributes(&self) -> &Map<String, Value> {
        &self.info.attributes
    }

    /// The stored frame of chunk `coords`, or `None` for a missing chunk.
    pub fn stored_chunk(&self, coords: &[u64]) -> Result<Option<StoredChunk>> {
        self.check_coords(coords)?;
        self.source.stored_chunk(&self.info, coords)
    }

    fn check_coords(&self, coords: &[u64]) -> Result<()> {
        if self.info.grid().contains_chunk(coords) {
            Ok(())
        } else {
            Err(Error::Region {
                path: self.info.root.clone(),
                region: format!("chunk {coords:?}"),
                reason: format!("outside the chunk grid {:?}", self.info.grid().grid_shape()),
            })
        }
    }

    /// Chunk `coords` at the full chunk shape in the **stored** byte order: the frame's data,
    /// padded with the fill value where the frame holds less (or all fill value if the chunk
    /// is missing).
    pub fn chunk_stored_order(&self, coords: &[u64]) -> Result<Vec<u8>> {
        let stored = self.stored_chunk(coords)?;
        self.pad_chunk(stored.as_ref())
    }

    /// Decodes a stored chunk (or `None`, a missing one) to the full chunk shape, stored
    /// byte order.
    pub fn pad_chunk(&self, stored: Option<&StoredChunk>) -> Result<Vec<u8>> {
        let item = self.info.dtype.size();
        let full = self.info.chunk_nbytes(&self.info.root)?;
        let Some(stored) = stored else {
            return Ok(self.info.fill_value.repeat(full / item.max(1)));
        };
        let expected = checked_nbytes(&stored.shape, item).unwrap_or(usize::MAX);
        let data = BloscCodec::decompress(&stored.frame, Some(expected)).map_err(|source| {
            Error::Codec {
                path: stored.path.clone(),
                source,
            }
        })?;
        if stored.shape == self.info.chunk_shape {
            return Ok(data);
        }
        let mut out = self.info.fill_value.repeat(full / item.max(1));
        let zeros = vec![0u64; stored.shape.len()];
        for (s, d, n) in box_runs(
            &stored.shape,
            &zeros,
            &self.info.chunk_shape,
            &zeros,
            &stored.shape,
        ) {
            let (s, d, n) = (s * item, d * item, n * item);
            let (Some(src), Some(dst)) = (data.get(s..s + n), out.get_mut(d..d + n)) else {
                return Err(Error::invalid(
                    &stored.path,
                    "frame data does not fit the chunk shape",
                ));
            };
            dst.copy_from_slice(src);
        }
        Ok(out)
    }

    /// The elements of chunk `coords` that lie inside the array (edge chunks clipped), in
    /// native byte order, C order.
    pub fn read_chunk(&self, coords: &[u64]) -> Result<Vec<u8>> {
        self.check_coords(coords)?;
        let region = self
            .info
            .grid()
            .chunk_region(coords)
            .unwrap_or_else(|| Region::whole(&[]));
        self.read_region(&region)
    }

    /// The whole array in native byte order, C order.
    pub fn read_all(&self) -> Result<Vec<u8>> {
        self.read_region(&Region::whole(&self.info.shape))
    }

    /// The elements of `region` in native byte order, C order.
    pub fn read_region(&self, region: &Region) -> Result<Vec<u8>> {
        let region_err = |reason: String| Error::Region {
            path: self.info.root.clone(),
            region: region.to_string(),
            reason,
        };
        region
            .check_within(&self.info.shape)
            .map_err(|e| region_err(e.to_string()))?;
        let item = self.info.dtype.size();
        let len = checked_nbytes(region.shape(), item)
            .ok_or_else(|| region_err("too large for memory".into()))?;
        let mut out = vec![0u8; len];
        let grid = self.info.grid();
        for coords in grid.chunks_in(region) {
            // A missing chunk is filled in place, without building the chunk.
            let chunk = match self.stored_chunk(&coords)? {
                Some(stored) => Some(self.pad_chunk(Some(&stored))?),
                None => None,
            };
            let Some(part) = grid.chunk_region(&coords).and_then(|r| r.intersect(region)) else {
                continue;
            };
            let in_chunk: Vec<u64> = part
                .start()
                .iter()
                .zip(&coords)
                .zip(&self.info.chunk_shape)
                .map(|((s, c), cs)| s - c * cs)
                .collect();
            let in_region: Vec<u64> = part
                .start()
                .iter()
                .zip(region.start())
                .map(|(s, r)| s - r)
                .collect();
            for (s, d, n) in box_runs(
                &self.info.chunk_shape,
                &in_chunk,
                region.shape(),
                &in_region,
                part.shape(),
            ) {
                let (s, d, n) = (s * item, d * item, n * item);
                let Some(dst) = out.get_mut(d..d + n) else {
                    continue;
                };
                match &chunk {
                    Some(chunk) => {
                        if let Some(src) = chunk.get(s..s + n) {
                            dst.copy_from_slice(src);
                        }
                    }
                    None => {
                        for e in dst.chunks_exact_mut(item.max(1)) {
                            e.copy_from_slice(&self.info.fill_value);
                        }
                    }
                }
            }
        }
        self.info.dtype.swap_to_native(&mut out);
        Ok(out)
    }

    /// Every chunk of the grid in C order, each as its coordinates and its elements inside
    /// the array (native order), read one at a time.
    pub fn chunks(&self) -> impl Iterator<Item = (Vec<u64>, Result<Vec<u8>>)> + '_ {
        let grid = self.info.grid();
        grid.chunks_in(&Region::whole(&self.info.shape))
            .map(move |c| {
                let data = self.read_chunk(&c);
                (c, data)
            })
    }

    /// The number of chunks of the grid (saturating).
    pub fn num_chunks(&self) -> u64 {
        self.info
            .grid()
            .grid_shape()
            .iter()
            .fold(1u64, |a, &n| a.saturating_mul(n))
    }
}
