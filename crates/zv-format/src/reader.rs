//! Reading ZV 0.7 stores: by level, chunk, object, group and bounding box.
//!
//! [`ZvStore::open`] reads the root metadata and finds the levels by listing; [`Level`] reads
//! the blobs of one level. Everything follows "read liberally" (DECISIONS.md): intermediate
//! groups without `zarr.json`, compact or pretty JSON, mixed codecs, empty `link_fragments`
//! attributes, polyline cross-chunk records with placeholder rows and `__shard_*` packs are
//! all accepted. Every failure is an [`Error`] naming the key; a corrupt blob never panics.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use zv_format::reader::ZvStore;
//! let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures/zv-0.7/graph_basic.zarr");
//! let store = ZvStore::open_url(path.to_str().unwrap())?;
//! let level = store.level(0)?;
//! let object = level.object(1)?;                      // vertices in manifest order, links
//! assert_eq!(object.vertices.len(), object.rows.len());
//! let hits = level.query_box(&[0.0, 0.0, 0.0], &[25.0, 25.0, 25.0])?; // only intersecting chunks are read
//! assert!(hits.positions.iter().all(|p| p.iter().all(|&c| (0.0..=25.0).contains(&c))));
//! # Ok(()) }
//! ```

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use rayon::prelude::*;
use serde_json::Value;
use zv_core::data_type::DataType;
use zv_core::store::Store;

use crate::blob::{join, BlobData, Blobs};
use crate::error::{Error, Result};
use crate::geometry::Geometry;
use crate::layout::attributes::{decode_present_mask, AttributeRows, DenseArray, Dictionary};
use crate::layout::cross_chunk::CrossChunkLinks;
use crate::layout::fragment_index::FragmentIndex;
use crate::layout::groups::Groups;
use crate::layout::links::{LinkRows, RaggedLinks};
use crate::layout::manifest::{decode_stream, decode_vlen_items, decode_with_offsets, Manifest};
use crate::layout::LayoutError;
use crate::metadata::{chunk_of, ChunkKey, JsonObject, LevelMetadata, RootMetadata};

/// An opened ZV store.
#[derive(Debug, Clone)]
pub struct ZvStore {
    blobs: Arc<Blobs>,
    root: Arc<RootMetadata>,
    root_attributes: JsonObject,
    level_ids: Vec<u32>,
}

impl ZvStore {
    /// Opens the ZV store at the root of `store`: reads the root `zarr.json` and lists the
    /// level groups (children named by integers).
    pub fn open(store: Arc<dyn Store>) -> Result<Self> {
        crate::link_plugins();
        let blobs = Blobs::new(store);
        let root_attributes = blobs.group_attributes("")?.ok_or_else(|| Error::Missing {
            key: "zarr.json".into(),
            what: "root group (not a Zarr v3 hierarchy)".into(),
        })?;
        let root = RootMetadata::from_attributes(&root_attributes, "zarr.json")?;
        let mut level_ids: Vec<u32> = blobs
            .children("")?
            .iter()
            .filter(|c| !c.is_empty() && c.bytes().all(|b| b.is_ascii_digit()))
            .filter_map(|c| c.parse().ok())
            .collect();
        level_ids.sort_unstable();
        if level_ids.is_empty() {
            return Err(Error::Missing {
                key: "0/zarr.json".into(),
                what: "level 0 (the store has no level groups)".into(),
            });
        }
        Ok(Self {
            blobs: Arc::new(blobs),
            root: Arc::new(root),
            root_attributes,
            level_ids,
        })
    }

    /// Opens a store by URL or path (`file://…`, a plain path, `memory://…`).
    pub fn open_url(url: &str) -> Result<Self> {
        crate::link_plugins();
        Self::open(zv_core::plugin::open_store(url)?)
    }

    /// The root metadata.
    pub fn root(&self) -> &RootMetadata {
        &self.root
    }

    /// The root group's attributes, verbatim.
    pub fn root_attributes(&self) -> &JsonObject {
        &self.root_attributes
    }

    /// The levels present, ascending.
    pub fn level_ids(&self) -> &[u32] {
        &self.level_ids
    }

    /// The store's geometry (`geometry_types[0]`, point cloud if none).
    pub fn geometry(&self) -> Geometry {
        self.root
            .geometry_types
            .first()
            .map_or(Geometry::PointCloud, |g| Geometry::parse(g))
    }

    /// The blob reader.
    pub fn blobs(&self) -> &Arc<Blobs> {
        &self.blobs
    }

    /// Opens level `id`.
    pub fn level(&self, id: u32) -> Result<Level> {
        if !self.level_ids.contains(&id) {
            return Err(Error::Missing {
                key: format!("{id}/zarr.json"),
                what: format!("level {id} (levels: {:?})", self.level_ids),
            });
        }
        Level::open(self.blobs.clone(), self.root.clone(), id, self.geometry())
    }
}

/// Vertex rows of one chunk (little-endian values of the level's vertex data type).
#[derive(Debug, Clone, PartialEq)]
pub struct Vertices {
    ndim: usize,
    data_type: DataType,
    bytes: Vec<u8>,
}

impl Vertices {
    /// Rows from the decoded blob; the length must be whole rows of `ndim` values.
    pub fn decode(bytes: Vec<u8>, ndim: usize, data_type: DataType, key: &str) -> Result<Self> {
        if bytes.starts_with(b"DRACO") {
            return Err(Error::Unsupported {
                key: key.to_owned(),
                what: "Draco-encoded vertices (this build reads raw vertices only)".into(),
            });
        }
        let row = ndim * data_type.size().unwrap_or(4);
        if row == 0 || bytes.len() % row != 0 {
            return Err(Error::Blob {
                key: key.to_owned(),
                source: LayoutError::Invalid {
                    what: "vertices",
                    reason: format!(
                        "{} bytes are not whole rows of {ndim} × {data_type}",
                        bytes.len()
                    ),
                },
            });
        }
        Ok(Self {
            ndim,
            data_type,
            bytes,
        })
    }

    /// The number of rows.
    pub fn len(&self) -> usize {
        self.bytes.len() / (self.ndim * self.data_type.size().unwrap_or(4)).max(1)
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The value count per row.
    pub fn ndim(&self) -> usize {
        self.ndim
    }

    /// The element data type.
    pub fn data_type(&self) -> DataType {
        self.data_type
    }

    /// The decoded payload size.
    pub fn byte_len(&self) -> usize {
        self.bytes.len()
    }

    /// The little-endian bytes of row `i`.
    pub fn row_bytes(&self, i: usize) -> Option<&[u8]> {
        let w = self.ndim * self.data_type.size().unwrap_or(4);
        self.bytes.get(i * w..(i + 1) * w)
    }

    /// Row `i` as `f64` values (exact for float16/32/64).
    pub fn row(&self, i: usize) -> Option<Vec<f64>> {
        let s = self.data_type.size().unwrap_or(4);
        let b = self.row_bytes(i)?;
        Some(
            b.chunks_exact(s)
                .map(|c| crate::layout::attributes::le_to_f64(self.data_type, c))
                .collect(),
        )
    }

    /// Every row.
    pub fn rows(&self) -> Vec<Vec<f64>> {
        (0..self.len()).filter_map(|i| self.row(i)).collect()
    }
}

/// How an attribute is stored.
#[derive(Debug, Clone, PartialEq)]
pub struct AttributeInfo {
    /// The attribute name.
    pub name: String,
    /// The stored data type.
    pub data_type: DataType,
    /// `channel_names`, if recorded.
    pub channel_names: Option<Vec<String>>,
    /// The dictionary of a categorical attribute.
    pub dictionary: Option<Dictionary>,
    /// The array group's attributes, verbatim.
    pub attributes: JsonObject,
}

impl AttributeInfo {
    /// Channels per row when recorded (`channel_names`), else `None` (inferred from sizes).
    pub fn channels(&self) -> Option<usize> {
        self.channel_names.as_ref().map(Vec::len)
    }
}

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
    /// The group's attributes, verbatim.
    pub attributes: JsonObject,
}

