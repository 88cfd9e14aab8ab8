//! Vertex rows: the decoded `vertices/<key>` blob of one chunk.

use zv_core::data_type::DataType;

use crate::error::{Error, Result};
use crate::layout::attributes::le_to_f64;
use crate::layout::LayoutError;

/// Vertex rows of one chunk (little-endian values of the level's vertex data type).
#[derive(Debug, Clone, PartialEq)]
pub struct Vertices {
    ndim: usize,
    data_type: DataType,
    bytes: Vec<u8>,
}

impl Vertices {
    /// Rows from the decoded blob; the length must be whole rows of `ndim` values.
    pub fn decode(bytes: Vec<u8>, ndim: usize, data_type: DataType, key: &str) -> Result<Self> {
        if bytes.starts_with(b"DRACO") {
            return Err(Error::Unsupported {
                key: key.to_owned(),
                what: "Draco-encoded vertices (this build reads raw vertices only)".into(),
            });
        }
        let row = ndim * data_type.size().unwrap_or(4);
        if row == 0 || bytes.len() % row != 0 {
            return Err(Error::Blob {
                key: key.to_owned(),
                source: LayoutError::Invalid {
                    what: "vertices",
                    reason: format!(
                        "{} bytes are not whole rows of {ndim} × {data_type}",
                        bytes.len()
                    ),
                },
            });
        }
        Ok(Self {
            ndim,
            data_type,
            bytes,
        })
    }

    /// The number of rows.
    pub fn len(&self) -> usize {
        self.bytes.len() / self.row_width().max(1)
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The value count per row.
    pub fn ndim(&self) -> usize {
        self.ndim
    }

    /// The element data type.
    pub fn data_type(&self) -> DataType {
        self.data_type
    }

    /// The decoded payload size.
    pub fn byte_len(&self) -> usize {
        self.bytes.len()
    }

    /// The byte width of one value.
    fn value_width(&self) -> usize {
        self.data_type.size().unwrap_or(4)
    }

    /// The byte width of one row.
    fn row_width(&self) -> usize {
        self.ndim * self.value_width()
    }

    /// The little-endian bytes of row `i`.
    pub fn row_bytes(&self, i: usize) -> Option<&[u8]> {
        let w = self.row_width();
        self.bytes.get(i * w..(i + 1) * w)
    }

    /// Row `i` as `f64` values (exact for float16/32/64).
    pub fn row(&self, i: usize) -> Option<Vec<f64>> {
        let b = self.row_bytes(i)?;
        Some(
            b.chunks_exact(self.value_width())
                .map(|c| le_to_f64(self.data_type, c))
                .collect(),
        )
    }

    /// Every row.
    pub fn rows(&self) -> Vec<Vec<f64>> {
        (0..self.len()).filter_map(|i| self.row(i)).collect()
    }
}
