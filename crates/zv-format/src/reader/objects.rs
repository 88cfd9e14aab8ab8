//! Objects ([`Object`]): an object's vertices, vertex attributes, links and object attribute
//! values, read through its manifest; and the groups of objects.

use std::collections::BTreeMap;
use std::sync::Arc;

use rustc_hash::FxHashMap;
use serde_json::Value;

use rayon::prelude::*;

use super::gather::Manifests;
use super::level_scan::{CoordsMap, LevelScan};
use super::links::{Endpoints, LinkSource};
use super::raw_index::RawIndex;
use super::skeleton::fragment_parents;
use super::{blob_err, ChunkRefs, DenseAttribute, Level, ObjectIndex, Positions};
use crate::blob::join;
use crate::error::{Error, Result};
use crate::geometry::Geometry;
use crate::layout::attributes::AttributeRows;
use crate::layout::groups::Groups;
use crate::metadata::ChunkKey;
use crate::names;

/// The object index as the many-object read loads it.
enum Loaded {
    /// zv's container or ZV 0.9's, not decoded.
    Raw(RawIndex),
    /// The decoded index (another container, or an index this level decoded already).
    Decoded(Arc<ObjectIndex>),
}

/// One object read through its manifest.
#[derive(Debug, Clone, PartialEq)]
pub struct Object {
    /// The object id.
    pub id: u64,
    /// `(chunk, fragment)` references in manifest order.
    pub fragments: ChunkRefs,
    /// `(chunk, row)` of each vertex, in manifest order.
    pub rows: ChunkRefs,
    /// The vertex positions, in manifest order.
    pub vertices: Positions,
    /// Vertex attributes, row-aligned with `vertices`.
    pub vertex_attributes: BTreeMap<String, AttributeRows>,
    /// Links as indices into `vertices` (`None` for point clouds).
    pub links: Option<Vec<Vec<u64>>>,
    /// The object's row of each object attribute (`None` where `present_mask` is 0).
    pub attributes: BTreeMap<String, Option<Value>>,
}

impl Level {
    /// Reads object `id`: its vertices in manifest order, its attributes, and (except for
    /// point clouds) its links as indices into its vertices, including links that cross
    /// chunks. Skeleton parents are rebuilt per object: sequential within each fragment,
    /// overridden by the stored `[child, parent]` rows and cross-chunk records.
    pub fn object(&self, id: u64) -> Result<Object> {
        let mut objects = self.objects(&[id])?;
        objects
            .pop()
            .ok_or_else(|| Error::InvalidInput(format!("object {id} does not exist")))
    }

    /// Reads several objects (see [`Level::object`]).
    pub fn objects(&self, ids: &[u64]) -> Result<Vec<Object>> {
        let no_index = || Error::Missing {
            key: self.p(&[names::OBJECT_INDEX, "zarr.json"]),
            what: "object index (the level has no objects)".into(),
        };
        // Many objects read every chunk: the chunks are scanned while the manifests are
        // decoded. "Many" is at least half the objects the index stores, its rows, which its
        // metadata states before its manifests are read (with ZV 0.9's sparse ids, fewer than
        // the largest id).
        let rows = match self.cache.object_index.get() {
            None => self.index_model()?.map(|(_, model)| model.num_objects),
            Some(_) => None,
        };
        let many = rows.is_some_and(|n| reads_every_chunk(ids.len(), n));
        if many {
            // the index, the scan and the gathering in one section on the pool (module
            // `io_pool`; the scan's reads take the store's own pool there)
            return crate::io_pool::on_pool_thread(self.blobs.store().as_ref(), || {
                let explicit = self.geometry.has_explicit_links();
                let (index, scan) = rayon::join(
                    || -> Result<Option<Loaded>> {
                        if let Some(raw) = self.raw_object_index()? {
                            return Ok(Some(Loaded::Raw(raw)));
                        }
                        Ok(self.shared_object_index()?.map(Loaded::Decoded))
                    },
                    || self.scan_chunks(self.chunk_keys()?, explicit, |_| None),
                );
                let index = index?.ok_or_else(no_index)?;
                if let (Loaded::Raw(raw), Ok(scan)) = (&index, &scan) {
                    // the index decoded manifest by manifest; on any fault the decoded index below
                    // decides, and its errors name the fault
                    let read = self.read_scanned(Manifests::Raw(raw), ids, scan);
                    if let Ok(objects) = read {
                        return Ok(objects);
                    }
                }
                let index = match index {
                    Loaded::Decoded(index) => index,
                    Loaded::Raw(_) => self.shared_object_index()?.ok_or_else(no_index)?,
                };
                let scan = reads_every_chunk(ids.len(), index.stored_objects()).then_some(scan);
                self.read_objects(&index, ids, scan)
            });
        }
        let index = self.shared_object_index()?.ok_or_else(no_index)?;
        self.read_objects(&index, ids, None)
    }

