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
use crate::reader::{blob_err, Level, Vertices};

/// The type and channels of an attribute's rows.
type Layout = (DataType, usize);

/// The flat columns of a batch's rows, kept from batch to batch (their memory is reused).
#[derive(Default)]
pub(super) struct Columns {
    /// Per block of the batch: its first row and its number of rows.
    pieces: Vec<(u64, u64)>,
    /// The positions, as stored (`ndim` values of the vertex type per row).
    values: Vec<u8>,
    /// Per vertex attribute: its layout (type, channels) once a chunk has it, and its rows'
    /// bytes (zero bytes for rows of chunks without it).
    attributes: Vec<(Option<Layout>, Vec<u8>)>,
    /// The blocks of the batch, sorted by chunk.
    order: Vec<u64>,
}

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
    cols: Columns,
    /// Per chunk of the table and vertex attribute: whether the chunk has the attribute.
    has: Vec<bool>,
    rows: u64,
}

impl<'a> Batch<'a> {
    /// Gathers objects `ids` of `table` from `level` into `cols` (emptied first), reading
    /// `window` chunks at a time.
    pub(super) fn gather(
        level: &'a Level,
        table: &'a RefTable,
        names: &'a [String],
        ids: Range<u64>,
        window: usize,
        mut cols: Columns,
    ) -> Result<Self> {
        let (base, end) = (
            table.starts[ids.start as usize],
            table.starts[ids.end as usize],
        );
        cols.pieces.clear();
        cols.pieces.resize((end - base) as usize, (0, 0));
        cols.values.clear();
        cols.attributes.resize(names.len(), (None, Vec::new()));
        for (layout, bytes) in &mut cols.attributes {
            *layout = None;
            bytes.clear();
        }
        // the blocks by chunk (manifest order within a chunk)
        let mut order = std::mem::take(&mut cols.order);
        order.clear();
        order.extend(base..end);
        order.sort_by_key(|&b| table.chunk[b as usize]);
        let mut batch = Batch {
            level,
            table,
            names,
            ids,
            base,
            cols,
            has: vec![false; table.keys.len() * names.len()],
            rows: 0,
        };
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
        batch.cols.order = order;
        let rows = batch.rows as usize;
        for (layout, bytes) in &mut batch.cols.attributes {
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
        let first = u64::from(self.table.first[b as usize]);
        let count = u64::from(self.table.count[b as usize]);
        let have = chunk.chunk.fragments.len() as u64;
        if first + count > have {
            return Err(self.manifest_error(
                b,
                format!(
                    "names fragments {first}..{} of chunk {{k}}, which has {have}",
                    first + count
                ),
            ));
        }
        let start = self.rows;
        let row = self.row_width();
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
            let (known, bytes) = &mut self.cols.attributes[a];
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
            let values = &mut self.cols.values;
            let ok = match &rows {
                FragmentRows::Range(r) => vertices
                    .rows_bytes(r.clone())
                    .map(|b| values.extend_from_slice(b))
                    .is_some(),
                FragmentRows::Explicit(list) => list.iter().all(|&x| {
                    vertices
                        .rows_bytes(x..x + 1)
                        .map(|b| values.extend_from_slice(b))
                        .is_some()
                }),
            };
            if !ok || values.len() as u64 != (self.rows + rows.len() as u64) * row as u64 {
                return Err(bad(format!("rows {rows:?} of chunk {}", chunk.key())));
            }
            for (a, src) in sources.iter().enumerate() {
                let Some((bytes, w)) = *src else { continue };
                let dest = &mut self.cols.attributes[a].1;
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
        self.cols.pieces[(b - self.base) as usize] = (start, self.rows - start);
        Ok(())
    }

    /// The bytes of a stored position.
    fn row_width(&self) -> usize {
        width(self.level.vertex_type(), self.level.root().ndim())
    }

    /// The number of objects.
    pub(super) fn len(&self) -> u64 {
        self.ids.end - self.ids.start
    }

    /// The bytes of the batch's rows.
    pub(super) fn bytes(&self) -> u64 {
        self.cols.values.len() as u64
            + self
                .cols
                .attributes
                .iter()
                .map(|a| a.1.len() as u64)
                .sum::<u64>()
    }

    /// Hands each object of the batch to `f`, in id order, its rows in manifest order;
    /// returns the columns, for the next batch.
    pub(super) fn emit(self, mut f: impl FnMut(Polyline) -> Result<()>) -> Result<Columns> {
        let ndim = self.level.root().ndim();
        let row = self.row_width();
        let na = self.names.len();
        let key = self.level.p(&[names::VERTICES]);
        for id in self.ids.clone() {
            let blocks = self.table.starts[id as usize]..self.table.starts[id as usize + 1];
            let pieces = &self.cols.pieces[(blocks.start - self.base) as usize..]
                [..(blocks.end - blocks.start) as usize];
            let n: u64 = pieces.iter().map(|p| p.1).sum();
            let mut values = Vec::with_capacity(n as usize * row);
            for &(s, len) in pieces {
                values.extend_from_slice(
                    &self.cols.values[s as usize * row..(s + len) as usize * row],
                );
            }
            let values = Vertices::decode(values, ndim, self.level.vertex_type(), &key)?;
            let mut attributes = Vec::with_capacity(na);
            for (a, (layout, bytes)) in self.cols.attributes.iter().enumerate() {
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
                attributes.push(Some(
                    AttributeRows::from_le(t, c, out).map_err(blob_err(key))?,
                ));
            }
            f(Polyline {
                id,
                positions: values.positions(),
                attributes,
            })?;
        }
        Ok(self.cols)
    }
}

/// The bytes of a row of `channels` values of type `t`.
fn width(t: DataType, channels: usize) -> usize {
    t.size().unwrap_or(1) * channels
}
