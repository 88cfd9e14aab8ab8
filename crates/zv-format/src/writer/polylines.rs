//! Polylines (lines, polylines, streamlines): each is one object, split into pieces where it
//! crosses a bin boundary. A piece is a fragment of its chunk; consecutive pieces in different
//! chunks are joined by a cross-chunk record from the last vertex of one to the first of the
//! next.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;

use super::spill::SpillHeader;
use super::ZvWriter;
use crate::document::Attribute;
use crate::error::{Error, InputItem, Result};
use crate::geometry::Geometry;
use crate::metadata::ChunkKey;

/// The pieces of every polyline so far.
#[derive(Debug, Clone, Default)]
pub(super) struct Polylines {
    /// The pieces, (chunk index, fragment), polyline after polyline in path order.
    pieces: Vec<(u32, u32)>,
    /// Where each polyline's pieces start in `pieces`.
    starts: Vec<u64>,
    /// Cross-chunk records (chunk A, row, chunk B, row), chunks as indices.
    crossings: Vec<[u32; 4]>,
}

/// The vertices of a batch of polylines, converted and checked: (stored bytes, stored
/// coordinates) of each vertex, polyline after polyline.
pub(super) type CheckedPolylines = Vec<Vec<(Vec<u8>, Vec<f64>)>>;

/// The previous vertex of a polyline: its bin coordinates, chunk index, row and fragment.
struct Previous {
    bin: Vec<i64>,
    chunk: u32,
    row: u64,
    fragment: u64,
}

impl Polylines {
    /// The number of polylines.
    pub(super) fn count(&self) -> u64 {
        self.starts.len() as u64
    }

    /// The range of `pieces` of polyline `o`.
    fn range(&self, o: usize) -> Range<usize> {
        let end = self
            .starts
            .get(o + 1)
            .map_or(self.pieces.len(), |&e| e as usize);
        self.starts.get(o).map_or(end, |&s| s as usize)..end
    }

    /// The pieces of each polyline, in order.
    pub(super) fn pieces(&self) -> impl Iterator<Item = &[(u32, u32)]> + '_ {
        (0..self.starts.len()).map(move |o| &self.pieces[self.range(o)])
    }

    /// Whether polyline `o` exists and has vertices.
    pub(super) fn has_vertices(&self, o: u64) -> bool {
        (o as usize) < self.starts.len() && !self.range(o as usize).is_empty()
    }

    /// The cross-chunk records (chunk A, row, chunk B, row), chunks as indices.
    pub(super) fn crossings(&self) -> &[[u32; 4]] {
        &self.crossings
    }

    /// The polyline (object) of each piece of each chunk, given each chunk's piece count.
    pub(super) fn owners(&self, segments: impl Iterator<Item = u64>) -> Vec<Vec<u64>> {
        let mut owners: Vec<Vec<u64>> = segments.map(|n| vec![0; n as usize]).collect();
        for (oid, pieces) in self.pieces().enumerate() {
            for &(ci, f) in pieces {
                if let Some(slot) = owners
                    .get_mut(ci as usize)
                    .and_then(|o| o.get_mut(f as usize))
                {
                    *slot = oid as u64;
                }
            }
        }
        owners
    }
}

impl ZvWriter {
    /// Converts and checks every vertex of a batch of polylines, before anything is kept.
    pub(super) fn check_polylines(&self, polylines: &[Vec<Vec<f64>>]) -> Result<CheckedPolylines> {
        let mut converted = Vec::with_capacity(polylines.len());
        for (pi, pl) in polylines.iter().enumerate() {
            let oid = self.polylines.count() + pi as u64;
            if self.opts.geometry == Geometry::Line && pl.len() != 2 {
                return Err(Error::input(
                    InputItem::Polyline(oid),
                    format!("has {} vertices (a line has 2)", pl.len()),
                ));
            }
            let mut rows = Vec::with_capacity(pl.len());
            for (vi, p) in pl.iter().enumerate() {
                let item = || InputItem::PolylineVertex {
                    polyline: oid,
                    vertex: vi as u64,
                };
                let (bytes, stored) = self.grid.convert(p, item())?;
                self.extent.admit(&stored, item)?;
                self.grid.check_range(&stored, item)?;
                rows.push((bytes, stored));
            }
            converted.push(rows);
        }
        Ok(converted)
    }

    /// Keeps a checked batch: splits each polyline into pieces and spills its vertices.
    pub(super) fn keep_polylines(
        &mut self,
        converted: CheckedPolylines,
        attributes: &BTreeMap<String, Attribute>,
    ) -> Result<()> {
        let mut grouped: BTreeMap<ChunkKey, Vec<u8>> = BTreeMap::new();
        // rows and segments added to each chunk in this batch (not yet in the spill state)
        let mut pending: HashMap<u32, (u64, u64)> = HashMap::new();
        let mut vrow = 0usize;
        for rows in converted {
            self.polylines
                .starts
                .push(self.polylines.pieces.len() as u64);
            let mut prev: Option<Previous> = None;
            for (bytes, stored) in rows {
                self.extent.note(&stored);
                let key = self.grid.chunk_of(&stored);
                let bin = self.grid.bin_coords(&stored);
                let ci = self.spill.index(&key);
                let base = self
                    .spill
                    .get(&key)
                    .map_or((0, 0), |c| (c.rows, c.segments));
                let p = pending.entry(ci).or_insert((0, 0));
                let row = base.0 + p.0;
                let fragment = match &prev {
                    Some(q) if q.bin == bin && q.chunk == ci => q.fragment,
                    _ => {
                        let fragment = base.1 + p.1;
                        p.1 += 1;
                        self.polylines.start_piece(prev.as_ref(), ci, row, fragment);
                        fragment
                    }
                };
                p.0 += 1;
                let rec = grouped.entry(key).or_default();
                SpillHeader {
                    fragment,
                    order: row,
                    vertex: self.n_vertices,
                }
                .encode_into(rec);
                rec.extend_from_slice(&bytes);
                self.columns.push_row(attributes, vrow, rec);
                vrow += 1;
                self.n_vertices += 1;
                prev = Some(Previous {
                    bin,
                    chunk: ci,
                    row,
                    fragment,
                });
            }
        }
        for (ci, (_, segs)) in &pending {
            self.spill.add_segments(*ci, *segs);
        }
        self.spill.append(grouped, self.record_len())
    }
}

impl Polylines {
    /// Starts a piece in chunk `chunk` at `row`, after the previous vertex `prev` of the
    /// polyline (a cross-chunk record joins them when they are in different chunks).
    fn start_piece(&mut self, prev: Option<&Previous>, chunk: u32, row: u64, fragment: u64) {
        if let Some(q) = prev {
            if q.chunk != chunk {
                // rows beyond u32 are refused by `validate` before use
                self.crossings
                    .push([q.chunk, q.row as u32, chunk, row as u32]);
            }
        }
        self.pieces.push((chunk, fragment as u32));
    }
}
