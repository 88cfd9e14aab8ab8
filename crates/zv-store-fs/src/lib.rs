//! # zv-store-fs — the filesystem store
//!
//! [`FilesystemStore`] implements the Zarr v3 *file system store* (v1.0): a key `a/b/c` is the
//! file `ROOT/a/b/c`, and listing translates paths back to keys. It registers the URL scheme
//! `file` (`file:///data/x.zarr`), which is also what a plain path opens.
//!
//! - **The root is a boundary.** Keys are [`StoreKey`]s, which refuse `..`, `.`, empty
//!   segments, absolute paths and backslashes; and symbolic links below the root are followed
//!   only while they resolve inside it ([`SymlinkPolicy::WithinRoot`], the default, enforced by
//!   the kernel through `openat2(RESOLVE_BENEATH)` on reads and by resolving each directory
//!   once on writes). [`FilesystemStore::with_symlinks`] with [`SymlinkPolicy::Follow`] trusts
//!   links wherever they lead.
//! - **Only regular files are values.** A FIFO, device or socket in place of a value is an
//!   error naming the key ([`StoreError::NotAValue`]), never opened in a way that blocks or
//!   reads without end; a directory reads as a missing key.
//! - **Atomic writes**: a temporary file beside the target, renamed over it (module `write`);
//!   temporary files are never listed.
//! - **Whole-store rewrites** ([`Shadow`]): a hard-linked copy of the store, changed and then
//!   exchanged with the original in one rename, so a crash leaves the old tree or the new one.
//! - **Durability at commit** ([`Durability`]): by default `set` does not sync and
//!   [`WritableStore::sync`] makes everything written durable with one `syncfs(2)`.
//! - **Bounded reads**: [`ReadableStore::get_capped`] refuses a file larger than the caller
//!   allows from its size before reading a byte.
//! - **The root held open**: reads open keys beneath one descriptor of the root directory,
//!   opened at the first read, not by walking the root's path each time; a read that finds
//!   nothing there opens the root again and retries, so a root deleted and made anew, or
//!   exchanged by a [`Shadow`], is followed. (A root renamed away while the old tree stays
//!   is read there until a key is missing from it.)
//! - **Exact reads**: a value, or a range of one, is read with one `pread` of its size (the
//!   kernel fetches a cold range in one request), a range with readahead off
//!   (`POSIX_FADV_RANDOM`: nothing around it is read from a cold disk).
//! - **Reused read buffers**: a large value is read into a buffer that returns to a small,
//!   bounded pool of the store when the last [`Bytes`] referring to it is dropped, so that
//!   large reads one after another (the shards of a region) skip mapping and faulting in fresh
//!   memory.
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
//! store.sync()?; // durable from here on
//! assert!(dir.path().join("g").join("zarr.json").is_file());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod confine;
mod listing;
mod pool;
mod shadow;
mod write;

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use zv_core::key::{StoreKey, StorePrefix};
use zv_core::plugin::{StorePlugin, StoreUrl};
use zv_core::store::{
    ByteRange, ListableStore, ReadableStore, Store, StoreError, StoreKeysPrefixes, StoreResult,
    WritableStore,
};

pub use confine::SymlinkPolicy;
pub use shadow::Shadow;
pub use write::Durability;

use listing::Walker;
use pool::BufferPool;
use write::DirCache;

