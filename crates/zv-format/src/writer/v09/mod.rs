//! The ZV 0.9 layout of a level (`docs/format-decisions.md`, "Writing ZV 0.9"): what differs
//! from 0.7 besides the chunk-grid cells, which [`Blobs`](crate::blob::Blobs) lays out — the
//! chunk grid itself, the object index (`vlen_manifests_v2`: manifests by row and the
//! `object_ids` table), the groups (one `variable_length_bytes` array) and the dense
//! attributes (flat arrays whose absent rows hold the fill value) — and the links
//! ([`links`]: the `links/0` family of offsets segments).

mod links;
mod parts;

use std::borrow::Cow;

use serde_json::{json, Value};
use zv_core::codec::ArrayBytes;
use zv_core::data_type::{DataType, FillValue};
use zv_core::metadata::ExtensionMetadata;

use super::checks::Counts;
use super::documents::{dense_attribute_document, empty_group};
use super::objects::{DenseAttribute, Manifests};
use super::ZvWriter;
use crate::blob::{join, vlen_codecs};
use crate::document::Attribute;
use crate::error::{Error, Result};
use crate::layout::attributes::le_to_f64;
use crate::metadata::arrays::ObjectIndexArray;
use crate::metadata::JsonObject;
use crate::names;

/// The object index layout written.
const VLEN_MANIFESTS_V2: &str = "vlen_manifests_v2";

/// The "absent" fill value of a dense attribute of `dt`, as 0.9.2 picks it: NaN for floats,
/// the minimum of signed and the maximum of unsigned integers; `None` for other types.
fn absent_fill(dt: DataType) -> Option<(Vec<u8>, Value)> {
    Some(match dt {
        DataType::Float16 => (0x7e00u16.to_le_bytes().to_vec(), json!("NaN")),
        DataType::Float32 => (f32::NAN.to_le_bytes().to_vec(), json!("NaN")),
        DataType::Float64 => (f64::NAN.to_le_bytes().to_vec(), json!("NaN")),
        DataType::Int8 => (i8::MIN.to_le_bytes().to_vec(), json!(i8::MIN)),
        DataType::Int16 => (i16::MIN.to_le_bytes().to_vec(), json!(i16::MIN)),
        DataType::Int32 => (i32::MIN.to_le_bytes().to_vec(), json!(i32::MIN)),
        DataType::Int64 => (i64::MIN.to_le_bytes().to_vec(), json!(i64::MIN)),
        DataType::UInt8 => (u8::MAX.to_le_bytes().to_vec(), json!(u8::MAX)),
        DataType::UInt16 => (u16::MAX.to_le_bytes().to_vec(), json!(u16::MAX)),
        DataType::UInt32 => (u32::MAX.to_le_bytes().to_vec(), json!(u32::MAX)),
        DataType::UInt64 => (u64::MAX.to_le_bytes().to_vec(), json!(u64::MAX)),
        _ => return None,
    })
}

/// Whether the element `e` of `dt` reads as the fill `fill` (NaN for a float fill).
fn is_fill(dt: DataType, e: &[u8], fill: &[u8]) -> bool {
    if dt.is_float() {
        le_to_f64(dt, e).is_nan()
    } else {
        e == fill
    }
}

impl ZvWriter {
    /// Sets the chunk grid of a 0.9 level: the bounding box of the occupied chunks.
    pub(super) fn begin_grid_v09(&self) -> Result<()> {
        let (origin, shape) = crate::blob::bounding_grid(self.spill.keys(), self.grid.ndim);
        self.blobs.begin_grid(
            origin,
            shape,
            self.opts.shard_shape.clone(),
            self.spill.keys(),
        )
    }

    /// The codecs of a fixed-size 1-D array of `typesize`-byte elements (little-endian).
    fn typed_codecs(&self, typesize: usize) -> Vec<ExtensionMetadata> {
        let mut codecs = self.codecs(typesize);
        if let Some(first) = codecs.first_mut() {
            *first = ExtensionMetadata::with_configuration("bytes", json!({"endian": "little"}));
        }
        codecs
    }

