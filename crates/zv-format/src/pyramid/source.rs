//! The fine level of a step, read chunk by chunk through the reader: each row's position,
//! object and vertex attribute values.

use rustc_hash::FxHashMap;

use crate::error::Result;
use crate::layout::attributes::{AttributeRows, Dictionary};
use crate::metadata::ChunkKey;
use crate::reader::RawIndex;
use crate::reader::{AttributeInfo, Object};
use crate::Level;

/// The values of one vertex attribute in one chunk.
#[derive(Debug, Clone)]
pub(crate) enum SourceColumn {
    /// Numbers, one row per vertex.
    Numeric(AttributeRows),
    /// Categories (a dictionary attribute), one per vertex.
    Categorical(Vec<Option<String>>),
}

/// One chunk of the fine level.
#[derive(Debug)]
pub(crate) struct SourceChunk {
    /// The chunk key.
    pub(crate) key: ChunkKey,
    /// The positions, `ndim` values per row.
    pub(crate) positions: Vec<f64>,
    /// The object of each row (empty when the level has no objects; `None`: a row no
    /// manifest names, which has no metavertex).
    pub(crate) objects: Vec<Option<u64>>,
    /// The vertex attributes, in [`SourceLevel::attributes`] order.
    pub(crate) columns: Vec<SourceColumn>,
}

impl SourceChunk {
    /// The number of rows.
    pub(crate) fn rows(&self, ndim: usize) -> usize {
        self.positions.len() / ndim.max(1)
    }
}

/// Chunk coordinates → (fragment → object): a fragment several manifests name belongs to
/// the first.
type FragmentObjects = FxHashMap<Vec<i64>, FxHashMap<u64, u64>>;

/// Notes that fragment `f` of `chunk` is object `o`'s (unless an earlier object has it).
fn note(map: &mut FragmentObjects, chunk: &[i64], f: u64, o: u64) {
    let fragments = match map.get_mut(chunk) {
        Some(m) => m,
        None => map.entry(chunk.to_vec()).or_default(),
    };
    fragments.entry(f).or_insert(o);
}

/// The index `raw` inverted (as [`SourceLevel::new`] inverts a decoded one) and whether each
/// object's manifest names any fragment; `None` on any fault of the index.
fn invert_raw(raw: &RawIndex) -> Option<(FragmentObjects, Vec<bool>)> {
    let n = usize::try_from(raw.num_objects()).ok()?;
    let mut map = FragmentObjects::default();
    let mut nonempty = Vec::with_capacity(n);
    for o in 0..n as u64 {
        let mut any = false;
        raw.visit(o, |chunk, fragments| {
            for f in fragments.iter() {
                any = true;
                note(&mut map, chunk, f, o);
            }
        })
        .ok()?;
        nonempty.push(any);
    }
    Some((map, nonempty))
}

/// The fine level of a step.
pub(crate) struct SourceLevel {
    pub(crate) level: Level,
    /// Chunk coordinates → (fragment → object), when the level has an object index.
    fragment_objects: Option<FragmentObjects>,
    /// The number of objects (0 without an object index).
    pub(crate) num_objects: u64,
    /// Whether each object's manifest names any fragment.
    pub(crate) nonempty: Vec<bool>,
    /// The vertex attributes.
    pub(crate) attributes: Vec<AttributeInfo>,
}

impl SourceLevel {
    /// Opens the fine level: its object index, inverted to find each fragment's object (a
    /// fragment several manifests name belongs to the first), and its attribute schema.
    pub(crate) fn new(level: Level) -> Result<Self> {
        // zv's and ZV 0.9's index containers are inverted manifest by manifest from their
        // stored bytes, never decoded whole (a decoded block takes about 70 bytes); any fault
        // there leaves it to the decoded index below, whose errors name it
        if let Some((fragment_objects, nonempty)) =
            level.raw_object_index()?.and_then(|raw| invert_raw(&raw))
        {
            let attributes = level.vertex_attribute_infos()?;
            return Ok(Self {
                level,
                fragment_objects: Some(fragment_objects),
                num_objects: nonempty.len() as u64,
                nonempty,
                attributes,
            });
        }
        let index = level.object_index()?;
        let num_objects = index.as_ref().map_or(0, |i| i.manifests.len() as u64);
        let nonempty = index.as_ref().map_or_else(Vec::new, |i| {
            i.manifests
                .iter()
                .map(|m| m.refs().next().is_some())
                .collect()
        });
        let fragment_objects = index.map(|index| {
            let mut map = FragmentObjects::default();
            for (o, m) in index.manifests.iter().enumerate() {
                for (chunk, f) in m.refs() {
                    note(&mut map, chunk, f, o as u64);
                }
            }
            map
        });
        let attributes = level.vertex_attribute_infos()?;
        Ok(Self {
            level,
            fragment_objects,
            num_objects,
            nonempty,
            attributes,
        })
    }

