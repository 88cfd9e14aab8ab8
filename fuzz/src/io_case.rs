//! The file formats `zv import` reads (zv-io): a fuzz input is written to a file of the
//! format's extension (in a per-process scratch directory, see `scratch`) and
//! imported by `zv_io::import_file` into an in-memory store, in batches of 7 vertices so
//! batching and spilling paths run. A file that imports must give a store that opens and whose
//! level 0 exports in the same format without a panic (an export may refuse with an error).

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use zv_core::store::Store;
use zv_format::ZvStore;
use zv_io::{ExportOptions, Format, ImportOptions};

/// The prefix of the scratch directories, followed by the process id.
const SCRATCH_PREFIX: &str = "zv-fuzz-io-";

/// The scratch directory of this process: under `$TMPDIR` when it is set, else `/dev/shm` where
/// present, else the default temporary directory. libFuzzer ends a run with `exit`, which runs
/// no destructor, so the directory outlives its process: the scratch directories of processes
/// that no longer exist (no `/proc/<pid>`) are removed when a process makes its own.
fn scratch() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let base = match std::env::var_os("TMPDIR") {
            Some(dir) if !dir.is_empty() => PathBuf::from(dir),
            _ if std::path::Path::new("/dev/shm").is_dir() => PathBuf::from("/dev/shm"),
            _ => std::env::temp_dir(),
        };
        remove_stale(&base);
        let dir = base.join(format!("{SCRATCH_PREFIX}{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("scratch {}: {e}", dir.display()));
        dir
    })
}

/// Removes the scratch directories in `base` of processes that have ended (best effort: only
/// where `/proc` lists processes).
fn remove_stale(base: &std::path::Path) {
    if !std::path::Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(SCRATCH_PREFIX))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Imports `data` as a file of `format` (extension `ext`) and checks what a successful import
/// promises.
pub fn import_case(format: Format, ext: &str, data: &[u8]) {
    zv_format::link_plugins();
    let path = scratch().join(format!("input.{ext}"));
    std::fs::write(&path, data).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    let store: Arc<dyn Store> = Arc::new(zv_store_mem::MemoryStore::new());
    let opts = ImportOptions {
        batch: 7,
        ..ImportOptions::default()
    };
    if zv_io::import_file(&path, format, store.clone(), &opts).is_err() {
        return;
    }
    let zv = ZvStore::open(store)
        .unwrap_or_else(|e| panic!("a store zv imported from {ext} does not open: {e}"));
    let mut out = Vec::new();
    let _ = zv_io::export(
        &zv,
        format,
        &mut out,
        &format!("out.{ext}"),
        &ExportOptions::default(),
    );
}
