//! A part's receipt (`.zv-parts/part-K.json`): what the commit needs of the chunks a part
//! wrote, and nothing else (no vertex, no attribute value): per chunk its key, rows and the
//! object of each fragment; the part's vertex count, extent, largest object id and attribute
//! schema; for polylines, the pieces it kept and the polylines it saw. Its size grows with
//! the part's fragments (about 8 bytes of JSON per point-cloud fragment, about 40 per
//! polyline piece).

use serde::{Deserialize, Serialize};
use zv_core::key::StoreKey;
use zv_core::store::Store;

use super::Plan;
use crate::error::{Error, Result};

/// One vertex attribute column of a part (numeric).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnSchema {
    /// The attribute's name.
    pub name: String,
    /// Its data type's name (`float32`, …).
    pub data_type: String,
    /// Values per row.
    pub channels: usize,
    /// The channel names given with it.
    pub channel_names: Option<Vec<String>>,
}

/// One chunk a part wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkReceipt {
    /// The chunk coordinates.
    pub key: Vec<i64>,
    /// Its vertex rows.
    pub rows: u64,
    /// The object of each of its fragments, in fragment order (empty without objects).
    pub objects: Vec<u64>,
}

/// A piece of a polyline a part kept (stored as the array `[polyline, seq, chunk, fragment,
/// first_row, last_row]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "[u64; 6]", into = "[u64; 6]")]
pub struct PieceReceipt {
    /// The polyline (its object id).
    pub polyline: u64,
    /// The piece's number in the polyline (0 first, counting every chunk's pieces).
    pub seq: u64,
    /// The chunk, as an index into the receipt's `chunks`.
    pub chunk: u64,
    /// The piece's fragment in its chunk.
    pub fragment: u64,
    /// The chunk row of its first vertex.
    pub first_row: u64,
    /// The chunk row of its last vertex.
    pub last_row: u64,
}

impl From<[u64; 6]> for PieceReceipt {
    fn from(a: [u64; 6]) -> Self {
        Self {
            polyline: a[0],
            seq: a[1],
            chunk: a[2],
            fragment: a[3],
            first_row: a[4],
            last_row: a[5],
        }
    }
}

impl From<PieceReceipt> for [u64; 6] {
    fn from(p: PieceReceipt) -> Self {
        [
            p.polyline,
            p.seq,
            p.chunk,
            p.fragment,
            p.first_row,
            p.last_row,
        ]
    }
}

/// What a part wrote, for the commit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartReceipt {
    /// The run of the plan the part wrote for.
    pub run: String,
    /// The part's number.
    pub part: u32,
    /// The number of parts of the write.
    pub parts: u32,
    /// The vertices it wrote.
    pub vertices: u64,
    /// Whether its vertices came with object ids (`None`: it said nothing, having none).
    pub objects_given: Option<bool>,
    /// Its largest object id.
    pub max_object: Option<u64>,
    /// The corners of its vertices' extent.
    pub extent: Option<(Vec<f64>, Vec<f64>)>,
    /// Its vertex attribute columns.
    pub columns: Vec<ColumnSchema>,
    /// Its chunks.
    pub chunks: Vec<ChunkReceipt>,
    /// The polyline pieces it kept (polyline geometries).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pieces: Vec<PieceReceipt>,
    /// `[polyline, pieces]`: each polyline it kept a piece of (or that has no vertices) and
    /// its number of pieces in all chunks (polyline geometries).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub polylines: Vec<[u64; 2]>,
    /// The rows of the cross-level link blobs it wrote, `[+k side, −k side]` (a part of a
    /// pyramid level built in parts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cross_level_rows: Option<[u64; 2]>,
}

impl PartReceipt {
    /// The stored form.
    pub fn to_json(&self) -> Result<Vec<u8>> {
        serde_json::to_vec(self).map_err(|e| Error::InvalidInput(format!("receipt: {e}")))
    }

    /// Parses a stored receipt (`key` names it in errors).
    pub fn from_json(bytes: &[u8], key: &str) -> Result<Self> {
        serde_json::from_slice(bytes).map_err(|e| Error::Metadata {
            key: key.to_owned(),
            reason: format!("not a part receipt: {e}"),
        })
    }

    /// Checks that this is part `part` of the write `plan` stages, and whole (stored at `key`).
    pub(super) fn check(&self, plan: &Plan, part: u32, key: &str) -> Result<()> {
        let bad = |reason: String| {
            Err(Error::Inconsistent {
                key: key.to_owned(),
                reason,
            })
        };
        if self.run != plan.run {
            return bad(format!(
                "the receipt of run {}, the plan's is {} (a part of another write)",
                self.run, plan.run
            ));
        }
        if self.part != part || self.parts != plan.parts {
            return bad(format!(
                "part {} of {} stored as part {part} of {}",
                self.part, self.parts, plan.parts
            ));
        }
        let ndim = plan.options.chunk_shape.len();
        if let Some(c) = self.chunks.iter().find(|c| c.key.len() != ndim) {
            return bad(format!("chunk {:?} has not {ndim} coordinates", c.key));
        }
        if let Some(c) = self
            .chunks
            .iter()
            .find(|c| !c.objects.is_empty() && c.objects.len() as u64 > c.rows)
        {
            return bad(format!("chunk {:?} has more fragments than rows", c.key));
        }
        if let Some(p) = self
            .pieces
            .iter()
            .find(|p| p.chunk >= self.chunks.len() as u64)
        {
            return bad(format!(
                "a piece of polyline {} names chunk {} of {}",
                p.polyline,
                p.chunk,
                self.chunks.len()
            ));
        }
        let rows = self
            .chunks
            .iter()
            .try_fold(0u64, |s, c| s.checked_add(c.rows));
        if rows != Some(self.vertices) {
            return bad(format!(
                "its chunks hold {rows:?} rows, it counts {} vertices",
                self.vertices
            ));
        }
        Ok(())
    }
}

/// The receipt stored at `key`, if any.
pub(super) fn read(store: &dyn Store, key: &StoreKey) -> Result<Option<PartReceipt>> {
    match store.get(key)? {
        Some(bytes) => PartReceipt::from_json(&bytes, key.as_ref()).map(Some),
        None => Ok(None),
    }
}
