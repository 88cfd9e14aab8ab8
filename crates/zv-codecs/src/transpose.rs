//! The `transpose` codec (array→array): permutes the dimensions of a chunk.
//!
//! Zarr v3 core specification, codec `transpose`. Registered name: `transpose`. `order` is a
//! permutation of `0..ndim`; encoded dimension `k` is decoded dimension `order[k]`. Reversing
//! the dimensions (`[n-1, …, 0]`) stores chunks in Fortran (F) order. The legacy strings `"C"`
//! (identity) and `"F"` (reverse) are accepted and written back as lists.
//!
//! ```
//! let meta: zv_core::metadata::ExtensionMetadata =
//!     serde_json::from_value(serde_json::json!({"name": "transpose", "configuration": {"order": [1, 0]}})).unwrap();
//! let parsed: zv_codecs::transpose::TransposeConfig = zv_core::codec::parse_configuration(&meta)?;
//! assert_eq!(parsed.order, zv_codecs::transpose::Order::Permutation(vec![1, 0]));
//! # Ok::<(), zv_core::codec::CodecError>(())
//! ```

use std::borrow::Cow;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use zv_core::codec::{
    configuration_object, parse_configuration, ArrayBytes, ArrayToArrayCodec, ChunkRepresentation,
    Codec, CodecError, CodecKind, CodecTraits,
};
use zv_core::metadata::{ExtensionMetadata, JsonObject};
use zv_core::plugin::CodecPlugin;

/// The registered name.
pub const NAME: &str = "transpose";

/// The `order` of the configuration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Order {
    /// A permutation of the dimensions.
    Permutation(Vec<usize>),
    /// `"C"` (identity) or `"F"` (reverse), from older drafts.
    Named(String),
}

/// The JSON configuration of `transpose`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransposeConfig {
    /// The permutation.
    pub order: Order,
}

/// The `transpose` codec bound to a dimensionality.
#[derive(Debug, Clone)]
pub struct TransposeCodec {
    order: Vec<usize>,
    inverse: Vec<usize>,
}

impl TransposeCodec {
    /// Builds the codec for chunks of `ndim` dimensions.
    pub fn new(order: &Order, ndim: usize) -> Result<Self, CodecError> {
        let order = match order {
            Order::Permutation(p) => p.clone(),
            Order::Named(s) if s == "C" => (0..ndim).collect(),
            Order::Named(s) if s == "F" => (0..ndim).rev().collect(),
            Order::Named(s) => {
                return Err(CodecError::config(
                    NAME,
                    format!("order must be a list or \"C\"/\"F\", got {s:?}"),
                ))
            }
        };
        if order.len() != ndim {
            return Err(CodecError::config(
                NAME,
                format!(
                    "order {order:?} has {} entries, the chunk has {ndim} dimensions",
                    order.len()
                ),
            ));
        }
        let mut inverse = vec![usize::MAX; ndim];
        for (k, &d) in order.iter().enumerate() {
            match inverse.get_mut(d) {
                Some(slot) if *slot == usize::MAX => *slot = k,
                _ => {
                    return Err(CodecError::config(
                        NAME,
                        format!("order {order:?} is not a permutation of 0..{ndim}"),
                    ))
                }
            }
        }
        Ok(Self { order, inverse })
    }
}

/// Permutes a C-order array of `shape` so that output dimension `k` is input dimension
/// `perm[k]`; returns the element order as source indices.
fn permuted_indices(shape: &[u64], perm: &[usize]) -> Vec<usize> {
    let n = shape.len();
    let mut strides = vec![1usize; n];
    for i in (0..n.saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * shape[i + 1] as usize;
    }
    let out_shape: Vec<usize> = perm.iter().map(|&d| shape[d] as usize).collect();
    let out_strides: Vec<usize> = perm.iter().map(|&d| strides[d]).collect();
    let total: usize = out_shape.iter().product();
    let mut out = Vec::with_capacity(total);
    if total == 0 {
        return out;
    }
    let mut idx = vec![0usize; n];
    let mut src = 0usize;
    for _ in 0..total {
        out.push(src);
        // odometer over the output shape, last dimension fastest
        let mut d = n;
        while d > 0 {
            d -= 1;
            idx[d] += 1;
            src += out_strides[d];
            if idx[d] < out_shape[d] {
                break;
            }
            src -= out_strides[d] * idx[d];
            idx[d] = 0;
        }
    }
    out
}

fn apply<'a>(
    input: ArrayBytes<'a>,
    shape: &[u64],
    perm: &[usize],
    element_size: Option<usize>,
) -> Result<ArrayBytes<'a>, CodecError> {
    if perm.iter().enumerate().all(|(i, &d)| i == d) {
        return Ok(input);
    }
    let indices = permuted_indices(shape, perm);
    match (input, element_size) {
        (ArrayBytes::Fixed(bytes), Some(es)) => {
            if bytes.len() != indices.len() * es {
                return Err(CodecError::SizeMismatch {
                    codec: NAME.into(),
                    expected: (indices.len() * es) as u64,
                    actual: bytes.len() as u64,
                });
            }
            let mut out = Vec::with_capacity(bytes.len());
            for &i in &indices {
                out.extend_from_slice(&bytes[i * es..(i + 1) * es]);
            }
            Ok(ArrayBytes::Fixed(Cow::Owned(out)))
        }
        (input @ ArrayBytes::Variable { .. }, None) => {
            let mut elements = Vec::with_capacity(indices.len());
            for &i in &indices {
                elements.push(
                    input
                        .element(i)
                        .ok_or_else(|| CodecError::corrupt(NAME, "too few elements"))?,
                );
            }
            Ok(ArrayBytes::from_elements(elements))
        }
        _ => Err(CodecError::corrupt(
            NAME,
            "element kind does not match the data type",
        )),
    }
}