    /// Reads the objects of group `gid`.
    pub fn group_objects(&self, gid: usize) -> Result<Vec<Object>> {
        let members = self.group_members(gid)?;
        self.objects(&members)
    }

    /// The groups (`None` if the level has none), read once per level.
    pub fn groups(&self) -> Result<Option<Groups>> {
        Ok(self.shared_groups()?.map(|g| g.as_ref().clone()))
    }

    /// The groups, read from the store.
    pub(crate) fn read_groups(&self) -> Result<Option<Groups>> {
        let group = self.p(&[names::GROUPS]);
        if self.blobs.group_attributes(&group)?.is_none() && !self.blobs.exists(&group)? {
            return Ok(None);
        }
        if self.blobs.layout() == crate::metadata::Layout::ChunkGrid {
            return self.read_groups_v09(&group).map(Some);
        }
        let data_path = join(&[&group, names::DATA]);
        let data = self.blobs.read_bytes(&data_path)?;
        let offsets = self.blobs.read_bytes(&join(&[&group, names::OFFSETS]))?;
        match (data, offsets) {
            (Some(d), Some(o)) => Groups::decode(&d, &o)
                .map(Some)
                .map_err(blob_err(data_path)),
            (None, None) => Ok(Some(Groups::default())),
            (Some(_), None) => Err(Error::Missing {
                key: join(&[&group, names::OFFSETS, "zarr.json"]),
                what: "groups offsets".into(),
            }),
            (None, Some(_)) => Err(Error::Missing {
                key: join(&[&data_path, "zarr.json"]),
                what: "groups data".into(),
            }),
        }
    }

    /// The object ids of group `gid`.
    pub fn group_members(&self, gid: usize) -> Result<Vec<u64>> {
        let groups = self.shared_groups()?.ok_or_else(|| Error::Missing {
            key: self.p(&[names::GROUPS, "zarr.json"]),
            what: "groups".into(),
        })?;
        groups.members.get(gid).cloned().ok_or_else(|| {
            Error::InvalidInput(format!(
                "group {gid} does not exist ({} groups)",
                groups.len()
            ))
        })
    }

    /// Reads objects `ids` of `index`; `scanned` is the scan of every chunk when the caller
    /// made it already (its error is returned after the ids are checked).
    fn read_objects(
        &self,
        index: &ObjectIndex,
        ids: &[u64],
        scanned: Option<Result<LevelScan>>,
    ) -> Result<Vec<Object>> {
        let okey = self.p(&[names::OBJECT_INDEX, "zarr.json"]);
        check_ids(ids, index.num_objects)?;
        // The chunks the objects need, read once each, in parallel (blocks are not expanded
        // before they are checked against the chunks' fragment counts). For many objects, the
        // level's chunks (one listing; chunks without vertices are left out, and the manifest
        // check names any a manifest needs); else the chunks their manifests name.
        let explicit = self.geometry.has_explicit_links();
        let scan = if let Some(scan) = scanned {
            scan?
        } else if reads_every_chunk(ids.len(), index.num_objects) {
            self.scan_chunks(self.chunk_keys()?, explicit, |_| None)?
        } else {
            self.scan_chunks(self.needed_chunks(index, ids), explicit, |k| {
                Some(Error::inconsistent(
                    &okey,
                    format!("a manifest names chunk {k}, which has no vertices"),
                ))
            })?
        };
        self.read_scanned(Manifests::Decoded(index), ids, &scan)
    }

    /// Reads objects `ids` (existing ids of `index`) from `scan`, which holds every chunk
    /// their manifests name.
    fn read_scanned(
        &self,
        index: Manifests<'_>,
        ids: &[u64],
        scan: &LevelScan,
    ) -> Result<Vec<Object>> {
        let num_objects = index.num_objects();
        check_ids(ids, num_objects)?;
        let links = if self.geometry.has_explicit_links() {
            Some(self.link_source()?)
        } else {
            None
        };
        let object_attrs = self.shared_object_attributes()?;
        let gathered = self.gather_objects(index, ids, scan)?;
        let objects: Vec<Result<Object>> = ids
            .par_iter()
            .zip(gathered)
            .map(|(&id, g)| {
                let mut obj = Object {
                    id,
                    fragments: g.fragments,
                    rows: g.rows,
                    vertices: g.vertices,
                    vertex_attributes: g.vertex_attributes,
                    links: None,
                    attributes: BTreeMap::new(),
                };
                obj.links = self.object_links(&obj, &g.spans, scan, links.as_deref())?;
                obj.attributes = object_attribute_values(self, id, num_objects, &object_attrs)?;
                Ok(obj)
            })
            .collect();
        // the error of the first failing object, as a sequential read would give
        objects.into_iter().collect()
    }

