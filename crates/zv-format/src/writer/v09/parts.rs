//! The commit of a distributed ZV 0.9 write (`crate::parts`, "The 0.9 layout"): the cells
//! the parts staged are moved into the level's chunk grid, once the grid is set.

use rayon::prelude::*;
use zv_core::metadata::ExtensionMetadata;

use super::super::columns::FinishedColumn;
use super::super::ZvWriter;
use crate::blob::join;
use crate::error::Result;
use crate::names;

impl ZvWriter {
    /// Moves every cell the parts staged into the chunk grid (set by
    /// [`ZvWriter::begin_grid_v09`]): for each chunk of the receipts, its `vertices`,
    /// `vertex_fragments` and vertex attribute cells (what a part writes per chunk), in
    /// parallel. A missing staged cell is an error naming its key.
    pub(in crate::writer) fn adopt_part_cells(&self, columns: &[FinishedColumn]) -> Result<()> {
        let mut arrays: Vec<(String, Vec<ExtensionMetadata>)> = vec![
            (
                join(&[&self.level, names::VERTICES]),
                self.codecs(self.grid.vsize),
            ),
            (
                join(&[&self.level, names::VERTEX_FRAGMENTS]),
                self.codecs(8),
            ),
        ];
        for c in columns {
            arrays.push((
                join(&[&self.level, names::VERTEX_ATTRIBUTES, &c.name]),
                self.codecs(c.data_type.size().unwrap_or(1)),
            ));
        }
        let keys = self.spill.keys();
        arrays
            .par_iter()
            .flat_map(|a| keys.par_iter().map(move |k| (a, k)))
            .try_for_each(|((array, codecs), key)| {
                self.blobs.adopt_staged_cell(
                    crate::parts::CELLS_DIR,
                    &join(&[array, &key.to_string()]),
                    codecs,
                )
            })
    }
}
