//! The object index of a level ([`ObjectIndex`]): one manifest per object, read from any of
//! the three containers — the reference's vlen-bytes `manifests` array, `data` + `offsets`,
//! or a `data` stream alone — or built by the identity convention (a single-chunk store
//! without `object_index/`, where object `i` is fragment `i`).

use std::sync::Arc;

use rayon::prelude::*;

use super::{blob_err, Level};
use crate::blob::{join, BlobData};
use crate::error::{Error, Result};
use crate::layout::manifest::{
    decode_stream, decode_vlen_items, decode_with_offsets, Manifest, ManifestBlock,
};
use crate::layout::LayoutError;
use crate::metadata::arrays::{ObjectIndexArray, VLEN_MANIFESTS_V2};
use crate::metadata::JsonObject;
use crate::names;

/// The object index of a level.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectIndex {
    /// The number of objects.
    pub num_objects: u64,
    /// Chunk-coordinate arity of the manifests.
    pub sid_ndim: usize,
    /// The `layout` attribute (`vlen_manifests_v1` for the reference's container).
    pub layout: Option<String>,
    /// One manifest per object id.
    pub manifests: Vec<Manifest>,
    /// The object ids stored, ascending, when they are not `0..num_objects` (ZV 0.9's
    /// `object_index/object_ids`): ids below `num_objects` that are not listed have an empty
    /// manifest and are not objects of the level.
    pub ids: Option<Vec<u64>>,
    /// The group's attributes, verbatim.
    pub attributes: JsonObject,
}

impl ObjectIndex {
    /// Whether `id` is an object of the level (below `num_objects`, and listed in
    /// [`ObjectIndex::ids`] when the ids are sparse).
    pub fn contains(&self, id: u64) -> bool {
        match &self.ids {
            Some(ids) => ids.binary_search(&id).is_ok(),
            None => id < self.num_objects,
        }
    }

    /// How many objects the level stores: its object index's rows (the ids listed in
    /// [`ObjectIndex::ids`] when they are sparse, else `num_objects`). ZV 0.9 gives each row
    /// a dense attribute row, and 0.9.2's pyramid builder counts a level's objects so
    /// (`inherited_num_objects`).
    pub fn stored_objects(&self) -> u64 {
        self.ids
            .as_ref()
            .map_or(self.num_objects, |ids| ids.len() as u64)
    }

    /// Checks every manifest block against the fragment count of its chunk, given by
    /// `fragments_of` (`None`: the chunk has no vertices), before anything expands a range;
    /// an error names `key` and the object.
    pub fn check_fragments(
        &self,
        key: &str,
        mut fragments_of: impl FnMut(&[i64]) -> Option<u64>,
    ) -> Result<()> {
        (0..self.manifests.len() as u64)
            .try_for_each(|id| self.check_object(id, key, &mut fragments_of))
    }

    /// [`ObjectIndex::check_fragments`] for the manifest of object `id` alone (an id without
    /// a manifest has nothing to check).
    pub fn check_object(
        &self,
        id: u64,
        key: &str,
        fragments_of: impl FnMut(&[i64]) -> Option<u64>,
    ) -> Result<()> {
        let Some(m) = self.manifests.get(id as usize) else {
            return Ok(());
        };
        m.check_fragments(fragments_of)
            .map_err(|e| Error::inconsistent(key, format!("object {id}: {e}")))
    }
}

impl Level {
    /// The object index, or `None` if the level has none. With the identity convention (a
    /// single-chunk store without `object_index/`), object `i` is fragment `i` of that chunk.
    pub fn object_index(&self) -> Result<Option<ObjectIndex>> {
        Ok(self.shared_object_index()?.map(|i| (*i).clone()))
    }

    /// The object index, decoded on first use and shared by later calls.
    pub fn shared_object_index(&self) -> Result<Option<Arc<ObjectIndex>>> {
        super::cache::once(&self.cache.object_index, || {
            Ok(self.read_object_index()?.map(Arc::new))
        })
    }