    /// Writes the object index, object attributes, groups and group attributes in the 0.9
    /// layout.
    pub(super) fn write_objects_v09(&self, manifests: &Manifests, counts: &Counts) -> Result<()> {
        let index = join(&[&self.level, names::OBJECT_INDEX]);
        // manifests by row, row r being object r: every id 0..B is stored
        let n = counts.objects as usize;
        let framed = manifests.framed(&self.level)?;
        let manifests_path = join(&[&index, names::MANIFESTS]);
        let ids: Vec<u8> = (0..n as i64).flat_map(i64::to_le_bytes).collect();
        // the two arrays at once on an object store (`io_pool::all_requests`)
        crate::io_pool::all_requests(
            self.blobs.store().as_ref(),
            vec![
                Box::new(move || {
                    self.blobs.write_framed_array(
                        &manifests_path,
                        n as u64,
                        framed,
                        vlen_codecs(&self.codecs(8)),
                        JsonObject::new(),
                    )
                }),
                Box::new(|| {
                    self.blobs.write_array(
                        &join(&[&index, names::OBJECT_IDS]),
                        DataType::Int64,
                        ArrayBytes::Fixed(Cow::Owned(ids)),
                        FillValue::new(0i64.to_le_bytes().to_vec()),
                        self.typed_codecs(8),
                        JsonObject::new(),
                    )
                }),
            ],
        )?;
        let mut attributes = ObjectIndexArray::new(counts.objects, self.grid.ndim).to_attributes();
        attributes.insert("layout".into(), json!(VLEN_MANIFESTS_V2));
        attributes.insert("num_present".into(), json!(counts.objects));
        attributes.insert("object_ids_sorted".into(), json!(true));
        self.blobs.write_group(&index, attributes)?;
        let objects = join(&[&self.level, names::OBJECT_ATTRIBUTES]);
        if !self.object_attributes.is_empty() {
            empty_group(&self.blobs, &objects)?;
        }
        for (name, a) in &self.object_attributes {
            self.write_dense_v09(&join(&[&objects, name]), name, a, counts.objects, true)?;
        }
        if !self.groups.is_empty() || !self.group_attributes.is_empty() {
            self.write_groups_v09(counts.groups)?;
        }
        let groups = join(&[&self.level, names::GROUP_ATTRIBUTES]);
        if !self.group_attributes.is_empty() {
            empty_group(&self.blobs, &groups)?;
        }
        for (name, a) in &self.group_attributes {
            self.write_dense_v09(&join(&[&groups, name]), name, a, counts.groups, false)?;
        }
        Ok(())
    }

    /// Writes the groups: element `g` the little-endian int64 ids of group `g`'s members.
    fn write_groups_v09(&self, num_groups: u64) -> Result<()> {
        let path = join(&[&self.level, names::GROUPS]);
        let mut data = Vec::new();
        let mut offsets = vec![0usize];
        for g in 0..num_groups {
            for &m in self.groups.get(&g).map(Vec::as_slice).unwrap_or_default() {
                data.extend_from_slice(&(m as i64).to_le_bytes());
            }
            offsets.push(data.len());
        }
        let mut attributes = JsonObject::new();
        attributes.insert("zv_array".into(), json!("groups"));
        attributes.insert("num_groups".into(), json!(num_groups));
        self.blobs.write_array(
            &path,
            DataType::VariableLengthBytes,
            ArrayBytes::Variable {
                data: Cow::Owned(data),
                offsets: Cow::Owned(offsets),
            },
            FillValue::new(Vec::new()),
            vlen_codecs(&self.codecs(8)),
            attributes,
        )
    }

    /// Writes a dense attribute of `rows` rows as the flat array `path`: absent rows (object
    /// attributes, `with_mask`) hold the fill value, and a present row that would read as
    /// absent is refused, as are types and shapes 0.9.2 has no absent value for.
    fn write_dense_v09(
        &self,
        path: &str,
        name: &str,
        a: &Attribute,
        rows: u64,
        with_mask: bool,
    ) -> Result<()> {
        let dense = DenseAttribute::new(name, a, path)?;
        let dt = dense.rows.data_type();
        let unsupported = |what: String| Error::Unsupported {
            key: join(&[path, "zarr.json"]),
            what: format!("{what} in the ZV 0.9 layout (write 0.7)"),
        };
        if dense.dictionary.is_some() {
            return Err(unsupported(format!("categorical attribute `{name}`")));
        }
        if dense.rows.channels() != 1 {
            return Err(unsupported(format!(
                "attribute `{name}` of {} channels",
                dense.rows.channels()
            )));
        }
        let Some((fill, fill_json)) = absent_fill(dt) else {
            return Err(unsupported(format!("attribute `{name}` of type {dt}")));
        };
        let mut data = dense.rows.encode();
        let size = fill.len();
        for (r, e) in data.chunks_exact_mut(size).enumerate() {
            let present = dense
                .present
                .is_none_or(|p| p.get(r).copied().unwrap_or(true));
            if !present {
                e.copy_from_slice(&fill);
            } else if with_mask && is_fill(dt, e, &fill) {
                return Err(Error::InvalidInput(format!(
                    "object attribute `{name}`: row {r} holds the value 0.9 reads as absent \
                     ({fill_json}); write 0.7, or store null"
                )));
            }
        }
        let mut attributes = dense_attribute_document(&dense, rows, with_mask);
        attributes.remove("has_present_mask");
        attributes.insert("shape".into(), json!([rows]));
        if with_mask {
            attributes.insert("fill_sentinel_meaning".into(), json!("absent"));
        }
        let fill_value = FillValue::from_json(dt, &fill_json)
            .map_err(|e| Error::metadata(join(&[path, "zarr.json"]), e.to_string()))?;
        self.blobs.write_array(
            path,
            dt,
            ArrayBytes::Fixed(Cow::Owned(data)),
            fill_value,
            self.typed_codecs(size),
            attributes,
        )
    }
}
