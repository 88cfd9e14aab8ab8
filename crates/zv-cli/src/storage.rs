//! The global `--storage-option KEY=VALUE` flags: options of the object stores (`s3://`,
//! `gs://`, `az://`, `http(s)://`) that every command opens by URL, over the standard
//! environment variables (`AWS_*`, `GOOGLE_*`, `AZURE_*`).

use crate::CliResult;

/// Parses `KEY=VALUE` flags and hands them to the object stores opened from now on.
pub(crate) fn configure(flags: &[String]) -> CliResult {
    let mut options = std::collections::BTreeMap::new();
    for flag in flags {
        let (key, value) = flag
            .split_once('=')
            .filter(|(k, _)| !k.trim().is_empty())
            .ok_or_else(|| format!("--storage-option {flag}: expected KEY=VALUE"))?;
        options.insert(key.trim().to_owned(), value.to_owned());
    }
    if options.is_empty() {
        return Ok(());
    }
    apply(options)
}

#[cfg(feature = "object")]
fn apply(options: std::collections::BTreeMap<String, String>) -> CliResult {
    zv_store_object::set_default_options(options);
    Ok(())
}

#[cfg(not(feature = "object"))]
fn apply(_: std::collections::BTreeMap<String, String>) -> CliResult {
    Err("--storage-option: this zv was built without object stores (Cargo feature `object`)".into())
}
