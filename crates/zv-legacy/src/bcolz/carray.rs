//! A bcolz carray: its metadata and its superchunk files.

use std::path::{Path, PathBuf};

use zv_codecs::blosc::HEADER_SIZE;

use super::storage::{Sizes, Storage, ATTRS_FILE, SIZES_FILE, STORAGE_FILE};
use super::superchunk::{split_superchunk, SUPERCHUNK_HEADER_SIZE};
use crate::array::{check_frame, checked_nbytes, ArrayInfo, ChunkSource, LegacyArray, StoredChunk};
use crate::error::{Error, Result};
use crate::files::{read_attributes, read_capped, read_json};

/// The superchunk files of a carray (`data/__N.blp`).
#[derive(Debug)]
pub struct CarrayChunks {
    data_dir: PathBuf,
    rows: u64,
    chunklen: u64,
    row_nbytes: usize,
    chunk_nbytes: usize,
}

impl CarrayChunks {
    /// The file of chunk `i`.
    pub fn chunk_path(&self, i: u64) -> PathBuf {
        self.data_dir.join(format!("__{i}.blp"))
    }
}

impl ChunkSource for CarrayChunks {
    fn stored_chunk(&self, info: &ArrayInfo, coords: &[u64]) -> Result<Option<StoredChunk>> {
        let i = coords.first().copied().unwrap_or(0);
        let path = self.chunk_path(i);
        let start = i.saturating_mul(self.chunklen);
        let rows_here = self.chunklen.min(self.rows.saturating_sub(start));
        // The leftover chunk holds only its rows; a full-size last frame is accepted too.
        let short = usize::try_from(rows_here)
            .ok()
            .and_then(|r| r.checked_mul(self.row_nbytes))
            .unwrap_or(usize::MAX);
        let cap = (SUPERCHUNK_HEADER_SIZE + self.chunk_nbytes + HEADER_SIZE) as u64;
        let bytes = read_capped(&path, cap)?.ok_or_else(|| {
            Error::invalid(
                &path,
                format!(
                    "missing superchunk: meta/sizes says {} rows, chunk {i} holds rows {start}..{}",
                    self.rows,
                    start + rows_here
                ),
            )
        })?;
        let frame = split_superchunk(&path, &bytes)?;
        let header = check_frame(&path, frame, &[short, self.chunk_nbytes])?;
        let mut shape = info.chunk_shape.clone();
        if header.nbytes != self.chunk_nbytes {
            shape[0] = rows_here;
        }
        Ok(Some(StoredChunk {
            frame: frame.to_vec(),
            path,
            shape,
        }))
    }
}

/// Opens the bcolz carray in directory `root`.
pub fn open_carray(root: &Path) -> Result<LegacyArray> {
    let storage_path = root.join(STORAGE_FILE);
    let storage = Storage::parse(&storage_path, &read_json(&storage_path)?)?;
    let sizes_path = root.join(SIZES_FILE);
    let sizes = Sizes::parse(&sizes_path, &read_json(&sizes_path)?)?;
    let attributes = read_attributes(&root.join(ATTRS_FILE))?;
    let mut chunk_shape = sizes.shape.clone();
    chunk_shape[0] = storage.chunklen;
    let row_nbytes = checked_nbytes(&sizes.shape[1..], storage.dtype.size()).ok_or_else(|| {
        Error::invalid(
            &sizes_path,
            format!("rows of shape {:?} overflow", &sizes.shape[1..]),
        )
    })?;
    let info = ArrayInfo {
        shape: sizes.shape.clone(),
        chunk_shape,
        dtype: storage.dtype,
        fill_value: storage.dflt,
        attributes,
        compression: storage.compression,
        root: root.to_path_buf(),
    };
    let chunk_nbytes = info.chunk_nbytes(&storage_path)?;
    if info.chunk_shape.contains(&0) && sizes.shape[0] > 0 {
        return Err(Error::unsupported(
            &sizes_path,
            "rows with a zero-length dimension",
        ));
    }
    Ok(LegacyArray::new(
        info,
        Box::new(CarrayChunks {
            data_dir: root.join("data"),
            rows: sizes.shape[0],
            chunklen: storage.chunklen,
            row_nbytes,
            chunk_nbytes,
        }),
    ))
}
