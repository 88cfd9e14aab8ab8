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

/// The object index as built: the manifests of runs of objects, each run encoded apart (in
/// parallel), assembled into the layout's blobs by [`Manifests::stream`] (ZV 0.7) or
/// [`Manifests::framed`] (ZV 0.9), each with one copy of the manifests, made in parallel.
#[derive(Debug, Default)]
pub(super) struct Manifests {
    /// Per run of objects, in object order: their manifests one after the other, and where
    /// each ends in them.
    parts: Vec<(Vec<u8>, Vec<usize>)>,
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

/// `out` cut into consecutive pieces of `sizes` (which sum to its length), piece `p` filled
/// by `fill(p, piece)`, in parallel.
fn fill_pieces(out: &mut [u8], sizes: &[usize], fill: impl Fn(usize, &mut [u8]) + Sync) {
    let mut pieces = Vec::with_capacity(sizes.len());
    let mut rest = out;
    for &n in sizes {
        let (piece, tail) = std::mem::take(&mut rest).split_at_mut(n);
        pieces.push(piece);
        rest = tail;
    }
    pieces
        .into_par_iter()
        .enumerate()
        .for_each(|(p, piece)| fill(p, piece));
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
        let parts = (0..n.div_ceil(OBJECTS_PER_TASK))
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
        Ok(Manifests { parts })
    }

    /// The number of manifests (objects).
    fn count(&self) -> usize {
        self.parts.iter().map(|(_, ends)| ends.len()).sum()
    }

    /// ZV 0.7: the manifest-block stream, and where each manifest starts in it (little-endian
    /// int64).
    pub(super) fn stream(&self) -> (Vec<u8>, Vec<u8>) {
        let sizes: Vec<usize> = self.parts.iter().map(|(data, _)| data.len()).collect();
        let mut data = vec![0u8; sizes.iter().sum()];
        fill_pieces(&mut data, &sizes, |p, piece| {
            piece.copy_from_slice(&self.parts[p].0)
        });
        let mut offsets = Vec::with_capacity(self.count() * 8);
        let mut base = 0;
        for (part, ends) in &self.parts {
            let mut start = base;
            for end in ends {
                offsets.extend_from_slice(&(start as i64).to_le_bytes());
                start = base + end;
            }
            base += part.len();
        }
        (data, offsets)
    }

    /// ZV 0.9: the manifests as the one chunk of a `variable_length_bytes` array, in the
    /// `vlen-bytes` framing: their count, then each manifest after its length (both
    /// little-endian `u32`). `level` names the level in errors.
    pub(super) fn framed(&self, level: &str) -> Result<Vec<u8>> {
        let too_big = |what: String| Error::Blob {
            key: join(&[level, names::OBJECT_INDEX, names::MANIFESTS]),
            source: crate::layout::invalid(
                "object index",
                format!("{what} (the vlen-bytes framing holds at most u32::MAX)"),
            ),
        };
        let count = u32::try_from(self.count())
            .map_err(|_| too_big(format!("{} manifests", self.count())))?;
        let mut sizes = Vec::with_capacity(self.parts.len() + 1);
        sizes.push(4);
        for (data, ends) in &self.parts {
            let mut start = 0;
            for &end in ends {
                if u32::try_from(end - start).is_err() {
                    return Err(too_big(format!("a manifest of {} bytes", end - start)));
                }
                start = end;
            }
            sizes.push(4 * ends.len() + data.len());
        }
        let mut out = vec![0u8; sizes.iter().sum()];
        fill_pieces(&mut out, &sizes, |p, piece| {
            let Some((data, ends)) = p.checked_sub(1).map(|p| &self.parts[p]) else {
                piece.copy_from_slice(&count.to_le_bytes());
                return;
            };
            let (mut at, mut start) = (0, 0);
            for &end in ends {
                // each length was checked to fit above
                let len = (end - start) as u32;
                piece[at..at + 4].copy_from_slice(&len.to_le_bytes());
                piece[at + 4..at + 4 + end - start].copy_from_slice(&data[start..end]);
                at += 4 + end - start;
                start = end;
            }
        });
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
        let (data, offsets) = manifests.stream();
        // the two blobs at once on an object store (`io_pool::all_requests`)
        crate::io_pool::all_requests(
            self.blobs.store().as_ref(),
            vec![
                Box::new(|| {
                    self.blobs
                        .write_bytes(&join(&[&index, names::DATA]), &data, &self.codecs(8))
                }),
                Box::new(|| {
                    self.blobs.write_bytes(
                        &join(&[&index, names::OFFSETS]),
                        &offsets,
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use zv_core::codec::{ArrayBytes, ChunkRepresentation, CodecChain};
    use zv_core::data_type::{DataType, FillValue};

    /// The manifests of `refs` (object → (chunk index, fragment)) over `keys`.
    fn manifests(keys: &[ChunkKey], refs: &[Vec<(u32, u32)>]) -> Manifests {
        Manifests::build("0", refs.len(), keys, 2, |o| refs[o].iter().copied()).unwrap_or_default()
    }

    proptest! {
        /// The ZV 0.9 framing is what the `vlen-bytes` codec makes of the ZV 0.7 stream cut
        /// at its offsets, and that stream is each manifest encoded alone, one after another.
        #[test]
        fn framed_is_the_codec_framing_of_the_stream(
            refs in proptest::collection::vec(
                proptest::collection::vec((0u32..6, 0u32..40), 0..30), 0..700),
        ) {
            crate::link_plugins();
            let keys: Vec<ChunkKey> = (0..6).map(|i| ChunkKey(vec![i / 3, i % 3])).collect();
            let built = manifests(&keys, &refs);
            let (data, offsets) = built.stream();
            let mut expected = Vec::new();
            let mut starts = Vec::new();
            for r in &refs {
                starts.push(expected.len());
                let buf: Vec<(&[i64], u64)> =
                    r.iter().map(|&(c, f)| (keys[c as usize].0.as_slice(), u64::from(f))).collect();
                Manifest::encode_refs_into(&buf, &mut expected, 2).map_err(|e| TestCaseError::fail(e.to_string()))?;
            }
            prop_assert_eq!(&data, &expected);
            let stored: Vec<usize> = offsets
                .chunks_exact(8)
                .map(|b| i64::from_le_bytes(b.try_into().unwrap_or_default()) as usize)
                .collect();
            prop_assert_eq!(&stored, &starts);
            let repr = ChunkRepresentation::new(
                vec![refs.len().max(1) as u64],
                DataType::VariableLengthBytes,
                FillValue::new(Vec::new()),
            ).map_err(|e| TestCaseError::fail(e.to_string()))?;
            if refs.is_empty() {
                prop_assert_eq!(built.framed("0").map_err(|e| TestCaseError::fail(e.to_string()))?, 0u32.to_le_bytes().to_vec());
                return Ok(());
            }
            let chain = CodecChain::from_metadata(&crate::blob::vlen_codecs(&[]), &repr)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            let mut ends = starts.clone();
            ends.push(data.len());
            let encoded = chain
                .encode(ArrayBytes::Variable { data: data.clone().into(), offsets: ends.into() })
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            let framed = built.framed("0").map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(framed, encoded.into_owned());
        }
    }
}
