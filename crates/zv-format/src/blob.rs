//! Reading ZV blobs through the Zarr layer (§2.2–§2.8).
//!
//! Every ZV blob is a 1-D Zarr v3 array node (`<level>/<array>/<key>/zarr.json` plus its chunk
//! files); its bytes are decoded with whatever codecs its own `zarr.json` lists, so stores with
//! mixed codecs read fine. A blob of shape `[0]` is empty. When a blob's node is missing but its
//! array group holds the reference's `__shard_*` packs, the blob is sliced out of the pack named
//! by the pack's `shard_index` attribute.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use zv_core::codec::{ArrayBytes, ChunkRepresentation, CodecChain};
use zv_core::data_type::DataType;
use zv_core::key::{StoreKey, StorePrefix};
use zv_core::metadata::{ArrayMetadata, ExtensionMetadata, NodeMetadata};
use zv_core::store::Store;

use crate::error::{Error, Result};
use crate::metadata::JsonObject;

/// A decoded blob array: bytes (fixed-size elements, little-endian) or byte strings
/// (`variable_length_bytes`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlobData {
    /// The bytes of a fixed-size array (for ZV's `uint8` blobs, the payload).
    Bytes(Vec<u8>),
    /// The elements of a `variable_length_bytes` array.
    Elements(Vec<Vec<u8>>),
}

/// The packs of one array group: blob key → (pack path, offset, length).
type ShardIndex = HashMap<String, (String, u64, u64)>;

/// Blob access for one store, with a cache of `__shard_*` indices.
#[derive(Debug)]
pub struct Blobs {
    store: Arc<dyn Store>,
    shards: Mutex<HashMap<String, Arc<ShardIndex>>>,
}

fn key_of(path: &str) -> Result<StoreKey> {
    StoreKey::new(path).map_err(|e| Error::InvalidInput(e.to_string()))
}

fn prefix_of(path: &str) -> Result<StorePrefix> {
    if path.is_empty() {
        Ok(StorePrefix::root())
    } else {
        StorePrefix::new(format!("{}/", path.trim_end_matches('/')))
            .map_err(|e| Error::InvalidInput(e.to_string()))
    }
}

