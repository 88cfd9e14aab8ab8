//! The writer's side of a distributed write ([`crate::parts`]): the chunks a part may take,
//! a part's finish (its chunk blobs, then its receipt), and the commit that merges the
//! receipts into the level-global arrays and documents, root last.
//!
//! A part writes exactly what a single writer writes for the same chunks: the chunk blobs of
//! a chunk depend only on that chunk's records (in arrival order within each fragment). The
//! commit then writes what depends on the whole level (the object index, the array and level
//! documents, the root) from the receipts alone, so a store written in parts is byte for byte
//! the store one writer makes of the same rows, whatever the number of parts and the order
//! they finish in, as long as each chunk's rows reach its part in the input order.

use std::collections::BTreeMap;

use super::{bad, Target, ZvWriter};
use crate::error::{Error, InputItem, Result};
use crate::geometry::Geometry;
use crate::metadata::ChunkKey;
use crate::parts::{part_of, ChunkReceipt, PartReceipt};
use crate::writer::{FormatVersion, WriteSummary};

/// The part a writer writes: `part` of `parts`, and the run it belongs to.
#[derive(Debug, Clone)]
pub(crate) struct Owner {
    pub(crate) run: String,
    pub(crate) part: u32,
    pub(crate) parts: u32,
}

impl ZvWriter {
    /// Makes this writer part `owner.part` of a distributed write: it refuses vertices in
    /// chunks other parts own.
    pub(crate) fn set_owner(&mut self, owner: Owner) {
        self.owner = Some(owner);
        if self.opts.geometry.is_sequential() {
            self.polylines.set_part();
        }
    }

    /// The number of axes.
    pub(crate) fn ndim(&self) -> usize {
        self.grid.ndim
    }

    /// Whether this writer may take vertices in chunk `coords` (always, outside a
    /// distributed write).
    pub(super) fn owns_chunk(&self, coords: &[i64]) -> bool {
        self.owner
            .as_ref()
            .is_none_or(|o| part_of(coords, o.parts) == o.part)
    }

    /// The part that takes each vertex of `coords` (`ndim` values each): its chunk's owner
    /// (0 outside a distributed write). A position that cannot be stored (not finite, too
    /// far) goes to part 0, so that one part reports it. No allocation per vertex.
    pub(crate) fn owners_of(&self, coords: &[f64]) -> Vec<u32> {
        let nd = self.grid.ndim.max(1);
        let (mut stored, mut chunk) = (vec![0.0; nd], vec![0; nd]);
        coords
            .chunks(nd)
            .map(|p| self.owner_with(p, &mut stored, &mut chunk))
            .collect()
    }

    /// Whether this writer takes a vertex at `position` (see [`ZvWriter::owners_of`]; a
    /// position of the wrong arity goes to part 0).
    pub(crate) fn owns_position(&self, position: &[f64]) -> bool {
        let nd = self.grid.ndim;
        let (mut stored, mut chunk) = (vec![0.0; nd], vec![0; nd]);
        self.owner
            .as_ref()
            .is_none_or(|o| self.owner_with(position, &mut stored, &mut chunk) == o.part)
    }

    /// The owner of `position`, with scratch space for its stored coordinates and chunk.
    fn owner_with(&self, position: &[f64], stored: &mut [f64], chunk: &mut [i64]) -> u32 {
        let Some(o) = &self.owner else { return 0 };
        let ok = position.len() == self.grid.ndim
            && self
                .grid
                .store_into(position, || InputItem::Vertex(0), stored)
                .is_ok()
            && self.grid.chunk_in_range(stored, chunk).is_none();
        if ok {
            part_of(chunk, o.parts)
        } else {
            0
        }
    }

    /// Refuses a vertex (named by `item`) in chunk `coords` when another part owns it.
    pub(super) fn check_owned(
        &self,
        coords: &[i64],
        item: impl FnOnce() -> InputItem,
    ) -> Result<()> {
        match &self.owner {
            Some(o) if !self.owns_chunk(coords) => Err(Error::input(
                item(),
                format!(
                    "is in chunk {}, which part {} of {} owns, not this part ({})",
                    ChunkKey(coords.to_vec()),
                    part_of(coords, o.parts),
                    o.parts,
                    o.part
                ),
            )),
            _ => Ok(()),
        }
    }