/// A Zarr v3 store in a local directory.
#[derive(Debug)]
pub struct FilesystemStore {
    root: PathBuf,
    durability: Durability,
    symlinks: SymlinkPolicy,
    dirs: DirCache,
    /// Large read buffers kept for reuse (module `pool`).
    buffers: Arc<BufferPool>,
    /// The root directory, held open for reads (module `confine`).
    root_dir: confine::RootDir,
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
    /// A store rooted at `root`. The directory need not exist (it is created by the first
    /// write); a path that exists and is not a directory is an error.
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
            symlinks: SymlinkPolicy::default(),
            dirs: DirCache::default(),
            buffers: Arc::default(),
            root_dir: confine::RootDir::default(),
        })
    }

    /// The same store with another durability.
    pub fn with_durability(mut self, durability: Durability) -> Self {
        self.durability = durability;
        self
    }

    /// The same store with another symbolic-link policy.
    pub fn with_symlinks(mut self, policy: SymlinkPolicy) -> Self {
        self.symlinks = policy;
        self
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The file that holds `key`.
    pub fn key_to_path(&self, key: &StoreKey) -> PathBuf {
        let mut p = self.root.clone();
        p.extend(key.segments());
        p
    }

    fn relative(key: &StoreKey) -> PathBuf {
        key.segments().collect()
    }

    fn prefix_to_path(&self, prefix: &StorePrefix) -> PathBuf {
        let mut p = self.root.clone();
        p.extend(prefix.as_str().split('/').filter(|s| !s.is_empty()));
        p
    }

    fn open(&self, key: &StoreKey) -> StoreResult<Option<(fs::File, u64)>> {
        confine::open_value(
            &self.root,
            &self.root_dir,
            &Self::relative(key),
            self.symlinks,
            key.as_str(),
        )
    }

    /// The `size` bytes of `file` from offset `at`: one `pread` of exactly those bytes (more
    /// only when the kernel returns fewer), into a buffer reused from an earlier read where
    /// one fits (module `pool`) for whole values (`whole`), else into a buffer of exactly
    /// `size` bytes. A single read of the exact size lets the kernel fetch a cold range in one
    /// request (reading through `Read` would grow from 8 KiB a call, each its own request).
    fn read_all(
        &self,
        key: &StoreKey,
        file: &fs::File,
        at: u64,
        size: u64,
        whole: bool,
    ) -> StoreResult<Bytes> {
        let n = usize::try_from(size).unwrap_or(usize::MAX);
        let mut buf = if whole {
            self.buffers.take(n).unwrap_or_default()
        } else {
            Vec::new()
        };
        buf.try_reserve_exact(n)
            .map_err(|e| io_err(key)(io::Error::new(io::ErrorKind::OutOfMemory, e)))?;
        while buf.len() < n {
            // reads into all the spare capacity: at most what a pooled buffer holds beyond
            // `n` (below 2n), which for a whole value is past the end of the file anyway
            let offset = at + buf.len() as u64;
            match rustix::io::pread(file, rustix::buffer::spare_capacity(&mut buf), offset) {
                Ok(0) => {
                    let e = io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        format!("the file ended after {} of {n} bytes", buf.len()),
                    );
                    return Err(io_err(key)(e));
                }
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(io_err(key)(e.into())),
            }
        }
        buf.truncate(n);
        Ok(BufferPool::share(&self.buffers, buf))
    }

    fn write_once(&self, key: &StoreKey, path: &Path, value: &[u8]) -> io::Result<()> {
        let parent = path.parent().unwrap_or(&self.root);
        self.dirs.ensure(&self.root, parent, self.symlinks)?;
        let sync = self.durability.syncs_each(key.name());
        write::write_atomic(path, key.name(), value, sync)
    }

    /// Ends a removal of `path` (a file or a directory tree): on success prunes the
    /// directories it left empty; a `path` that was already gone is a success too.
    fn removed(&self, path: &Path, result: io::Result<()>) -> io::Result<()> {
        match result {
            Ok(()) => {
                if let Some(parent) = path.parent() {
                    self.prune(parent);
                }
                Ok(())
            }
            Err(e) if is_not_found(&e) || e.kind() == io::ErrorKind::NotADirectory => Ok(()),
            Err(e) => Err(e),
        }
    }

    fn prune(&self, mut dir: &Path) {
        while dir != self.root && dir.starts_with(&self.root) {
            if fs::remove_dir(dir).is_err() {
                break;
            }
            self.dirs.forget(dir);
            match dir.parent() {
                Some(p) => dir = p,
                None => break,
            }
        }
    }
}

impl ReadableStore for FilesystemStore {
    fn get(&self, key: &StoreKey) -> StoreResult<Option<Bytes>> {
        match self.open(key)? {
            Some((file, size)) => self.read_all(key, &file, 0, size, true).map(Some),
            None => Ok(None),
        }
    }

