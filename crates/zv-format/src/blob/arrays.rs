//! Blobs of one chunk holding the whole array (the object index, the groups, the dense
//! attributes of ZV 0.9): the chunk, then `zarr.json`, so a reader never sees metadata
//! without its data.

use zv_core::array::Array;
use zv_core::codec::ArrayBytes;
use zv_core::data_type::{DataType, FillValue};
use zv_core::metadata::{ArrayMetadata, ExtensionMetadata};

use super::{node_path, zarr_error, Blobs};
use crate::error::{Error, Result};
use crate::metadata::JsonObject;

impl Blobs {
    /// Writes a 1-D array at `path` of `data_type` holding `elements` (variable-length for
    /// `variable_length_bytes`, else the little-endian elements), one chunk, with
    /// `fill_value`, `codecs` and `attributes`; `zarr.json` after the chunk.
    pub fn write_array(
        &self,
        path: &str,
        data_type: DataType,
        elements: ArrayBytes<'_>,
        fill_value: FillValue,
        codecs: Vec<ExtensionMetadata>,
        attributes: JsonObject,
    ) -> Result<()> {
        let n = match (&elements, data_type.size()) {
            (ArrayBytes::Variable { offsets, .. }, _) => offsets.len().saturating_sub(1) as u64,
            (ArrayBytes::Fixed(data), size) => (data.len() / size.unwrap_or(1).max(1)) as u64,
        };
        let meta = (data_type, fill_value, codecs, attributes);
        self.write_one_chunk(path, n, meta, |array| array.store_chunk(&[0], elements))
    }

    /// [`Blobs::write_array`] of `n` variable-length elements given in the `vlen-bytes`
    /// framing (`framed`; `codecs` must begin with `vlen-bytes`), made where the elements are
    /// made, which saves the codec's copy of them. The caller answers for the framing.
    pub fn write_framed_array(
        &self,
        path: &str,
        n: u64,
        framed: Vec<u8>,
        codecs: Vec<ExtensionMetadata>,
        attributes: JsonObject,
    ) -> Result<()> {
        let dt = DataType::VariableLengthBytes;
        let meta = (dt, FillValue::new(Vec::new()), codecs, attributes);
        self.write_one_chunk(path, n, meta, |array| {
            array.store_serialized_chunk(&[0], framed)
        })
    }

    /// The one-chunk array of `n` elements at `path` with `meta` (data type, fill value,
    /// codecs, attributes): its chunk stored by `store` (unless `n` is 0), then `zarr.json`.
    fn write_one_chunk(
        &self,
        path: &str,
        n: u64,
        meta: (DataType, FillValue, Vec<ExtensionMetadata>, JsonObject),
        store: impl FnOnce(&Array) -> zv_core::Result<()>,
    ) -> Result<()> {
        let (data_type, fill_value, codecs, attributes) = meta;
        let path = node_path(path)?;
        let meta_key = path.metadata_key();
        let mut meta = ArrayMetadata::new(vec![n], vec![n.max(1)], data_type, codecs)
            .map_err(|e| Error::metadata(meta_key.as_str(), e.to_string()))?;
        meta.fill_value = fill_value;
        meta.attributes = attributes;
        let array = Array::from_metadata(self.store.clone(), &path, meta)
            .map_err(|e| zarr_error(e, &meta_key))?;
        if n > 0 {
            store(&array).map_err(|e| zarr_error(e, &meta_key))?;
        }
        array.store_metadata().map_err(|e| zarr_error(e, &meta_key))
    }
}
