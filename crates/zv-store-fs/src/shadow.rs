//! Rewriting a whole store so that a crash leaves either the old tree or the new one: a
//! [`Shadow`] copy of the store directory made of hard links (one link per file, no data
//! copied), changed through its own [`FilesystemStore`](crate::FilesystemStore), then
//! [published](Shadow::publish) over the original by one `renameat2(RENAME_EXCHANGE)`.
//!
//! Hard links are safe here because `set` never writes through an existing file: it renames a
//! new file over the name (module `write`), so a value changed in the shadow gets a new inode
//! and the original's file stays as it was; `delete` only unlinks the shadow's name.
//!
//! - The shadow is the sibling directory `.NAME.zv-shadow.PID` (PID: the writing process). A
//!   shadow left by a killed process is removed by the next [`Shadow::create`] beside the same
//!   store once no process of that id runs; an unpublished shadow is removed when dropped.
//! - One rewrite at a time: [`Shadow::create`] takes an exclusive `flock` on the store
//!   directory and fails at once if another process holds it.
//! - [`Shadow::publish`] makes the shadow durable (`syncfs`), exchanges the two directories,
//!   makes the exchange durable (`fsync` of the parent) and removes the old tree. Where the
//!   exchange is not supported (other systems than Linux, some file systems) it falls back to
//!   two renames, with a moment at which the store's path is empty.
//! - [`Shadow::empty`] starts from an empty directory instead: publishing it replaces the
//!   store by a new one written from scratch.
//! - Creating the shadow fails where hard links do (a store directory that is a mount point,
//!   a file system without hard links): the caller decides whether to write in place.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use bytes::Bytes;
//! use zv_core::key::StoreKey;
//! use zv_core::store::{ReadableStore, WritableStore};
//! use zv_store_fs::{FilesystemStore, Shadow};
//! let dir = tempfile::tempdir()?;
//! let root = dir.path().join("s.zarr");
//! let key = StoreKey::new("zarr.json")?;
//! FilesystemStore::new(&root)?.set(&key, Bytes::from_static(b"old"))?;
//! let shadow = Shadow::create(&root)?;
//! FilesystemStore::new(shadow.path())?.set(&key, Bytes::from_static(b"new"))?;
//! assert_eq!(FilesystemStore::new(&root)?.get(&key)?.unwrap(), "old"); // not yet
//! shadow.publish()?;
//! assert_eq!(FilesystemStore::new(&root)?.get(&key)?.unwrap(), "new");
//! # Ok(()) }
//! ```

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::write::TMP_MARKER;

/// The marker in a shadow directory's name.
const SHADOW_MARKER: &str = ".zv-shadow.";

/// A hard-linked copy of a store directory, to be published over it atomically (see the
/// [module docs](self)).
#[derive(Debug)]
pub struct Shadow {
    original: PathBuf,
    shadow: PathBuf,
    /// The open store directory holding the `flock` (released when dropped).
    _lock: fs::File,
    published: bool,
}

fn with_path(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

/// The parent directory and the file name of `path`.
fn split(path: &Path) -> io::Result<(PathBuf, String)> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{}: no directory name", path.display()),
            )
        })?
        .to_owned();
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Ok((parent, name))
}

impl Shadow {
    /// Locks the store directory `original` (which must exist) and builds its shadow: the same
    /// directories, every other entry hard-linked (temporary files of interrupted writes
    /// left out).
    pub fn create(original: &Path) -> io::Result<Self> {
        Self::new(original, true)
    }

    /// Locks the store directory `original` (which must exist) and makes an empty shadow: a
    /// store written there replaces whatever `original` holds when published.
    pub fn empty(original: &Path) -> io::Result<Self> {
        Self::new(original, false)
    }

    fn new(original: &Path, copy: bool) -> io::Result<Self> {
        let lock = fs::File::open(original).map_err(|e| with_path(original, e))?;
        if !lock.metadata()?.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{}: not a directory", original.display()),
            ));
        }
        rustix::fs::flock(&lock, rustix::fs::FlockOperation::NonBlockingLockExclusive).map_err(
            |e| {
                io::Error::new(
                    io::Error::from(e).kind(),
                    format!(
                        "{}: another process is rewriting the store ({e})",
                        original.display()
                    ),
                )
            },
        )?;
        let (parent, name) = split(original)?;
        remove_stale(&parent, &name);
        let shadow = parent.join(format!(".{name}{SHADOW_MARKER}{}", std::process::id()));
        if fs::symlink_metadata(&shadow).is_ok() {
            // this process's own leftover (an earlier shadow not dropped)
            fs::remove_dir_all(&shadow).map_err(|e| with_path(&shadow, e))?;
        }
        let out = Self {
            original: original.to_path_buf(),
            shadow,
            _lock: lock,
            published: false,
        };
        if copy {
            link_tree(original, &out.shadow)?;
        } else {
            fs::create_dir(&out.shadow).map_err(|e| with_path(&out.shadow, e))?;
        }
        Ok(out)
    }

    /// The shadow directory: open a store on it and write there.
    pub fn path(&self) -> &Path {
        &self.shadow
    }

    /// Replaces the original directory by the shadow in one step and removes the old tree.
    pub fn publish(mut self) -> io::Result<()> {
        crate::write::sync_filesystem(&self.shadow).map_err(|e| with_path(&self.shadow, e))?;
        exchange(&self.original, &self.shadow)?;
        self.published = true;
        let (parent, _) = split(&self.original)?;
        fs::File::open(&parent)
            .and_then(|d| d.sync_all())
            .map_err(|e| with_path(&parent, e))?;
        // the old tree, now at the shadow's path
        match fs::remove_dir_all(&self.shadow) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(with_path(&self.shadow, e)),
            _ => Ok(()),
        }
    }
}

