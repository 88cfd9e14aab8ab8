//! # zv-store-fs — the filesystem store
//!
//! [`FilesystemStore`] implements the Zarr v3 *file system store* (v1.0): a key `a/b/c` is the
//! file `ROOT/a/b/c`, and listing translates paths back to keys. It registers the URL scheme
//! `file` (`file:///data/x.zarr`), which is also what a plain path opens.
//!
//! - **Keys cannot escape the root**: keys are [`StoreKey`]s, which refuse `..`, `.`, empty
//!   segments, absolute paths and backslashes.
//! - **Atomic writes**: `set` writes a temporary file beside the target
//!   (`.NAME.zv-tmp.PID.N`) and renames it over the target, so a reader sees the old value or
//!   the new one, never a torn file; a failed write removes the temporary file and leaves the
//!   old value. Temporary files are never listed.
//! - **Durability** ([`Durability`]): by default metadata documents (`zarr.json`) are synced
//!   to disk before the rename and their directory after it; chunk data is not synced
//!   (choose [`Durability::All`] to sync everything).
//! - Deleting the last key of a directory removes the empty directories above it, so listings
//!   never show empty prefixes.
//!
//! ```
//! use bytes::Bytes;
//! use zv_core::key::StoreKey;
//! use zv_core::store::{ReadableStore, WritableStore};
//! let dir = tempfile::tempdir()?;
//! let store = zv_store_fs::FilesystemStore::new(dir.path())?;
//! store.set(&StoreKey::new("g/zarr.json")?, Bytes::from_static(b"{}"))?;
//! assert!(dir.path().join("g").join("zarr.json").is_file());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fs;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use zv_core::key::{StoreKey, StorePrefix};
use zv_core::node::METADATA_NAME;
use zv_core::plugin::{StorePlugin, StoreUrl};
use zv_core::store::{
    ByteRange, ListableStore, ReadableStore, Store, StoreError, StoreKeysPrefixes, StoreResult,
    WritableStore,
};

/// The marker in the names of temporary files.
const TMP_MARKER: &str = ".zv-tmp.";

/// What `set` syncs to disk before returning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// Nothing (the rename is still atomic for readers).
    None,
    /// Metadata documents (`zarr.json`) and their directories.
    #[default]
    Metadata,
    /// Every value and its directory.
    All,
}

/// A store in a directory of the local filesystem.
#[derive(Debug)]
pub struct FilesystemStore {
    root: PathBuf,
    durability: Durability,
    counter: AtomicU64,
}

fn io_err(key: impl ToString) -> impl FnOnce(io::Error) -> StoreError {
    move |source| StoreError::Io {
        key: key.to_string(),
        source,
    }
}

fn is_not_found(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::NotFound
}