    /// The fine level for reading the chunks `chunks` only (a part of a distributed build):
    /// the object index is scanned for the blocks naming those chunks, without decoding the
    /// others, and `nonempty` is left empty (a part takes the objects kept from its plan).
    /// Falls back to [`SourceLevel::new`] where the scan does not apply (another container).
    pub(crate) fn for_chunks(level: Level, chunks: &[ChunkKey]) -> Result<Self> {
        let Some(num_objects) = level.stated_num_objects()? else {
            return Self::new(level);
        };
        let wanted: rustc_hash::FxHashSet<&[i64]> = chunks.iter().map(|k| k.coords()).collect();
        let Some(blocks) = level.object_index_blocks_where(|c| wanted.contains(c))? else {
            return Self::new(level);
        };
        let mut map = FragmentObjects::default();
        for (o, b) in blocks {
            for f in b.fragments.iter() {
                note(&mut map, &b.chunk, f, o);
            }
        }
        let attributes = level.vertex_attribute_infos()?;
        Ok(Self {
            level,
            fragment_objects: Some(map),
            num_objects,
            nonempty: Vec::new(),
            attributes,
        })
    }

    /// The vertex attributes' names with their `channel_names`, in the level's order.
    pub(crate) fn columns(&self) -> Vec<(String, Option<Vec<String>>)> {
        self.attributes
            .iter()
            .map(|a| (a.name.clone(), a.channel_names.clone()))
            .collect()
    }

    /// Whether the level has objects.
    pub(crate) fn has_objects(&self) -> bool {
        self.fragment_objects.is_some()
    }

    /// Reads chunk `key` (`None`: no vertices blob).
    pub(crate) fn chunk(&self, key: &ChunkKey) -> Result<Option<SourceChunk>> {
        let Some(chunk) = self.level.chunk(key)? else {
            return Ok(None);
        };
        let rows = chunk.vertices.len();
        let mut positions = Vec::with_capacity(rows * chunk.vertices.ndim());
        chunk.vertices.push_all(&mut positions);
        let objects = match &self.fragment_objects {
            None => Vec::new(),
            Some(map) => {
                let mut objects = vec![None; rows];
                let of_chunk = map.get(key.0.as_slice());
                for (f, frag) in chunk.fragments.iter().enumerate() {
                    let Some(&o) = of_chunk.and_then(|m| m.get(&(f as u64))) else {
                        continue;
                    };
                    for r in frag.iter() {
                        if let Some(slot) = objects.get_mut(r as usize) {
                            *slot = Some(o);
                        }
                    }
                }
                objects
            }
        };
        let mut columns = Vec::with_capacity(self.attributes.len());
        for info in &self.attributes {
            let values = self
                .level
                .vertex_attribute(info, key, rows as u64)?
                .unwrap_or_else(|| AttributeRows::empty(info.data_type, 1));
            columns.push(column(info.dictionary.as_ref(), values, || {
                format!("chunk {key}")
            })?);
        }
        Ok(Some(SourceChunk {
            key: key.clone(),
            positions,
            objects,
            columns,
        }))
    }
}

impl SourceLevel {
    /// The kept objects among `ids` read through their manifests (the geometries coarsened
    /// object by object): each with its vertices as a [`SourceChunk`] in manifest order.
    pub(crate) fn objects(&self, ids: &[u64]) -> Result<Vec<(Object, SourceChunk)>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let objects = self.level.objects(ids)?;
        let mut out = Vec::with_capacity(objects.len());
        for mut obj in objects {
            let rows = obj.vertices.len();
            let mut columns = Vec::with_capacity(self.attributes.len());
            for info in &self.attributes {
                let values = obj
                    .vertex_attributes
                    .remove(&info.name)
                    .unwrap_or_else(|| AttributeRows::empty(info.data_type, 1));
                columns.push(column(info.dictionary.as_ref(), values, || {
                    format!("object {}", obj.id)
                })?);
            }
            let chunk = SourceChunk {
                key: ChunkKey(Vec::new()),
                positions: std::mem::take(&mut obj.vertices).into_flat(),
                objects: vec![Some(obj.id); rows],
                columns,
            };
            out.push((obj, chunk));
        }
        Ok(out)
    }
}

/// A column from its stored rows: categories through the dictionary, else numbers.
fn column(
    dictionary: Option<&Dictionary>,
    values: AttributeRows,
    at: impl Fn() -> String,
) -> Result<SourceColumn> {
    Ok(match dictionary {
        None => SourceColumn::Numeric(values),
        Some(d) => SourceColumn::Categorical(d.decode(&values).map_err(|source| {
            crate::error::Error::Blob {
                key: format!("vertex attribute codes of {}", at()),
                source,
            }
        })?),
    })
}