    /// Refuses what a distributed write does not carry yet.
    pub(crate) fn check_part_options(&self) -> Result<()> {
        let geometry = &self.opts.geometry;
        if *geometry != Geometry::PointCloud && !geometry.is_sequential() {
            return Err(bad(format!(
                "distributed writes take point clouds, lines, polylines and streamlines for now, not {}",
                self.opts.geometry.name()
            )));
        }
        if self.opts.format_version == FormatVersion::V0_9
            && matches!(self.target, Target::Level(_))
        {
            return Err(bad(
                "distributed pyramid steps write the ZV 0.7 layout for now",
            ));
        }
        Ok(())
    }

    /// Finishes a part: writes its chunk blobs (in parallel), makes them durable, and returns
    /// its receipt (which the caller persists). Writes no level-global array and no document
    /// above the chunks.
    pub(crate) fn finish_part(self) -> Result<PartReceipt> {
        self.finish_part_with_places().map(|(receipt, _)| receipt)
    }

    /// [`ZvWriter::finish_part`], with where every vertex went (pyramid levels: their
    /// metavertices, by the number they were added with, for the cross-level links).
    pub(crate) fn finish_part_with_places(self) -> Result<(PartReceipt, super::Places)> {
        let store = std::sync::Arc::clone(self.blobs.store());
        crate::io_pool::with_store(store.as_ref(), move || self.write_part())
    }

    /// [`ZvWriter::finish_part_with_places`], on the pool the store wants.
    fn write_part(mut self) -> Result<(PartReceipt, super::Places)> {
        let owner = self
            .owner
            .clone()
            .ok_or_else(|| bad("not a part of a distributed write"))?;
        self.check_part_options()?;
        if !self.object_attributes.is_empty() || !self.groups.is_empty() {
            return Err(bad(
                "a part carries vertices only: give object attributes and groups to the commit",
            ));
        }
        self.check_chunks()?;
        let schema = self.columns.part_schema()?;
        let columns = self.columns.finish()?;
        let fragment_columns = self.fragment_columns()?;
        if self.opts.format_version == FormatVersion::V0_9 {
            // the grid is not known yet: the cells wait under the parts directory
            self.blobs.begin_staging(crate::parts::CELLS_DIR)?;
        }
        let chunks = self.write_chunk_blobs(None, &columns, &fragment_columns, None)?;
        drop(fragment_columns);
        self.blobs.store().sync()?;
        let receipts = self
            .spill
            .keys()
            .iter()
            .enumerate()
            .map(|(ci, key)| ChunkReceipt {
                key: key.0.clone(),
                rows: chunks.chunk_rows(ci),
                objects: chunks.objects(ci).to_vec(),
            })
            .collect();
        let extent = self.extent.seen();
        let (pieces, polylines) = self.polylines.take_part();
        let max_object = if self.opts.geometry.is_sequential() {
            // the last polyline given (the commit checks that every one below it is whole)
            self.polylines.count().checked_sub(1)
        } else {
            self.max_object
        };
        let places = if matches!(self.target, Target::Level(_)) {
            self.places(chunks)
        } else {
            super::Places::default()
        };
        let receipt = PartReceipt {
            run: owner.run,
            part: owner.part,
            parts: owner.parts,
            vertices: self.n_vertices,
            objects_given: self.objects_given,
            max_object,
            extent,
            columns: schema,
            chunks: receipts,
            pieces,
            polylines,
            cross_level_rows: None,
        };
        Ok((receipt, places))
    }

