//! Objects and groups: the object index (one manifest per object, naming its fragments), the
//! groups, and the dense per-object, per-fragment and per-group attributes.

use std::borrow::Cow;

use rayon::prelude::*;

use super::checks::Counts;
use super::documents::{dense_attribute_document, empty_group};
use super::ZvWriter;
use crate::blob::join;
use crate::document::{Attribute, AttributeValues};
use crate::error::{Error, Result};
use crate::layout::attributes::{encode_present_mask, AttributeRows, Dictionary};
use crate::layout::groups::Groups;
use crate::layout::manifest::Manifest;
use crate::metadata::arrays::{GroupsArray, ObjectIndexArray};
use crate::metadata::ChunkKey;
use crate::names;

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
    pub(super) fn new(name: &'a str, a: &'a Attribute, path: &str) -> Result<Self> {
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

/// The object index: the manifest-block stream and its offsets.
#[derive(Debug, Default)]
pub(super) struct Manifests {
    /// The manifests, one after the other.
    pub(super) data: Vec<u8>,
    /// Where each manifest starts in `data` (little-endian int64).
    pub(super) offsets: Vec<u8>,
}

/// Objects per parallel task when building manifests.
const OBJECTS_PER_TASK: usize = 256;

/// An error of the object index blob.
fn manifest_error(level: &str) -> impl Fn(crate::layout::LayoutError) -> Error + '_ {
    move |source| Error::Blob {
        key: join(&[level, names::OBJECT_INDEX, names::DATA]),
        source,
    }
}

impl Manifests {
    /// The manifests of objects `0..n`, object `o` naming the fragments `refs(o)` yields
    /// (chunk index, fragment) in order; built in parallel, `OBJECTS_PER_TASK` objects a task.
    /// `level` names the level in errors.
    fn build<I>(
        level: &str,
        n: usize,
        keys: &[ChunkKey],
        sid_ndim: usize,
        refs: impl Fn(usize) -> I + Sync,
    ) -> Result<Self>
    where
        I: Iterator<Item = (u32, u32)>,
    {
        let parts: Vec<(Vec<u8>, Vec<usize>)> = (0..n.div_ceil(OBJECTS_PER_TASK))
            .into_par_iter()
            .map(|t| {
                let mut data = Vec::new();
                let mut ends = Vec::new();
                // the references of one object, borrowing the chunk keys
                let mut buf: Vec<(&[i64], u64)> = Vec::new();
                for o in t * OBJECTS_PER_TASK..((t + 1) * OBJECTS_PER_TASK).min(n) {
                    buf.clear();
                    buf.extend(refs(o).map(|(ci, f)| (keys[ci as usize].0.as_slice(), f as u64)));
                    Manifest::encode_refs_into(&buf, &mut data, sid_ndim)
                        .map_err(manifest_error(level))?;
                    ends.push(data.len());
                }
                Ok((data, ends))
            })
            .collect::<Result<_>>()?;
        let mut out = Manifests {
            data: Vec::with_capacity(parts.iter().map(|p| p.0.len()).sum()),
            offsets: Vec::with_capacity(n * 8),
        };
        for (data, ends) in parts {
            let base = out.data.len();
            let mut start = base;
            for end in ends {
                out.offsets.extend_from_slice(&(start as i64).to_le_bytes());
                start = base + end;
            }
            out.data.extend_from_slice(&data);
        }
        Ok(out)
    }
}

