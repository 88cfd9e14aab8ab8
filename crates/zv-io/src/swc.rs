//! SWC.
use crate::error::{FileName, Result};
use crate::options::ImportOptions;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use zv_core::store::Store;
use zv_format::writer::WriteSummary;
use zv_format::ZvStore;
/// Imports.
pub fn import(path: &Path, _store: Arc<dyn Store>, _opts: &ImportOptions) -> Result<WriteSummary> {
    Err(FileName(path.display().to_string()).unsupported("todo"))
}
/// Exports.
pub fn export(_store: &ZvStore, _out: &mut dyn Write, file: &str) -> Result<()> {
    Err(FileName(file.into()).unsupported("todo"))
}
