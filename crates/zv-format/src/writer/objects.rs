//! Objects and groups: the object index (one manifest per object, naming its fragments), the
//! groups, and the dense per-object, per-fragment and per-group attributes.

use std::borrow::Cow;

use super::checks::Counts;
use super::chunk_blobs::ChunkBlobs;
use super::documents::{dense_attribute_document, empty_group, object};
use super::{ZvWriter, LEVEL};
use crate::blob::join;
use crate::document::{Attribute, AttributeValues};
use crate::error::{Error, Result};
use crate::layout::attributes::{encode_present_mask, AttributeRows, Dictionary};
use crate::layout::groups::Groups;
use crate::layout::manifest::Manifest;
use crate::names;
use serde_json::json;

/// A per-object (or per-group) attribute as stored: its rows (categorical values
/// dictionary-encoded over all rows), presence and dictionary.
#[derive(Debug)]
pub(super) struct DenseAttribute<'a> {
    /// The attribute's name.
    pub(super) name: &'a str,
    /// The attribute as given.
    pub(super) attribute: &'a Attribute,
    /// The stored rows.
    pub(super) rows: Cow<'a, AttributeRows>,
    /// Which rows are present (numeric attributes with null rows).
    pub(super) present: Option<&'a [bool]>,
    /// The dictionary of a categorical attribute.
    pub(super) dictionary: Option<Dictionary>,
}

impl<'a> DenseAttribute<'a> {
    /// Encodes attribute `name` (stored under `path`, named in errors).
    fn new(name: &'a str, a: &'a Attribute, path: &str) -> Result<Self> {
        let (rows, present, dictionary) = match &a.values {
            AttributeValues::Numeric { rows, present } => {
                (Cow::Borrowed(rows), present.as_deref(), None)
            }
            AttributeValues::Categorical(v) => {
                let strs: Vec<Option<&str>> = v.iter().map(|s| s.as_deref()).collect();
                let (d, rows) = Dictionary::encode(&strs).map_err(|source| Error::Blob {
                    key: path.to_owned(),
                    source,
                })?;
                (Cow::Owned(rows), None, Some(d))
            }
        };
        Ok(Self {
            name,
            attribute: a,
            rows,
            present,
            dictionary,
        })
    }
}

/// The object index as it is built: the manifest-block stream and its offsets.
#[derive(Debug, Default)]
pub(super) struct Manifests {
    data: Vec<u8>,
    offsets: Vec<u8>,
    written: u64,
}

impl Manifests {
    /// Appends the manifest of the next object.
    fn push(&mut self, refs: &[(Vec<i64>, u64)], sid_ndim: usize) -> Result<()> {
        self.offsets
            .extend_from_slice(&(self.data.len() as i64).to_le_bytes());
        self.written += 1;
        Manifest::from_refs(refs)
            .encode_into(&mut self.data, sid_ndim)
            .map_err(|source| Error::Blob {
                key: join(&[LEVEL, names::OBJECT_INDEX, names::DATA]),
                source,
            })
    }

    /// Appends empty manifests up to object `n` (excluded).
    fn pad_to(&mut self, n: u64, sid_ndim: usize) -> Result<()> {
        while self.written < n {
            self.push(&[], sid_ndim)?;
        }
        Ok(())
    }
}