impl FilesystemStore {
    /// A store rooted at `root`. The directory does not have to exist yet (it is created by
    /// the first write; reads of a missing root find nothing); an existing path that is not a
    /// directory is an error.
    pub fn new(root: impl AsRef<Path>) -> StoreResult<Self> {
        let root = root.as_ref().to_path_buf();
        let shown = root.display().to_string();
        match fs::metadata(&root) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(StoreError::Open {
                    url: shown,
                    reason: "exists and is not a directory".into(),
                })
            }
            Err(e) if is_not_found(&e) => {}
            Err(e) => return Err(io_err(&shown)(e)),
        }
        Ok(Self {
            root,
            durability: Durability::default(),
            counter: AtomicU64::new(0),
        })
    }

    /// Sets what `set` syncs to disk.
    pub fn with_durability(mut self, durability: Durability) -> Self {
        self.durability = durability;
        self
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The filesystem path of `key`.
    pub fn key_to_path(&self, key: &StoreKey) -> PathBuf {
        let mut p = self.root.clone();
        p.extend(key.segments());
        p
    }

    fn prefix_to_path(&self, prefix: &StorePrefix) -> PathBuf {
        let mut p = self.root.clone();
        p.extend(prefix.as_str().split('/').filter(|s| !s.is_empty()));
        p
    }

    fn should_sync(&self, key: &StoreKey) -> bool {
        match self.durability {
            Durability::None => false,
            Durability::Metadata => key.name() == METADATA_NAME,
            Durability::All => true,
        }
    }

    fn write_atomic(&self, key: &StoreKey, path: &Path, value: &[u8]) -> io::Result<()> {
        let parent = path.parent().unwrap_or(&self.root);
        fs::create_dir_all(parent)?;
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let tmp = parent.join(format!(
            ".{}{TMP_MARKER}{}.{n}",
            key.name(),
            std::process::id()
        ));
        let result = (|| {
            let mut f = fs::File::create(&tmp)?;
            f.write_all(value)?;
            if self.should_sync(key) {
                f.sync_all()?;
            }
            drop(f);
            fs::rename(&tmp, path)?;
            if self.should_sync(key) {
                if let Ok(dir) = fs::File::open(parent) {
                    // Directory fsync is best effort (not every platform supports it).
                    let _ = dir.sync_all();
                }
            }
            Ok(())
        })();
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result
    }

    /// Removes empty directories from `dir` up to (not including) the root.
    fn prune(&self, mut dir: &Path) {
        while dir != self.root && dir.starts_with(&self.root) {
            if fs::remove_dir(dir).is_err() {
                break;
            }
            match dir.parent() {
                Some(p) => dir = p,
                None => break,
            }
        }
    }

    /// Appends the keys of every file below `dir` (whose key prefix is `prefix`).
    fn walk(&self, dir: &Path, prefix: &str, out: &mut Vec<StoreKey>) -> StoreResult<()> {
        let entries = match fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) if is_not_found(&e) || e.kind() == io::ErrorKind::NotADirectory => return Ok(()),
            Err(e) => return Err(io_err(prefix)(e)),
        };
        for entry in entries {
            let entry = entry.map_err(io_err(prefix))?;
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                continue; // not UTF-8: not a key of this store
            };
            if name.contains(TMP_MARKER) {
                continue;
            }
            let file_type = match entry.file_type() {
                Ok(t) => t,
                Err(e) if is_not_found(&e) => continue,
                Err(e) => return Err(io_err(format!("{prefix}{name}"))(e)),
            };
            let key_text = format!("{prefix}{name}");
            if file_type.is_dir() {
                self.walk(&entry.path(), &format!("{key_text}/"), out)?;
            } else if let Ok(key) = StoreKey::new(key_text) {
                out.push(key);
            }
        }
        Ok(())
    }

    /// Whether `dir` holds at least one (non-temporary) file, at any depth.
    fn has_files(dir: &Path) -> bool {
        let Ok(entries) = fs::read_dir(dir) else {
            return false;
        };
        entries.flatten().any(|e| {
            let name_ok = e
                .file_name()
                .to_str()
                .is_some_and(|n| !n.contains(TMP_MARKER));
            match e.file_type() {
                Ok(t) if t.is_dir() => name_ok && Self::has_files(&e.path()),
                Ok(_) => name_ok,
                Err(_) => false,
            }
        })
    }
}

impl ReadableStore for FilesystemStore {
    fn get(&self, key: &StoreKey) -> StoreResult<Option<Bytes>> {
        let path = self.key_to_path(key);
        match fs::read(&path) {
            Ok(v) => Ok(Some(Bytes::from(v))),
            Err(e) if is_not_found(&e) || path.is_dir() => Ok(None),
            Err(e) if e.kind() == io::ErrorKind::NotADirectory => Ok(None),
            Err(e) => Err(io_err(key)(e)),
        }
    }

    fn get_range(&self, key: &StoreKey, range: ByteRange) -> StoreResult<Option<Bytes>> {
        let path = self.key_to_path(key);
        let mut file = match fs::File::open(&path) {
            Ok(f) => f,
            Err(e) if is_not_found(&e) || e.kind() == io::ErrorKind::NotADirectory => {
                return Ok(None)
            }
            Err(e) => return Err(io_err(key)(e)),
        };
        let meta = file.metadata().map_err(io_err(key))?;
        if meta.is_dir() {
            return Ok(None);
        }
        let size = meta.len();
        let r = range
            .to_range(size)
            .ok_or_else(|| StoreError::InvalidRange {
                key: key.to_string(),
                range,
                size,
            })?;
        file.seek(SeekFrom::Start(r.start)).map_err(io_err(key))?;
        let mut buf = vec![0u8; (r.end - r.start) as usize];
        file.read_exact(&mut buf).map_err(io_err(key))?;
        Ok(Some(Bytes::from(buf)))
    }