    /// The object count the object index's metadata states, before its manifests are read
    /// (`None`: no index, the identity convention, or ZV 0.9's `vlen_manifests_v2`, whose
    /// count is that of its manifests).
    pub(crate) fn stated_num_objects(&self) -> Result<Option<u64>> {
        Ok(self.index_model()?.and_then(|(_, model)| {
            (model.layout.as_deref() != Some(VLEN_MANIFESTS_V2)).then_some(model.num_objects)
        }))
    }

    /// The object index group's path and its metadata (`None`: the level has no
    /// `object_index` group).
    pub(crate) fn index_model(&self) -> Result<Option<(String, ObjectIndexArray)>> {
        let group = self.p(&[names::OBJECT_INDEX]);
        let Some(attributes) = self.object_index_attributes()? else {
            return Ok(None);
        };
        let model = ObjectIndexArray::from_attributes(&attributes, &join(&[&group, "zarr.json"]))?;
        Ok(Some((group, model)))
    }

    /// The `object_index` group's attributes (`None`: no such group), read once per level:
    /// the object count, the raw and the decoded index all start from them.
    fn object_index_attributes(&self) -> Result<Option<Arc<JsonObject>>> {
        (self.cache.object_index_attributes).get_or_make(|| {
            let group = self.p(&[names::OBJECT_INDEX]);
            Ok(self.blobs.group_attributes(&group)?.map(Arc::new))
        })
    }

    fn read_object_index(&self) -> Result<Option<ObjectIndex>> {
        let group = self.p(&[names::OBJECT_INDEX]);
        let key = join(&[&group, "zarr.json"]);
        let Some(attributes) = self.object_index_attributes()? else {
            if self.root.object_index_convention == "identity" {
                return self.identity_index().map(Some);
            }
            return Ok(None);
        };
        let model = ObjectIndexArray::from_attributes(&attributes, &key)?;
        let num_objects = model.num_objects;
        let sid_ndim = model.sid_ndim.unwrap_or(self.key_arity);
        let layout = model.layout;
        let n = usize::try_from(num_objects)
            .map_err(|_| Error::metadata(&key, "num_objects is too large"))?;
        let mut manifests = self.read_manifests(&group, n, sid_ndim)?;
        let mut ids = None;
        let mut num_objects = num_objects;
        if layout.as_deref() == Some(VLEN_MANIFESTS_V2) {
            let path = join(&[&group, names::OBJECT_IDS]);
            let table = self.blobs.require_bytes(
                &path,
                "the object id of each manifest (layout vlen_manifests_v2)",
            )?;
            (manifests, ids) = super::v09::object_ids::by_id(manifests, &table, &path)?;
            num_objects = manifests.len() as u64;
        }
        Ok(Some(ObjectIndex {
            num_objects,
            sid_ndim,
            layout,
            manifests,
            ids,
            attributes: (*attributes).clone(),
        }))
    }

    /// Each stored row's object id, in row order, when the object index stores rows by id
    /// (ZV 0.9's `vlen_manifests_v2`, whose dense object-attribute rows follow the same
    /// rows); `None` for an index by id.
    pub(crate) fn object_row_ids(&self, index: &ObjectIndex) -> Result<Option<Vec<u64>>> {
        if index.layout.as_deref() != Some(VLEN_MANIFESTS_V2) {
            return Ok(None);
        }
        let path = self.p(&[names::OBJECT_INDEX, names::OBJECT_IDS]);
        let table = self.blobs.require_bytes(
            &path,
            "the object id of each manifest (layout vlen_manifests_v2)",
        )?;
        let rows = table.len() / 8;
        super::v09::object_ids::row_ids(&table, rows, &path).map(Some)
    }

