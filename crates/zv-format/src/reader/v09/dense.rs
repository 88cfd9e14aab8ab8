//! ZV 0.9 dense attributes (`object_attributes/<name>`, `group_attributes/<name>`): one flat
//! Zarr array per attribute, its typing in the array's own attributes, and no `present_mask`:
//! a row is absent when every value of it equals the array's `fill_value` (NaN for floats,
//! a sentinel for integers), as zarr-vectors 0.9.2 reads it.

use zv_core::data_type::DataType;
use zv_core::metadata::NodeMetadata;

use crate::blob::join;
use crate::error::{Error, Result};
use crate::layout::attributes::{le_to_f64, AttributeRows, DenseArray};
use crate::metadata::arrays::DenseAttributeArray;
use crate::reader::{blob_err, DenseAttribute, Level};

impl Level {
    /// The dense attribute `name` stored as the array at `path`, with the mask of present
    /// rows when `with_mask` (`None` when every row is present).
    pub(crate) fn dense_attribute_v09(
        &self,
        path: &str,
        name: String,
        with_mask: bool,
    ) -> Result<DenseAttribute> {
        let key = join(&[path, "zarr.json"]);
        let Some(NodeMetadata::Array(meta)) = self.blobs.node(path)? else {
            return Err(Error::metadata(
                &key,
                "a ZV 0.9 dense attribute is an array node",
            ));
        };
        let attributes = meta.attributes.clone();
        let model = DenseAttributeArray::from_attributes(&attributes, &key)?;
        let data_type = model.dtype;
        if data_type != meta.data_type {
            return Err(Error::metadata(
                &key,
                format!(
                    "`dtype` is {data_type}, the array's data_type is {}",
                    meta.data_type
                ),
            ));
        }
        let fill = fill_le(meta.fill_value.as_bytes(), data_type);
        let data = self.blobs.require_bytes(path, "attribute data")?;
        let shape = meta.shape.clone();
        let values =
            DenseArray::decode(&data, data_type, &shape).map_err(blob_err(join(&[path, "c/0"])))?;
        let present_mask = with_mask
            .then(|| present_rows(&values.rows, &fill))
            .flatten();
        Ok(DenseAttribute {
            name,
            data_type,
            shape,
            values,
            present_mask,
            dictionary: model.dictionary,
            attributes,
        })
    }
}

/// The fill value's bytes in little-endian order (stored natively).
fn fill_le(native: &[u8], data_type: DataType) -> Vec<u8> {
    let mut f = native.to_vec();
    if cfg!(target_endian = "big")
        && !matches!(data_type, DataType::Complex64 | DataType::Complex128)
    {
        f.reverse();
    }
    f
}

/// Which rows hold a value (`None` when all do): a row is absent when each of its values
/// equals `fill` (for a NaN fill of a float type, is NaN).
pub(crate) fn present_rows(values: &AttributeRows, fill: &[u8]) -> Option<Vec<bool>> {
    let dt = values.data_type();
    let size = dt.size().unwrap_or(1).max(1);
    let nan_fill = dt.is_float() && fill.len() == size && le_to_f64(dt, fill).is_nan();
    let absent = |b: &[u8]| {
        b.chunks_exact(size).all(|e| {
            if nan_fill {
                le_to_f64(dt, e).is_nan()
            } else {
                e == fill
            }
        })
    };
    let mask: Vec<bool> = (0..values.num_rows())
        .map(|r| !values.row_bytes(r).is_some_and(absent))
        .collect();
    (!mask.iter().all(|&p| p)).then_some(mask)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nan_fill_marks_rows_all_nan() {
        let v =
            AttributeRows::from_f64s(DataType::Float64, 2, &[1.0, f64::NAN, f64::NAN, f64::NAN])
                .unwrap();
        let fill = f64::NAN.to_le_bytes();
        assert_eq!(present_rows(&v, &fill), Some(vec![true, false]));
        let all = AttributeRows::from_f64s(DataType::Float64, 1, &[1.0, 2.0]).unwrap();
        assert_eq!(present_rows(&all, &fill), None);
    }

    #[test]
    fn integer_sentinels_compare_bytes() {
        let v = AttributeRows::from_f64s(DataType::Int32, 1, &[-1.0, 5.0, -1.0]).unwrap();
        let fill = (-1i32).to_le_bytes();
        assert_eq!(present_rows(&v, &fill), Some(vec![false, true, false]));
    }
}