    /// The chunks the manifests of objects `ids` name, sorted.
    fn needed_chunks(&self, index: &ObjectIndex, ids: &[u64]) -> Vec<ChunkKey> {
        let needed = ids
            .par_chunks(
                ids.len()
                    .div_ceil(rayon::current_num_threads().max(1))
                    .max(1),
            )
            .map(|part| {
                let mut set: CoordsMap<&[i64], ()> = CoordsMap::default();
                for &id in part {
                    for b in &index.manifests[id as usize].blocks {
                        set.insert(&b.chunk, ());
                    }
                }
                set
            })
            .reduce(CoordsMap::default, |mut a, b| {
                a.extend(b);
                a
            });
        let mut needed: Vec<ChunkKey> = needed.into_keys().map(|c| ChunkKey(c.to_vec())).collect();
        needed.sort();
        needed
    }

    /// The links of `obj` as indices into its vertices (`None` for point clouds): polylines
    /// link consecutive vertices; other geometries keep the stored links whose endpoints all
    /// belong to the object; skeletons then take zv's parent rule over the object's
    /// fragments (`spans`).
    fn object_links(
        &self,
        obj: &Object,
        spans: &[(u64, u64)],
        scan: &LevelScan,
        source: Option<&LinkSource>,
    ) -> Result<Option<Vec<Vec<u64>>>> {
        let n = obj.rows.len() as u64;
        if self.geometry.is_sequential() {
            return Ok(Some((1..n).map(|i| vec![i - 1, i]).collect()));
        }
        let Some(source) = source else {
            return Ok(None);
        };
        let mut local: FxHashMap<(u32, u64), u64> = FxHashMap::default();
        for (i, (&c, &r)) in obj
            .rows
            .chunk_indices()
            .iter()
            .zip(obj.rows.numbers())
            .enumerate()
        {
            local.entry((c, r)).or_insert(i as u64);
        }
        let mut chunks: Vec<u32> = obj.rows.chunk_indices().to_vec();
        chunks.sort_unstable();
        chunks.dedup();
        let links = source.number(
            chunks.iter().map(|&c| &scan.chunks[c as usize]),
            |k, r| {
                let c = scan.index(k)? as u32;
                local.get(&(c, r)).copied()
            },
            Endpoints::Inside,
        )?;
        if self.geometry == Geometry::Skeleton {
            let parents = fragment_parents(n, spans.iter().map(|&(a, b)| a..b), &links);
            return Ok(Some(parents.iter().map(|&(c, p, _)| vec![c, p]).collect()));
        }
        Ok(Some(links.into_iter().map(|l| l.ends).collect()))
    }
}

/// Object `id`'s row of each object attribute (`None` where `present_mask` is 0); an
/// attribute with no row for the object is an error.
fn object_attribute_values(
    level: &Level,
    id: u64,
    num_objects: u64,
    attributes: &BTreeMap<String, DenseAttribute>,
) -> Result<BTreeMap<String, Option<Value>>> {
    let mut out = BTreeMap::new();
    for (name, attr) in attributes {
        if id as usize >= attr.values.rows.num_rows() {
            return Err(Error::inconsistent(
                level.p(&[names::OBJECT_ATTRIBUTES, name, names::DATA]),
                format!(
                    "{} rows, none for object {id} ({} objects)",
                    attr.values.rows.num_rows(),
                    num_objects
                ),
            ));
        }
        let present = attr
            .present_mask
            .as_ref()
            .is_none_or(|m| m.get(id as usize).copied().unwrap_or(false));
        let value = if present {
            attr.values.rows.row_json(id as usize)
        } else {
            None
        };
        out.insert(name.clone(), value);
    }
    Ok(out)
}

/// An error naming the first of `ids` that is not an object id below `num_objects`.
fn check_ids(ids: &[u64], num_objects: u64) -> Result<()> {
    match ids.iter().find(|&&id| id >= num_objects) {
        Some(&id) => Err(Error::InvalidInput(format!(
            "object {id} does not exist ({num_objects} objects)"
        ))),
        None => Ok(()),
    }
}

/// Whether reading `count` of a level's `num_objects` objects scans every chunk of the level
/// (rather than the chunks their manifests name): from half of the objects on.
fn reads_every_chunk(count: usize, num_objects: u64) -> bool {
    (count as u64).saturating_mul(2) >= num_objects
}
