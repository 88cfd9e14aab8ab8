//! Translating directory trees back to keys.
//!
//! Every non-directory entry below the root is a key (regular files, but also FIFOs, devices
//! and links that leave the root: reading such a key is an error naming it, rather than the
//! entry silently vanishing). Directories are descended; a symbolic link to a directory is
//! descended when it resolves inside the root (or always, under [`SymlinkPolicy::Follow`]),
//! each target once per listing, so a link loop ends. Temporary files of interrupted writes
//! and names that are not UTF-8 are never listed.

use std::collections::HashSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use zv_core::key::{StoreKey, StorePrefix};
use zv_core::store::{StoreKeysPrefixes, StoreResult};

use crate::confine::{resolves_within, SymlinkPolicy};
use crate::io_err;
use crate::write::TMP_MARKER;

fn is_absent(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

/// What an entry of a directory is, for listing.
enum Entry {
    /// A directory to descend.
    Dir(PathBuf),
    /// A key.
    Value,
    /// Nothing to list (vanished, temporary, a link to a directory not descended).
    Skip,
}

/// A walk over one listing, remembering the link targets it has descended.
pub(crate) struct Walker<'a> {
    root: &'a Path,
    policy: SymlinkPolicy,
    seen_links: HashSet<PathBuf>,
}

impl<'a> Walker<'a> {
    /// A walker for the store at `root`.
    pub(crate) fn new(root: &'a Path, policy: SymlinkPolicy) -> Self {
        Self {
            root,
            policy,
            seen_links: HashSet::new(),
        }
    }

    fn classify(&mut self, entry: &fs::DirEntry, key: &str) -> StoreResult<Entry> {
        let kind = match entry.file_type() {
            Ok(t) => t,
            Err(e) if is_absent(&e) => return Ok(Entry::Skip),
            Err(e) => return Err(io_err(key)(e)),
        };
        if kind.is_dir() {
            return Ok(Entry::Dir(entry.path()));
        }
        if !kind.is_symlink() {
            return Ok(Entry::Value);
        }
        let path = entry.path();
        let Ok(target) = fs::canonicalize(&path) else {
            return Ok(Entry::Value); // dangling or looping: reading it reports why
        };
        if !target.is_dir() {
            return Ok(Entry::Value);
        }
        let allowed = match self.policy {
            SymlinkPolicy::Follow => true,
            SymlinkPolicy::WithinRoot => resolves_within(self.root, &path),
        };
        if allowed && self.seen_links.insert(target) {
            Ok(Entry::Dir(path))
        } else {
            Ok(Entry::Skip)
        }
    }

    fn entries(&self, dir: &Path, key: &str) -> StoreResult<Vec<(String, fs::DirEntry)>> {
        let read = match fs::read_dir(dir) {
            Ok(r) => r,
            Err(e) if is_absent(&e) => return Ok(Vec::new()),
            Err(e) => return Err(io_err(key)(e)),
        };
        let mut out = Vec::new();
        for entry in read {
            let entry = entry.map_err(io_err(key))?;
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                continue; // not UTF-8: not a key of this store
            };
            if !name.contains(TMP_MARKER) {
                out.push((name, entry));
            }
        }
        Ok(out)
    }

    /// Appends every key below `dir` (whose key prefix is `prefix`) to `out`.
    pub(crate) fn walk(
        &mut self,
        dir: &Path,
        prefix: &str,
        out: &mut Vec<StoreKey>,
    ) -> StoreResult<()> {
        for (name, entry) in self.entries(dir, prefix)? {
            let key_text = format!("{prefix}{name}");
            match self.classify(&entry, &key_text)? {
                Entry::Dir(path) => self.walk(&path, &format!("{key_text}/"), out)?,
                Entry::Value => {
                    if let Ok(key) = StoreKey::new(key_text) {
                        out.push(key);
                    }
                }
                Entry::Skip => {}
            }
        }
        Ok(())
    }

    /// Whether any key lies below `dir` (stops at the first).
    fn has_keys(&mut self, dir: &Path) -> StoreResult<bool> {
        for (name, entry) in self.entries(dir, "")? {
            match self.classify(&entry, &name)? {
                Entry::Dir(path) => {
                    if self.has_keys(&path)? {
                        return Ok(true);
                    }
                }
                Entry::Value => {
                    if StoreKey::new(name).is_ok() {
                        return Ok(true);
                    }
                }
                Entry::Skip => {}
            }
        }
        Ok(false)
    }

    /// The keys and non-empty child prefixes directly below `prefix` (at `dir`).
    pub(crate) fn list_dir(
        &mut self,
        dir: &Path,
        prefix: &StorePrefix,
    ) -> StoreResult<StoreKeysPrefixes> {
        let mut out = StoreKeysPrefixes::default();
        for (name, entry) in self.entries(dir, prefix.as_str())? {
            let key_text = format!("{prefix}{name}");
            match self.classify(&entry, &key_text)? {
                Entry::Dir(path) => {
                    if self.has_keys(&path)? {
                        if let Ok(p) = prefix.child(&name) {
                            out.prefixes.push(p);
                        }
                    }
                }
                Entry::Value => {
                    if let Ok(k) = prefix.key(&name) {
                        out.keys.push(k);
                    }
                }
                Entry::Skip => {}
            }
        }
        out.keys.sort();
        out.prefixes.sort();
        Ok(out)
    }
}
