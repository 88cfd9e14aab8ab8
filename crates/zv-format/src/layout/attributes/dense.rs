//! Dense attribute arrays (`object_attributes/<n>/data`, `group_attributes/<n>/data`): a
//! C-order `(B,)` or `(B, C, …)` array, and its `present_mask` (`uint8[B]`, 1 = the row is
//! real).

use zv_core::data_type::DataType;

use super::super::{invalid, LayoutError};
use super::{AttributeRows, WHAT};

/// A dense `(B,)` or `(B, C, …)` array (object and group attributes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DenseArray {
    /// The shape; `shape[0]` is the number of objects or groups.
    pub shape: Vec<u64>,
    /// The rows (`C` = product of `shape[1..]`).
    pub rows: AttributeRows,
}

impl DenseArray {
    /// Decodes a dense array of `shape` (length must be exactly the product × element size).
    pub fn decode(bytes: &[u8], data_type: DataType, shape: &[u64]) -> Result<Self, LayoutError> {
        let Some((&n, rest)) = shape.split_first() else {
            return Err(invalid(
                WHAT,
                "a dense attribute needs a shape of at least one dimension",
            ));
        };
        let channels = rest
            .iter()
            .try_fold(1u64, |a, &d| a.checked_mul(d))
            .unwrap_or(u64::MAX);
        let channels = usize::try_from(channels)
            .map_err(|_| invalid(WHAT, format!("shape {shape:?} is too large")))?;
        if channels == 0 {
            if !bytes.is_empty() {
                return Err(invalid(
                    WHAT,
                    format!("{} bytes for shape {shape:?}", bytes.len()),
                ));
            }
            return Ok(Self {
                shape: shape.to_vec(),
                rows: AttributeRows::empty(data_type, 1),
            });
        }
        let rows = AttributeRows::decode(bytes, data_type, n, Some(channels))?;
        Ok(Self {
            shape: shape.to_vec(),
            rows,
        })
    }

    /// The encoding.
    pub fn encode(&self) -> Vec<u8> {
        self.rows.encode()
    }
}

/// Decodes a `present_mask` of `n` rows (`uint8`, 0 or 1).
pub fn decode_present_mask(bytes: &[u8], n: u64) -> Result<Vec<bool>, LayoutError> {
    if bytes.len() as u64 != n {
        return Err(invalid(
            "present_mask",
            format!("{} bytes for {n} rows", bytes.len()),
        ));
    }
    bytes
        .iter()
        .enumerate()
        .map(|(i, &b)| match b {
            0 => Ok(false),
            1 => Ok(true),
            v => Err(invalid(
                "present_mask",
                format!("row {i} has value {v} (expected 0 or 1)"),
            )),
        })
        .collect()
}

/// Encodes a `present_mask`.
pub fn encode_present_mask(mask: &[bool]) -> Vec<u8> {
    mask.iter().map(|&b| u8::from(b)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_and_mask() {
        let d = DenseArray::decode(&[0u8; 24], DataType::Float64, &[3]).unwrap();
        assert_eq!(d.rows.num_rows(), 3);
        assert!(DenseArray::decode(&[0u8; 24], DataType::Float64, &[2, 2]).is_err());
        assert_eq!(
            DenseArray::decode(&[0u8; 32], DataType::Float64, &[2, 2])
                .unwrap()
                .rows
                .channels(),
            2
        );
        assert_eq!(
            decode_present_mask(&[1, 0, 1], 3).unwrap(),
            vec![true, false, true]
        );
        assert!(decode_present_mask(&[1, 2], 2).is_err());
        assert!(decode_present_mask(&[1], 2).is_err());
    }
}
