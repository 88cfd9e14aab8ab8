//! zarr 0.4, zarr's first persistence format: a directory with `__zmeta__` (JSON: `shape`,
//! `chunks`, `dtype`, `fill_value`, `cname`, `clevel`, `shuffle`), `__zattr__` (user
//! attributes) and `__zdata__/i.j.blosc`, one raw c-blosc 1.x frame per chunk, **edge chunks
//! stored at the full chunk shape**; a missing chunk file reads as the fill value.
//!
//! ```no_run
//! let array = zv_legacy::zarr04::open(std::path::Path::new("example.zarr"))?;
//! let values = array.read_all()?; // native byte order, C order
//! # Ok::<(), zv_legacy::Error>(())
//! ```

mod array;
mod meta;

pub use array::{open, Zarr04Chunks};
pub use meta::{Zarr04Meta, ATTRS_FILE, DATA_DIR, META_FILE};