    /// The number of objects (`None`: the level has no object index), without decoding the
    /// manifests: from the index's attributes, or for ZV 0.9's `vlen_manifests_v2` its
    /// largest listed id plus one (as [`ObjectIndex::num_objects`] counts them; the ids are
    /// checked for number and sign here, for repeats when the manifests are read); the
    /// identity convention, and an index this level has decoded, count its manifests.
    pub fn num_objects(&self) -> Result<Option<u64>> {
        if let Some(n) = self.stated_num_objects()? {
            return Ok(Some(n));
        }
        if self.cache.object_index.get().is_none() {
            if let Some(n) = self.listed_id_count()? {
                return Ok(Some(n));
            }
        }
        Ok(self.shared_object_index()?.map(|i| i.num_objects))
    }

    /// ZV 0.9's `vlen_manifests_v2` object count from its `object_ids` alone (`None`:
    /// another container, or no index).
    fn listed_id_count(&self) -> Result<Option<u64>> {
        let Some((group, model)) = self.index_model()? else {
            return Ok(None);
        };
        if model.layout.as_deref() != Some(VLEN_MANIFESTS_V2) {
            return Ok(None);
        }
        let path = join(&[&group, names::OBJECT_IDS]);
        let table = self.blobs.require_bytes(
            &path,
            "the object id of each manifest (layout vlen_manifests_v2)",
        )?;
        let rows = usize::try_from(model.num_objects).map_err(|_| {
            Error::metadata(join(&[&group, "zarr.json"]), "num_objects is too large")
        })?;
        let ids = super::v09::object_ids::row_ids(&table, rows, &path)?;
        Ok(Some(ids.iter().max().map_or(0, |m| m.saturating_add(1))))
    }

    /// The manifests of the object index, by id, handed to `each` a part at a time (the
    /// first id of the part and its manifests, in id order), so that they are never all
    /// decoded at once: zv's container (stream + offsets) is decoded in parts of about `part`
    /// objects, as many parts at a time as there are threads; the other containers, and an
    /// index this level has already decoded, are handed over as one part. A part starting at
    /// id 0 starts over (a fault found in the parts is named by reading the index whole).
    /// Returns the number of objects (`None`: the level has no object index); errors are
    /// those of [`Level::object_index`].
    pub(crate) fn object_index_parts(
        &self,
        part: usize,
        mut each: impl FnMut(u64, Vec<Manifest>),
    ) -> Result<Option<u64>> {
        if let Some(n) = self.decode_index_parts(part, &mut each)? {
            return Ok(Some(n));
        }
        let index = match self.cache.object_index.get() {
            Some(shared) => shared.as_deref().cloned(),
            None => self.read_object_index()?,
        };
        Ok(index.map(|i| {
            each(0, i.manifests);
            i.num_objects
        }))
    }

    /// [`Level::object_index_parts`] for zv's container when the level has not decoded the
    /// index (`None`: another container, a decoded index, or a fault, which the whole read
    /// names).
    fn decode_index_parts(
        &self,
        part: usize,
        each: &mut impl FnMut(u64, Vec<Manifest>),
    ) -> Result<Option<u64>> {
        let Some((data, offsets, sid_ndim, n)) = self.zv_container()? else {
            return Ok(None);
        };
        let parts = n.div_ceil(part.max(1)).max(1);
        Ok(decode_parts(&data, &offsets, sid_ndim, parts, each)
            .ok()
            .map(|()| n as u64))
    }

    /// The blocks of the object index whose chunk `keep` accepts, as `(object, block)` in id
    /// order, from zv's container (stream + offsets) scanned without decoding the other
    /// blocks ([`Manifest::decode_at_where`]); `None`: another container, an index this
    /// level has decoded already, or a fault (the whole read names it).
    pub(crate) fn object_index_blocks_where(
        &self,
        keep: impl Fn(&[i64]) -> bool,
    ) -> Result<Option<Vec<(u64, ManifestBlock)>>> {
        let Some((data, offsets, sid_ndim, n)) = self.zv_container()? else {
            return Ok(None);
        };
        let mut out = Vec::new();
        for (i, o) in offsets.chunks_exact(8).enumerate().take(n) {
            let mut b = [0u8; 8];
            b.copy_from_slice(o);
            let Ok(at) = usize::try_from(i64::from_le_bytes(b)) else {
                return Ok(None);
            };
            match Manifest::decode_at_where(&data, at, sid_ndim, &keep) {
                Ok((m, _)) => out.extend(m.blocks.into_iter().map(|b| (i as u64, b))),
                Err(_) => return Ok(None),
            }
        }
        Ok(Some(out))
    }