    fn get_capped(&self, key: &StoreKey, max: u64) -> StoreResult<Option<Bytes>> {
        match self.open(key)? {
            Some((file, size)) => {
                StoreError::check_size(key, size, max)?;
                self.read_all(key, &file, 0, size, true).map(Some)
            }
            None => Ok(None),
        }
    }

    fn get_range(&self, key: &StoreKey, range: ByteRange) -> StoreResult<Option<Bytes>> {
        let Some((file, size)) = self.open(key)? else {
            return Ok(None);
        };
        let r = range.within(key, size)?;
        // a part of a value (an inner chunk, a shard index) is read as asked: no readahead
        // around it, which on a cold disk reads what nobody asked for
        let _ = rustix::fs::fadvise(&file, 0, None, rustix::fs::Advice::Random);
        self.read_all(key, &file, r.start, r.end - r.start, false)
            .map(Some)
    }

    fn size(&self, key: &StoreKey) -> StoreResult<Option<u64>> {
        Ok(self.open(key)?.map(|(_, size)| size))
    }
}

impl WritableStore for FilesystemStore {
    fn set(&self, key: &StoreKey, value: Bytes) -> StoreResult<()> {
        let path = self.key_to_path(key);
        match self.write_once(key, &path, &value) {
            // A concurrent delete may have pruned a directory this store created: forget it
            // and try once more.
            Err(e) if is_not_found(&e) => {
                if let Some(parent) = path.parent() {
                    self.dirs.forget(parent);
                }
                self.write_once(key, &path, &value).map_err(io_err(key))
            }
            other => other.map_err(io_err(key)),
        }
    }

    fn delete(&self, key: &StoreKey) -> StoreResult<()> {
        let path = self.key_to_path(key);
        match self.removed(&path, fs::remove_file(&path)) {
            Ok(()) => Ok(()),
            Err(_) if path.is_dir() => Ok(()),
            Err(e) => Err(io_err(key)(e)),
        }
    }

    fn sync(&self) -> StoreResult<()> {
        if self.durability == Durability::None {
            return Ok(());
        }
        write::sync_filesystem(&self.root).map_err(io_err(""))
    }
}

impl ListableStore for FilesystemStore {
    fn list_prefix(&self, prefix: &StorePrefix) -> StoreResult<Vec<StoreKey>> {
        let mut out = Vec::new();
        Walker::new(&self.root, self.symlinks).walk(
            &self.prefix_to_path(prefix),
            prefix.as_str(),
            &mut out,
        )?;
        out.sort();
        Ok(out)
    }

    fn list_dir(&self, prefix: &StorePrefix) -> StoreResult<StoreKeysPrefixes> {
        Walker::new(&self.root, self.symlinks).list_dir(&self.prefix_to_path(prefix), prefix)
    }
}

impl Store for FilesystemStore {
    /// Atomic: the value is written under a temporary name and hard-linked into place, which
    /// fails if `key` exists ([`StoreError::AlreadyExists`]), so of two writers creating the
    /// same key exactly one succeeds.
    fn set_new(&self, key: &StoreKey, value: Bytes) -> StoreResult<()> {
        let path = self.key_to_path(key);
        let write = || {
            let parent = path.parent().unwrap_or(&self.root);
            self.dirs.ensure(&self.root, parent, self.symlinks)?;
            let sync = self.durability.syncs_each(key.name());
            write::write_new(&path, key.name(), &value, sync)
        };
        let result = match write() {
            // a concurrent delete may have pruned a directory this store created
            Err(e) if is_not_found(&e) => {
                if let Some(parent) = path.parent() {
                    self.dirs.forget(parent);
                }
                write()
            }
            other => other,
        };
        result.map_err(|e| match e.kind() {
            io::ErrorKind::AlreadyExists => StoreError::AlreadyExists {
                key: key.to_string(),
            },
            _ => io_err(key)(e),
        })
    }

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
            self.dirs.forget(&self.root);
            return Ok(());
        }
        self.dirs.forget(&dir);
        self.removed(&dir, fs::remove_dir_all(&dir))
            .map_err(io_err(prefix))
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
