//! Locations the integration tests need: the workspace, the shared fixtures, and a Python
//! interpreter with zarr-python.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace root (the directory holding the top-level `Cargo.toml`).
pub fn workspace_root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.ancestors()
        .find(|p| p.join("Cargo.toml").is_file() && p.join("crates").is_dir())
        .unwrap_or(here)
        .to_path_buf()
}

/// The shared fixtures of ZV 0.7 stores (`ZV_FIXTURES`, or `../shared/fixtures/zv-0.7` next
/// to the workspace).
pub fn fixtures_dir() -> PathBuf {
    if let Ok(dir) = std::env::var("ZV_FIXTURES") {
        return PathBuf::from(dir);
    }
    workspace_root().join("../shared/fixtures/zv-0.7")
}

/// The `shared/` directory beside the workspace (`ZV_SHARED` overrides).
pub fn shared_dir() -> PathBuf {
    if let Ok(dir) = std::env::var("ZV_SHARED") {
        return PathBuf::from(dir);
    }
    workspace_root().join("../shared")
}

/// A Python interpreter that can `import zarr` (zarr-python 3): `ZV_PYTHON`, else the
/// workspace's `.venv`. Panics with instructions if there is none: the interoperability tests
/// are part of the suite and do not skip silently.
pub fn zarr_python() -> PathBuf {
    let candidates: Vec<PathBuf> = match std::env::var("ZV_PYTHON") {
        Ok(p) => vec![PathBuf::from(p)],
        Err(_) => vec![
            workspace_root().join(".venv/bin/python"),
            workspace_root().join(".venv/Scripts/python.exe"),
        ],
    };
    for python in &candidates {
        let ok = Command::new(python)
            .args([
                "-c",
                "import zarr, sys; sys.exit(0 if zarr.__version__.startswith('3') else 1)",
            ])
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if ok {
            return python.clone();
        }
    }
    panic!(
        "no Python with zarr-python 3 found (tried {candidates:?}). Run the README's test \
         command (`.ci/run`), which creates .venv with zarr from PyPI, or set ZV_PYTHON."
    );
}
