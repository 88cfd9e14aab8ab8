//! A level's chunks read once ([`LevelScan`]): vertices, fragments, vertex attribute rows and
//! (optionally) delta-0 link rows of every chunk — or of the chunks some objects need — in
//! parallel, in key order, with a level-global vertex numbering (the chunks' rows back to
//! back). The dump, the export and object reads work from a scan.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use rayon::prelude::*;

use super::{AttributeInfo, Chunk, Level, Positions};
use crate::error::{Error, Result};
use crate::geometry::Geometry;
use crate::layout::attributes::AttributeRows;
use crate::layout::fragment_index::FragmentRows;
use crate::layout::links::LinkRows;
use crate::layout::manifest::Manifest;
use crate::metadata::ChunkKey;
use crate::names;

/// One chunk of a [`LevelScan`].
#[derive(Debug)]
pub(crate) struct ScannedChunk {
    /// Vertices and fragments.
    pub chunk: Chunk,
    /// The rows of each vertex attribute of [`LevelScan::infos`] (`None`: no blob).
    pub attributes: Vec<Option<AttributeRows>>,
    /// The delta-0 link rows, when the scan reads links (`None`: the chunk has none).
    pub links: Option<LinkRows>,
    /// Skeletons: the `(child row, parent row, link row)` triples read from `links`.
    pub parents: Vec<(u64, u64, u64)>,
    /// The level-global number of the chunk's first vertex.
    pub offset: u64,
}

impl ScannedChunk {
    /// The chunk key.
    pub(crate) fn key(&self) -> &ChunkKey {
        &self.chunk.key
    }

    /// The number of vertex rows.
    pub(crate) fn rows(&self) -> u64 {
        self.chunk.vertices.len() as u64
    }
}

/// A fast hasher for chunk coordinates (the multiply-rotate hash of rustc's `FxHasher`):
/// lookups by coordinates happen once per manifest block.
#[derive(Default)]
pub(crate) struct CoordsHasher(u64);

impl Hasher for CoordsHasher {
    fn write(&mut self, bytes: &[u8]) {
        for c in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            self.write_u64(u64::from_le_bytes(w));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x517c_c1b7_2722_0a95);
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Maps keyed by chunk coordinates.
pub(crate) type CoordsMap<K, V> = HashMap<K, V, BuildHasherDefault<CoordsHasher>>;

/// Positions of chunks by coordinates: a dense grid over the keys' bounding box when it is
/// not much larger than their number (a lookup is a few subtractions), else a hash map.
#[derive(Debug)]
enum KeyIndex {
    Dense {
        lo: Vec<i64>,
        dims: Vec<u64>,
        slots: Vec<u32>,
    },
    Hashed(CoordsMap<Vec<i64>, usize>),
}

impl KeyIndex {
    fn new(keys: &[ChunkKey]) -> Self {
        let hashed = || {
            let map = keys.iter().enumerate().map(|(i, k)| (k.0.clone(), i));
            KeyIndex::Hashed(map.collect())
        };
        let arity = keys.first().map_or(0, ChunkKey::arity);
        if keys.iter().any(|k| k.arity() != arity) || keys.len() >= u32::MAX as usize {
            return hashed();
        }
        let lo: Vec<i64> = (0..arity)
            .map(|d| keys.iter().map(|k| k.0[d]).min().unwrap_or(0))
            .collect();
        let dims: Option<Vec<u64>> = (0..arity)
            .map(|d| {
                let hi = keys.iter().map(|k| k.0[d]).max().unwrap_or(0);
                u64::try_from(i128::from(hi) - i128::from(lo[d]) + 1).ok()
            })
            .collect();
        let volume = dims.as_ref().and_then(|d| {
            d.iter()
                .try_fold(1u64, |acc, &n| acc.checked_mul(n))
                .filter(|&v| v <= 4 * keys.len() as u64 + 64)
        });
        let (Some(dims), Some(volume)) = (dims, volume) else {
            return hashed();
        };
        let mut index = KeyIndex::Dense {
            lo,
            dims,
            slots: vec![u32::MAX; volume as usize],
        };
        for (i, k) in keys.iter().enumerate() {
            if let (Some(s), KeyIndex::Dense { slots, .. }) = (index.slot(&k.0), &mut index) {
                slots[s] = i as u32;
            }
        }
        index
    }

    /// The grid slot of `coords` (dense index only).
    #[inline]
    fn slot(&self, coords: &[i64]) -> Option<usize> {
        let KeyIndex::Dense { lo, dims, .. } = self else {
            return None;
        };
        if coords.len() != lo.len() {
            return None;
        }
        let mut slot = 0u64;
        for ((&c, &l), &n) in coords.iter().zip(lo).zip(dims) {
            // from `l` up, `c - l` fits a u64 exactly
            if c < l {
                return None;
            }
            let x = (c as u64).wrapping_sub(l as u64);
            if x >= n {
                return None;
            }
            slot = slot * n + x;
        }
        usize::try_from(slot).ok()
    }

    #[inline]
    fn get(&self, coords: &[i64]) -> Option<usize> {
        match self {
            KeyIndex::Dense { slots, .. } => {
                let i = *slots.get(self.slot(coords)?)?;
                (i != u32::MAX).then_some(i as usize)
            }
            KeyIndex::Hashed(map) => map.get(coords).copied(),
        }
    }
}

/// Chunks of a level read once, in key order.
#[derive(Debug)]
pub(crate) struct LevelScan {
    /// How the vertex attributes are stored, in name order.
    pub infos: Arc<Vec<AttributeInfo>>,
    /// The chunks, in key order.
    pub chunks: Vec<ScannedChunk>,
    /// The chunk keys, in key order (the chunk table of results).
    pub keys: Arc<[ChunkKey]>,
    /// The values per position.
    ndim: usize,
    index_of: KeyIndex,
}

/// The chunk and fragment rows of one `(chunk, fragment)` reference of a manifest.
pub(crate) type FragmentRef<'a> = (&'a ScannedChunk, u64, FragmentRows<'a>);

impl LevelScan {
    /// The chunk `key`, if scanned.
    pub(crate) fn get(&self, key: &ChunkKey) -> Option<&ScannedChunk> {
        self.index(key.coords()).map(|i| &self.chunks[i])
    }

