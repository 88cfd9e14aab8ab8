//! `zv validate STORE [--level 1..5] [--json]`: the store checked at a conformance level
//! (`zv_format::validate`). Exit status 0 valid, 1 invalid, 2 could not run (no store at a
//! local path, a store that cannot be opened, output that cannot be written). ZV 0.7 and 0.9
//! stores are both checked.

use std::io::Write;
use std::process::ExitCode;

/// Validates `store` at `level`, prints the report (text or JSON) on stdout and returns the
/// exit status.
pub(crate) fn run(store: &str, level: u8, json: bool) -> ExitCode {
    // a local path that does not exist holds nothing to check: the command could not run
    if let Ok(url) = zv_core::plugin::StoreUrl::parse(store) {
        if url.scheme == "file" && !std::path::Path::new(&url.location).exists() {
            eprintln!("zv: error: {store}: no such file or directory");
            return ExitCode::from(2);
        }
    }
    let bar = crate::progress::Bar::new("validate");
    let report = zv_format::validate::validate_url_with_progress(store, level, bar.as_ref());
    bar.finish();
    let report = match report {
        Ok(r) => r,
        Err(e) => {
            eprintln!("zv: error: {e}");
            return ExitCode::from(2);
        }
    };
    let mut out = std::io::stdout().lock();
    let written = if json {
        serde_json::to_writer_pretty(&mut out, &report.to_json())
            .map_err(std::io::Error::other)
            .and_then(|()| out.write_all(b"\n"))
    } else {
        writeln!(out, "{report}")
    };
    if let Err(e) = written.and_then(|()| out.flush()) {
        eprintln!("zv: error: {e}");
        return ExitCode::from(2);
    }
    if report.is_valid() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
