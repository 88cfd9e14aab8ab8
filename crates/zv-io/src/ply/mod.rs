//! PLY (the Stanford polygon format): ascii, binary little endian and binary big endian.
//!
//! **Import** ([`import`]): the `vertex` element's `x`, `y` (and `z`) are the positions; a
//! `object_id` property gives the object ids; every other scalar vertex property becomes a
//! vertex attribute of its own type (`uchar` → uint8, `short` → int16, `float` → float32,
//! …). A `face` element with a `vertex_indices` (or `vertex_index`) list makes the store a
//! mesh: faces of 3 or 4 vertices (one arity per file, as a ZV mesh has one link width); its
//! other scalar properties become link attributes. Positions are stored as float32 when
//! every position property is `float` (or narrower), else float64, so that they come back bit
//! for bit. Other elements (with records), list properties on vertices, and faces after
//! vertices in the wrong order are refused. Vertices and faces are read and handed to the
//! writer in batches, so a file of any size imports in bounded memory.
//!
//! **Export** ([`export`]): level 0 of a point cloud or a mesh as `vertex` (positions,
//! `object_id` when the store has objects, every numeric single-channel vertex attribute) and
//! `face` (`vertex_indices` as `list uchar int`, link attributes), in the encoding asked for.
//!
//! Written by hand: the PLY crates (`ply-rs` and its fork `ply-rs-bw`) read a whole element
//! into memory as one map per record, which cannot stream a 10M-point file in bounded memory,
//! and their errors do not say the byte offset; the format is small enough that one reader and
//! one writer here cost less than working around that.

mod header;
mod read;
mod write;

pub use read::import;
pub use write::export;

use zv_core::data_type::DataType;

/// A PLY scalar type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PlyType {
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    F32,
    F64,
}

