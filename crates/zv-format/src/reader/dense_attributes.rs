//! Dense attributes: one row per object (`object_attributes/<name>/data`, with an optional
//! `present_mask`) or per group (`group_attributes/<name>/data`).

use std::collections::BTreeMap;

use zv_core::data_type::DataType;

use super::{blob_err, Level};
use crate::blob::join;
use crate::error::{Error, Result};
use crate::layout::attributes::{decode_present_mask, DenseArray, Dictionary};
use crate::metadata::arrays::DenseAttributeArray;
use crate::metadata::{JsonObject, Layout};
use crate::names;

/// A dense per-object or per-group attribute.
#[derive(Debug, Clone, PartialEq)]
pub struct DenseAttribute {
    /// The attribute name.
    pub name: String,
    /// The data type.
    pub data_type: DataType,
    /// The array shape (`[B]` or `[B, C, …]`).
    pub shape: Vec<u64>,
    /// The values.
    pub values: DenseArray,
    /// `present_mask`, if stored (object attributes only).
    pub present_mask: Option<Vec<bool>>,
    /// The dictionary of a categorical attribute.
    pub dictionary: Option<Dictionary>,
    /// The array group's attributes, verbatim.
    pub attributes: JsonObject,
}

impl Level {
    /// The object attributes (with `present_mask` where stored), read once per level.
    pub fn object_attributes(&self) -> Result<BTreeMap<String, DenseAttribute>> {
        Ok(self.shared_object_attributes()?.as_ref().clone())
    }

    /// The object attributes, read from the store.
    pub(crate) fn read_object_attributes(&self) -> Result<BTreeMap<String, DenseAttribute>> {
        self.dense_attributes(names::OBJECT_ATTRIBUTES, true)
    }

    /// The group attributes.
    pub fn group_attributes(&self) -> Result<BTreeMap<String, DenseAttribute>> {
        self.dense_attributes(names::GROUP_ATTRIBUTES, false)
    }

    fn dense_attributes(
        &self,
        container: &str,
        with_mask: bool,
    ) -> Result<BTreeMap<String, DenseAttribute>> {
        let mut out = BTreeMap::new();
        for name in self.children_of(container)? {
            let group = self.p(&[container, &name]);
            let attribute = if self.blobs.layout() == Layout::ChunkGrid {
                self.dense_attribute_v09(&group, name.clone(), with_mask)?
            } else {
                self.dense_attribute(&group, name.clone(), with_mask)?
            };
            out.insert(name, attribute);
        }
        Ok(out)
    }

    fn dense_attribute(
        &self,
        group: &str,
        name: String,
        with_mask: bool,
    ) -> Result<DenseAttribute> {
        let key = join(&[group, "zarr.json"]);
        let attributes = self.blobs.group_attributes(group)?.unwrap_or_default();
        let model = DenseAttributeArray::from_attributes(&attributes, &key)?;
        let data_type = model.dtype;
        let data_path = join(&[group, names::DATA]);
        let data = self.blobs.require_bytes(&data_path, "attribute data")?;
        let shape = match model.shape.clone() {
            Some(s) => s,
            None => vec![(data.len() / data_type.size().unwrap_or(1)) as u64],
        };
        let values = DenseArray::decode(&data, data_type, &shape)
            .map_err(blob_err(join(&[&data_path, "c/0"])))?;
        let present_mask = if with_mask {
            let expected = model.expects_present_mask();
            self.present_mask(group, expected, shape.first().copied().unwrap_or(0))?
        } else {
            None
        };
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

    /// The `present_mask` of the dense attribute at `group` over `rows` rows; a missing mask
    /// is an error when `expected` (`has_present_mask: true`).
    fn present_mask(&self, group: &str, expected: bool, rows: u64) -> Result<Option<Vec<bool>>> {
        let mp = join(&[group, names::PRESENT_MASK]);
        match self.blobs.read_bytes(&mp)? {
            None if expected => Err(Error::Missing {
                key: join(&[&mp, "zarr.json"]),
                what: "present_mask (the attribute says has_present_mask: true)".into(),
            }),
            None => Ok(None),
            Some(b) => decode_present_mask(&b, rows)
                .map(Some)
                .map_err(blob_err(join(&[&mp, "c/0"]))),
        }
    }
}
