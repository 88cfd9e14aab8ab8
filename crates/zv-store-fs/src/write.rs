//! Atomic writes, directories created once, and durability at commit.
//!
//! `set` writes a temporary file beside the target (`.NAME.zv-tmp.PID.N`, created with
//! `O_EXCL`, so an existing link of that name is never followed) and renames it over the
//! target: a reader sees the old value or the new one, never a torn file, and a link at the
//! target's name is replaced, not written through. A failed write removes its temporary file.
//!
//! Directories are created once per store: [`DirCache`] remembers every directory it made or
//! found (and, under [`SymlinkPolicy::WithinRoot`], checked to resolve inside the root), so a
//! store of N files costs N creates and renames plus one `mkdir` per directory, not one
//! `mkdir -p` per file. Deletes prune empty directories; a write that then finds its cached
//! directory gone forgets it and creates it again.
//!
//! Durability ([`Durability`]): with the default, [`Durability::Commit`], `set` does not sync;
//! [`FilesystemStore::sync`](crate::FilesystemStore) makes everything written so far durable
//! with one `syncfs(2)` of the root's file system. Writers of a hierarchy write their data,
//! sync, write the committing document and sync again (see the ZV writer's commit protocol).

use std::collections::HashSet;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use zv_core::node::METADATA_NAME;

use crate::confine::{resolves_within, SymlinkPolicy};

/// Marker inside the names of temporary files (never listed).
pub(crate) const TMP_MARKER: &str = ".zv-tmp.";

/// When the filesystem store makes writes durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// Never sync, not even on `sync()` (scratch data, tests).
    None,
    /// Sync nothing per write; `sync()` makes everything written durable at once. The
    /// default: writers commit a hierarchy by syncing before and after its root document.
    #[default]
    Commit,
    /// Sync every metadata document (`zarr.json`) and its directory as it is written, and
    /// everything on `sync()`.
    Metadata,
    /// Sync every value and its directory as it is written, and everything on `sync()`.
    All,
}

impl Durability {
    /// Whether a `set` of a key named `name` syncs before returning.
    pub(crate) fn syncs_each(self, name: &str) -> bool {
        match self {
            Durability::None | Durability::Commit => false,
            Durability::Metadata => name == METADATA_NAME,
            Durability::All => true,
        }
    }
}

/// Directories known to exist (and to resolve inside the root, when that is the policy).
#[derive(Debug, Default)]
pub(crate) struct DirCache {
    known: Mutex<HashSet<PathBuf>>,
}

impl DirCache {
    fn contains(&self, dir: &Path) -> bool {
        self.known.lock().map(|k| k.contains(dir)).unwrap_or(false)
    }

    fn insert(&self, dir: &Path) {
        if let Ok(mut k) = self.known.lock() {
            k.insert(dir.to_path_buf());
        }
    }

    /// Forgets `dir` and everything below it (after a delete or a failed write).
    pub(crate) fn forget(&self, dir: &Path) {
        if let Ok(mut k) = self.known.lock() {
            k.retain(|d| !d.starts_with(dir));
        }
    }

    /// Makes sure `dir` exists (creating it and its parents once) and, under
    /// [`SymlinkPolicy::WithinRoot`], that it resolves inside `root`.
    ///
    /// Below the root, each directory is handled once, parent first: a directory this call
    /// creates with one `mkdir` inside a known directory is inside the root by construction
    /// (`mkdir` never follows a link); one that already exists is checked: a real directory
    /// inside a known one is inside the root, and a symbolic link is resolved (under
    /// [`SymlinkPolicy::WithinRoot`]) and refused if it leaves the root. So nothing is created
    /// through a link that leaves the root, and creating a directory costs one `mkdir`.
    pub(crate) fn ensure(&self, root: &Path, dir: &Path, policy: SymlinkPolicy) -> io::Result<()> {
        if self.contains(dir) {
            return Ok(());
        }
        match dir.parent() {
            Some(parent) if dir != root && dir.starts_with(root) => {
                self.ensure(root, parent, policy)?;
                let mut made = fs::create_dir(dir);
                if made
                    .as_ref()
                    .is_err_and(|e| e.kind() == io::ErrorKind::NotFound)
                {
                    // a known directory was removed behind the store's back: forget it and
                    // create it again (each level retries once)
                    self.forget(parent);
                    self.ensure(root, parent, policy)?;
                    made = fs::create_dir(dir);
                }
                match made {
                    Ok(()) => {}
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                        check_existing(root, dir, policy)?;
                    }
                    Err(e) => return Err(e),
                }
            }
            // the root itself (or a directory outside it, which `set` never asks for)
            _ => fs::create_dir_all(dir)?,
        }
        self.insert(dir);
        Ok(())
    }
}