impl ZvWriter {
    /// The fragment attributes, encoded.
    pub(super) fn fragment_columns(&self) -> Result<Vec<DenseAttribute<'_>>> {
        self.fragment_attributes
            .iter()
            .map(|(name, a)| {
                let path = join(&[&self.level, names::FRAGMENT_ATTRIBUTES, name]);
                DenseAttribute::new(name, a, &path)
            })
            .collect()
    }

    /// The manifest of every object (stores with objects): its fragments (the object of each
    /// fragment of each chunk is `fragment_objects`), chunk by chunk in key order (polylines:
    /// its pieces in path order), objects without fragments having empty ones, up to
    /// `num_objects`.
    pub(super) fn manifests(
        &self,
        fragment_objects: &[Vec<u64>],
        num_objects: u64,
    ) -> Result<Manifests> {
        if !self.has_objects() {
            return Ok(Manifests::default());
        }
        let (sid, keys) = (self.grid.ndim, self.spill.keys());
        let n = num_objects as usize;
        if self.opts.geometry.is_sequential() {
            let pieces: Vec<&[(u32, u32)]> = self.polylines.pieces().collect();
            return Manifests::build(&self.level, n, keys, sid, |o| {
                pieces.get(o).copied().unwrap_or_default().iter().copied()
            });
        }
        // the fragments of each object, chunks in key order: counted, then filled in
        let mut order: Vec<u32> = (0..keys.len() as u32).collect();
        order.par_sort_unstable_by(|&a, &b| keys[a as usize].cmp(&keys[b as usize]));
        let mut start = vec![0usize; n + 1];
        for objects in fragment_objects {
            for &o in objects {
                // every fragment's object is below the count (the writer's own invariant; an
                // error rather than a panic should it ever be broken)
                let slot = usize::try_from(o)
                    .ok()
                    .and_then(|o| o.checked_add(1))
                    .and_then(|o| start.get_mut(o))
                    .ok_or_else(|| {
                        Error::InvalidInput(format!(
                            "{}: a fragment of object {o} in a level of {n} objects",
                            self.level
                        ))
                    })?;
                *slot += 1;
            }
        }
        for o in 0..n {
            start[o + 1] += start[o];
        }
        let mut fill = start.clone();
        let mut refs = vec![(0u32, 0u32); start[n]];
        for &ci in &order {
            for (f, &o) in fragment_objects[ci as usize].iter().enumerate() {
                refs[fill[o as usize]] = (ci, f as u32);
                fill[o as usize] += 1;
            }
        }
        drop(fill);
        Manifests::build(&self.level, n, keys, sid, |o| {
            refs[start[o]..start[o + 1]].iter().copied()
        })
    }

    /// Writes the object index (see [`ZvWriter::manifests`]), the object attributes, the groups
    /// and the group attributes (stores with objects).
    pub(super) fn write_objects(
        &self,
        fragment_objects: &[Vec<u64>],
        counts: &Counts,
    ) -> Result<()> {
        if !self.has_objects() {
            return Ok(());
        }
        let manifests = self.manifests(fragment_objects, counts.objects)?;
        self.write_object_index(&manifests, counts)
    }

    /// Writes the object index of a level copied chunk by chunk (the migration of a pyramid,
    /// [`crate::migrate`]): object `o`'s manifest names the fragments `refs[o]` (chunk index
    /// into `keys`, fragment) as the source stores them, shared fragments and repeats
    /// included; then the object attributes, groups and group attributes set on the writer,
    /// checked first as the commit checks them. Writes nothing else.
    pub(crate) fn write_copied_objects(
        &self,
        keys: &[ChunkKey],
        refs: &[Vec<(u32, u32)>],
    ) -> Result<()> {
        let objects = refs.len() as u64;
        self.check_object_attributes(objects)?;
        let groups = self.num_groups(objects)?;
        self.check_groups(objects, groups)?;
        let manifests = Manifests::build(&self.level, refs.len(), keys, self.grid.ndim, |o| {
            refs[o].iter().copied()
        })?;
        self.write_object_index(&manifests, &Counts { objects, groups })
    }

    /// Writes the object index `manifests`, the object attributes, the groups and the group
    /// attributes, in the writer's layout.
    fn write_object_index(&self, manifests: &Manifests, counts: &Counts) -> Result<()> {
        if self.opts.format_version == super::FormatVersion::V0_9 {
            return self.write_objects_v09(manifests, counts);
        }
        let index = join(&[&self.level, names::OBJECT_INDEX]);
        // the two blobs at once on an object store (`io_pool::all_requests`)
        crate::io_pool::all_requests(
            self.blobs.store().as_ref(),
            vec![
                Box::new(|| {
                    self.blobs.write_bytes(
                        &join(&[&index, names::DATA]),
                        &manifests.data,
                        &self.codecs(8),
                    )
                }),
                Box::new(|| {
                    self.blobs.write_bytes(
                        &join(&[&index, names::OFFSETS]),
                        &manifests.offsets,
                        &self.codecs(8),
                    )
                }),
            ],
        )?;
        self.blobs.write_group(
            &index,
            ObjectIndexArray::new(counts.objects, self.grid.ndim).to_attributes(),
        )?;
        let objects = join(&[&self.level, names::OBJECT_ATTRIBUTES]);
        if !self.object_attributes.is_empty() {
            empty_group(&self.blobs, &objects)?;
        }
        for (name, a) in &self.object_attributes {
            self.write_dense(&join(&[&objects, name]), name, a, counts.objects, true)?;
        }
        if !self.groups.is_empty() || !self.group_attributes.is_empty() {
            self.write_groups(counts.groups)?;
        }
        let groups = join(&[&self.level, names::GROUP_ATTRIBUTES]);
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
        let path = join(&[&self.level, names::GROUPS]);
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
        self.blobs
            .write_group(&path, GroupsArray::new(num_groups).to_attributes())
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
