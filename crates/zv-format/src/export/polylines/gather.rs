//! One batch of objects gathered through a window of chunks ([`Batch`]): the batch's blocks
//! sorted by chunk, the chunks read a window at a time (in parallel), each block's rows
//! copied out of its chunk into flat columns, the window dropped; the objects are then
//! assembled from the columns in manifest order. Memory holds the batch's rows and one window
//! of decoded chunks, however the objects are spread over the chunks.

use std::ops::Range;

use zv_core::data_type::DataType;

use super::refs::RefTable;
use super::Polyline;
use crate::error::{Error, Result};
use crate::layout::attributes::AttributeRows;
use crate::layout::fragment_index::FragmentRows;
use crate::names;
use crate::reader::level_scan::ScannedChunk;
use crate::reader::{blob_err, Level, Positions};

/// The rows of a batch's blocks, as flat columns.
pub(super) struct Batch<'a> {
    level: &'a Level,
    table: &'a RefTable,
    /// The vertex attribute names, in the order of [`Polyline::attributes`].
    names: &'a [String],
    /// The objects.
    ids: Range<u64>,
    /// The batch's first block.
    base: u64,
    /// Per block of the batch: its first row in the columns and its number of rows.
    pieces: Vec<(u64, u64)>,
    /// The positions, `ndim` values per row.
    values: Vec<f64>,
    /// Per vertex attribute: its layout (type, channels) once a chunk has it, and its rows'
    /// bytes (zero bytes for rows of chunks without it).
    attributes: Vec<(Option<(DataType, usize)>, Vec<u8>)>,
    /// Per chunk of the table and vertex attribute: whether the chunk has the attribute.
    has: Vec<bool>,
    rows: u64,
}

impl<'a> Batch<'a> {
    /// Gathers objects `ids` of `table` from `level`, reading `window` chunks at a time.
    pub(super) fn gather(
        level: &'a Level,
        table: &'a RefTable,
        names: &'a [String],
        ids: Range<u64>,
        window: usize,
    ) -> Result<Self> {
        let (base, end) = (table.starts[ids.start as usize], table.starts[ids.end as usize]);
        let mut batch = Batch {
            level,
            table,
            names,
            ids,
            base,
            pieces: vec![(0, 0); (end - base) as usize],
            values: Vec::new(),
            attributes: vec![(None, Vec::new()); names.len()],
            has: vec![false; table.keys.len() * names.len()],
            rows: 0,
        };
        // the blocks by chunk (manifest order within a chunk)
        let mut order: Vec<u64> = (base..end).collect();
        order.sort_by_key(|&b| table.chunk[b as usize]);
        let mut i = 0;
        while i < order.len() {
            let mut keys = Vec::new();
            let mut j = i;
            while j < order.len() {
                let c = table.chunk[order[j] as usize] as usize;
                if keys.last() != Some(&c) {
                    if keys.len() == window.max(1) {
                        break;
                    }
                    keys.push(c);
                }
                j += 1;
            }
            let wanted = keys.iter().map(|&c| table.keys[c].clone()).collect();
            let scan = level.scan_chunks(wanted, false, |_| None)?;
            for &b in &order[i..j] {
                let c = table.chunk[b as usize] as usize;
                let chunk = scan.get(&table.keys[c]).ok_or_else(|| {
                    batch.manifest_error(b, "names chunk {k}, which has no vertices".into())
                })?;
                batch.copy_block(b, c, chunk)?;
            }
            i = j;
        }
        let rows = batch.rows as usize;
        for (layout, bytes) in &mut batch.attributes {
            if let Some((t, c)) = *layout {
                bytes.resize(rows * width(t, c), 0);
            }
        }
        Ok(batch)
    }

    /// The error of the manifest of the object of block `b`: `what` (`{k}` stands for its
    /// chunk).
    fn manifest_error(&self, b: u64, what: String) -> Error {
        let k = &self.table.keys[self.table.chunk[b as usize] as usize];
        Error::inconsistent(
            self.level.p(&[names::OBJECT_INDEX, "zarr.json"]),
            format!(
                "object {}: a manifest block {}",
                self.table.object_of(b),
                what.replace("{k}", &k.to_string())
            ),
        )
    }