    /// The position of the chunk at `coords` in [`LevelScan::chunks`], if scanned.
    #[inline]
    pub(crate) fn index(&self, coords: &[i64]) -> Option<usize> {
        self.index_of.get(coords)
    }

    /// The level-global number of row `row` of the chunk at `coords`, if the chunk has
    /// that row.
    pub(crate) fn global(&self, coords: &[i64], row: u64) -> Option<u64> {
        let c = &self.chunks[self.index(coords)?];
        (row < c.rows()).then(|| c.offset + row)
    }

    /// The number of vertices scanned.
    pub(crate) fn total(&self) -> u64 {
        self.chunks.iter().map(ScannedChunk::rows).sum()
    }

    /// Every vertex position, in level-global order.
    pub(crate) fn positions(&self) -> Positions {
        let mut out = Positions::with_capacity(self.ndim, self.total() as usize);
        for c in &self.chunks {
            c.chunk.vertices.push_all(out.values_mut());
        }
        out
    }

    /// The fragment count of the chunk at `coords` (`None`: not scanned), as
    /// [`super::ObjectIndex::check_fragments`] takes it.
    pub(crate) fn fragments_of(&self, coords: &[i64]) -> Option<u64> {
        self.index(coords)
            .map(|i| self.chunks[i].chunk.fragments.len() as u64)
    }

    /// The chunk and fragment rows of every reference of `manifest` (object `id`), in manifest
    /// order; a reference the scan does not hold is an inconsistency of `key`. Check the
    /// manifest first ([`super::ObjectIndex::check_object`]): this expands its ranges.
    pub(crate) fn fragments(
        &self,
        manifest: &Manifest,
        id: u64,
        key: &str,
    ) -> Result<Vec<FragmentRef<'_>>> {
        manifest
            .refs()
            .map(|(coords, f)| {
                let c = self.index(coords).map(|i| &self.chunks[i]);
                let chunk_key = || ChunkKey(coords.to_vec());
                let c = c.ok_or_else(|| {
                    Error::inconsistent(
                        key,
                        format!(
                            "object {id} names chunk {}, which has no vertices",
                            chunk_key()
                        ),
                    )
                })?;
                let rows = c.chunk.fragments.get(f as usize).ok_or_else(|| {
                    Error::inconsistent(
                        key,
                        format!(
                            "object {id} names fragment {f} of chunk {}, which has {}",
                            chunk_key(),
                            c.chunk.fragments.len()
                        ),
                    )
                })?;
                Ok((c, f, rows))
            })
            .collect()
    }
}

impl Level {
    /// Reads every chunk of the level (see [`LevelScan`]), with its delta-0 link rows when
    /// `links`. A listed chunk without vertices is an error.
    pub(crate) fn scan(&self, links: bool) -> Result<LevelScan> {
        let keys = self.chunk_keys()?;
        self.scan_chunks(keys, links, |k| {
            Some(Error::Missing {
                key: self
                    .blobs
                    .missing_key(&self.p(&[names::VERTICES, &k.to_string()])),
                what: "vertices".into(),
            })
        })
    }

    /// Reads the chunks `keys` (sorted, distinct), with their delta-0 link rows (and skeleton
    /// parents) when `links`; `missing` is the error of a chunk without vertices (`None`: the
    /// chunk is left out).
    pub(crate) fn scan_chunks(
        &self,
        keys: Vec<ChunkKey>,
        links: bool,
        missing: impl Fn(&ChunkKey) -> Option<Error> + Sync,
    ) -> Result<LevelScan> {
        let infos = self.shared_vertex_attribute_infos()?;
        let width = if links { self.link_width()? } else { 2 };
        let skeleton = self.geometry == Geometry::Skeleton;
        let chunks: Vec<Option<ScannedChunk>> = self.with_store_pool(|| {
            keys.par_iter()
                .map(|k| -> Result<Option<ScannedChunk>> {
                    let Some(chunk) = self.chunk(k)? else {
                        return missing(k).map_or(Ok(None), Err);
                    };
                    let rows = chunk.vertices.len() as u64;
                    let attributes = infos
                        .iter()
                        .map(|i| self.vertex_attribute(i, k, rows))
                        .collect::<Result<Vec<_>>>()?;
                    let links = if links {
                        self.links(k, width, rows)?
                    } else {
                        None
                    };
                    let parents = match &links {
                        Some(l) if skeleton => self.skeleton_parents(k, &chunk.fragments, l)?,
                        _ => Vec::new(),
                    };
                    Ok(Some(ScannedChunk {
                        chunk,
                        attributes,
                        links,
                        parents,
                        offset: 0,
                    }))
                })
                .collect::<Result<_>>()
        })?;
        let mut chunks: Vec<ScannedChunk> = chunks.into_iter().flatten().collect();
        let keys: Vec<ChunkKey> = chunks.iter().map(|c| c.key().clone()).collect();
        let mut total = 0;
        for c in &mut chunks {
            c.offset = total;
            total += c.rows();
        }
        let index_of = KeyIndex::new(&keys);
        Ok(LevelScan {
            infos,
            chunks,
            keys: keys.into(),
            ndim: self.root.ndim(),
            index_of,
        })
    }
}
