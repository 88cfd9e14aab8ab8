//! bcolz 1.x: carrays (`meta/storage`, `meta/sizes`, `data/__N.blp` superchunks, `__attrs__`)
//! and ctables (`__rootdirs__` naming one carray per column under `<root>/<name>/`).
//!
//! Each superchunk is a 16-byte `blpk` header (magic, version 1, 3 reserved bytes, i64
//! `nchunks` = 1) followed by one c-blosc 1.x frame of `chunklen` rows; the last chunk (the
//! leftover) holds only the remaining rows. `meta/sizes`' `shape` is trusted over the number
//! of files. A multidimensional carray of `shape = [N, …]` has rows of `dtype(shape[1:])`.
//!
//! ```no_run
//! use std::path::Path;
//! let column = zv_legacy::bcolz::open_carray(Path::new("table.bcolz/price"))?;
//! let table = zv_legacy::bcolz::Ctable::open(Path::new("table.bcolz"))?;
//! for (name, array) in table.columns() { println!("{name}: {:?}", array.shape()); }
//! # Ok::<(), zv_legacy::Error>(())
//! ```

mod carray;
mod ctable;
mod storage;
mod superchunk;

pub use carray::{open_carray, CarrayChunks};
pub use ctable::{Ctable, ROOTDIRS_FILE};
pub use storage::{Sizes, Storage, ATTRS_FILE, SIZES_FILE, STORAGE_FILE};
pub use superchunk::{split_superchunk, SUPERCHUNK_HEADER_SIZE};