impl ZvWriter {
    /// The fragment attributes, encoded.
    pub(super) fn fragment_columns(&self) -> Result<Vec<DenseAttribute<'_>>> {
        self.fragment_attributes
            .iter()
            .map(|(name, a)| {
                let path = join(&[LEVEL, names::FRAGMENT_ATTRIBUTES, name]);
                DenseAttribute::new(name, a, &path)
            })
            .collect()
    }

    /// The manifest of every object (stores with objects): its fragments, chunk by chunk in
    /// key order (polylines: its pieces in path order), then empty ones up to `num_objects`.
    pub(super) fn manifests(&self, chunks: &ChunkBlobs, num_objects: u64) -> Result<Manifests> {
        let mut out = Manifests::default();
        if !self.has_objects() {
            return Ok(out);
        }
        let sid = self.grid.ndim;
        let keys = self.spill.keys();
        if self.opts.geometry.is_sequential() {
            for pieces in self.polylines.pieces() {
                let refs: Vec<(Vec<i64>, u64)> = pieces
                    .iter()
                    .map(|&(ci, f)| (keys[ci as usize].0.clone(), f as u64))
                    .collect();
                out.push(&refs, sid)?;
            }
        } else {
            // (object, chunk in key order, fragment), sorted
            let mut order: Vec<usize> = (0..keys.len()).collect();
            order.sort_by(|&a, &b| keys[a].cmp(&keys[b]));
            let mut all: Vec<(u64, u32, u32)> = Vec::new();
            for (pos, &ci) in order.iter().enumerate() {
                for (f, &obj) in chunks.objects(ci).iter().enumerate() {
                    all.push((obj, pos as u32, f as u32));
                }
            }
            all.sort_unstable();
            for run in all.chunk_by(|a, b| a.0 == b.0) {
                out.pad_to(run[0].0, sid)?;
                let refs: Vec<(Vec<i64>, u64)> = run
                    .iter()
                    .map(|&(_, pos, f)| (keys[order[pos as usize]].0.clone(), f as u64))
                    .collect();
                out.push(&refs, sid)?;
            }
        }
        out.pad_to(num_objects, sid)?;
        Ok(out)
    }

    /// Writes the object index, the object attributes, the groups and the group attributes
    /// (stores with objects).
    pub(super) fn write_objects(&self, manifests: &Manifests, counts: &Counts) -> Result<()> {
        if !self.has_objects() {
            return Ok(());
        }
        let index = join(&[LEVEL, names::OBJECT_INDEX]);
        self.blobs.write_bytes(
            &join(&[&index, names::DATA]),
            &manifests.data,
            &self.codecs(8),
        )?;
        self.blobs.write_bytes(
            &join(&[&index, names::OFFSETS]),
            &manifests.offsets,
            &self.codecs(8),
        )?;
        self.blobs.write_group(
            &index,
            object(json!({(names::ZV_ARRAY): names::OBJECT_INDEX, "num_objects": counts.objects, "sid_ndim": self.grid.ndim})),
        )?;
        let objects = join(&[LEVEL, names::OBJECT_ATTRIBUTES]);
        if !self.object_attributes.is_empty() {
            empty_group(&self.blobs, &objects)?;
        }
        for (name, a) in &self.object_attributes {
            self.write_dense(&join(&[&objects, name]), name, a, counts.objects, true)?;
        }
        if !self.groups.is_empty() || !self.group_attributes.is_empty() {
            self.write_groups(counts.groups)?;
        }
        let groups = join(&[LEVEL, names::GROUP_ATTRIBUTES]);
        if !self.group_attributes.is_empty() {
            empty_group(&self.blobs, &groups)?;
        }
        for (name, a) in &self.group_attributes {
            self.write_dense(&join(&[&groups, name]), name, a, counts.groups, false)?;
        }
        Ok(())
    }

    /// Writes the groups' members (groups `0..num_groups`; missing ids are empty groups).
    fn write_groups(&self, num_groups: u64) -> Result<()> {
        let path = join(&[LEVEL, names::GROUPS]);
        let data = join(&[&path, names::DATA]);
        let members: Vec<Vec<u64>> = (0..num_groups)
            .map(|g| self.groups.get(&g).cloned().unwrap_or_default())
            .collect();
        let (bytes, offsets) = Groups { members }.encode().map_err(|source| Error::Blob {
            key: data.clone(),
            source,
        })?;
        self.blobs.write_bytes(&data, &bytes, &self.codecs(8))?;
        self.blobs
            .write_bytes(&join(&[&path, names::OFFSETS]), &offsets, &self.codecs(8))?;
        self.blobs.write_group(
            &path,
            object(json!({(names::ZV_ARRAY): names::GROUPS, "num_groups": num_groups})),
        )
    }

    /// Writes a dense attribute of `rows` rows at `group`: its data, its presence mask
    /// (object attributes, `with_mask`) and its document.
    fn write_dense(
        &self,
        group: &str,
        name: &str,
        a: &Attribute,
        rows: u64,
        with_mask: bool,
    ) -> Result<()> {
        let dense = DenseAttribute::new(name, a, group)?;
        self.write_rows(&join(&[group, names::DATA]), &dense.rows)?;
        if with_mask {
            if let Some(p) = dense.present {
                self.blobs.write_bytes(
                    &join(&[group, names::PRESENT_MASK]),
                    &encode_present_mask(p),
                    &self.codecs(1),
                )?;
            }
        }
        self.blobs
            .write_group(group, dense_attribute_document(&dense, rows, with_mask))
    }
}
