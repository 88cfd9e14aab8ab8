//! Polylines (lines, polylines, streamlines): each is one object, split into pieces where it
//! crosses a bin boundary (lines in the 0.9 layout: a chunk boundary). A piece is a fragment of its chunk; consecutive pieces in different
//! chunks are joined by a cross-chunk record from the last vertex of one to the first of the
//! next.

use std::collections::BTreeMap;
use std::ops::Range;

use super::part_pieces::PartPieces;
use super::spill::SpillHeader;
use super::vertices::{Placed, FOREIGN};
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
    /// In a part of a distributed write: the pieces it keeps, for its receipt (the commit
    /// joins them into the polylines' pieces and cross-chunk records).
    part: Option<PartPieces>,
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
    /// The number of polylines (in a part: the id after the last one given).
    pub(super) fn count(&self) -> u64 {
        match &self.part {
            Some(p) => p.next_id(),
            None => self.starts.len() as u64,
        }
    }

    /// Makes these the polylines of a part of a distributed write.
    pub(super) fn set_part(&mut self) {
        self.part = Some(PartPieces::default());
    }

    /// A part's pieces and the polylines it saw, for its receipt (none outside a part).
    pub(super) fn take_part(&mut self) -> (Vec<crate::parts::PieceReceipt>, Vec<[u64; 2]>) {
        self.part
            .take()
            .map(PartPieces::into_receipt)
            .unwrap_or_default()
    }

    /// Checks a part's polyline ids for a batch of `n` polylines: one each, increasing, after
    /// the last one given.
    fn check_ids(&self, ids: &[u64], n: usize) -> Result<()> {
        if ids.len() != n {
            return Err(Error::input(
                InputItem::ObjectIds,
                format!("{} polyline ids for {n} polylines", ids.len()),
            ));
        }
        let mut after = self.count();
        for &id in ids {
            if id < after {
                return Err(Error::input(
                    InputItem::Polyline(id),
                    format!(
                        "polyline ids must increase (this one comes after polyline {})",
                        after.wrapping_sub(1)
                    ),
                ));
            }
            after = id
                .checked_add(1)
                .ok_or_else(|| Error::input(InputItem::Polyline(id), "polyline id too large"))?;
        }
        Ok(())
    }

    /// Starts the next polyline of a commit's join.
    pub(super) fn begin_joined(&mut self) {
        self.starts.push(self.pieces.len() as u64);
    }

    /// Appends a piece of a commit's join to the current polyline: fragment `fragment` of
    /// chunk `chunk` from `first_row`, after the piece `prev` (its chunk and last row) if any.
    pub(super) fn push_joined(
        &mut self,
        prev: Option<(u32, u64)>,
        chunk: u32,
        first_row: u64,
        fragment: u64,
    ) -> Result<()> {
        let narrow = |v: u64| {
            u32::try_from(v).map_err(|_| super::bad(format!("row or fragment {v} beyond 2^32")))
        };
        if let Some((q, last)) = prev {
            if q != chunk {
                self.crossings
                    .push([q, narrow(last)?, chunk, narrow(first_row)?]);
            }
        }
        self.pieces.push((chunk, narrow(fragment)?));
        Ok(())
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
    /// [`check_offsets`]; `ids`, in a part of a distributed write, checked by
    /// [`Polylines::check_ids`]) and finds its chunk, before anything is kept.
    pub(super) fn check_polylines(
        &mut self,
        coords: &[f64],
        offsets: &[usize],
        ids: Option<&[u64]>,
    ) -> Result<Placed> {
        let first = self.polylines.count();
        if let Some(ids) = ids {
            self.polylines
                .check_ids(ids, offsets.len().saturating_sub(1))?;
        }
        let name = |pi: usize| ids.map_or(first + pi as u64, |ids| ids[pi]);
        if self.opts.geometry == Geometry::Line {
            // a pyramid level's line of a dropped object has no vertices (an empty manifest)
            let empty_ok = matches!(self.target, super::Target::Level(_));
            if let Some((pi, w)) = offsets
                .windows(2)
                .enumerate()
                .find(|(_, w)| w[1] - w[0] != 2 && !(empty_ok && w[1] == w[0]))
            {
                return Err(Error::input(
                    InputItem::Polyline(name(pi)),
                    format!("has {} vertices (a line has 2)", w[1] - w[0]),
                ));
            }
        }
        self.place_batch(coords, |v| {
            // the polyline holding vertex v: the last one starting at or before it
            let pi = offsets.partition_point(|&o| o <= v).saturating_sub(1);
            InputItem::PolylineVertex {
                polyline: name(pi),
                vertex: (v - offsets[pi]) as u64,
            }
        })
    }

    /// Whether a piece also ends where the bin changes: not for lines in the ZV 0.9 layout,
    /// which zarr-vectors 0.9.2 splits at chunk boundaries only (`docs/format-decisions.md`,
    /// "Writing ZV 0.9").
    fn splits_at_bins(&self) -> bool {
        !(self.opts.geometry == Geometry::Line
            && self.opts.format_version == super::FormatVersion::V0_9)
    }

    /// Keeps a checked batch: splits each polyline into pieces and keeps its vertices as
    /// records of their chunks. A piece starts where the chunk or the bin changes (see
    /// [`ZvWriter::splits_at_bins`]); in a part
    /// of a distributed write, vertices in other parts' chunks ([`FOREIGN`]) are skipped but
    /// still count for where pieces start, so each piece the part keeps is the single
    /// writer's piece, numbered as it would be.
    pub(super) fn keep_polylines(
        &mut self,
        coords: &[f64],
        offsets: &[usize],
        ids: Option<&[u64]>,
        placed: Placed,
        attributes: &BTreeMap<String, Attribute>,
    ) -> Result<()> {
        let nd = self.grid.ndim;
        let record_len = self.record_len();
        let chunk_of = self.settle(placed, record_len);
        let mut stored = vec![0.0; nd];
        let (mut bin, mut prev_bin) = (vec![0i64; nd], vec![0i64; nd]);
        let (mut chunk, mut prev_chunk) = (vec![0i64; nd], vec![0i64; nd]);
        let at_bins = self.splits_at_bins();
        let mut cells = self.columns.cells(attributes);
        let mut rec = Vec::with_capacity(record_len);
        for (pi, w) in offsets.windows(2).enumerate() {
            let oid = ids.map_or(self.polylines.count(), |ids| ids[pi]);
            self.polylines.begin(oid);
            let mut prev: Option<Previous> = None;
            for v in w[0]..w[1] {
                let item = || InputItem::PolylineVertex {
                    polyline: oid,
                    vertex: (v - w[0]) as u64,
                };
                self.grid
                    .store_into(&coords[v * nd..(v + 1) * nd], item, &mut stored)?;
                if at_bins {
                    self.grid.bin_into(&stored, &mut bin);
                }
                self.grid.chunk_into(&stored, &mut chunk);
                let same_piece = prev.is_some() && prev_chunk == chunk && prev_bin == bin;
                let ci = chunk_of[v];
                if ci == FOREIGN {
                    if !same_piece {
                        self.polylines.skip_piece();
                    }
                    prev = Some(Previous {
                        chunk: FOREIGN,
                        row: 0,
                        fragment: 0,
                    });
                } else {
                    let row = self.spill.chunk(ci).rows;
                    let fragment = match &prev {
                        Some(q) if same_piece => q.fragment,
                        _ => {
                            let fragment = self.spill.add_segment(ci);
                            self.polylines.start_piece(prev.as_ref(), ci, row, fragment);
                            fragment
                        }
                    };
                    self.polylines.extend_piece(row);
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
                    if self.spill.over_budget() {
                        self.spill.spill_all()?;
                    }
                }
                std::mem::swap(&mut bin, &mut prev_bin);
                std::mem::swap(&mut chunk, &mut prev_chunk);
            }
            self.polylines.end();
        }
        self.spill.unstage();
        Ok(())
    }
}

impl Polylines {
    /// Starts polyline `id` (its number: the count so far, or the id a part is given).
    fn begin(&mut self, id: u64) {
        match &mut self.part {
            Some(p) => p.begin(id),
            None => self.starts.push(self.pieces.len() as u64),
        }
    }

    /// Ends the current polyline.
    fn end(&mut self) {
        if let Some(p) = &mut self.part {
            p.end();
        }
    }

    /// Counts a piece of the current polyline in another part's chunk.
    fn skip_piece(&mut self) {
        if let Some(p) = &mut self.part {
            p.skip_piece();
        }
    }

    /// Notes that the current piece reaches `row` of its chunk.
    fn extend_piece(&mut self, row: u64) {
        if let Some(p) = &mut self.part {
            p.extend_piece(row);
        }
    }

    /// Starts a piece in chunk `chunk` at `row`, after the previous vertex `prev` of the
    /// polyline (a cross-chunk record joins them when they are in different chunks; in a
    /// part, the commit makes the records).
    fn start_piece(&mut self, prev: Option<&Previous>, chunk: u32, row: u64, fragment: u64) {
        if let Some(p) = &mut self.part {
            p.start_piece(chunk, row, fragment);
            return;
        }
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