    /// zv's container of the object index, not yet decoded by this level: its stream, its
    /// offsets, the chunk-key arity and the object count (`None`: another container, no index,
    /// offsets that disagree with the count, or an index already decoded).
    #[allow(clippy::type_complexity)]
    pub(crate) fn zv_container(&self) -> Result<Option<(Vec<u8>, Vec<u8>, usize, usize)>> {
        if self.cache.object_index.get().is_some() {
            return Ok(None);
        }
        match self.index_model()? {
            Some((group, model)) => self.zv_container_of(&group, &model),
            None => Ok(None),
        }
    }

    /// [`Level::zv_container`] of the index group `group` with metadata `model`.
    #[allow(clippy::type_complexity)]
    pub(crate) fn zv_container_of(
        &self,
        group: &str,
        model: &ObjectIndexArray,
    ) -> Result<Option<(Vec<u8>, Vec<u8>, usize, usize)>> {
        if model.layout.as_deref() == Some(VLEN_MANIFESTS_V2)
            || self.blobs.exists(&join(&[group, names::MANIFESTS]))?
        {
            return Ok(None);
        }
        let sid_ndim = model.sid_ndim.unwrap_or(self.key_arity);
        let (Some(data), Some(offsets)) = (
            self.blobs.read_bytes(&join(&[group, names::DATA]))?,
            self.blobs.read_bytes(&join(&[group, names::OFFSETS]))?,
        ) else {
            return Ok(None);
        };
        let n = offsets.len() / 8;
        if n as u64 != model.num_objects || offsets.len() % 8 != 0 {
            return Ok(None);
        }
        Ok(Some((data, offsets, sid_ndim, n)))
    }

    /// The `n` manifests of the object index group `group`, from whichever container it has.
    fn read_manifests(&self, group: &str, n: usize, sid_ndim: usize) -> Result<Vec<Manifest>> {
        let manifests_path = join(&[group, names::MANIFESTS]);
        let data_path = join(&[group, names::DATA]);
        if let Some(blob) = self.blobs.read(&manifests_path)? {
            let BlobData::Elements(items) = blob else {
                return Err(Error::metadata(
                    join(&[&manifests_path, "zarr.json"]),
                    "manifests must be variable_length_bytes",
                ));
            };
            return decode_vlen_items(items.iter().map(Vec::as_slice), n, sid_ndim)
                .map_err(blob_err(manifests_path));
        }
        let Some(data) = self.blobs.read_bytes(&data_path)? else {
            if n == 0 {
                return Ok(Vec::new());
            }
            return Err(Error::Missing {
                key: join(&[&manifests_path, "zarr.json"]),
                what: format!("object manifests for {n} objects (neither `manifests` nor `data`)"),
            });
        };
        match self.blobs.read_bytes(&join(&[group, names::OFFSETS]))? {
            Some(offsets) => {
                let ms = decode_in_parts(&data, &offsets, sid_ndim)
                    .map_err(blob_err(data_path.clone()))?;
                if ms.len() != n {
                    return Err(Error::inconsistent(
                        &data_path,
                        format!("{} manifests, num_objects is {n}", ms.len()),
                    ));
                }
                Ok(ms)
            }
            None => decode_stream(&data, sid_ndim, Some(n)).map_err(blob_err(data_path)),
        }
    }