impl PlyType {
    /// Parses both the old (`uchar`) and the new (`uint8`) names.
    pub(crate) fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "char" | "int8" => Self::I8,
            "uchar" | "uint8" => Self::U8,
            "short" | "int16" => Self::I16,
            "ushort" | "uint16" => Self::U16,
            "int" | "int32" => Self::I32,
            "uint" | "uint32" => Self::U32,
            "float" | "float32" => Self::F32,
            "double" | "float64" => Self::F64,
            _ => return None,
        })
    }

    /// The PLY name written by [`export`].
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::I8 => "char",
            Self::U8 => "uchar",
            Self::I16 => "short",
            Self::U16 => "ushort",
            Self::I32 => "int",
            Self::U32 => "uint",
            Self::F32 => "float",
            Self::F64 => "double",
        }
    }

    /// The size in bytes.
    pub(crate) fn size(self) -> usize {
        match self {
            Self::I8 | Self::U8 => 1,
            Self::I16 | Self::U16 => 2,
            Self::I32 | Self::U32 | Self::F32 => 4,
            Self::F64 => 8,
        }
    }

    /// The Zarr data type of the same values.
    pub(crate) fn data_type(self) -> DataType {
        match self {
            Self::I8 => DataType::Int8,
            Self::U8 => DataType::UInt8,
            Self::I16 => DataType::Int16,
            Self::U16 => DataType::UInt16,
            Self::I32 => DataType::Int32,
            Self::U32 => DataType::UInt32,
            Self::F32 => DataType::Float32,
            Self::F64 => DataType::Float64,
        }
    }

    /// The PLY type of a Zarr data type, if PLY has one.
    pub(crate) fn from_data_type(dt: DataType) -> Option<Self> {
        Some(match dt {
            DataType::Int8 => Self::I8,
            DataType::UInt8 | DataType::Bool => Self::U8,
            DataType::Int16 => Self::I16,
            DataType::UInt16 => Self::U16,
            DataType::Int32 => Self::I32,
            DataType::UInt32 => Self::U32,
            DataType::Float16 | DataType::Float32 => Self::F32,
            DataType::Float64 => Self::F64,
            _ => return None,
        })
    }

    /// Whether the type is an integer type.
    pub(crate) fn is_integer(self) -> bool {
        !matches!(self, Self::F32 | Self::F64)
    }

    /// Whether `v` (an integer) fits the type.
    pub(crate) fn holds(self, v: i64) -> bool {
        let (lo, hi) = match self {
            Self::I8 => (i8::MIN as i64, i8::MAX as i64),
            Self::U8 => (0, u8::MAX as i64),
            Self::I16 => (i16::MIN as i64, i16::MAX as i64),
            Self::U16 => (0, u16::MAX as i64),
            Self::I32 => (i32::MIN as i64, i32::MAX as i64),
            Self::U32 => (0, u32::MAX as i64),
            Self::F32 | Self::F64 => return true,
        };
        (lo..=hi).contains(&v)
    }

    /// Decodes one value from `b` (exactly [`PlyType::size`] bytes).
    pub(crate) fn decode(self, b: &[u8], big_endian: bool) -> f64 {
        let mut a = [0u8; 8];
        let n = self.size().min(b.len());
        a[..n].copy_from_slice(&b[..n]);
        if big_endian {
            a[..n].reverse();
        }
        match self {
            Self::I8 => a[0] as i8 as f64,
            Self::U8 => a[0] as f64,
            Self::I16 => i16::from_le_bytes([a[0], a[1]]) as f64,
            Self::U16 => u16::from_le_bytes([a[0], a[1]]) as f64,
            Self::I32 => i32::from_le_bytes([a[0], a[1], a[2], a[3]]) as f64,
            Self::U32 => u32::from_le_bytes([a[0], a[1], a[2], a[3]]) as f64,
            Self::F32 => f32::from_le_bytes([a[0], a[1], a[2], a[3]]) as f64,
            Self::F64 => f64::from_le_bytes(a),
        }
    }

    /// Encodes `v` (already of this type's values) into `out`.
    pub(crate) fn encode(self, v: f64, big_endian: bool, out: &mut Vec<u8>) {
        let start = out.len();
        match self {
            Self::I8 => out.push(v as i8 as u8),
            Self::U8 => out.push(v as u8),
            Self::I16 => out.extend_from_slice(&(v as i16).to_le_bytes()),
            Self::U16 => out.extend_from_slice(&(v as u16).to_le_bytes()),
            Self::I32 => out.extend_from_slice(&(v as i32).to_le_bytes()),
            Self::U32 => out.extend_from_slice(&(v as u32).to_le_bytes()),
            Self::F32 => out.extend_from_slice(&(v as f32).to_le_bytes()),
            Self::F64 => out.extend_from_slice(&v.to_le_bytes()),
        }
        if big_endian {
            out[start..].reverse();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const ALL: [PlyType; 8] = [
        PlyType::I8,
        PlyType::U8,
        PlyType::I16,
        PlyType::U16,
        PlyType::I32,
        PlyType::U32,
        PlyType::F32,
        PlyType::F64,
    ];

    #[test]
    fn names_parse_back() {
        for t in ALL {
            assert_eq!(PlyType::parse(t.name()), Some(t));
            assert_eq!(PlyType::from_data_type(t.data_type()), Some(t));
        }
        assert_eq!(PlyType::parse("uint8"), Some(PlyType::U8));
        assert_eq!(PlyType::parse("int64"), None);
    }

    proptest! {
        #[test]
        fn encode_decode_round_trip(i in 0usize..8, raw in any::<i64>(), f in any::<f32>(), be in any::<bool>()) {
            let t = ALL[i];
            let v = match t {
                PlyType::F32 => f as f64,
                PlyType::F64 => raw as f64 / 3.0,
                _ => {
                    let (lo, hi) = (-(1i64 << 31), (1i64 << 32) - 1);
                    let v = raw.clamp(lo, hi);
                    if t.holds(v) { v as f64 } else { 0.0 }
                }
            };
            let mut out = Vec::new();
            t.encode(v, be, &mut out);
            prop_assert_eq!(out.len(), t.size());
            let back = t.decode(&out, be);
            prop_assert!(back == v || (back.is_nan() && v.is_nan()));
        }
    }
}