/// Checks a directory entry `dir` that already exists below `root`, in a directory known to
/// resolve inside it: a directory, or (under [`SymlinkPolicy::WithinRoot`], only if it
/// resolves inside the root) a symbolic link to one.
fn check_existing(root: &Path, dir: &Path, policy: SymlinkPolicy) -> io::Result<()> {
    let kind = fs::symlink_metadata(dir)?.file_type();
    if kind.is_dir() {
        return Ok(());
    }
    if kind.is_symlink() && policy == SymlinkPolicy::WithinRoot && !resolves_within(root, dir) {
        return Err(leaves_root());
    }
    if !fs::metadata(dir)?.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            "a file is in the way of a directory",
        ));
    }
    Ok(())
}

fn leaves_root() -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        "the directory is a symbolic link that leaves the store root",
    )
}

/// The number of the next temporary file of this process. It is process-wide, not per store:
/// two store handles on one directory in one process (threads that each open the store) must
/// never pick the same temporary name.
static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// How many temporary names a write tries before giving up (a name is taken only by a
/// leftover of an earlier process with the same id).
const TMP_ATTEMPTS: usize = 16;

/// Writes `value` to `path` through a temporary file and a rename.
pub(crate) fn write_atomic(path: &Path, name: &str, value: &[u8], sync: bool) -> io::Result<()> {
    through_temporary(path, name, value, sync, Publish::Rename)
}

/// Writes `value` to `path` only if nothing is there: through a temporary file hard-linked
/// into place, which the kernel refuses (`AlreadyExists`) when `path` exists, so of writers
/// racing to create `path` exactly one succeeds, and a reader never sees a partial value.
pub(crate) fn write_new(path: &Path, name: &str, value: &[u8], sync: bool) -> io::Result<()> {
    through_temporary(path, name, value, sync, Publish::Link)
}

/// How a complete temporary file takes its place.
#[derive(Clone, Copy, PartialEq)]
enum Publish {
    /// `rename(2)`: replaces whatever is at the path.
    Rename,
    /// `link(2)`: fails if the path exists; the temporary name is removed afterwards.
    Link,
}

/// Writes `value` into a new temporary file beside `path` (synced when `sync`) and publishes
/// it at `path`; the temporary file never outlives the call, except as `path` itself.
fn through_temporary(
    path: &Path,
    name: &str,
    value: &[u8],
    sync: bool,
    publish: Publish,
) -> io::Result<()> {
    let parent = path.parent().unwrap_or(Path::new("."));
    let (tmp, mut f) = create_temporary(parent, name)?;
    let result = (|| {
        f.write_all(value)?;
        if sync {
            f.sync_all()?;
        }
        drop(f);
        match publish {
            Publish::Rename => fs::rename(&tmp, path)?,
            Publish::Link => fs::hard_link(&tmp, path)?,
        }
        if sync {
            fs::File::open(parent)?.sync_all()?;
        }
        Ok(())
    })();
    // only the file this write created is removed: after a failure, or after a link (the
    // value stays under `path`)
    if result.is_err() || publish == Publish::Link {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Creates a new temporary file in `parent` for the value `name`: `.NAME.zv-tmp.PID.N`, with
/// the next N of this process; a name already taken is skipped, never opened.
fn create_temporary(parent: &Path, name: &str) -> io::Result<(std::path::PathBuf, fs::File)> {
    let mut last = None;
    for _ in 0..TMP_ATTEMPTS {
        let n = TMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = parent.join(format!(".{name}{TMP_MARKER}{}.{n}", std::process::id()));
        match fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no temporary file name")))
}

/// Makes everything written to the file system holding `root` durable (`syncfs(2)`).
pub(crate) fn sync_filesystem(root: &Path) -> io::Result<()> {
    let dir = match fs::File::open(root) {
        Ok(d) => d,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    rustix::fs::syncfs(&dir).map_err(io::Error::from)
}