impl ObjectIndex {
    /// Checks every manifest block against the fragment count of its chunk, given by
    /// `fragments_of` (`None`: the chunk has no vertices), before anything expands a range;
    /// an error names `key` and the object.
    pub fn check_fragments(
        &self,
        key: &str,
        mut fragments_of: impl FnMut(&[i64]) -> Option<u64>,
    ) -> Result<()> {
        for (id, m) in self.manifests.iter().enumerate() {
            m.check_fragments(&mut fragments_of)
                .map_err(|e| Error::inconsistent(key, format!("object {id}: {e}")))?;
        }
        Ok(())
    }
}

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

/// The cross-chunk links of one delta.
#[derive(Debug, Clone, PartialEq)]
pub struct CrossChunk {
    /// The level delta.
    pub delta: i32,
    /// The records.
    pub links: CrossChunkLinks,
    /// The group's attributes, verbatim.
    pub attributes: JsonObject,
}

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

/// One object read through its manifest.
#[derive(Debug, Clone, PartialEq)]
pub struct Object {
    /// The object id.
    pub id: u64,
    /// `(chunk, fragment)` references in manifest order.
    pub fragments: Vec<(ChunkKey, u64)>,
    /// `(chunk, row)` of each vertex, in manifest order.
    pub rows: Vec<(ChunkKey, u64)>,
    /// The vertex positions, in manifest order.
    pub vertices: Vec<Vec<f64>>,
    /// Vertex attributes, row-aligned with `vertices`.
    pub vertex_attributes: BTreeMap<String, AttributeRows>,
    /// Links as indices into `vertices` (`None` for point clouds).
    pub links: Option<Vec<Vec<u64>>>,
    /// The object's row of each object attribute (`None` where `present_mask` is 0).
    pub attributes: BTreeMap<String, Option<Value>>,
}

/// The points of a bounding-box query.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BoxHits {
    /// `(chunk, row)` of each point.
    pub rows: Vec<(ChunkKey, u64)>,
    /// The positions.
    pub positions: Vec<Vec<f64>>,
    /// The requested vertex attributes, row-aligned.
    pub vertex_attributes: BTreeMap<String, AttributeRows>,
}

