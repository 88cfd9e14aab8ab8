//! Opening a value for reading without leaving the store root, and refusing what is not a
//! regular file.
//!
//! With [`SymlinkPolicy::WithinRoot`] (the default) a key is opened with Linux's `openat2`
//! and `RESOLVE_BENEATH` relative to the root directory: the kernel follows symbolic links
//! that stay below the root and fails with `EXDEV` for any path component that would leave
//! it (an absolute link, `..` above the root, a link to `/dev/zero`), so no check can be raced
//! by a link swapped in between check and open. Where `openat2` is missing (kernels before 5.6,
//! or a sandbox that filters it) the resolved path is checked against the resolved root
//! instead. The kernel may also answer `EAGAIN` when a rename anywhere on the machine races
//! with a `..` step it has to check; that open is retried, and after a few races the resolved
//! path is checked instead. [`SymlinkPolicy::Follow`] opens the path as it is.
//!
//! The root directory is opened once (an `O_PATH` descriptor, [`RootDir`]) and reused by every
//! read, which saves an open and a close per value read; a read that finds nothing beneath it
//! opens the root again and retries once, so a root that was replaced (a [`crate::Shadow`]
//! exchange, a store deleted and written anew) is followed as a path would be.
//!
//! Every open uses `O_NONBLOCK`, so a FIFO in place of a value does not block the reader, and
//! the opened file must be a regular file: FIFOs, devices and sockets are refused with
//! [`StoreError::NotAValue`]; a directory reads as a missing key. Hand-written because std
//! has neither `openat2` nor `O_NONBLOCK`; the system calls come from `rustix` (safe wrappers).

use std::fs::File;
use std::os::fd::OwnedFd;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::sync::{Arc, Mutex};

use rustix::fs::{Mode, OFlags, ResolveFlags};
use rustix::io::Errno;
use zv_core::store::{StoreError, StoreResult};

use crate::io_err;

/// How symbolic links below the store root are treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SymlinkPolicy {
    /// Links that resolve inside the root are followed; any that would leave it make the
    /// operation fail ([`StoreError::NotAValue`]). Listings do not descend into directories
    /// outside the root.
    #[default]
    WithinRoot,
    /// Links are followed wherever they lead (the store trusts its directory tree).
    Follow,
}

fn read_flags() -> OFlags {
    OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY
}

fn not_a_value(key: &str, reason: &str) -> StoreError {
    StoreError::NotAValue {
        key: key.to_owned(),
        reason: reason.to_owned(),
    }
}

/// What a key's path names, for an error message.
fn describe(kind: std::fs::FileType) -> &'static str {
    if kind.is_fifo() {
        "a FIFO (named pipe)"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// Whether `path`, fully resolved, lies inside `root` (also fully resolved).
pub(crate) fn resolves_within(root: &Path, path: &Path) -> bool {
    match (std::fs::canonicalize(root), std::fs::canonicalize(path)) {
        (Ok(r), Ok(p)) => p.starts_with(r),
        _ => false,
    }
}

fn open_plain(path: &Path) -> Result<File, Errno> {
    rustix::fs::open(path, read_flags(), Mode::empty()).map(File::from)
}

/// The root directory, opened once for the reads beneath it.
#[derive(Debug, Default)]
pub(crate) struct RootDir(Mutex<Option<Arc<OwnedFd>>>);

impl RootDir {
    /// The open root (opened now if it is not, or if `fresh`: the one held may be stale).
    fn get(&self, root: &Path, fresh: bool) -> Result<Arc<OwnedFd>, Errno> {
        let mut held = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if let (Some(fd), false) = (held.as_ref(), fresh) {
            return Ok(Arc::clone(fd));
        }
        *held = None;
        let fd = Arc::new(rustix::fs::open(
            root,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?);
        *held = Some(Arc::clone(&fd));
        Ok(fd)
    }
}

/// [`open_in`] beneath the held root; on nothing found, once more beneath a fresh one.
fn open_beneath(root: &Path, dir: &RootDir, relative: &Path) -> Result<File, Errno> {
    match open_in(root, &*dir.get(root, false)?, relative) {
        Err(Errno::NOENT) | Err(Errno::NOTDIR) => open_in(root, &*dir.get(root, true)?, relative),
        other => other,
    }
}

/// Opens `relative` beneath the directory `dir` (the root at `root`).
fn open_in(root: &Path, dir: &OwnedFd, relative: &Path) -> Result<File, Errno> {
    let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
    let mut attempt = 0;
    loop {
        match rustix::fs::openat2(dir, relative, read_flags(), Mode::empty(), resolve) {
            // The kernel answers EAGAIN when a rename or mount anywhere on the machine raced
            // with a `..` step it had to check; the caller is meant to retry.
            Err(Errno::AGAIN) if attempt < OPENAT2_RETRIES => attempt += 1,
            Err(Errno::NOSYS) | Err(Errno::PERM) | Err(Errno::AGAIN)
                if !relative.as_os_str().is_empty() =>
            {
                // No openat2 here (or it kept racing): check the resolved path instead.
                let full = root.join(relative);
                return match std::fs::canonicalize(&full) {
                    Ok(_) if !resolves_within(root, &full) => Err(Errno::XDEV),
                    _ => open_plain(&full),
                };
            }
            other => return other.map(File::from),
        }
    }
}

/// How often an `openat2` that raced with a rename elsewhere is retried before the resolved
/// path is checked instead.
const OPENAT2_RETRIES: u32 = 16;

/// Opens the value at `root/relative` for reading: `Ok(None)` if there is none (missing, or a
/// directory), the file and its size otherwise.
pub(crate) fn open_value(
    root: &Path,
    dir: &RootDir,
    relative: &Path,
    policy: SymlinkPolicy,
    key: &str,
) -> StoreResult<Option<(File, u64)>> {
    let opened = match policy {
        SymlinkPolicy::WithinRoot => open_beneath(root, dir, relative),
        SymlinkPolicy::Follow => open_plain(&root.join(relative)),
    };
    let file = match opened {
        Ok(f) => f,
        Err(Errno::NOENT) | Err(Errno::NOTDIR) => return Ok(None),
        Err(Errno::XDEV) => {
            return Err(not_a_value(
                key,
                "a symbolic link that leaves the store root",
            ))
        }
        Err(Errno::LOOP) => return Err(not_a_value(key, "a loop of symbolic links")),
        // a socket (or a device without a driver) cannot be opened at all
        Err(Errno::NXIO) => {
            let what = std::fs::metadata(root.join(relative))
                .map_or("a special file", |m| describe(m.file_type()));
            return Err(not_a_value(key, what));
        }
        Err(e) => return Err(io_err(key)(e.into())),
    };
    let meta = file.metadata().map_err(io_err(key))?;
    let kind = meta.file_type();
    if kind.is_dir() {
        return Ok(None);
    }
    if !kind.is_file() {
        return Err(not_a_value(key, describe(kind)));
    }
    Ok(Some((file, meta.len())))
}
