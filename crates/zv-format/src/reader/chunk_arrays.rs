//! The per-chunk arrays of a level: their chunk keys, and the blobs of one chunk — vertices,
//! vertex fragments, link rows, link fragments and cross-level links.

use super::{blob_err, delta_name, Level, Vertices};
use crate::blob::join;
use crate::error::{Error, Result};
use crate::layout::fragment_index::FragmentIndex;
use crate::layout::links::{LinkRows, RaggedLinks};
use crate::metadata::arrays::LinksArray;
use crate::metadata::{ChunkKey, JsonObject, Layout};
use crate::names;

/// The data of one chunk.
#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    /// The chunk key.
    pub key: ChunkKey,
    /// The vertex rows.
    pub vertices: Vertices,
    /// The vertex fragments (a single range over all rows when the blob is absent).
    pub fragments: FragmentIndex,
}

impl Level {
    /// The chunk keys of a per-chunk array (`"vertices"`, `"links/0"`, …), numeric order.
    pub fn keys_of(&self, array: &str) -> Result<Vec<ChunkKey>> {
        let array = self.rows_array(array)?;
        let mut keys: Vec<ChunkKey> = self
            .blobs
            .blob_names(&self.p(&[&array]))?
            .iter()
            .filter_map(|n| n.parse::<ChunkKey>().ok())
            .filter(|k| k.arity() == self.key_arity)
            .collect();
        keys.sort();
        keys.dedup();
        Ok(keys)
    }

    /// The array holding the per-chunk rows of `array`: itself, or in a ZV 0.9 store, for
    /// `links/<d>` and `link_attributes/<name>/<d>`, their all-zero offsets segment.
    fn rows_array(&self, array: &str) -> Result<String> {
        if self.blobs.layout() != Layout::ChunkGrid {
            return Ok(array.to_owned());
        }
        if let Some(d) = array.strip_prefix("links/").and_then(super::parse_delta) {
            return self.link_rows_array(d);
        }
        let attribute = array
            .strip_prefix("link_attributes/")
            .and_then(|rest| rest.split_once('/'))
            .and_then(|(n, d)| Some((n, super::parse_delta(d)?)));
        match attribute {
            Some((name, d)) => self.link_attribute_rows_array(name, d),
            None => Ok(array.to_owned()),
        }
    }

    /// The occupied chunks (keys of `vertices`), numeric order.
    pub fn chunk_keys(&self) -> Result<Vec<ChunkKey>> {
        self.keys_of(names::VERTICES)
    }

    /// The path of the blob of chunk `key` in the per-chunk array `array` (`links/0` is
    /// `[LINKS, "0"]`).
    pub(crate) fn chunk_blob(&self, array: &[&str], key: &ChunkKey) -> String {
        let key = key.to_string();
        let mut parts = array.to_vec();
        parts.push(&key);
        self.p(&parts)
    }

    /// The store key a finding about chunk `key` of the per-chunk array `array` names: the
    /// blob's node path (ZV 0.7), or the key of the stored chunk (or shard) holding the cell
    /// (ZV 0.9; `links/<d>` is its all-zero offsets segment).
    pub(crate) fn chunk_blob_key(&self, array: &[&str], key: &ChunkKey) -> String {
        if self.blobs.layout() != Layout::ChunkGrid {
            return self.chunk_blob(array, key);
        }
        let joined = array.join("/");
        let rel = self.rows_array(&joined).unwrap_or(joined);
        match self.blobs.grid(&self.p(&[&rel])) {
            Ok(Some(grid)) => grid.cell_store_key(key),
            _ => self.chunk_blob(&[&rel], key),
        }
    }

    /// The vertices of chunk `key` (`None` if the chunk has no vertices blob). A vertex
    /// outside the chunk's box (the level's `chunk_shape` contradicts the key) is an error.
    pub fn vertices(&self, key: &ChunkKey) -> Result<Option<Vertices>> {
        let Some((v, blob)) = self.vertices_unchecked(key)? else {
            return Ok(None);
        };
        self.check_in_chunk(key, &v, &blob)?;
        Ok(Some(v))
    }

