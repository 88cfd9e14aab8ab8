//! The chunks of a zarr 0.4 array: `__zdata__/i.j.blosc`.

use std::path::{Path, PathBuf};

use zv_codecs::blosc::HEADER_SIZE;

use super::meta::{Zarr04Meta, ATTRS_FILE, DATA_DIR, META_FILE};
use crate::array::{check_frame, ArrayInfo, ChunkSource, LegacyArray, StoredChunk};
use crate::error::Result;
use crate::files::{read_attributes, read_capped, read_json};

/// The chunk files of a zarr 0.4 array.
#[derive(Debug)]
pub struct Zarr04Chunks {
    data_dir: PathBuf,
    chunk_nbytes: usize,
}

impl Zarr04Chunks {
    /// The file of chunk `coords`.
    pub fn chunk_path(&self, coords: &[u64]) -> PathBuf {
        let name: Vec<String> = coords.iter().map(u64::to_string).collect();
        self.data_dir.join(format!("{}.blosc", name.join(".")))
    }
}

impl ChunkSource for Zarr04Chunks {
    fn stored_chunk(&self, info: &ArrayInfo, coords: &[u64]) -> Result<Option<StoredChunk>> {
        let path = self.chunk_path(coords);
        // A frame is never larger than its data plus the header (c-blosc stores
        // incompressible data as is).
        let cap = (self.chunk_nbytes + HEADER_SIZE) as u64;
        let Some(frame) = read_capped(&path, cap)? else {
            return Ok(None);
        };
        check_frame(&path, &frame, &[self.chunk_nbytes])?;
        Ok(Some(StoredChunk {
            path,
            frame,
            shape: info.chunk_shape.clone(),
        }))
    }
}

/// Opens the zarr 0.4 array in directory `root`.
pub fn open(root: &Path) -> Result<LegacyArray> {
    let meta_path = root.join(META_FILE);
    let meta = Zarr04Meta::parse(&meta_path, &read_json(&meta_path)?)?;
    let attributes = read_attributes(&root.join(ATTRS_FILE))?;
    let info = ArrayInfo {
        shape: meta.shape,
        chunk_shape: meta.chunks,
        dtype: meta.dtype,
        fill_value: meta.fill_value,
        attributes,
        compression: meta.compression,
        root: root.to_path_buf(),
    };
    let chunk_nbytes = info.chunk_nbytes(&meta_path)?;
    Ok(LegacyArray::new(
        info,
        Box::new(Zarr04Chunks {
            data_dir: root.join(DATA_DIR),
            chunk_nbytes,
        }),
    ))
}
