//! Read-only access to two older persistence formats still found on disks, and their
//! conversion to Zarr v3:
//!
//! - **zarr 0.4** ([`zarr04`]): `__zmeta__`, `__zattr__`, `__zdata__/i.j.blosc`;
//! - **bcolz 1.x** ([`bcolz`]): carrays (`meta/storage`, `meta/sizes`, `data/__N.blp`) and
//!   ctables (`__rootdirs__`, one carray per column).
//!
//! Both store chunks as c-blosc 1.x frames, decoded by `zv-codecs`' blosc codec after its
//! header checks. Arrays ([`LegacyArray`]) give shape, data type ([`dtype::NumpyDtype`]),
//! chunk shape, fill value, attributes, chunk iteration and region reads in C order, in
//! native byte order. [`convert::convert`] writes a Zarr v3 array (or, for a ctable, a group
//! with one array per column), passing blosc frames through where the chunk geometry allows.
//!
//! Every size is checked before anything is allocated: the metadata bounds the chunk size,
//! the chunk size bounds the file size, and blosc headers must agree with both. Errors name
//! the file at fault ([`Error::path`]).
//!
//! ```no_run
//! use std::path::Path;
//! match zv_legacy::open(Path::new("old-data"))? {
//!     zv_legacy::Legacy::Array(a) => println!("{:?} {}", a.shape(), a.dtype()),
//!     zv_legacy::Legacy::Table(t) => println!("{} rows", t.len()),
//! }
//! # Ok::<(), zv_legacy::Error>(())
//! ```

pub mod array;
pub mod bcolz;
pub mod convert;
pub mod dtype;
pub mod error;
pub mod files;
pub mod zarr04;

use std::path::Path;

pub use array::{ArrayInfo, LegacyArray, StoredChunk};
pub use error::{Error, Result};

/// The legacy formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// zarr 0.4 (`__zmeta__`).
    Zarr04,
    /// A bcolz carray (`meta/storage`).
    BcolzCarray,
    /// A bcolz ctable (`__rootdirs__`).
    BcolzCtable,
}

/// The prefix that selects zarr 0.4 in a store argument (`legacy-zarr:PATH`).
pub const ZARR04_PREFIX: &str = "legacy-zarr:";
/// The prefix that selects bcolz in a store argument (`bcolz:PATH`).
pub const BCOLZ_PREFIX: &str = "bcolz:";

/// What a directory holds, by its file names: `__zmeta__` (zarr 0.4), `__rootdirs__` (bcolz
/// ctable) or `meta/storage` (bcolz carray); `None` if none.
pub fn detect(root: &Path) -> Option<Format> {
    if root.join(zarr04::META_FILE).is_file() {
        Some(Format::Zarr04)
    } else if root.join(bcolz::ROOTDIRS_FILE).is_file() {
        Some(Format::BcolzCtable)
    } else if root.join(bcolz::STORAGE_FILE).is_file() {
        Some(Format::BcolzCarray)
    } else {
        None
    }
}

/// Splits a store argument with a `legacy-zarr:` or `bcolz:` prefix into the format family
/// and the path; `None` without a prefix.
pub fn strip_prefix(arg: &str) -> Option<(Format, &str)> {
    if let Some(p) = arg.strip_prefix(ZARR04_PREFIX) {
        Some((Format::Zarr04, p))
    } else {
        arg.strip_prefix(BCOLZ_PREFIX)
            .map(|p| (Format::BcolzCarray, p))
    }
}

/// An opened legacy array or table.
#[derive(Debug)]
pub enum Legacy {
    /// A zarr 0.4 array or a bcolz carray.
    Array(LegacyArray),
    /// A bcolz ctable.
    Table(bcolz::Ctable),
}

/// Opens whatever legacy format `root` holds (see [`detect`]).
pub fn open(root: &Path) -> Result<Legacy> {
    match detect(root) {
        Some(format) => open_as(root, format),
        None => Err(Error::unsupported(
            root,
            "no legacy array here (expected `__zmeta__`, `__rootdirs__` or `meta/storage`)",
        )),
    }
}

/// Opens `root` as `format` (a bcolz format opens a ctable if `__rootdirs__` is there).
pub fn open_as(root: &Path, format: Format) -> Result<Legacy> {
    match format {
        Format::Zarr04 => zarr04::open(root).map(Legacy::Array),
        Format::BcolzCarray | Format::BcolzCtable => {
            if root.join(bcolz::ROOTDIRS_FILE).is_file() {
                bcolz::Ctable::open(root).map(Legacy::Table)
            } else {
                bcolz::open_carray(root).map(Legacy::Array)
            }
        }
    }
}