    /// [`Level::vertices`] without the in-chunk check, with the key of the decoded blob (for
    /// the validator, which checks every vertex itself and reports each one outside).
    pub(crate) fn vertices_unchecked(&self, key: &ChunkKey) -> Result<Option<(Vertices, String)>> {
        let path = self.chunk_blob(&[names::VERTICES], key);
        let Some(b) = self.blobs.read_bytes(&path)? else {
            return Ok(None);
        };
        let blob = join(&[&path, "c/0"]);
        let v = Vertices::decode(b, self.root.ndim(), self.vertex_type, &blob)?;
        Ok(Some((v, blob)))
    }

    /// Checks that the vertices `v` of chunk `key` (blob `blob`) lie in the chunk's box,
    /// `[k · chunk_shape, (k + 1) · chunk_shape)` on every axis (the spatial components of the
    /// key are its last ones), give or take the rounding of the vertex type: writers place a
    /// vertex with `floor(p / chunk_shape)`, possibly before rounding it to the stored type.
    /// One pass over the rows (their extent), then two comparisons per axis.
    pub fn check_in_chunk(&self, key: &ChunkKey, v: &Vertices, blob: &str) -> Result<()> {
        let Some((lo, hi)) = v.extent() else {
            return Ok(());
        };
        let ndim = lo.len();
        let coords = &key.coords()[key.arity().saturating_sub(ndim)..];
        let shape = self.chunk_shape();
        let axes = &self.root.axes;
        for (d, (&c, s)) in coords.iter().zip(&shape).enumerate() {
            let (a, b) = (c as f64 * s, (c as f64 + 1.0) * s);
            let tol = 4.0 * v.epsilon() * (a.abs() + b.abs()) + 1e-9 * s;
            let outside = if lo[d] < a - tol {
                Some(lo[d])
            } else if hi[d] > b + tol {
                Some(hi[d])
            } else {
                None
            };
            if let Some(x) = outside {
                let axis = axes.get(d).map_or("?", |a| a.name.as_str());
                return Err(Error::inconsistent(
                    blob,
                    format!(
                        "a vertex has {axis} = {x}, outside chunk {key} ([{a}, {b}) for chunk_shape {shape:?})"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The fragment index of a chunk, checked against its `rows`. A level without a
    /// `vertex_fragments` array has one range over all rows per chunk; in a level that has the
    /// array, a chunk without its blob is an error.
    pub fn fragments(&self, key: &ChunkKey, rows: u64) -> Result<FragmentIndex> {
        let path = self.chunk_blob(&[names::VERTEX_FRAGMENTS], key);
        let has_array = self.has_fragment_array()?;
        match self.blobs.read_bytes(&path)? {
            None if has_array => Err(Error::Missing {
                key: self.blobs.missing_key(&path),
                what: format!(
                    "the fragment index of chunk {key} (the level's other chunks have one)"
                ),
            }),
            None => FragmentIndex::consecutive(&[rows]).map_err(blob_err(path)),
            Some(b) => FragmentIndex::decode(&b, Some(rows)).map_err(|source| Error::Blob {
                key: format!(
                    "{} (chunk `{}` has {rows} vertex rows)",
                    join(&[&path, "c/0"]),
                    self.chunk_blob(&[names::VERTICES], key)
                ),
                source,
            }),
        }
    }

    /// Vertices and fragments of chunk `key`.
    pub fn chunk(&self, key: &ChunkKey) -> Result<Option<Chunk>> {
        let Some(vertices) = self.vertices(key)? else {
            return Ok(None);
        };
        let fragments = self.fragments(key, vertices.len() as u64)?;
        Ok(Some(Chunk {
            key: key.clone(),
            vertices,
            fragments,
        }))
    }

    /// The link deltas present (`links/<d>` folders), ascending.
    pub fn link_deltas(&self) -> Result<Vec<i32>> {
        self.check_v09_unread_links()?;
        self.deltas_of(names::LINKS)
    }

    /// `(link_width, dtype, attributes)` of `links/<delta>`.
    pub fn links_info(&self, delta: i32) -> Result<(usize, String, JsonObject)> {
        let group = self.p(&[names::LINKS, &delta_name(delta)]);
        let attrs = self.blobs.group_attributes(&group)?.unwrap_or_default();
        let key = join(&[&group, "zarr.json"]);
        let model = LinksArray::from_attributes(&attrs, &key)?;
        model.check(delta, &self.geometry, &key)?;
        Ok((model.link_width, model.dtype, attrs))
    }

    /// The `link_width` that `links/0` declares, not checked against the geometry (for the
    /// validator, which reports a contradiction as its own finding).
    pub(crate) fn declared_link_width(&self) -> Result<usize> {
        let group = self.p(&[names::LINKS, "0"]);
        let attrs = self.blobs.group_attributes(&group)?.unwrap_or_default();
        let key = join(&[&group, "zarr.json"]);
        Ok(LinksArray::from_attributes(&attrs, &key)?.link_width)
    }

    /// The `link_width` of `links/0` (2 without the group), read once per level.
    pub fn link_width(&self) -> Result<usize> {
        (self.cache.link_width).get_or_make(|| Ok(self.links_info(0)?.0))
    }

    /// The intra-chunk link rows of chunk `key` (delta 0), checked against the chunk's rows.
    /// A chunk may have no links; but a missing blob whose link fragment index exists is an
    /// error.
    pub fn links(&self, key: &ChunkKey, width: usize, rows: u64) -> Result<Option<LinkRows>> {
        let path = self.chunk_blob(&[&self.link_rows_array(0)?], key);
        match self.blobs.read_bytes(&path)? {
            None => {
                let lf = self.chunk_blob(&[names::LINK_FRAGMENTS], key);
                if self.blobs.node(&lf)?.is_some() {
                    return Err(Error::Missing {
                        key: self.blobs.missing_key(&path),
                        what: format!("the link rows of chunk {key} (`{lf}` exists)"),
                    });
                }
                Ok(None)
            }
            Some(b) => LinkRows::decode(&b, width, Some(rows))
                .map(Some)
                .map_err(blob_err(join(&[&path, "c/0"]))),
        }
    }

    /// The link fragment index of chunk `key` over `link_rows` rows (`None` if the level has
    /// no `link_fragments` array; a chunk missing from an existing array is an error).
    pub fn link_fragments(&self, key: &ChunkKey, link_rows: u64) -> Result<Option<FragmentIndex>> {
        let path = self.chunk_blob(&[names::LINK_FRAGMENTS], key);
        let has_array = self.has_link_fragment_array()?;
        match self.blobs.read_bytes(&path)? {
            None if link_rows > 0 && has_array => Err(Error::Missing {
                key: self.blobs.missing_key(&path),
                what: format!("the link fragment index of chunk {key} ({link_rows} link rows)"),
            }),
            None => Ok(None),
            Some(b) => FragmentIndex::decode(&b, Some(link_rows))
                .map(Some)
                .map_err(blob_err(join(&[&path, "c/0"]))),
        }
    }

    /// The cross-level ragged blob `links/<delta>/<key>` (delta ≠ 0): rows pairing chunk `key`
    /// of this level with chunk `key` of level + delta. In a ZV 0.9 store, the cell `key` of
    /// the family's all-zero segment when the two levels have the same chunk shape (else
    /// `None`: every pair is a cross-chunk record, [`Level::cross_chunk_links`]).
    pub fn cross_level_links(
        &self,
        delta: i32,
        key: &ChunkKey,
        width: usize,
    ) -> Result<Option<RaggedLinks>> {
        let array = if self.blobs.layout() == Layout::ChunkGrid {
            if !self.v09_same_keys(delta)? {
                return Ok(None);
            }
            self.link_rows_array(delta)?
        } else {
            join(&[names::LINKS, &delta_name(delta)])
        };
        let path = self.chunk_blob(&[&array], key);
        match self.blobs.read_bytes(&path)? {
            None => Ok(None),
            Some(b) => RaggedLinks::decode(&b, width)
                .map(Some)
                .map_err(blob_err(join(&[&path, "c/0"]))),
        }
    }
}