    fn identity_index(&self) -> Result<ObjectIndex> {
        let keys = self.chunk_keys()?;
        let [key] = keys.as_slice() else {
            return Err(Error::inconsistent(
                self.p(&["zarr.json"]),
                format!(
                    "the identity object index needs exactly one chunk, the level has {}",
                    keys.len()
                ),
            ));
        };
        let rows = self.vertices(key)?.map_or(0, |v| v.len() as u64);
        let frags = self.fragments(key, rows)?;
        let manifests = (0..frags.len() as u64)
            .map(|f| Manifest::from_refs(&[(key.coords().to_vec(), f)]))
            .collect();
        Ok(ObjectIndex {
            num_objects: frags.len() as u64,
            sid_ndim: key.arity(),
            layout: Some("identity".into()),
            manifests,
            ids: None,
            attributes: JsonObject::new(),
        })
    }
}

/// [`decode_with_offsets`] in parallel: the container is cut between objects into one part
/// per worker, each part decoded with its offsets made relative to its first byte. Only when
/// the cut points are in order and inside `data`, and every part decodes; otherwise (and for
/// small indices) the whole container is decoded at once, which names any fault exactly.
fn decode_in_parts(
    data: &[u8],
    offsets: &[u8],
    sid_ndim: usize,
) -> std::result::Result<Vec<Manifest>, LayoutError> {
    let n = offsets.len() / 8;
    let parts = rayon::current_num_threads().min(n / 256);
    let mut out = Vec::with_capacity(n);
    match decode_parts(data, offsets, sid_ndim, parts, &mut |_, ms| out.extend(ms)) {
        Ok(()) => Ok(out),
        Err(_) => decode_with_offsets(data, offsets, sid_ndim),
    }
}

/// The container cut between objects into `parts` parts (at least 2, else an error), each
/// decoded with its offsets made relative to its first byte, as many parts at a time as there
/// are threads, and handed to `each` in order with the id of its first object. An error when
/// the cut points are out of order or outside `data` (before any part is handed over), or a
/// part does not decode: [`decode_with_offsets`] of the whole names the fault exactly.
fn decode_parts(
    data: &[u8],
    offsets: &[u8],
    sid_ndim: usize,
    parts: usize,
    each: &mut impl FnMut(u64, Vec<Manifest>),
) -> std::result::Result<(), LayoutError> {
    let n = offsets.len() / 8;
    let whole = || crate::layout::invalid("object index offsets", "not cut into parts");
    let offset = |i: usize| -> Option<i64> {
        let b = offsets.get(i * 8..i * 8 + 8)?;
        Some(i64::from_le_bytes([
            b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
        ]))
    };
    let parts = parts.min(n);
    let bounds: Vec<usize> = (0..=parts).map(|k| k * n / parts.max(1)).collect();
    let cuts: Option<Vec<usize>> = bounds
        .iter()
        .map(|&i| match i {
            i if i == n => Some(data.len()),
            i => offset(i)
                .and_then(|o| usize::try_from(o).ok())
                .filter(|&b| b <= data.len()),
        })
        .collect();
    let cuts = cuts.filter(|c| c.first() == Some(&0) && c.windows(2).all(|w| w[0] <= w[1]));
    let (Some(cuts), true) = (cuts, parts > 1 && offsets.len() % 8 == 0) else {
        return Err(whole());
    };
    let decode = |k: usize| {
        let base = cuts[k] as i64;
        let relative: Vec<u8> = (bounds[k]..bounds[k + 1])
            .flat_map(|i| offset(i).unwrap_or(0).wrapping_sub(base).to_le_bytes())
            .collect();
        decode_with_offsets(&data[cuts[k]..cuts[k + 1]], &relative, sid_ndim)
    };
    let at_once = rayon::current_num_threads().max(1);
    for group in (0..parts).collect::<Vec<_>>().chunks(at_once) {
        let decoded: Vec<_> = group.par_iter().map(|&k| decode(k)).collect();
        for (&k, ms) in group.iter().zip(decoded) {
            each(bounds[k] as u64, ms?);
        }
    }
    Ok(())
}