    /// Commits a distributed write from its parts' `receipts` (one per part, in any order;
    /// checked by the caller to belong to one run and to be complete): merges their chunks,
    /// then writes the object index, the object attributes and groups given to this writer,
    /// the documents, and the root last.
    pub(crate) fn commit_parts(mut self, mut receipts: Vec<PartReceipt>) -> Result<WriteSummary> {
        self.check_part_options()?;
        // the fragments' objects, moved out of the receipts (not copied: they are most of a
        // commit's memory), in the order the chunks are taken below
        let mut fragment_objects: Vec<Vec<u64>> = receipts
            .iter_mut()
            .flat_map(|r| r.chunks.iter_mut().map(|c| std::mem::take(&mut c.objects)))
            .collect();
        let receipts = &receipts;
        let mut owner_of: BTreeMap<&[i64], u32> = BTreeMap::new();
        // each receipt's chunks as the commit's chunk indices (for the polylines' pieces)
        let mut chunk_maps: Vec<Vec<u32>> = Vec::with_capacity(receipts.len());
        let mut schema: Option<(u32, &[crate::parts::ColumnSchema])> = None;
        for r in receipts {
            if let Some(given) = r.objects_given {
                self.check_id_mode(given).map_err(|_| {
                    bad(format!(
                        "part {} has {} object ids, another part {}",
                        r.part,
                        if given { "" } else { "no" },
                        if given { "none" } else { "has them" }
                    ))
                })?;
                self.objects_given = Some(given);
            }
            if r.vertices > 0 {
                match schema {
                    None => schema = Some((r.part, &r.columns)),
                    Some((p, s)) if s != r.columns.as_slice() => {
                        return Err(bad(format!(
                            "parts {p} and {} have different vertex attributes",
                            r.part
                        )))
                    }
                    Some(_) => {}
                }
            }
            let mut chunk_map = Vec::with_capacity(r.chunks.len());
            for c in &r.chunks {
                if let Some(other) = owner_of.insert(&c.key, r.part) {
                    return Err(Error::input(
                        InputItem::Chunk(ChunkKey(c.key.clone())),
                        format!("is claimed by parts {other} and {}", r.part),
                    ));
                }
                let ci = self.spill.index(&c.key);
                self.spill.set_rows(ci, c.rows);
                chunk_map.push(ci);
            }
            chunk_maps.push(chunk_map);
            if let Some((lo, hi)) = &r.extent {
                self.extent.note(lo);
                self.extent.note(hi);
            }
            if let Some(m) = r.max_object {
                self.max_object = Some(self.max_object.map_or(m, |x| x.max(m)));
            }
            self.n_vertices = self
                .n_vertices
                .checked_add(r.vertices)
                .ok_or_else(|| bad("more than 2^64 vertices"))?;
        }
        if let Some((_, s)) = schema {
            self.columns.install_part_schema(s)?;
        }
        let rows: u64 = self.spill.chunks().map(|(_, c)| c.rows).sum();
        if rows != self.n_vertices {
            return Err(bad(format!(
                "the parts' chunks hold {rows} vertices, their receipts count {}",
                self.n_vertices
            )));
        }
        if self.opts.geometry.is_sequential() {
            self.join_polylines(receipts, chunk_maps)?;
        } else if receipts
            .iter()
            .any(|r| !r.pieces.is_empty() || !r.polylines.is_empty())
        {
            return Err(bad(
                "a point cloud's part has polyline pieces in its receipt",
            ));
        }
        let counts = self.validate()?;
        if matches!(self.target, Target::Store) && self.blobs.node("")?.is_some() {
            return Err(bad(
                "another writer committed a store here first (the root zarr.json exists)",
            ));
        }
        let columns = self.columns.finish()?;
        if self.opts.format_version == FormatVersion::V0_9 {
            self.begin_grid_v09()?;
            self.adopt_part_cells(&columns)?;
        }
        if !self.has_objects() {
            fragment_objects.clear();
        }
        self.write_objects(&fragment_objects, &counts)?;
        self.write_vertex_documents(&columns, &self.fragment_columns()?)?;
        let routed = self.sequential_links()?;
        let cross_chunk_links = routed.cross_chunk_len() as u64;
        self.write_level_links(routed, &self.links.finish_columns()?, 0, None)?;
        self.write_level_and_root(rows, !columns.is_empty())?;
        Ok(WriteSummary {
            vertices: rows,
            chunks: self.spill.keys().len(),
            objects: counts.objects,
            intra_links: 0,
            cross_chunk_links,
            groups: counts.groups,
        })
    }

    /// Joins the parts' polyline pieces ([`super::part_pieces::join`]) into this writer's
    /// polylines: every polyline below the object count (the largest of the count given, the
    /// object attribute rows and the last polyline a part was given + 1) must be whole.
    fn join_polylines(
        &mut self,
        receipts: &[PartReceipt],
        chunk_maps: Vec<Vec<u32>>,
    ) -> Result<()> {
        let at_least = receipts
            .iter()
            .filter_map(|r| r.max_object.map(|m| m.saturating_add(1)))
            .chain(
                self.object_attributes
                    .values()
                    .map(|a| a.values.len() as u64),
            )
            .chain([self.num_objects_hint])
            .max()
            .unwrap_or(0);
        let inputs = receipts
            .iter()
            .zip(chunk_maps)
            .map(|(r, chunks)| super::part_pieces::PartInput {
                part: r.part,
                chunks,
                pieces: r.pieces.clone(),
                seen: r.polylines.clone(),
            })
            .collect();
        let rows: Vec<u64> = self.spill.chunks().map(|(_, c)| c.rows).collect();
        let (polylines, segments) = super::part_pieces::join(inputs, at_least, &rows)?;
        self.polylines = polylines;
        for (ci, n) in segments.into_iter().enumerate() {
            self.spill.set_segments(ci as u32, n);
        }
        Ok(())
    }
}
