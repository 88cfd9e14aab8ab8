//! Polylines (lines, polylines, streamlines): each is one object, split into pieces where it
//! crosses a bin boundary. A piece is a fragment of its chunk; consecutive pieces in different
//! chunks are joined by a cross-chunk record from the last vertex of one to the first of the
//! next.

use std::collections::BTreeMap;
use std::ops::Range;

use super::spill::SpillHeader;
use super::vertices::Placed;
use super::ZvWriter;
use crate::document::Attribute;
use crate::error::{Error, InputItem, Result};
use crate::geometry::Geometry;

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

/// The previous vertex of a polyline: its chunk index, row and fragment (its bin coordinates
/// are kept beside).
struct Previous {
    chunk: u32,
    row: u64,
    fragment: u64,
}

/// Checks that `offsets` (`P + 1` vertex offsets) cut `n` vertices into polylines: it starts
/// at 0, never decreases and ends at `n`; `[]` is no polylines when there are no vertices.
pub(super) fn check_offsets(offsets: &[usize], n: usize) -> Result<()> {
    let ok = match (offsets.first(), offsets.last()) {
        (Some(&0), Some(&last)) => last == n && offsets.windows(2).all(|w| w[0] <= w[1]),
        (None, None) => n == 0,
        _ => false,
    };
    if !ok {
        return Err(super::bad(format!(
            "polyline offsets must start at 0, never decrease and end at the vertex count ({n})"
        )));
    }
    Ok(())
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
    /// Converts and checks every vertex of a batch of polylines (`offsets` checked by
    /// [`check_offsets`]) and finds its chunk, before anything is kept.
    pub(super) fn check_polylines(&mut self, coords: &[f64], offsets: &[usize]) -> Result<Placed> {
        let first = self.polylines.count();
        if self.opts.geometry == Geometry::Line {
            // a pyramid level's line of a dropped object has no vertices (an empty manifest)
            let empty_ok = matches!(self.target, super::Target::Level(_));
            if let Some((pi, w)) = offsets
                .windows(2)
                .enumerate()
                .find(|(_, w)| w[1] - w[0] != 2 && !(empty_ok && w[1] == w[0]))
            {
                return Err(Error::input(
                    InputItem::Polyline(first + pi as u64),
                    format!("has {} vertices (a line has 2)", w[1] - w[0]),
                ));
            }
        }
        self.place_batch(coords, |v| {
            // the polyline holding vertex v: the last one starting at or before it
            let pi = offsets.partition_point(|&o| o <= v).saturating_sub(1);
            InputItem::PolylineVertex {
                polyline: first + pi as u64,
                vertex: (v - offsets[pi]) as u64,
            }
        })
    }

    /// Keeps a checked batch: splits each polyline into pieces and keeps its vertices as
    /// records of their chunks.
    pub(super) fn keep_polylines(
        &mut self,
        coords: &[f64],
        offsets: &[usize],
        placed: Placed,
        attributes: &BTreeMap<String, Attribute>,
    ) -> Result<()> {
        let nd = self.grid.ndim;
        let record_len = self.record_len();
        let chunk_of = self.settle(placed, record_len);
        let mut stored = vec![0.0; nd];
        let (mut bin, mut prev_bin) = (vec![0i64; nd], vec![0i64; nd]);
        let mut cells = self.columns.cells(attributes);
        let mut rec = Vec::with_capacity(record_len);
        for w in offsets.windows(2) {
            let oid = self.polylines.count();
            self.polylines
                .starts
                .push(self.polylines.pieces.len() as u64);
            let mut prev: Option<Previous> = None;
            for v in w[0]..w[1] {
                let item = || InputItem::PolylineVertex {
                    polyline: oid,
                    vertex: (v - w[0]) as u64,
                };
                self.grid
                    .store_into(&coords[v * nd..(v + 1) * nd], item, &mut stored)?;
                self.grid.bin_into(&stored, &mut bin);
                let ci = chunk_of[v];
                let row = self.spill.chunk(ci).rows;
                let fragment = match &prev {
                    Some(q) if q.chunk == ci && prev_bin == bin => q.fragment,
                    _ => {
                        let fragment = self.spill.add_segment(ci);
                        self.polylines.start_piece(prev.as_ref(), ci, row, fragment);
                        fragment
                    }
                };
                rec.clear();
                SpillHeader {
                    fragment,
                    vertex: self.n_vertices,
                }
                .encode_into(&mut rec);
                self.grid.put(&stored, &mut rec);
                cells.push_row(v, &mut rec);
                self.spill.push(ci, &rec);
                self.n_vertices += 1;
                prev = Some(Previous {
                    chunk: ci,
                    row,
                    fragment,
                });
                std::mem::swap(&mut bin, &mut prev_bin);
                if self.spill.over_budget() {
                    self.spill.spill_all()?;
                }
            }
        }
        self.spill.unstage();
        Ok(())
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
