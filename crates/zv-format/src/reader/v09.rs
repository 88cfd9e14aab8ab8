//! What reading a ZV 0.9 store (`zv_version` 0.9.x, zarr-vectors 0.9.2) needs beyond the 0.7
//! reader (`docs/format-decisions.md`, "ZV 0.9 stores").
//!
//! Most of a 0.9 level reads through the 0.7 code unchanged: [`crate::blob::Blobs`] opened
//! with [`crate::metadata::Layout::ChunkGrid`] serves the cell of chunk `k` of a grid array
//! `a` as the blob `a/k` (the cell's bytes are the 0.7 blob's bytes) and lists the non-empty
//! cells as the array's blobs, so vertices, fragments, vertex attributes, box queries and
//! scans need nothing here. This module holds what 0.9 stores differently: the object index's
//! row → id table (`object_ids`), flat dense attribute arrays whose `fill_value` marks absent
//! rows (`dense`), vlen-bytes groups (`groups`), the link family `links/<delta>/<offsets>` (`links`) and the link attribute
//! families mirroring it (`link_attributes`).

pub(crate) mod dense;
pub(crate) mod groups;
pub(crate) mod link_attributes;
pub(crate) mod links;
pub(crate) mod object_ids;