    /// Copies the rows of block `b` out of `chunk` (chunk `c` of the table) into the columns.
    fn copy_block(&mut self, b: u64, c: usize, chunk: &ScannedChunk) -> Result<()> {
        let (first, count) = (self.table.first[b as usize], self.table.count[b as usize]);
        let have = chunk.chunk.fragments.len() as u64;
        if first.checked_add(count).is_none_or(|e| e > have) {
            return Err(self.manifest_error(
                b,
                format!(
                    "names fragments {first}..{} of chunk {{k}}, which has {have}",
                    first.saturating_add(count)
                ),
            ));
        }
        let start = self.rows;
        let ndim = self.level.root().ndim();
        let bad = |what: String| {
            Error::inconsistent(self.level.p(&[names::OBJECT_INDEX, "zarr.json"]), what)
        };
        // the chunk's attribute rows: bytes and row width
        let na = self.names.len();
        let mut sources = Vec::with_capacity(na);
        for (a, rows) in chunk.attributes.iter().enumerate() {
            let Some(rows) = rows else {
                sources.push(None);
                continue;
            };
            let layout = (rows.data_type(), rows.channels());
            let (known, bytes) = &mut self.attributes[a];
            match *known {
                None => {
                    *known = Some(layout);
                    bytes.resize(start as usize * width(layout.0, layout.1), 0);
                }
                Some(l) if l != layout => {
                    let key = self.level.p(&[names::VERTEX_ATTRIBUTES, &self.names[a]]);
                    return Err(blob_err(key)(crate::layout::invalid(
                        "attribute rows",
                        "chunks store the rows in other types or widths",
                    )));
                }
                Some(_) => {}
            }
            self.has[c * na + a] = true;
            sources.push(Some((rows.as_le_bytes(), width(layout.0, layout.1))));
        }
        for f in first..first + count {
            let rows = chunk
                .chunk
                .fragments
                .get(f as usize)
                .ok_or_else(|| bad(format!("fragment {f} of chunk {}", chunk.key())))?;
            let vertices = &chunk.chunk.vertices;
            let ok = match &rows {
                FragmentRows::Range(r) => vertices.push_rows(r.clone(), &mut self.values),
                FragmentRows::Explicit(list) => list
                    .iter()
                    .all(|&x| vertices.push_rows(x..x + 1, &mut self.values)),
            };
            if !ok || self.values.len() as u64 != (self.rows + rows.len() as u64) * ndim as u64 {
                return Err(bad(format!("rows {rows:?} of chunk {}", chunk.key())));
            }
            for (a, src) in sources.iter().enumerate() {
                let Some((bytes, w)) = *src else { continue };
                let dest = &mut self.attributes[a].1;
                dest.resize(self.rows as usize * w, 0);
                let outside = |x: u64| {
                    let path = self
                        .level
                        .chunk_blob(&[names::VERTEX_ATTRIBUTES, &self.names[a]], chunk.key());
                    blob_err(path)(crate::layout::invalid(
                        "attribute rows",
                        format!("row {x} is outside the {} rows", bytes.len() / w.max(1)),
                    ))
                };
                match &rows {
                    FragmentRows::Range(r) => dest.extend_from_slice(
                        bytes
                            .get(r.start as usize * w..r.end as usize * w)
                            .ok_or_else(|| outside(r.end.saturating_sub(1)))?,
                    ),
                    FragmentRows::Explicit(list) => {
                        for &x in list.iter() {
                            let at = x as usize * w;
                            dest.extend_from_slice(
                                bytes.get(at..at + w).ok_or_else(|| outside(x))?,
                            );
                        }
                    }
                }
            }
            self.rows += rows.len() as u64;
        }
        self.pieces[(b - self.base) as usize] = (start, self.rows - start);
        Ok(())
    }

    /// Hands each object of the batch to `f`, in id order, its rows in manifest order.
    pub(super) fn emit(self, mut f: impl FnMut(Polyline) -> Result<()>) -> Result<()> {
        let ndim = self.level.root().ndim();
        let na = self.names.len();
        for id in self.ids.clone() {
            let blocks = self.table.starts[id as usize]..self.table.starts[id as usize + 1];
            let pieces = &self.pieces[(blocks.start - self.base) as usize..][..(blocks.end - blocks.start) as usize];
            let n: u64 = pieces.iter().map(|p| p.1).sum();
            let mut values = Vec::with_capacity(n as usize * ndim);
            for &(s, len) in pieces {
                values.extend_from_slice(&self.values[s as usize * ndim..(s + len) as usize * ndim]);
            }
            let mut attributes = Vec::with_capacity(na);
            for (a, (layout, bytes)) in self.attributes.iter().enumerate() {
                let present = blocks
                    .clone()
                    .any(|b| self.has[self.table.chunk[b as usize] as usize * na + a]);
                let (Some((t, c)), true) = (*layout, present) else {
                    attributes.push(None);
                    continue;
                };
                let w = width(t, c);
                let mut out = Vec::with_capacity(n as usize * w);
                for &(s, len) in pieces {
                    out.extend_from_slice(&bytes[s as usize * w..(s + len) as usize * w]);
                }
                let key = self.level.p(&[names::VERTEX_ATTRIBUTES, &self.names[a]]);
                attributes.push(Some(AttributeRows::from_le(t, c, out).map_err(blob_err(key))?));
            }
            f(Polyline {
                id,
                positions: Positions::from_flat(ndim, values)?,
                attributes,
            })?;
        }
        Ok(())
    }
}

/// The bytes of a row of `channels` values of type `t`.
fn width(t: DataType, channels: usize) -> usize {
    t.size().unwrap_or(1) * channels
}