/// Joins path parts with `/`, skipping empty parts.
pub fn join(parts: &[&str]) -> String {
    parts
        .iter()
        .filter(|p| !p.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join("/")
}

impl Blobs {
    /// Blob access over `store`.
    pub fn new(store: Arc<dyn Store>) -> Self {
        Self {
            store,
            shards: Mutex::new(HashMap::new()),
        }
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// The parsed `zarr.json` at `path` (`""` for the root), or `None`.
    pub fn node(&self, path: &str) -> Result<Option<NodeMetadata>> {
        let key = key_of(&join(&[path, "zarr.json"]))?;
        match self.store.get(&key)? {
            None => Ok(None),
            Some(bytes) => NodeMetadata::from_json(&bytes)
                .map(Some)
                .map_err(|e| Error::metadata(key.as_str(), e.to_string())),
        }
    }

    /// The attributes of the group at `path`; `None` if it has no `zarr.json`. An array there
    /// is an error.
    pub fn group_attributes(&self, path: &str) -> Result<Option<JsonObject>> {
        match self.node(path)? {
            None => Ok(None),
            Some(NodeMetadata::Group(g)) => Ok(Some(g.attributes)),
            Some(NodeMetadata::Array(_)) => Err(Error::metadata(
                join(&[path, "zarr.json"]),
                "expected a group, found an array",
            )),
        }
    }

    /// The names of the child prefixes of `path` (directories, with or without `zarr.json`).
    pub fn children(&self, path: &str) -> Result<Vec<String>> {
        let listing = self.store.list_dir(&prefix_of(path)?)?;
        Ok(listing
            .prefixes
            .iter()
            .filter_map(|p| {
                p.as_str()
                    .trim_end_matches('/')
                    .rsplit('/')
                    .next()
                    .map(str::to_owned)
            })
            .collect())
    }

    /// Whether anything exists below `path`.
    pub fn exists(&self, path: &str) -> Result<bool> {
        let listing = self.store.list_dir(&prefix_of(path)?)?;
        Ok(!listing.keys.is_empty() || !listing.prefixes.is_empty())
    }

    /// Reads the array node at `path`, or `None` if there is no node there (and no pack entry).
    pub fn read(&self, path: &str) -> Result<Option<BlobData>> {
        match self.node(path)? {
            Some(NodeMetadata::Array(meta)) => self.read_array(path, &meta).map(Some),
            Some(NodeMetadata::Group(_)) => Err(Error::metadata(
                join(&[path, "zarr.json"]),
                "expected a blob array, found a group",
            )),
            None => self.read_from_shard(path),
        }
    }

    /// Reads the byte blob at `path`; `None` if absent.
    pub fn read_bytes(&self, path: &str) -> Result<Option<Vec<u8>>> {
        match self.read(path)? {
            None => Ok(None),
            Some(BlobData::Bytes(b)) => Ok(Some(b)),
            Some(BlobData::Elements(_)) => Err(Error::metadata(
                join(&[path, "zarr.json"]),
                "expected a byte blob, found variable-length elements",
            )),
        }
    }

    /// Reads the byte blob at `path`; a missing blob is an error naming `what`.
    pub fn require_bytes(&self, path: &str, what: &str) -> Result<Vec<u8>> {
        self.read_bytes(path)?.ok_or_else(|| Error::Missing {
            key: join(&[path, "zarr.json"]),
            what: what.to_owned(),
        })
    }

    fn read_array(&self, path: &str, meta: &ArrayMetadata) -> Result<BlobData> {
        let meta_key = join(&[path, "zarr.json"]);
        if meta.shape.len() != 1 {
            return Err(Error::metadata(
                &meta_key,
                format!(
                    "a blob must be a 1-D array, this one has shape {:?}",
                    meta.shape
                ),
            ));
        }
        let n = meta.shape[0];
        let cs = meta.chunk_shape()[0];
        let repr = ChunkRepresentation::new(vec![cs], meta.data_type, meta.fill_value.clone())
            .map_err(|source| Error::Codec {
                key: meta_key.clone(),
                source,
            })?;
        if let Some(t) = meta.storage_transformers.iter().find(|t| !t.may_ignore()) {
            return Err(Error::Unsupported {
                key: meta_key,
                what: format!("storage transformer `{}`", t.name),
            });
        }
        let chain =
            CodecChain::from_metadata(&meta.codecs, &repr).map_err(|source| Error::Codec {
                key: meta_key.clone(),
                source,
            })?;
        let es = meta.data_type.size();
        let nchunks = n.div_ceil(cs);
        // the decoded size is dictated by the metadata: allocate it fallibly, so that a
        // hostile shape is an error rather than an abort
        let total = es.map_or(Some(n), |es| n.checked_mul(es as u64));
        let mut bytes = Vec::new();
        let mut elements: Vec<Vec<u8>> = Vec::new();
        let reserved = match (total.and_then(|t| usize::try_from(t).ok()), es) {
            (Some(t), Some(_)) => bytes.try_reserve_exact(t).is_ok(),
            (Some(t), None) => elements.try_reserve_exact(t).is_ok(),
            (None, _) => false,
        };
        if !reserved {
            return Err(Error::inconsistent(
                &meta_key,
                format!("shape [{n}] is too large to read into memory"),
            ));
        }
        let fill = ArrayBytes::fill(&repr).map_err(|source| Error::Codec {
            key: meta_key.clone(),
            source,
        })?;
        // the element of the fill value
        let fill_element: Vec<u8> = match (&fill, es) {
            (ArrayBytes::Fixed(b), Some(es)) => b.get(..es).unwrap_or_default().to_vec(),
            (f, _) => f.element(0).unwrap_or_default().to_vec(),
        };
        let chunk_name = |i: u64| join(&[path, &meta.chunk_key_encoding.encode(&[i])]);
        // The chunks to read: with several, only those the store lists (missing chunks hold
        // the fill value, zarr-python skips writing them), so that a large sparse shape costs
        // one listing rather than a lookup per chunk.
        let stored: Vec<u64> = if nchunks > 1 {
            let mut found: Vec<u64> = self
                .store
                .list_prefix(&prefix_of(path)?)?
                .iter()
                .filter_map(|k| {
                    let digits = k.as_str().rsplit(|c: char| !c.is_ascii_digit()).next()?;
                    let i: u64 = digits.parse().ok()?;
                    (i < nchunks && chunk_name(i) == k.as_str()).then_some(i)
                })
                .collect();
            found.sort_unstable();
            found.dedup();
            found
        } else {
            (0..nchunks).collect()
        };
        let push_fill = |count: u64, bytes: &mut Vec<u8>, elements: &mut Vec<Vec<u8>>| {
            if es.is_some() {
                for _ in 0..count {
                    bytes.extend_from_slice(&fill_element);
                }
            } else {
                for _ in 0..count {
                    elements.push(fill_element.clone());
                }
            }
        };
        let mut next = 0u64; // the first chunk not yet emitted
        for i in stored {
            push_fill(
                (i * cs).min(n) - (next * cs).min(n),
                &mut bytes,
                &mut elements,
            );
            next = i + 1;
            let key = key_of(&chunk_name(i))?;
            let take = (n - i * cs).min(cs) as usize;
            let decoded = match self.store.get(&key)? {
                Some(raw) => {
                    chain
                        .decode(Cow::Owned(raw.into()))
                        .map_err(|source| Error::Codec {
                            key: key.to_string(),
                            source,
                        })?
                }
                None => {
                    push_fill(take as u64, &mut bytes, &mut elements);
                    continue;
                }
            };
            match (decoded, es) {
                (ArrayBytes::Fixed(b), Some(es)) => {
                    let part = b.get(..take * es).ok_or_else(|| {
                        Error::inconsistent(key.as_str(), "chunk shorter than its shape")
                    })?;
                    if cfg!(target_endian = "big") {
                        let w = meta.data_type.component_size().unwrap_or(1);
                        let mut le = part.to_vec();
                        if w > 1 {
                            le.chunks_exact_mut(w).for_each(<[u8]>::reverse);
                        }
                        bytes.extend_from_slice(&le);
                    } else {
                        bytes.extend_from_slice(part);
                    }
                }
                (data @ ArrayBytes::Variable { .. }, None) => {
                    for j in 0..take {
                        elements.push(data.element(j).unwrap_or_default().to_vec());
                    }
                }
                _ => {
                    return Err(Error::inconsistent(
                        key.as_str(),
                        "decoded elements do not match the data type",
                    ))
                }
            }
        }
        push_fill(n - (next * cs).min(n), &mut bytes, &mut elements);
        Ok(if meta.data_type == DataType::VariableLengthBytes {
            BlobData::Elements(elements)
        } else {
            BlobData::Bytes(bytes)
        })
    }

    /// The `__shard_*` index of the array group holding `path`, built on first use.
    fn shard_index(&self, group: &str) -> Result<Arc<ShardIndex>> {
        if let Ok(cache) = self.shards.lock() {
            if let Some(idx) = cache.get(group) {
                return Ok(idx.clone());
            }
        }
        let mut index = ShardIndex::new();
        for child in self.children(group)? {
            if !child.starts_with("__shard_") {
                continue;
            }
            let pack = join(&[group, &child]);
            let Some(NodeMetadata::Array(meta)) = self.node(&pack)? else {
                continue;
            };
            let Some(Value::Object(entries)) = meta.attributes.get("shard_index") else {
                return Err(Error::metadata(
                    join(&[&pack, "zarr.json"]),
                    "a shard pack without `shard_index`",
                ));
            };
            for (key, loc) in entries {
                let pair = loc
                    .as_array()
                    .filter(|a| a.len() == 2)
                    .and_then(|a| Some((a[0].as_u64()?, a[1].as_u64()?)));
                let (offset, len) = pair.ok_or_else(|| {
                    Error::metadata(
                        join(&[&pack, "zarr.json"]),
                        format!("shard_index entry {key}: {loc} is not [offset, nbytes]"),
                    )
                })?;
                index.insert(key.clone(), (pack.clone(), offset, len));
            }
        }
        let index = Arc::new(index);
        if let Ok(mut cache) = self.shards.lock() {
            cache.insert(group.to_owned(), index.clone());
        }
        Ok(index)
    }

    fn read_from_shard(&self, path: &str) -> Result<Option<BlobData>> {
        let Some((group, name)) = path.rsplit_once('/') else {
            return Ok(None);
        };
        // the group's packs are listed once and cached (an empty index without packs)
        let index = self.shard_index(group)?;
        let Some((pack, offset, len)) = index.get(name) else {
            return Ok(None);
        };
        let bytes = self.require_bytes(pack, "shard pack")?;
        let end = offset
            .checked_add(*len)
            .filter(|&e| e <= bytes.len() as u64)
            .ok_or_else(|| {
                Error::inconsistent(
                    join(&[pack, "zarr.json"]),
                    format!(
                        "shard_index entry {name} [{offset}, {len}] is outside the {}-byte pack",
                        bytes.len()
                    ),
                )
            })?;
        Ok(Some(BlobData::Bytes(
            bytes[*offset as usize..end as usize].to_vec(),
        )))
    }

    /// Writes a byte blob at `path` as a 1-D `uint8` array node with one chunk holding
    /// everything, encoded with `codecs` (an empty blob: shape `[0]`, chunk shape `[1]`, no
    /// chunk file). `zarr.json` is written after the chunk, so a reader never sees metadata
    /// without its data.
    pub fn write_bytes(
        &self,
        path: &str,
        bytes: &[u8],
        codecs: &[ExtensionMetadata],
    ) -> Result<()> {
        let meta_key = join(&[path, "zarr.json"]);
        let n = bytes.len() as u64;
        let meta = ArrayMetadata::new(vec![n], vec![n.max(1)], DataType::UInt8, codecs.to_vec())
            .map_err(|e| Error::metadata(&meta_key, e.to_string()))?;
        let chunk_key = key_of(&join(&[path, &meta.chunk_key_encoding.encode(&[0])]))?;
        if n == 0 {
            self.store.delete(&chunk_key)?;
        } else {
            let repr = ChunkRepresentation::new(vec![n], DataType::UInt8, meta.fill_value.clone())
                .map_err(|source| Error::Codec {
                    key: meta_key.clone(),
                    source,
                })?;
            let chain =
                CodecChain::from_metadata(&meta.codecs, &repr).map_err(|source| Error::Codec {
                    key: meta_key.clone(),
                    source,
                })?;
            let encoded = chain
                .encode(ArrayBytes::Fixed(Cow::Borrowed(bytes)))
                .map_err(|source| Error::Codec {
                    key: chunk_key.to_string(),
                    source,
                })?;
            self.store
                .set(&chunk_key, bytes::Bytes::from(encoded.into_owned()))?;
        }
        self.store.set(
            &key_of(&meta_key)?,
            bytes::Bytes::from(meta.to_json_pretty()),
        )?;
        Ok(())
    }

    /// Writes a group `zarr.json` with `attributes` at `path` (`""` for the root).
    pub fn write_group(&self, path: &str, attributes: JsonObject) -> Result<()> {
        let doc = zv_core::metadata::GroupMetadata::new(attributes);
        self.store.set(
            &key_of(&join(&[path, "zarr.json"]))?,
            bytes::Bytes::from(doc.to_json_pretty()),
        )?;
        Ok(())
    }

    /// The blob names of an array group: child nodes plus the keys packed in `__shard_*`.
    pub fn blob_names(&self, group: &str) -> Result<Vec<String>> {
        let mut names: Vec<String> = self
            .children(group)?
            .into_iter()
            .filter(|c| !c.starts_with("__shard_"))
            .collect();
        if self
            .children(group)?
            .iter()
            .any(|c| c.starts_with("__shard_"))
        {
            let index = self.shard_index(group)?;
            for k in index.keys() {
                if !names.contains(k) {
                    names.push(k.clone());
                }
            }
        }
        names.sort();
        Ok(names)
    }
}