impl Drop for Shadow {
    fn drop(&mut self) {
        if !self.published {
            let _ = fs::remove_dir_all(&self.shadow);
        }
    }
}

/// Removes the shadows of `name` in `parent` whose process no longer runs.
fn remove_stale(parent: &Path, name: &str) {
    let prefix = format!(".{name}{SHADOW_MARKER}");
    let Ok(entries) = fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(pid) = file_name
            .to_str()
            .and_then(|n| n.strip_prefix(&prefix))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !process_runs(pid) {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

/// Whether a process with id `pid` exists (where `/proc` does not tell, assume it does).
fn process_runs(pid: u32) -> bool {
    let proc = Path::new("/proc");
    !proc.join("self").exists() || proc.join(pid.to_string()).exists()
}

/// Recreates the directories of `from` at `to` and hard-links everything else.
fn link_tree(from: &Path, to: &Path) -> io::Result<()> {
    fs::create_dir(to).map_err(|e| with_path(to, e))?;
    for entry in fs::read_dir(from).map_err(|e| with_path(from, e))? {
        let entry = entry.map_err(|e| with_path(from, e))?;
        let name = entry.file_name();
        if name.to_str().is_some_and(|n| n.contains(TMP_MARKER)) {
            continue;
        }
        let (source, target) = (entry.path(), to.join(&name));
        if entry.file_type()?.is_dir() {
            link_tree(&source, &target)?;
        } else {
            // a symbolic link is linked itself, not followed
            fs::hard_link(&source, &target).map_err(|e| with_path(&source, e))?;
        }
    }
    Ok(())
}

/// Exchanges the directories `a` and `b` (same parent) atomically where the system can.
fn exchange(a: &Path, b: &Path) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{renameat_with, RenameFlags, CWD};
        match renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE) {
            Ok(()) => return Ok(()),
            Err(e)
                if e == rustix::io::Errno::INVAL
                    || e == rustix::io::Errno::NOSYS
                    || e == rustix::io::Errno::OPNOTSUPP => {}
            Err(e) => return Err(with_path(a, e.into())),
        }
    }
    // two renames: the original's path is empty in between
    let (parent, name) = split(a)?;
    let old = parent.join(format!(".{name}.zv-old.{}", std::process::id()));
    fs::rename(a, &old).map_err(|e| with_path(a, e))?;
    fs::rename(b, a).map_err(|e| with_path(b, e))?;
    fs::rename(&old, b).map_err(|e| with_path(&old, e))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn an_unpublished_shadow_leaves_the_original_and_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("s");
        fs::create_dir_all(root.join("a/b")).unwrap();
        fs::write(root.join("a/b/c"), b"old").unwrap();
        fs::write(root.join(format!(".x{TMP_MARKER}1.2")), b"tmp").unwrap();
        let shadow = Shadow::create(&root).unwrap();
        let path = shadow.path().to_path_buf();
        assert_eq!(fs::read(path.join("a/b/c")).unwrap(), b"old");
        assert!(!path.join(format!(".x{TMP_MARKER}1.2")).exists());
        // a second rewrite of the same store is refused while this one runs
        let err = Shadow::create(&root).unwrap_err();
        assert!(err.to_string().contains("another process"), "{err}");
        drop(shadow);
        assert!(!path.exists());
        assert_eq!(fs::read(root.join("a/b/c")).unwrap(), b"old");
    }

    #[test]
    fn publish_exchanges_and_removes_the_old_tree() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("s");
        fs::create_dir_all(&root).unwrap();
        fs::write(root.join("k"), b"old").unwrap();
        fs::write(root.join("gone"), b"x").unwrap();
        let shadow = Shadow::create(&root).unwrap();
        let path = shadow.path().to_path_buf();
        crate::write::write_atomic(&path.join("k"), "k", b"new", false).unwrap();
        fs::remove_file(path.join("gone")).unwrap();
        fs::write(path.join("added"), b"y").unwrap();
        shadow.publish().unwrap();
        assert_eq!(fs::read(root.join("k")).unwrap(), b"new");
        assert!(!root.join("gone").exists() && root.join("added").exists());
        assert!(!path.exists());
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_stale_shadow_of_a_dead_process_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("s");
        fs::create_dir_all(&root).unwrap();
        // no process has id u32::MAX - 1 (above pid_max)
        let stale = dir
            .path()
            .join(format!(".s{SHADOW_MARKER}{}", u32::MAX - 1));
        fs::create_dir_all(stale.join("x")).unwrap();
        let shadow = Shadow::create(&root).unwrap();
        assert!(!stale.exists());
        drop(shadow);
    }
}