    fn size(&self, key: &StoreKey) -> StoreResult<Option<u64>> {
        match fs::metadata(self.key_to_path(key)) {
            Ok(m) if m.is_file() => Ok(Some(m.len())),
            Ok(_) => Ok(None),
            Err(e) if is_not_found(&e) || e.kind() == io::ErrorKind::NotADirectory => Ok(None),
            Err(e) => Err(io_err(key)(e)),
        }
    }
}

impl WritableStore for FilesystemStore {
    fn set(&self, key: &StoreKey, value: Bytes) -> StoreResult<()> {
        let path = self.key_to_path(key);
        match self.write_atomic(key, &path, &value) {
            // A concurrent delete may prune the directory between creating it and writing:
            // try once more.
            Err(e) if is_not_found(&e) => {
                self.write_atomic(key, &path, &value).map_err(io_err(key))
            }
            other => other.map_err(io_err(key)),
        }
    }

    fn delete(&self, key: &StoreKey) -> StoreResult<()> {
        let path = self.key_to_path(key);
        match fs::remove_file(&path) {
            Ok(()) => {
                if let Some(parent) = path.parent() {
                    self.prune(parent);
                }
                Ok(())
            }
            Err(e) if is_not_found(&e) || e.kind() == io::ErrorKind::NotADirectory => Ok(()),
            Err(_) if path.is_dir() => Ok(()),
            Err(e) => Err(io_err(key)(e)),
        }
    }
}

impl ListableStore for FilesystemStore {
    fn list_prefix(&self, prefix: &StorePrefix) -> StoreResult<Vec<StoreKey>> {
        let mut out = Vec::new();
        self.walk(&self.prefix_to_path(prefix), prefix.as_str(), &mut out)?;
        out.sort();
        Ok(out)
    }

    fn list_dir(&self, prefix: &StorePrefix) -> StoreResult<StoreKeysPrefixes> {
        let dir = self.prefix_to_path(prefix);
        let mut out = StoreKeysPrefixes::default();
        let entries = match fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if is_not_found(&e) || e.kind() == io::ErrorKind::NotADirectory => {
                return Ok(out)
            }
            Err(e) => return Err(io_err(prefix)(e)),
        };
        for entry in entries {
            let entry = entry.map_err(io_err(prefix))?;
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                continue;
            };
            if name.contains(TMP_MARKER) {
                continue;
            }
            match entry.file_type() {
                Ok(t) if t.is_dir() => {
                    if Self::has_files(&entry.path()) {
                        if let Ok(p) = prefix.child(&name) {
                            out.prefixes.push(p);
                        }
                    }
                }
                Ok(_) => {
                    if let Ok(k) = prefix.key(&name) {
                        out.keys.push(k);
                    }
                }
                Err(e) if is_not_found(&e) => {}
                Err(e) => return Err(io_err(format!("{prefix}{name}"))(e)),
            }
        }
        out.keys.sort();
        out.prefixes.sort();
        Ok(out)
    }
}

impl Store for FilesystemStore {
    fn delete_prefix(&self, prefix: &StorePrefix) -> StoreResult<()> {
        let dir = self.prefix_to_path(prefix);
        if prefix.is_root() {
            let entries = match fs::read_dir(&dir) {
                Ok(e) => e,
                Err(e) if is_not_found(&e) => return Ok(()),
                Err(e) => return Err(io_err("")(e)),
            };
            for entry in entries.flatten() {
                let path = entry.path();
                let r = match entry.file_type() {
                    Ok(t) if t.is_dir() => fs::remove_dir_all(&path),
                    _ => fs::remove_file(&path),
                };
                match r {
                    Err(e) if !is_not_found(&e) => return Err(io_err("")(e)),
                    _ => {}
                }
            }
            return Ok(());
        }
        match fs::remove_dir_all(&dir) {
            Ok(()) => {
                if let Some(parent) = dir.parent() {
                    self.prune(parent);
                }
                Ok(())
            }
            Err(e) if is_not_found(&e) || e.kind() == io::ErrorKind::NotADirectory => Ok(()),
            Err(e) => Err(io_err(prefix)(e)),
        }
    }
}

/// Opens a filesystem store for a `file://` URL or a plain path.
pub fn open_url(url: &StoreUrl) -> Result<Arc<dyn Store>, StoreError> {
    Ok(Arc::new(FilesystemStore::new(&url.location)?))
}

/// Does nothing; calling it makes sure this crate (and its registration) is linked.
#[inline(never)]
pub fn link() {}

inventory::submit! {
    StorePlugin::new("file", "local filesystem directory (file:///path or a plain path)", open_url)
}