impl CodecTraits for TransposeCodec {
    fn name(&self) -> &str {
        NAME
    }

    fn configuration(&self) -> Option<JsonObject> {
        configuration_object(&TransposeConfig {
            order: Order::Permutation(self.order.clone()),
        })
    }
}

impl ArrayToArrayCodec for TransposeCodec {
    fn encoded_representation(
        &self,
        decoded: &ChunkRepresentation,
    ) -> Result<ChunkRepresentation, CodecError> {
        if decoded.shape().len() != self.order.len() {
            return Err(CodecError::config(
                NAME,
                format!(
                    "order {:?} does not fit a chunk of {} dimensions",
                    self.order,
                    decoded.shape().len()
                ),
            ));
        }
        decoded.with_shape(self.order.iter().map(|&d| decoded.shape()[d]).collect())
    }

    fn encode<'a>(
        &self,
        input: ArrayBytes<'a>,
        decoded: &ChunkRepresentation,
    ) -> Result<ArrayBytes<'a>, CodecError> {
        input.validate(decoded)?;
        apply(
            input,
            decoded.shape(),
            &self.order,
            decoded.data_type().size(),
        )
    }

    fn decode<'a>(
        &self,
        input: ArrayBytes<'a>,
        decoded: &ChunkRepresentation,
    ) -> Result<ArrayBytes<'a>, CodecError> {
        let encoded = self.encoded_representation(decoded)?;
        input.validate(&encoded)?;
        apply(
            input,
            encoded.shape(),
            &self.inverse,
            decoded.data_type().size(),
        )
    }
}

fn create(meta: &ExtensionMetadata, repr: &ChunkRepresentation) -> Result<Codec, CodecError> {
    let config: TransposeConfig = parse_configuration(meta)?;
    Ok(Codec::ArrayToArray(Arc::new(TransposeCodec::new(
        &config.order,
        repr.shape().len(),
    )?)))
}

inventory::submit! {
    CodecPlugin::new(NAME, CodecKind::ArrayToArray, create)
}

#[cfg(test)]
mod tests {
    use super::*;
    use zv_core::data_type::{DataType, FillValue};

    #[test]
    fn transposes_2d_and_back() {
        let repr = ChunkRepresentation::new(
            vec![2, 3],
            DataType::UInt8,
            FillValue::zero(DataType::UInt8),
        )
        .unwrap();
        let c = TransposeCodec::new(&Order::Permutation(vec![1, 0]), 2).unwrap();
        let data = vec![0u8, 1, 2, 3, 4, 5];
        let enc = c
            .encode(ArrayBytes::Fixed(Cow::Borrowed(&data)), &repr)
            .unwrap();
        assert_eq!(enc, ArrayBytes::Fixed(Cow::Owned(vec![0, 3, 1, 4, 2, 5])));
        let dec = c.decode(enc, &repr).unwrap();
        assert_eq!(dec, ArrayBytes::Fixed(Cow::Owned(data.clone())));
    }

    #[test]
    fn three_d_permutation_round_trips() {
        let repr = ChunkRepresentation::new(
            vec![2, 3, 4],
            DataType::UInt16,
            FillValue::zero(DataType::UInt16),
        )
        .unwrap();
        let c = TransposeCodec::new(&Order::Permutation(vec![2, 0, 1]), 3).unwrap();
        let data: Vec<u8> = (0..48u8).collect();
        let enc = c
            .encode(ArrayBytes::Fixed(Cow::Borrowed(&data)), &repr)
            .unwrap();
        // encoded[k][i][j] = decoded[i][j][k]
        if let ArrayBytes::Fixed(e) = &enc {
            let at = |k: usize, i: usize, j: usize| {
                let o = ((k * 2 + i) * 3 + j) * 2;
                [e[o], e[o + 1]]
            };
            let src = |i: usize, j: usize, k: usize| {
                let o = ((i * 3 + j) * 4 + k) * 2;
                [data[o], data[o + 1]]
            };
            assert_eq!(at(3, 1, 2), src(1, 2, 3));
            assert_eq!(at(1, 0, 1), src(0, 1, 1));
        }
        assert_eq!(
            c.decode(enc, &repr).unwrap(),
            ArrayBytes::Fixed(Cow::Owned(data.clone()))
        );
    }

    #[test]
    fn invalid_orders() {
        assert!(TransposeCodec::new(&Order::Permutation(vec![0, 0]), 2).is_err());
        assert!(TransposeCodec::new(&Order::Permutation(vec![0, 2]), 2).is_err());
        assert!(TransposeCodec::new(&Order::Permutation(vec![0]), 2).is_err());
        assert!(TransposeCodec::new(&Order::Named("X".into()), 2).is_err());
        assert!(TransposeCodec::new(&Order::Named("F".into()), 2).is_ok());
    }
}
