//! Staged ZV 0.9 cells of a distributed write (`crate::parts`, "The 0.9 layout"): a part does
//! not know the level's chunk grid (the bounding box of every part's chunks), so it cannot
//! place its cells. It stores each cell under the parts directory instead, keyed by array and
//! absolute chunk key (`.zv-parts/cells/<array path>/<chunk key>`), as the stored chunk an
//! unsharded grid array holds for it: one `variable_length_bytes` element encoded with the
//! cell codecs (`vlen-bytes` and the blob's bytes-to-bytes codecs). That encoding does not
//! depend on where the cell lands in the grid, so the commit stores those bytes unchanged at
//! the cell's key (unsharded), or decodes them to give the cell to its shard.

use std::borrow::Cow;
use std::sync::Arc;

use bytes::Bytes;
use zv_core::array::Array;
use zv_core::codec::ArrayBytes;
use zv_core::data_type::{DataType, FillValue};
use zv_core::key::StoreKey;
use zv_core::metadata::{ArrayMetadata, ExtensionMetadata};
use zv_core::node::NodePath;
use zv_core::store::Store;

use super::grid_write::vlen_codecs;
use super::zarr_error;
use crate::error::{Error, Result};
use crate::metadata::ChunkKey;

/// The array of one unsharded cell of the rank-`rank` grid array at `path` (for its codec
/// chain; nothing is stored through it).
fn cell_array(
    store: &Arc<dyn Store>,
    path: &NodePath,
    rank: usize,
    codecs: &[ExtensionMetadata],
) -> Result<Array> {
    let meta_key = path.metadata_key();
    let mut meta = ArrayMetadata::new(
        vec![1; rank],
        vec![1; rank],
        DataType::VariableLengthBytes,
        vlen_codecs(codecs),
    )
    .map_err(|e| Error::metadata(meta_key.as_str(), e.to_string()))?;
    meta.fill_value = FillValue::new(Vec::new());
    Array::from_metadata(store.clone(), path, meta).map_err(|e| zarr_error(e, &meta_key))
}

/// The staged key of the cell of chunk `key` in the grid array at `path`, under `prefix`.
pub(super) fn staged_key(prefix: &str, path: &NodePath, key: &ChunkKey) -> Result<StoreKey> {
    StoreKey::new(format!(
        "{prefix}/{}/{key}",
        path.as_str().trim_start_matches('/')
    ))
    .map_err(|e| Error::InvalidInput(e.to_string()))
}

/// Stores `bytes` (a non-empty cell) as the staged cell of chunk `key` in the grid array at
/// `path`, under `prefix`.
pub(super) fn stage_cell(
    store: &Arc<dyn Store>,
    prefix: &str,
    (path, key): (&NodePath, &ChunkKey),
    bytes: &[u8],
    codecs: &[ExtensionMetadata],
) -> Result<()> {
    let array = cell_array(store, path, key.arity(), codecs)?;
    let target = staged_key(prefix, path, key)?;
    let encoded = array
        .codec_chain()
        .encode(ArrayBytes::Variable {
            data: Cow::Borrowed(bytes),
            offsets: Cow::Owned(vec![0, bytes.len()]),
        })
        .map_err(|source| Error::Codec {
            key: target.to_string(),
            source,
        })?;
    store.set(&target, Bytes::from(encoded.into_owned()))?;
    Ok(())
}

/// The cell a part staged for chunk `key` of the grid array at `path` (`encoded`, read from
/// its staged key), decoded; an error naming the staged key if it is not one cell.
pub(super) fn decode_cell(
    store: &Arc<dyn Store>,
    path: &NodePath,
    key: &ChunkKey,
    encoded: Bytes,
    codecs: &[ExtensionMetadata],
) -> Result<Vec<u8>> {
    let array = cell_array(store, path, key.arity(), codecs)?;
    let named = || staged_key(crate::parts::CELLS_DIR, path, key).map(|k| k.to_string());
    let decoded = array
        .codec_chain()
        .decode(Cow::Owned(encoded.to_vec()))
        .map_err(|source| Error::Codec {
            key: named().unwrap_or_default(),
            source,
        })?;
    match decoded {
        ArrayBytes::Variable { data, offsets } if offsets.len() == 2 => Ok(data.into_owned()),
        _ => Err(Error::inconsistent(
            &named()?,
            "a staged cell is one variable-length element",
        )),
    }
}
