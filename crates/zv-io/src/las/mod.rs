//! LAS and LAZ (ASPRS lidar point clouds), with the `las` crate (and its pure-Rust `laz`
//! decompressor).
//!
//! **Import** ([`import`]): LAS 1.0–1.4, point formats 0–3 and 6–8, compressed (LAZ) or not.
//! The positions are the scaled coordinates (`X · scale + offset`, exactly as laspy's `las.x`
//! gives them), stored as float64. Every standard dimension of the point format becomes a vertex
//! attribute under laspy's name and in its natural type: `intensity` (uint16),
//! `return_number`, `number_of_returns`, `classification`, `user_data` (uint8), the flags
//! `scan_direction_flag`, `edge_of_flight_line`, `synthetic`, `key_point`, `withheld` (and
//! `overlap`, `scanner_channel` in formats 6–8) as uint8, `scan_angle_rank` (int8, formats 0–5)
//! or `scan_angle` (int16, scaled by 0.006°, formats 6–8) as stored, `point_source_id`
//! (uint16), `gps_time` (float64) when the format has it, `red`, `green`, `blue` and `nir`
//! (uint16) when it has them. The header's facts (version, point format, scale, offset, system
//! identifier, generating software, file source id, GPS time type, and the VLRs but the LAZ
//! one) are kept as the root attribute [`HEADER_ATTRIBUTE`]. Points are read and handed to the
//! writer in batches, so a file of any size imports in bounded memory. Formats with waveform
//! packets (4, 5, 9, 10) and records with extra bytes are refused. Before the `las` crate reads
//! the file, the header's point count and extended-VLR length are checked against the file's
//! length, so a truncated file is an error at the byte offset of the first missing point, before
//! anything is written.
//!
//! **Export** ([`export`]): level 0 of a 3-D point cloud, with the kept header's version, point
//! format, scale, offset and VLRs (a store imported from elsewhere: LAS 1.2 format 0–3, or 1.4
//! format 6–8 when it has extended dimensions, by the attributes present; scale 0.001, offset
//! the whole units below the smallest position); LAZ when the output is `.laz`. Every vertex
//! attribute must be a dimension of that format, with values its field holds; positions are
//! rounded to the scale's grid, so the positions of an imported file come back bit for bit.
//! Object ids (which LAS has no place for) are refused. The points stream chunk by chunk
//! into a seekable output ([`export_seekable`]; the `las` writer seeks back to its header when
//! it closes), after a first pass over the positions when the offset must be chosen; to a
//! plain writer ([`export`]) the file is assembled in memory first.

mod check;
mod dims;
mod header;
mod read;
mod write;

pub use header::HEADER_ATTRIBUTE;
pub use read::import;
pub use write::{export, export_seekable};
