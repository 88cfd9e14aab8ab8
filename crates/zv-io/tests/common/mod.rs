//! Helpers shared by the zv-io tests.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used)]

/// The bytes of a file kept in a test as lines of hexadecimal text (the crafted inputs of the
/// fuzz findings).
pub fn unhex(lines: &[&str]) -> Vec<u8> {
    let hex: String = lines.concat();
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

/// Writes the bytes of `lines` (which must be `len` bytes) to `dir/name` and imports that file
/// as LAS/LAZ into a new memory store: the import's outcome and the store.
pub fn import_hex(
    dir: &std::path::Path,
    name: &str,
    lines: &[&str],
    len: usize,
) -> (
    zv_io::Result<zv_format::writer::WriteSummary>,
    std::sync::Arc<zv_store_mem::MemoryStore>,
) {
    let bytes = unhex(lines);
    assert_eq!(bytes.len(), len, "{name}");
    let path = dir.join(name);
    std::fs::write(&path, &bytes).unwrap();
    let store = std::sync::Arc::new(zv_store_mem::MemoryStore::new());
    let opts = zv_io::ImportOptions::default();
    let result = zv_io::import_file(&path, zv_io::Format::Las, store.clone(), &opts);
    (result, store)
}
