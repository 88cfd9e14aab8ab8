//! The Python peers, run on the same inputs through `scripts/bench/peer.py` (one process per
//! phase; the script times only the library calls and reports whether the answer was right).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::CliResult;

/// A phase of the peer runner.
#[derive(Debug, Clone, Copy)]
pub(crate) enum PeerPhase {
    WritePoints,
    ReadPoints,
    Box,
    ReadObjects,
    WritePolylines,
}

impl PeerPhase {
    /// Every phase, in the order the runner needs them (reads after the write).
    pub(crate) const ALL: [PeerPhase; 5] = [
        PeerPhase::WritePoints,
        PeerPhase::ReadPoints,
        PeerPhase::Box,
        PeerPhase::ReadObjects,
        PeerPhase::WritePolylines,
    ];

    /// The runner's name of the phase (`--phase`).
    pub(crate) fn arg(self) -> &'static str {
        match self {
            PeerPhase::WritePoints => "write_points",
            PeerPhase::ReadPoints => "read_points",
            PeerPhase::Box => "box",
            PeerPhase::ReadObjects => "read_objects",
            PeerPhase::WritePolylines => "write_polylines",
        }
    }

    /// The zv figure this phase compares with.
    pub(crate) fn figure(self) -> &'static str {
        match self {
            PeerPhase::WritePoints => "write points",
            PeerPhase::ReadPoints => "read all points",
            PeerPhase::Box => "1% box",
            PeerPhase::ReadObjects => "read all objects",
            PeerPhase::WritePolylines => "write polylines",
        }
    }

    /// Which store the phase writes or reads.
    pub(crate) fn store_name(self) -> &'static str {
        match self {
            PeerPhase::WritePolylines => "lines",
            _ => "points",
        }
    }
}

/// A peer implementation.
pub(crate) struct Peer {
    /// Its short name (`zv09`, `ref07`).
    pub(crate) short: String,
    python: PathBuf,
    script: PathBuf,
    /// More arguments of every run (`--objects all`).
    extra: Vec<String>,
}

/// What one phase run reported.
pub(crate) struct Outcome {
    /// Seconds of the library calls.
    pub(crate) seconds: f64,
    /// A finding worth printing (a wrong answer).
    pub(crate) note: Option<String>,
}

impl Peer {
    /// The peer named `name`.
    pub(crate) fn new(name: &str, zv09: &Path, reference: &Path, script: &Path) -> CliResult<Self> {
        let python = match name {
            "zv09" => zv09,
            "ref07" => reference,
            other => return Err(format!("unknown peer `{other}` (known: zv09, ref07)").into()),
        };
        if !python.exists() {
            return Err(format!(
                "peer {name}: {} not found (see scripts/bench/README.md to create it)",
                python.display()
            )
            .into());
        }
        Ok(Peer {
            short: name.to_owned(),
            python: python.to_path_buf(),
            script: script.to_path_buf(),
            extra: Vec::new(),
        })
    }

    /// The same peer with `args` added to every run.
    pub(crate) fn with_args(mut self, args: &[&str]) -> Self {
        self.extra.extend(args.iter().map(|a| (*a).to_owned()));
        self
    }

    /// Runs one phase; `None` if the peer has no such operation.
    pub(crate) fn run(
        &self,
        phase: PeerPhase,
        inputs: &Path,
        store: &str,
        codecs: &str,
    ) -> CliResult<Option<Outcome>> {
        let codecs = if codecs == "none" { "none" } else { "default" };
        let out = Command::new(&self.python)
            .arg(&self.script)
            .args(["--inputs", &inputs.to_string_lossy()])
            .args(["--store", store])
            .args(["--phase", phase.arg(), "--codecs", codecs])
            .args(&self.extra)
            .output()?;
        let text = String::from_utf8_lossy(&out.stdout);
        let doc: serde_json::Value = serde_json::from_str(text.trim()).map_err(|e| {
            format!(
                "peer {} {}: no JSON ({e}): {}",
                self.short,
                phase.arg(),
                String::from_utf8_lossy(&out.stderr)
            )
        })?;
        if let Some(err) = doc.get("error") {
            return Err(format!("peer {} {}: {err}", self.short, phase.arg()).into());
        }
        if doc.get("unsupported").is_some() {
            return Ok(None);
        }
        let seconds = doc["seconds"]
            .as_f64()
            .ok_or_else(|| format!("peer {} {}: no seconds in {doc}", self.short, phase.arg()))?;
        let note = doc
            .get("wrong")
            .and_then(|w| w.as_str())
            .map(|w| format!("{} {} is WRONG: {w}", self.short, phase.figure()));
        Ok(Some(Outcome { seconds, note }))
    }
}
