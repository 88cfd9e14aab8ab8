//! The file-system floor: the same files a zv run wrote or read, written or read by the
//! plainest loop (create + write + rename per file, each directory created once; or one
//! `read` per file), in the same run and on the same store location, so a figure's ratio to
//! its floor says how much zv adds over the file system itself.

use std::collections::HashSet;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The files of a tree: relative path and bytes.
#[derive(PartialEq, Eq)]
pub(crate) struct Snapshot {
    files: Vec<(PathBuf, Vec<u8>)>,
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            walk(root, &entry.path(), out)?;
        } else if let Ok(rel) = entry.path().strip_prefix(root) {
            out.push(rel.to_path_buf());
        }
    }
    Ok(())
}

/// Every file below `root`, relative to it, sorted.
pub(crate) fn list_files(root: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    walk(root, root, &mut out)?;
    out.sort();
    Ok(out)
}

impl Snapshot {
    /// Reads every file below `root` (not timed).
    pub(crate) fn take(root: &Path) -> std::io::Result<Self> {
        let files = list_files(root)?
            .into_iter()
            .map(|rel| fs::read(root.join(&rel)).map(|b| (rel, b)))
            .collect::<std::io::Result<_>>()?;
        Ok(Snapshot { files })
    }

    /// Number of files.
    pub(crate) fn len(&self) -> usize {
        self.files.len()
    }

    /// Total bytes.
    pub(crate) fn bytes(&self) -> u64 {
        self.files.iter().map(|(_, b)| b.len() as u64).sum()
    }

    /// Re-creates the files below `root` (which must not exist): one create + write +
    /// rename per file, each directory created once, then one `syncfs` — the same
    /// durability zv's commit gives.
    pub(crate) fn write_to(&self, root: &Path) -> std::io::Result<()> {
        let mut made: HashSet<PathBuf> = HashSet::new();
        for (i, (rel, bytes)) in self.files.iter().enumerate() {
            let path = root.join(rel);
            let parent = path.parent().unwrap_or(root).to_path_buf();
            if !made.contains(&parent) {
                fs::create_dir_all(&parent)?;
                made.insert(parent.clone());
            }
            let tmp = parent.join(format!(".floor.{i}"));
            fs::File::create(&tmp)?.write_all(bytes)?;
            fs::rename(&tmp, &path)?;
        }
        let store = zv_core::plugin::open_store(&root.to_string_lossy())
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        store
            .sync()
            .map_err(|e| std::io::Error::other(e.to_string()))
    }
}

/// Reads the given files below `root` (one `read` each); returns the bytes read.
pub(crate) fn read_files(root: &Path, files: &[PathBuf]) -> std::io::Result<u64> {
    let mut total = 0u64;
    for rel in files {
        total += fs::read(root.join(rel))?.len() as u64;
    }
    Ok(total)
}