/// Parses a delta folder name: `"0"`, `"+N"`, `"-N"` (a leading `+` is required).
pub fn parse_delta(name: &str) -> Option<i32> {
    if name == "0" {
        return Some(0);
    }
    let (sign, digits) = match name.as_bytes().first()? {
        b'+' => (1, &name[1..]),
        b'-' => (-1, &name[1..]),
        _ => return None,
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.starts_with('0') {
        return None;
    }
    digits.parse::<i32>().ok().map(|d| sign * d)
}

/// The folder name of a delta.
pub fn delta_name(delta: i32) -> String {
    if delta > 0 {
        format!("+{delta}")
    } else {
        delta.to_string()
    }
}

fn data_type_attr(attrs: &JsonObject, key: &str, default: DataType) -> Result<DataType> {
    match attrs.get("dtype") {
        None | Some(Value::Null) => Ok(default),
        Some(Value::String(s)) => {
            let name = s.trim_start_matches(['<', '>', '|', '=']);
            let name = match name {
                "f4" => "float32",
                "f8" => "float64",
                "f2" => "float16",
                "i1" => "int8",
                "i2" => "int16",
                "i4" => "int32",
                "i8" => "int64",
                "u1" => "uint8",
                "u2" => "uint16",
                "u4" => "uint32",
                "u8" => "uint64",
                "b1" => "bool",
                other => other,
            };
            DataType::from_name(name)
                .filter(|d| !d.is_variable())
                .ok_or_else(|| Error::metadata(key, format!("unsupported dtype `{s}`")))
        }
        Some(other) => Err(Error::metadata(
            key,
            format!("dtype {other} is not a string"),
        )),
    }
}

fn shape_attr(attrs: &JsonObject) -> Option<Vec<u64>> {
    attrs
        .get("shape")?
        .as_array()?
        .iter()
        .map(Value::as_u64)
        .collect()
}

fn blob_err(key: String) -> impl FnOnce(LayoutError) -> Error {
    move |source| Error::Blob { key, source }
}

/// One level of a store.
#[derive(Debug, Clone)]
pub struct Level {
    blobs: Arc<Blobs>,
    root: Arc<RootMetadata>,
    id: u32,
    path: String,
    metadata: LevelMetadata,
    attributes: JsonObject,
    vertex_type: DataType,
    geometry: Geometry,
    key_arity: usize,
    has_fragment_array: bool,
    has_object_index: bool,
    /// The decoded object index, read once.
    object_index: Arc<std::sync::OnceLock<Option<Arc<ObjectIndex>>>>,
}

impl Level {
    fn open(
        blobs: Arc<Blobs>,
        root: Arc<RootMetadata>,
        id: u32,
        geometry: Geometry,
    ) -> Result<Self> {
        let path = id.to_string();
        let attributes = blobs.group_attributes(&path)?.unwrap_or_default();
        let metadata =
            LevelMetadata::from_attributes(&attributes, id, &root, &join(&[&path, "zarr.json"]))?;
        let vkey = join(&[&path, "vertices", "zarr.json"]);
        let vattrs = blobs
            .group_attributes(&join(&[&path, "vertices"]))?
            .unwrap_or_default();
        let vertex_type = data_type_attr(&vattrs, &vkey, DataType::Float32)?;
        if !matches!(
            vertex_type,
            DataType::Float16 | DataType::Float32 | DataType::Float64
        ) {
            return Err(Error::metadata(
                vkey,
                format!("vertex dtype {vertex_type} is not a float type"),
            ));
        }
        let key_arity = metadata.key_arity(&root);
        let has_fragment_array = blobs.exists(&join(&[&path, "vertex_fragments"]))?;
        let has_object_index = blobs.exists(&join(&[&path, "object_index"]))?;
        Ok(Self {
            blobs,
            root,
            id,
            path,
            metadata,
            attributes,
            vertex_type,
            geometry,
            key_arity,
            has_fragment_array,
            has_object_index,
            object_index: Arc::new(std::sync::OnceLock::new()),
        })
    }

    /// The level number.
    pub fn id(&self) -> u32 {
        self.id
    }

    /// The parsed level metadata.
    pub fn metadata(&self) -> &LevelMetadata {
        &self.metadata
    }

    /// The level group's attributes, verbatim.
    pub fn attributes(&self) -> &JsonObject {
        &self.attributes
    }

    /// The root metadata.
    pub fn root(&self) -> &RootMetadata {
        &self.root
    }

    /// The store's geometry.
    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// The vertex data type.
    pub fn vertex_type(&self) -> DataType {
        self.vertex_type
    }

    /// The level's chunk shape.
    pub fn chunk_shape(&self) -> Vec<f64> {
        self.metadata.effective_chunk_shape(&self.root)
    }

    /// The level's bin shape.
    pub fn bin_shape(&self) -> Vec<f64> {
        self.metadata.effective_bin_shape(&self.root)
    }

    /// The blob reader.
    pub fn blobs(&self) -> &Arc<Blobs> {
        &self.blobs
    }

    fn p(&self, parts: &[&str]) -> String {
        let mut all = vec![self.path.as_str()];
        all.extend_from_slice(parts);
        join(&all)
    }

    /// The chunk keys of a per-chunk array (`"vertices"`, `"links/0"`, …), numeric order.
    pub fn keys_of(&self, array: &str) -> Result<Vec<ChunkKey>> {
        let mut keys: Vec<ChunkKey> = self
            .blobs
            .blob_names(&self.p(&[array]))?
            .iter()
            .filter_map(|n| n.parse::<ChunkKey>().ok())
            .filter(|k| k.arity() == self.key_arity)
            .collect();
        keys.sort();
        keys.dedup();
        Ok(keys)
    }

    /// The occupied chunks (keys of `vertices`), numeric order.
    pub fn chunk_keys(&self) -> Result<Vec<ChunkKey>> {
        self.keys_of("vertices")
    }

    /// Checks that every per-chunk array only has blobs for chunks that have vertices (a
    /// deleted `vertices` blob shows up here), naming the missing key.
    pub fn check_chunk_arrays(&self) -> Result<()> {
        let vertices: std::collections::BTreeSet<ChunkKey> =
            self.chunk_keys()?.into_iter().collect();
        let mut arrays = vec![
            "vertex_fragments".to_owned(),
            "links/0".to_owned(),
            "link_fragments".to_owned(),
        ];
        arrays.extend(
            self.vertex_attribute_names()?
                .iter()
                .map(|n| format!("vertex_attributes/{n}")),
        );
        for name in self.link_attribute_names()? {
            arrays.push(format!("link_attributes/{name}/0"));
        }
        for a in arrays {
            for k in self.keys_of(&a)? {
                if !vertices.contains(&k) {
                    return Err(Error::Missing {
                        key: self.p(&["vertices", &k.to_string(), "zarr.json"]),
                        what: format!(
                            "the vertices of chunk {k} (`{}` has a blob for it)",
                            self.p(&[&a, &k.to_string()])
                        ),
                    });
                }
            }
        }
        Ok(())
    }

    /// The names of the child folders of an array group (attribute names, deltas, …).
    pub fn children_of(&self, array: &str) -> Result<Vec<String>> {
        self.blobs.children(&self.p(&[array]))
    }

    /// The vertices of chunk `key` (`None` if the chunk has no vertices blob).
    pub fn vertices(&self, key: &ChunkKey) -> Result<Option<Vertices>> {
        let path = self.p(&["vertices", &key.to_string()]);
        match self.blobs.read_bytes(&path)? {
            None => Ok(None),
            Some(b) => Vertices::decode(
                b,
                self.root.ndim(),
                self.vertex_type,
                &join(&[&path, "c/0"]),
            )
            .map(Some),
        }
    }

    /// The fragment index of a chunk, checked against its `rows`. A level without a
    /// `vertex_fragments` array has one range over all rows per chunk; in a level that has the
    /// array, a chunk without its blob is an error.
    pub fn fragments(&self, key: &ChunkKey, rows: u64) -> Result<FragmentIndex> {
        let path = self.p(&["vertex_fragments", &key.to_string()]);
        match self.blobs.read_bytes(&path)? {
            None if self.has_fragment_array => Err(Error::Missing {
                key: join(&[&path, "zarr.json"]),
                what: format!(
                    "the fragment index of chunk {key} (the level's other chunks have one)"
                ),
            }),
            None => FragmentIndex::consecutive(&[rows]).map_err(blob_err(path)),
            Some(b) => FragmentIndex::decode(&b, Some(rows)).map_err(|source| Error::Blob {
                key: format!(
                    "{} (chunk `{}` has {rows} vertex rows)",
                    join(&[&path, "c/0"]),
                    self.p(&["vertices", &key.to_string()])
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

    /// Reads the typed rows of an attribute blob at `path` that belongs to `rows` rows; a
    /// missing blob is `None`, or an error naming `required` when given.
    fn attribute_blob(
        &self,
        path: &str,
        info: &AttributeInfo,
        rows: u64,
        required: Option<String>,
    ) -> Result<Option<AttributeRows>> {
        match (self.blobs.read_bytes(path)?, required) {
            (None, Some(what)) => Err(Error::Missing {
                key: join(&[path, "zarr.json"]),
                what,
            }),
            (None, None) => Ok(None),
            (Some(b), _) => AttributeRows::decode(&b, info.data_type, rows, info.channels())
                .map(Some)
                .map_err(blob_err(join(&[path, "c/0"]))),
        }
    }

    /// The vertex attribute names (folders of `vertex_attributes/`).
    pub fn vertex_attribute_names(&self) -> Result<Vec<String>> {
        self.children_of("vertex_attributes")
    }

    fn attribute_info(&self, group: &str, name: &str) -> Result<AttributeInfo> {
        let key = join(&[group, "zarr.json"]);
        let attributes = self.blobs.group_attributes(group)?.unwrap_or_default();
        let data_type = data_type_attr(&attributes, &key, DataType::Float32)?;
        let channel_names = match attributes.get("channel_names") {
            None | Some(Value::Null) => None,
            Some(Value::Array(a)) => Some(
                a.iter()
                    .map(|v| {
                        v.as_str()
                            .map(str::to_owned)
                            .unwrap_or_else(|| v.to_string())
                    })
                    .collect(),
            ),
            Some(other) => {
                return Err(Error::metadata(
                    &key,
                    format!("channel_names {other} is not a list"),
                ))
            }
        };
        let dictionary = Dictionary::from_attributes(&attributes).map_err(blob_err(key.clone()))?;
        Ok(AttributeInfo {
            name: name.to_owned(),
            data_type,
            channel_names,
            dictionary,
            attributes,
        })
    }

    /// How vertex attribute `name` is stored.
    pub fn vertex_attribute_info(&self, name: &str) -> Result<AttributeInfo> {
        self.attribute_info(&self.p(&["vertex_attributes", name]), name)
    }

    /// The rows of vertex attribute `name` in chunk `key` (`rows` = the chunk's vertex rows);
    /// `None` if the chunk has no blob for it.
    /// A chunk with vertex rows but no blob for the attribute is an error; a chunk without
    /// rows may lack it.
    pub fn vertex_attribute(
        &self,
        info: &AttributeInfo,
        key: &ChunkKey,
        rows: u64,
    ) -> Result<Option<AttributeRows>> {
        let path = self.p(&["vertex_attributes", &info.name, &key.to_string()]);
        let required = (rows > 0).then(|| {
            format!(
                "vertex attribute `{}` for the {rows} rows of chunk {key}",
                info.name
            )
        });
        self.attribute_blob(&path, info, rows, required)
    }

    /// The fragment attribute names (folders of `fragment_attributes/`).
    pub fn fragment_attribute_names(&self) -> Result<Vec<String>> {
        self.children_of("fragment_attributes")
    }

    /// How fragment attribute `name` is stored.
    pub fn fragment_attribute_info(&self, name: &str) -> Result<AttributeInfo> {
        self.attribute_info(&self.p(&["fragment_attributes", name]), name)
    }

    /// The rows of fragment attribute `name` in chunk `key`, one per fragment of the chunk's
    /// `vertex_fragments` (`fragments` of them); `None` if the chunk has no blob for it.
    pub fn fragment_attribute(
        &self,
        info: &AttributeInfo,
        key: &ChunkKey,
        fragments: u64,
    ) -> Result<Option<AttributeRows>> {
        let path = self.p(&["fragment_attributes", &info.name, &key.to_string()]);
        self.attribute_blob(&path, info, fragments, None)
    }

    /// The link deltas present (`links/<d>` folders), ascending.
    pub fn link_deltas(&self) -> Result<Vec<i32>> {
        let mut d: Vec<i32> = self
            .children_of("links")?
            .iter()
            .filter_map(|n| parse_delta(n))
            .collect();
        d.sort_unstable();
        Ok(d)
    }

    /// `(link_width, dtype, attributes)` of `links/<delta>`.
    pub fn links_info(&self, delta: i32) -> Result<(usize, String, JsonObject)> {
        let group = self.p(&["links", &delta_name(delta)]);
        let attrs = self.blobs.group_attributes(&group)?.unwrap_or_default();
        let width = match attrs.get("link_width") {
            None | Some(Value::Null) => 2,
            Some(v) => v
                .as_u64()
                .filter(|&w| (1..=64).contains(&w))
                .ok_or_else(|| {
                    Error::metadata(
                        join(&[&group, "zarr.json"]),
                        format!("link_width {v} is invalid"),
                    )
                })? as usize,
        };
        let dtype = attrs
            .get("dtype")
            .and_then(Value::as_str)
            .unwrap_or("int64")
            .to_owned();
        Ok((width, dtype, attrs))
    }

    /// The intra-chunk link rows of chunk `key` (delta 0), checked against the chunk's rows.
    /// A chunk may have no links; but a missing blob whose link fragment index exists is an
    /// error.
    pub fn links(&self, key: &ChunkKey, width: usize, rows: u64) -> Result<Option<LinkRows>> {
        let path = self.p(&["links", "0", &key.to_string()]);
        match self.blobs.read_bytes(&path)? {
            None => {
                let lf = self.p(&["link_fragments", &key.to_string()]);
                if self.blobs.node(&lf)?.is_some() {
                    return Err(Error::Missing {
                        key: join(&[&path, "zarr.json"]),
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

    /// Whether skeleton cross-chunk records are `(parent, child)` (the spec's form, taken for
    /// stores whose `links/0` has `link_width` 1) rather than the reference's
    /// `(child, parent)` (every other store).
    pub fn skeleton_ccl_parent_first(&self) -> Result<bool> {
        Ok(self.links_info(0)?.0 == 1)
    }

    /// The explicit parents stored in chunk `key`'s `links/0` rows of a skeleton, as
    /// `(child row, parent row, link row)`. Rows of width 2 are `[child, parent]` (the reference's
    /// form). Rows of width 1 (the spec's form) are parents: the rows of link fragment `k`
    /// (at most one) give the parent of the first row of vertex fragment `k`, the other rows
    /// of a fragment having the implicit sequential parent.
    pub fn skeleton_parents(
        &self,
        key: &ChunkKey,
        fragments: &FragmentIndex,
        links: &LinkRows,
    ) -> Result<Vec<(u64, u64, u64)>> {
        let path = self.p(&["links", "0", &key.to_string()]);
        match links.link_width() {
            2 => Ok(links
                .rows()
                .enumerate()
                .map(|(i, r)| (r[0] as u64, r[1] as u64, i as u64))
                .collect()),
            1 => {
                let lf = self
                    .link_fragments(key, links.len() as u64)?
                    .ok_or_else(|| Error::Missing {
                        key: self.p(&["link_fragments", &key.to_string(), "zarr.json"]),
                        what: format!(
                            "the link fragments that tie the width-1 parent rows of `{path}` to vertex fragments"
                        ),
                    })?;
                if lf.len() != fragments.len() {
                    return Err(Error::inconsistent(
                        &path,
                        format!(
                            "{} link fragments for {} vertex fragments (width-1 parent rows need one per vertex fragment)",
                            lf.len(),
                            fragments.len()
                        ),
                    ));
                }
                let mut out = Vec::new();
                for (k, (lrows, vrows)) in lf.iter().zip(fragments.iter()).enumerate() {
                    let mut it = lrows.iter();
                    let Some(lr) = it.next() else { continue };
                    if it.next().is_some() {
                        return Err(Error::inconsistent(
                            &path,
                            format!("link fragment {k} holds more than one parent row"),
                        ));
                    }
                    let child = vrows.iter().next().ok_or_else(|| {
                        Error::inconsistent(
                            &path,
                            format!("link fragment {k} gives a parent to vertex fragment {k}, which is empty"),
                        )
                    })?;
                    let parent = links
                        .row(lr as usize)
                        .map(|r| r[0] as u64)
                        .ok_or_else(|| Error::inconsistent(&path, format!("link row {lr}")))?;
                    out.push((child, parent, lr));
                }
                Ok(out)
            }
            w => Err(Error::inconsistent(
                &path,
                format!("skeleton links have width {w} (1 or 2 expected)"),
            )),
        }
    }

    /// The link fragment index of chunk `key` over `link_rows` rows (`None` if the level has
    /// no `link_fragments` array; a chunk missing from an existing array is an error).
    pub fn link_fragments(&self, key: &ChunkKey, link_rows: u64) -> Result<Option<FragmentIndex>> {
        let path = self.p(&["link_fragments", &key.to_string()]);
        match self.blobs.read_bytes(&path)? {
            None if link_rows > 0 && self.blobs.exists(&self.p(&["link_fragments"]))? => {
                Err(Error::Missing {
                    key: join(&[&path, "zarr.json"]),
                    what: format!("the link fragment index of chunk {key} ({link_rows} link rows)"),
                })
            }
            None => Ok(None),
            Some(b) => FragmentIndex::decode(&b, Some(link_rows))
                .map(Some)
                .map_err(blob_err(join(&[&path, "c/0"]))),
        }
    }

    /// The cross-level ragged blob `links/<delta>/<key>` (delta ≠ 0).
    pub fn cross_level_links(
        &self,
        delta: i32,
        key: &ChunkKey,
        width: usize,
    ) -> Result<Option<RaggedLinks>> {
        let path = self.p(&["links", &delta_name(delta), &key.to_string()]);
        match self.blobs.read_bytes(&path)? {
            None => Ok(None),
            Some(b) => RaggedLinks::decode(&b, width)
                .map(Some)
                .map_err(blob_err(join(&[&path, "c/0"]))),
        }
    }

    /// Link attribute names (folders of `link_attributes/`).
    pub fn link_attribute_names(&self) -> Result<Vec<String>> {
        self.children_of("link_attributes")
    }

    /// How link attribute `name` of `delta` is stored.
    pub fn link_attribute_info(&self, name: &str, delta: i32) -> Result<AttributeInfo> {
        self.attribute_info(
            &self.p(&["link_attributes", name, &delta_name(delta)]),
            name,
        )
    }

    /// The values of a link attribute for the `rows` link rows of chunk `key` (a chunk with
    /// link rows but no blob is an error).
    pub fn link_attribute(
        &self,
        info: &AttributeInfo,
        delta: i32,
        key: &ChunkKey,
        rows: u64,
    ) -> Result<Option<AttributeRows>> {
        let path = self.p(&[
            "link_attributes",
            &info.name,
            &delta_name(delta),
            &key.to_string(),
        ]);
        let required = (rows > 0).then(|| {
            format!(
                "link attribute `{}` for the {rows} link rows of chunk {key}",
                info.name
            )
        });
        self.attribute_blob(&path, info, rows, required)
    }

    /// The object index, or `None` if the level has none. With the identity convention (a
    /// single-chunk store without `object_index/`), object `i` is fragment `i` of that chunk.
    pub fn object_index(&self) -> Result<Option<ObjectIndex>> {
        Ok(self.shared_object_index()?.map(|i| (*i).clone()))
    }

    /// The object index, decoded on first use and shared by later calls.
    pub fn shared_object_index(&self) -> Result<Option<Arc<ObjectIndex>>> {
        if let Some(cached) = self.object_index.get() {
            return Ok(cached.clone());
        }
        let index = self.read_object_index()?.map(Arc::new);
        let _ = self.object_index.set(index.clone());
        Ok(index)
    }

    fn read_object_index(&self) -> Result<Option<ObjectIndex>> {
        let group = self.p(&["object_index"]);
        let key = join(&[&group, "zarr.json"]);
        let Some(attributes) = self.blobs.group_attributes(&group)? else {
            if self.root.object_index_convention == "identity" {
                return self.identity_index().map(Some);
            }
            return Ok(None);
        };
        let num_objects = attributes
            .get("num_objects")
            .and_then(Value::as_u64)
            .ok_or_else(|| Error::metadata(&key, "object_index has no integer `num_objects`"))?;
        let sid_ndim = match attributes.get("sid_ndim") {
            None | Some(Value::Null) => self.key_arity,
            Some(v) => v
                .as_u64()
                .filter(|&n| n <= 64)
                .ok_or_else(|| Error::metadata(&key, format!("sid_ndim {v} is invalid")))?
                as usize,
        };
        let layout = attributes
            .get("layout")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let n = usize::try_from(num_objects)
            .map_err(|_| Error::metadata(&key, "num_objects is too large"))?;
        let manifests_path = join(&[&group, "manifests"]);
        let data_path = join(&[&group, "data"]);
        let manifests = if let Some(blob) = self.blobs.read(&manifests_path)? {
            let BlobData::Elements(items) = blob else {
                return Err(Error::metadata(
                    join(&[&manifests_path, "zarr.json"]),
                    "manifests must be variable_length_bytes",
                ));
            };
            decode_vlen_items(items.iter().map(Vec::as_slice), n, sid_ndim)
                .map_err(blob_err(manifests_path))?
        } else if let Some(data) = self.blobs.read_bytes(&data_path)? {
            match self.blobs.read_bytes(&join(&[&group, "offsets"]))? {
                Some(offsets) => {
                    let ms = decode_with_offsets(&data, &offsets, sid_ndim)
                        .map_err(blob_err(data_path.clone()))?;
                    if ms.len() != n {
                        return Err(Error::inconsistent(
                            &data_path,
                            format!("{} manifests, num_objects is {n}", ms.len()),
                        ));
                    }
                    ms
                }
                None => decode_stream(&data, sid_ndim, Some(n)).map_err(blob_err(data_path))?,
            }
        } else if n == 0 {
            Vec::new()
        } else {
            return Err(Error::Missing {
                key: join(&[&manifests_path, "zarr.json"]),
                what: format!("object manifests for {n} objects (neither `manifests` nor `data`)"),
            });
        };
        Ok(Some(ObjectIndex {
            num_objects,
            sid_ndim,
            layout,
            manifests,
            attributes,
        }))
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
            attributes: JsonObject::new(),
        })
    }

    fn dense_attributes(
        &self,
        container: &str,
        with_mask: bool,
    ) -> Result<BTreeMap<String, DenseAttribute>> {
        let mut out = BTreeMap::new();
        for name in self.children_of(container)? {
            let group = self.p(&[container, &name]);
            let key = join(&[&group, "zarr.json"]);
            let attributes = self.blobs.group_attributes(&group)?.unwrap_or_default();
            let data_type = data_type_attr(&attributes, &key, DataType::Float64)?;
            let data_path = join(&[&group, "data"]);
            let data = self.blobs.require_bytes(&data_path, "attribute data")?;
            let shape = match shape_attr(&attributes) {
                Some(s) => s,
                None => vec![(data.len() / data_type.size().unwrap_or(1)) as u64],
            };
            let values = DenseArray::decode(&data, data_type, &shape)
                .map_err(blob_err(join(&[&data_path, "c/0"])))?;
            let present_mask = if with_mask {
                let mp = join(&[&group, "present_mask"]);
                let expected =
                    attributes.get("has_present_mask").and_then(Value::as_bool) == Some(true);
                match self.blobs.read_bytes(&mp)? {
                    None if expected => {
                        return Err(Error::Missing {
                            key: join(&[&mp, "zarr.json"]),
                            what: "present_mask (the attribute says has_present_mask: true)".into(),
                        })
                    }
                    None => None,
                    Some(b) => Some(
                        decode_present_mask(&b, shape.first().copied().unwrap_or(0))
                            .map_err(blob_err(join(&[&mp, "c/0"])))?,
                    ),
                }
            } else {
                None
            };
            let dictionary = Dictionary::from_attributes(&attributes).map_err(blob_err(key))?;
            out.insert(
                name.clone(),
                DenseAttribute {
                    name,
                    data_type,
                    shape,
                    values,
                    present_mask,
                    dictionary,
                    attributes,
                },
            );
        }
        Ok(out)
    }

    /// The object attributes (with `present_mask` where stored).
    pub fn object_attributes(&self) -> Result<BTreeMap<String, DenseAttribute>> {
        self.dense_attributes("object_attributes", true)
    }

    /// The group attributes.
    pub fn group_attributes(&self) -> Result<BTreeMap<String, DenseAttribute>> {
        self.dense_attributes("group_attributes", false)
    }

    /// The groups (`None` if the level has none).
    pub fn groups(&self) -> Result<Option<Groups>> {
        let group = self.p(&["groups"]);
        if self.blobs.group_attributes(&group)?.is_none() && !self.blobs.exists(&group)? {
            return Ok(None);
        }
        let data_path = join(&[&group, "data"]);
        let data = self.blobs.read_bytes(&data_path)?;
        let offsets = self.blobs.read_bytes(&join(&[&group, "offsets"]))?;
        match (data, offsets) {
            (Some(d), Some(o)) => Groups::decode(&d, &o)
                .map(Some)
                .map_err(blob_err(data_path)),
            (None, None) => Ok(Some(Groups::default())),
            (Some(_), None) => Err(Error::Missing {
                key: join(&[&group, "offsets", "zarr.json"]),
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
        let groups = self.groups()?.ok_or_else(|| Error::Missing {
            key: self.p(&["groups", "zarr.json"]),
            what: "groups".into(),
        })?;
        groups.members.get(gid).cloned().ok_or_else(|| {
            Error::InvalidInput(format!(
                "group {gid} does not exist ({} groups)",
                groups.len()
            ))
        })
    }

    /// The cross-chunk link deltas present, ascending.
    pub fn cross_chunk_deltas(&self) -> Result<Vec<i32>> {
        let mut d: Vec<i32> = self
            .children_of("cross_chunk_links")?
            .iter()
            .filter_map(|n| parse_delta(n))
            .collect();
        d.sort_unstable();
        Ok(d)
    }

    /// The cross-chunk link records of `delta` (`None` if there is no such group).
    pub fn cross_chunk_links(&self, delta: i32) -> Result<Option<CrossChunk>> {
        let group = self.p(&["cross_chunk_links", &delta_name(delta)]);
        let key = join(&[&group, "zarr.json"]);
        let attributes = match self.blobs.group_attributes(&group)? {
            Some(a) => a,
            None if self.blobs.exists(&group)? => JsonObject::new(),
            None => return Ok(None),
        };
        let width = match attributes.get("link_width") {
            None | Some(Value::Null) => 2,
            Some(v) => v
                .as_u64()
                .filter(|&w| (1..=64).contains(&w))
                .ok_or_else(|| Error::metadata(&key, format!("link_width {v} is invalid")))?
                as usize,
        };
        let sid = match attributes.get("sid_ndim") {
            None | Some(Value::Null) => self.key_arity,
            Some(v) => v
                .as_u64()
                .filter(|&n| n <= 64)
                .ok_or_else(|| Error::metadata(&key, format!("sid_ndim {v} is invalid")))?
                as usize,
        };
        let data_path = join(&[&group, "data"]);
        let data = self.blobs.read_bytes(&data_path)?;
        let num_links = match attributes.get("num_links") {
            Some(v) => v
                .as_u64()
                .ok_or_else(|| Error::metadata(&key, format!("num_links {v} is invalid")))?,
            // num_links is optional: derive it from the data length
            None => {
                let rec = (width * (sid + 1) * 8) as u64;
                data.as_ref().map_or(0, |d| d.len() as u64 / rec)
            }
        };
        let links = match data {
            Some(d) => CrossChunkLinks::decode(&d, num_links, width, sid)
                .map_err(blob_err(join(&[&data_path, "c/0"])))?,
            None if num_links == 0 => CrossChunkLinks::new(width, sid),
            None => {
                return Err(Error::Missing {
                    key: join(&[&data_path, "zarr.json"]),
                    what: format!("cross-chunk link data for {num_links} links"),
                })
            }
        };
        Ok(Some(CrossChunk {
            delta,
            links,
            attributes,
        }))
    }

    /// The cross-chunk link attribute names (folders of `cross_chunk_link_attributes/`).
    pub fn cross_chunk_link_attribute_names(&self) -> Result<Vec<String>> {
        self.children_of("cross_chunk_link_attributes")
    }

    /// The values of cross-chunk link attribute `name` for the records of `delta` (one row
    /// per record; the row count must equal the records' `num_links`).
    pub fn cross_chunk_link_attribute(
        &self,
        name: &str,
        delta: i32,
    ) -> Result<Option<AttributeRows>> {
        let group = self.p(&["cross_chunk_link_attributes", name, &delta_name(delta)]);
        let info = self.attribute_info(&group, name)?;
        let Some(records) = self.cross_chunk_links(delta)? else {
            return Ok(None);
        };
        let data_path = join(&[&group, "data"]);
        match self.blobs.read_bytes(&data_path)? {
            None => Ok(None),
            Some(b) => AttributeRows::decode(
                &b,
                info.data_type,
                records.links.len() as u64,
                info.channels(),
            )
            .map(Some)
            .map_err(blob_err(join(&[&data_path, "c/0"]))),
        }
    }

    /// Reads object `id`: its vertices in manifest order, its attributes, and (except for
    /// point clouds) its links as indices into its vertices, including links that cross
    /// chunks. Skeleton parents are rebuilt per object: sequential within each fragment,
    /// overridden by the stored `[child, parent]` rows and cross-chunk records.
    pub fn object(&self, id: u64) -> Result<Object> {
        let index = self.shared_object_index()?.ok_or_else(|| Error::Missing {
            key: self.p(&["object_index", "zarr.json"]),
            what: "object index (the level has no objects)".into(),
        })?;
        let mut objects = self.read_objects(&index, &[id])?;
        objects
            .pop()
            .ok_or_else(|| Error::InvalidInput(format!("object {id} does not exist")))
    }

    /// Reads several objects (see [`Level::object`]).
    pub fn objects(&self, ids: &[u64]) -> Result<Vec<Object>> {
        let index = self.shared_object_index()?.ok_or_else(|| Error::Missing {
            key: self.p(&["object_index", "zarr.json"]),
            what: "object index (the level has no objects)".into(),
        })?;
        self.read_objects(&index, ids)
    }

    /// Reads the objects of group `gid`.
    pub fn group_objects(&self, gid: usize) -> Result<Vec<Object>> {
        let members = self.group_members(gid)?;
        self.objects(&members)
    }

    fn read_objects(&self, index: &ObjectIndex, ids: &[u64]) -> Result<Vec<Object>> {
        let okey = self.p(&["object_index", "zarr.json"]);
        for &id in ids {
            if id >= index.num_objects {
                return Err(Error::InvalidInput(format!(
                    "object {id} does not exist ({} objects)",
                    index.num_objects
                )));
            }
        }
        // The chunks the objects need, read once each, in parallel (blocks are not expanded
        // before they are checked against the chunks' fragment counts).
        let mut needed: Vec<ChunkKey> = ids
            .iter()
            .flat_map(|&id| {
                index.manifests[id as usize]
                    .blocks
                    .iter()
                    .map(|b| ChunkKey(b.chunk.clone()))
            })
            .collect();
        needed.sort();
        needed.dedup();
        let attr_names = self.vertex_attribute_names()?;
        let infos: Vec<AttributeInfo> = attr_names
            .iter()
            .map(|n| self.vertex_attribute_info(n))
            .collect::<Result<_>>()?;
        let explicit = self.geometry.has_explicit_links();
        let link_width = if explicit { self.links_info(0)?.0 } else { 2 };
        let loaded: Vec<(ChunkKey, LoadedChunk)> = needed
            .par_iter()
            .map(|k| -> Result<(ChunkKey, LoadedChunk)> {
                let chunk = self.chunk(k)?.ok_or_else(|| {
                    Error::inconsistent(
                        &okey,
                        format!("a manifest names chunk {k}, which has no vertices"),
                    )
                })?;
                let rows = chunk.vertices.len() as u64;
                let attrs = infos
                    .iter()
                    .map(|i| self.vertex_attribute(i, k, rows))
                    .collect::<Result<Vec<_>>>()?;
                let mut links = if explicit {
                    self.links(k, link_width, rows)?
                } else {
                    None
                };
                let parents = match (&links, self.geometry == Geometry::Skeleton) {
                    (Some(l), true) => {
                        let p = self.skeleton_parents(k, &chunk.fragments, l)?;
                        links = None;
                        p
                    }
                    _ => Vec::new(),
                };
                Ok((
                    k.clone(),
                    LoadedChunk {
                        chunk,
                        attrs,
                        links,
                        parents,
                    },
                ))
            })
            .collect::<Result<_>>()?;
        let loaded: HashMap<ChunkKey, LoadedChunk> = loaded.into_iter().collect();
        let ccl = if explicit {
            self.cross_chunk_links(0)?
        } else {
            None
        };
        let parent_first =
            self.geometry == Geometry::Skeleton && self.skeleton_ccl_parent_first()?;
        let object_attrs = self.object_attributes()?;
        let mut out = Vec::with_capacity(ids.len());
        for &id in ids {
            let manifest = &index.manifests[id as usize];
            manifest
                .check_fragments(|c| {
                    loaded
                        .get(&ChunkKey(c.to_vec()))
                        .map(|l| l.chunk.fragments.len() as u64)
                })
                .map_err(|m| Error::inconsistent(&okey, format!("object {id}: {m}")))?;
            let mut obj = Object {
                id,
                fragments: Vec::new(),
                rows: Vec::new(),
                vertices: Vec::new(),
                vertex_attributes: BTreeMap::new(),
                links: None,
                attributes: BTreeMap::new(),
            };
            let mut frag_spans = Vec::new();
            for (coords, f) in manifest.refs() {
                let key = ChunkKey(coords.to_vec());
                let lc = loaded
                    .get(&key)
                    .ok_or_else(|| Error::inconsistent(&okey, format!("chunk {key} missing")))?;
                let rows = lc.chunk.fragments.get(f as usize).ok_or_else(|| {
                    Error::inconsistent(
                        &okey,
                        format!(
                            "object {id} names fragment {f} of chunk {key}, which has {}",
                            lc.chunk.fragments.len()
                        ),
                    )
                })?;
                let start = obj.rows.len();
                for r in rows.iter() {
                    let v = lc.chunk.vertices.row(r as usize).ok_or_else(|| {
                        Error::inconsistent(&okey, format!("row {r} of chunk {key}"))
                    })?;
                    obj.vertices.push(v);
                    obj.rows.push((key.clone(), r));
                }
                frag_spans.push((start, obj.rows.len()));
                obj.fragments.push((key.clone(), f));
                for (info, rows_of) in infos.iter().zip(&lc.attrs) {
                    if let Some(a) = rows_of {
                        let picked = a.gather(rows.iter()).map_err(blob_err(self.p(&[
                            "vertex_attributes",
                            &info.name,
                            &key.to_string(),
                        ])))?;
                        match obj.vertex_attributes.get_mut(&info.name) {
                            Some(acc) => acc
                                .extend(&picked)
                                .map_err(blob_err(self.p(&["vertex_attributes", &info.name])))?,
                            None => {
                                obj.vertex_attributes.insert(info.name.clone(), picked);
                            }
                        }
                    }
                }
            }
            obj.links =
                self.object_links(&obj, &frag_spans, &loaded, ccl.as_ref(), parent_first)?;
            for (name, attr) in &object_attrs {
                if id as usize >= attr.values.rows.num_rows() {
                    return Err(Error::inconsistent(
                        self.p(&["object_attributes", name, "data"]),
                        format!(
                            "{} rows, none for object {id} ({} objects)",
                            attr.values.rows.num_rows(),
                            index.num_objects
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
                obj.attributes.insert(name.clone(), value);
            }
            out.push(obj);
        }
        Ok(out)
    }

    fn object_links(
        &self,
        obj: &Object,
        frag_spans: &[(usize, usize)],
        loaded: &HashMap<ChunkKey, LoadedChunk>,
        ccl: Option<&CrossChunk>,
        parent_first: bool,
    ) -> Result<Option<Vec<Vec<u64>>>> {
        let n = obj.rows.len() as u64;
        if self.geometry.is_sequential() {
            return Ok(Some((1..n).map(|i| vec![i - 1, i]).collect()));
        }
        if !self.geometry.has_explicit_links() {
            return Ok(None);
        }
        let mut local: HashMap<(&ChunkKey, u64), u64> = HashMap::new();
        for (i, (k, r)) in obj.rows.iter().enumerate() {
            local.entry((k, *r)).or_insert(i as u64);
        }
        let mut links: Vec<Vec<u64>> = Vec::new();
        let mut chunks: Vec<&ChunkKey> = obj.rows.iter().map(|(k, _)| k).collect();
        chunks.sort();
        chunks.dedup();
        for k in chunks {
            if let Some(l) = loaded.get(k) {
                for &(c, p, _) in &l.parents {
                    if let (Some(&c), Some(&p)) = (local.get(&(k, c)), local.get(&(k, p))) {
                        links.push(vec![c, p]);
                    }
                }
            }
            if let Some(rows) = loaded.get(k).and_then(|l| l.links.as_ref()) {
                for row in rows.rows() {
                    let mapped: Option<Vec<u64>> = row
                        .iter()
                        .map(|&v| local.get(&(k, v as u64)).copied())
                        .collect();
                    if let Some(m) = mapped {
                        links.push(m);
                    }
                }
            }
        }
        let before_ccl = links.len();
        if let Some(ccl) = ccl {
            let l = &ccl.links;
            for r in 0..l.len() {
                let mut mapped = Vec::with_capacity(l.link_width());
                for e in 0..l.link_width() {
                    let Some((c, row)) = l.endpoint(r, e) else {
                        break;
                    };
                    match local.get(&(&ChunkKey(c.to_vec()), row)) {
                        Some(&m) => mapped.push(m),
                        None => break,
                    }
                }
                if mapped.len() == l.link_width() {
                    links.push(mapped);
                }
            }
        }
        let ccl_links = links.len() - before_ccl;
        if self.geometry == Geometry::Skeleton {
            // [child, parent]: explicit rows override the implicit sequential parent, which
            // holds inside each fragment only.
            let mut parent: Vec<Option<u64>> = vec![None; n as usize];
            for &(a, b) in frag_spans {
                for (i, slot) in parent.iter_mut().enumerate().take(b).skip(a + 1) {
                    *slot = Some(i as u64 - 1);
                }
            }
            let ccl_from = links.len() - ccl_links;
            for (i, l) in links.iter().enumerate() {
                if let [a, b] = l.as_slice() {
                    let (child, p) = if parent_first && i >= ccl_from {
                        (b, a)
                    } else {
                        (a, b)
                    };
                    if let Some(slot) = parent.get_mut(*child as usize) {
                        *slot = Some(*p);
                    }
                }
            }
            return Ok(Some(
                parent
                    .iter()
                    .enumerate()
                    .filter_map(|(c, p)| p.map(|p| vec![c as u64, p]))
                    .collect(),
            ));
        }
        Ok(Some(links))
    }

    /// The points inside the axis-aligned box `[lo, hi]` (inclusive), with the vertex
    /// attributes named in `attributes`. Only chunks that intersect the box are read; for
    /// binned point clouds (one fragment per bin), only the bins that intersect it are
    /// scanned.
    pub fn query_box_with(&self, lo: &[f64], hi: &[f64], attributes: &[&str]) -> Result<BoxHits> {
        let ndim = self.root.ndim();
        if lo.len() != ndim
            || hi.len() != ndim
            || lo.iter().zip(hi).any(|(a, b)| {
                !matches!(
                    a.partial_cmp(b),
                    Some(std::cmp::Ordering::Less | std::cmp::Ordering::Equal)
                )
            })
        {
            return Err(Error::InvalidInput(format!(
                "box {lo:?}..{hi:?} must have {ndim} ordered bounds"
            )));
        }
        let cs = self.chunk_shape();
        let clo = chunk_of(lo, &cs);
        let chi = chunk_of(hi, &cs);
        let keys: Vec<ChunkKey> = self
            .chunk_keys()?
            .into_iter()
            .filter(|k| {
                let c = &k.coords()[k.arity() - ndim..];
                c.iter()
                    .zip(clo.iter().zip(&chi))
                    .all(|(x, (a, b))| a <= x && x <= b)
            })
            .collect();
        let infos: Vec<AttributeInfo> = attributes
            .iter()
            .map(|n| self.vertex_attribute_info(n))
            .collect::<Result<_>>()?;
        let binned = self.binned_fragments()?;
        let bin_shape = self.bin_shape();
        let per_chunk: Vec<BoxHits> = keys
            .par_iter()
            .map(|k| -> Result<BoxHits> {
                let mut hits = BoxHits::default();
                let Some(v) = self.vertices(k)? else {
                    return Ok(hits);
                };
                let rows: Vec<u64> = match &binned {
                    Some(bpc) => {
                        let frags = self.fragments(k, v.len() as u64)?;
                        let origin: Vec<f64> = k.coords()[k.arity() - ndim..]
                            .iter()
                            .zip(&cs)
                            .map(|(c, s)| *c as f64 * s)
                            .collect();
                        // fragments are bins only when there is one per bin
                        let is_bins = frags.len() as u64 == bpc.iter().product::<u64>();
                        let mut rows = Vec::new();
                        for (f, fr) in frags.iter().enumerate() {
                            if fr.is_empty()
                                || (is_bins && bin_outside(f, bpc, &origin, &bin_shape, lo, hi))
                            {
                                continue;
                            }
                            rows.extend(fr.iter());
                        }
                        rows
                    }
                    None => (0..v.len() as u64).collect(),
                };
                let mut kept = Vec::new();
                for r in rows {
                    let Some(p) = v.row(r as usize) else { continue };
                    if p.iter()
                        .zip(lo.iter().zip(hi))
                        .all(|(x, (a, b))| a <= x && x <= b)
                    {
                        kept.push(r);
                        hits.rows.push((k.clone(), r));
                        hits.positions.push(p);
                    }
                }
                for info in &infos {
                    if let Some(a) = self.vertex_attribute(info, k, v.len() as u64)? {
                        let picked =
                            a.gather(kept.iter().copied()).map_err(blob_err(self.p(&[
                                "vertex_attributes",
                                &info.name,
                                &k.to_string(),
                            ])))?;
                        hits.vertex_attributes.insert(info.name.clone(), picked);
                    }
                }
                Ok(hits)
            })
            .collect::<Result<_>>()?;
        let mut out = BoxHits::default();
        for h in per_chunk {
            out.rows.extend(h.rows);
            out.positions.extend(h.positions);
            for (name, rows) in h.vertex_attributes {
                match out.vertex_attributes.get_mut(&name) {
                    Some(acc) => acc
                        .extend(&rows)
                        .map_err(blob_err(self.p(&["vertex_attributes", &name])))?,
                    None => {
                        out.vertex_attributes.insert(name, rows);
                    }
                }
            }
        }
        Ok(out)
    }

    /// The points inside `[lo, hi]` (inclusive), without attributes.
    pub fn query_box(&self, lo: &[f64], hi: &[f64]) -> Result<BoxHits> {
        self.query_box_with(lo, hi, &[])
    }

    /// Bins per chunk when a chunk's fragments may be its bins: level 0 of an
    /// undifferentiated point cloud with more than one bin per chunk (and a bin count that
    /// fits a fragment index); else `None`. The query still checks, per chunk, that there is
    /// exactly one fragment per bin (stores may omit empty bins) before pruning by bin.
    fn binned_fragments(&self) -> Result<Option<Vec<u64>>> {
        if self.id != 0 || self.geometry != Geometry::PointCloud || self.has_object_index {
            return Ok(None);
        }
        let bpc: Vec<u64> = self
            .chunk_shape()
            .iter()
            .zip(self.bin_shape())
            .map(|(c, b)| {
                let r = (c / b).round();
                if r.is_finite() && r >= 1.0 && r <= u32::MAX as f64 {
                    r as u64
                } else {
                    0
                }
            })
            .collect();
        let product = bpc
            .iter()
            .try_fold(1u64, |acc, &b| acc.checked_mul(b).filter(|&p| p > 0));
        Ok(match product {
            Some(p) if p > 1 && p <= u32::MAX as u64 => Some(bpc),
            _ => None,
        })
    }
}

/// Whether bin `f` of a chunk (row-major local bin coordinates, last axis fastest) lies
/// entirely outside `[lo, hi]`. The bin's edges are widened by a relative tolerance: writers
/// assign bins with `floor(x / bin)`, which rounding can put one bin off the edges rebuilt
/// here (and clamps to the chunk's edge bins), so a bin is only skipped when it is clearly
/// outside; the exact point test follows.
fn bin_outside(f: usize, bpc: &[u64], origin: &[f64], bin: &[f64], lo: &[f64], hi: &[f64]) -> bool {
    let mut rest = f as u64;
    let mut local = vec![0u64; bpc.len()];
    for d in (0..bpc.len()).rev() {
        local[d] = rest % bpc[d].max(1);
        rest /= bpc[d].max(1);
    }
    if rest > 0 {
        return false; // more fragments than bins: not a bin layout, keep it
    }
    (0..bpc.len()).any(|d| {
        let a = origin[d] + local[d] as f64 * bin[d];
        let b = a + bin[d];
        let tol = 1e-9 * (a.abs() + b.abs() + bin[d].abs());
        b < lo[d] - tol || a > hi[d] + tol
    })
}

/// One chunk's data, loaded for object reads.
#[derive(Debug)]
struct LoadedChunk {
    chunk: Chunk,
    attrs: Vec<Option<AttributeRows>>,
    /// the link rows (graphs, meshes)
    links: Option<LinkRows>,
    /// skeletons: the explicit (child row, parent row, link row) triples
    parents: Vec<(u64, u64, u64)>,
}
