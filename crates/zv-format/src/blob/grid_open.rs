//! Opening the grid arrays of a ZV 0.9 store, each once per [`Blobs`]: the array at a path
//! (its document read with `nonempty_chunks` left as JSON text, which most reads never
//! need), and the cell a blob path names.

use std::sync::Arc;

use serde_json::value::RawValue;
use zv_core::array::{parse_node_metadata_deferring, read_node_metadata_deferring};
use zv_core::metadata::NodeMetadata;
use zv_core::node::NodePath;

use super::{cell_of, grid, node_path, zarr_error, BlobData, Blobs, GridArray};
use crate::error::{Error, Result};
use crate::metadata::Layout;

impl Blobs {
    /// The ZV 0.9 grid array at `path` (`None` if there is no array node there, or the store
    /// is not laid out on chunk grids), opened once.
    pub fn grid(&self, path: &str) -> Result<Option<Arc<GridArray>>> {
        if self.layout != Layout::ChunkGrid {
            return Ok(None);
        }
        self.grid_at(&node_path(path)?)
    }

    pub(super) fn grid_at(&self, path: &NodePath) -> Result<Option<Arc<GridArray>>> {
        if let Some(g) = self.grids.lock().ok().and_then(|m| m.get(path).cloned()) {
            return Ok(g);
        }
        let grid = match self.grid_node_at(path)? {
            Some((NodeMetadata::Array(meta), nonempty)) => Some(Arc::new(GridArray::open(
                self.grid_store(),
                path,
                meta,
                nonempty,
            )?)),
            _ => None,
        };
        // threads that opened the array at once all use the first one stored, so that they
        // share its decoded shards
        match self.grids.lock() {
            Ok(mut m) => Ok(m.entry(path.clone()).or_insert(grid).clone()),
            Err(_) => Ok(grid),
        }
    }

    /// The cell `path` (`<grid array>/<chunk key>`) of a ZV 0.9 grid array, if `path` names
    /// one; `None` otherwise or when the cell is empty.
    pub(super) fn grid_cell(&self, path: &NodePath) -> Result<Option<BlobData>> {
        let Some((parent, key)) = cell_of(path)? else {
            return Ok(None);
        };
        let Some(grid) = self.grid_at(&parent)? else {
            return Ok(None);
        };
        Ok(grid.cell(&key)?.map(BlobData::Bytes))
    }

    /// The parsed `zarr.json` at `path` with its attribute `nonempty_chunks` left as JSON
    /// text (a ZV 0.9 grid array's list of its cells, which most reads never need); a group's
    /// is put back in its attributes.
    pub(super) fn grid_node_at(
        &self,
        path: &NodePath,
    ) -> Result<Option<(NodeMetadata, Option<Box<RawValue>>)>> {
        let key = path.metadata_key();
        let found = match self.take_early(path) {
            Some(early) => early
                .map(|bytes| parse_node_metadata_deferring(&key, &bytes, &[grid::NONEMPTY_CHUNKS]))
                .transpose(),
            None => {
                read_node_metadata_deferring(self.store.as_ref(), path, &[grid::NONEMPTY_CHUNKS])
            }
        }
        .map_err(|e| zarr_error(e, &key))?;
        let Some((mut meta, deferred)) = found else {
            return Ok(None);
        };
        let nonempty = deferred.into_iter().next_back().map(|(_, raw)| raw);
        if let (NodeMetadata::Group(g), Some(raw)) = (&mut meta, &nonempty) {
            let value = serde_json::from_str(raw.get())
                .map_err(|e| Error::metadata(path.metadata_key().as_str(), e.to_string()))?;
            g.attributes.insert(grid::NONEMPTY_CHUNKS.into(), value);
            return Ok(Some((meta, None)));
        }
        Ok(Some((meta, nonempty)))
    }
}
