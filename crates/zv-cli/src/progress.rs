//! What the command says besides its output: progress bars (indicatif, drawn on stderr only
//! when stderr is a terminal) and informational lines, both silenced by the global
//! `--quiet`. Errors are printed whatever `--quiet` says.
//!
//! [`Bar`] is the one adapter from the libraries' [`Progress`] reports to a bar; every
//! long command (import, export, convert legacy, pyramid, validate) draws through it.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use zv_format::progress::{Progress, Reporter};

static QUIET: AtomicBool = AtomicBool::new(false);

/// Sets the global `--quiet`.
pub(crate) fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

/// Whether `--quiet` was given.
pub(crate) fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// Prints an informational line on stderr, unless `--quiet`.
pub(crate) fn note(line: std::fmt::Arguments<'_>) {
    if !quiet() {
        eprintln!("{line}");
    }
}

/// A progress bar on stderr: hidden with `--quiet` or when stderr is not a terminal.
pub(crate) struct Bar {
    bar: ProgressBar,
    /// Whether the bar is drawn once its total is known.
    visible: bool,
}

impl Bar {
    /// A bar labelled `what` (e.g. "validate"), drawn from the moment its total is known.
    pub(crate) fn new(what: &str) -> Arc<Self> {
        let bar = ProgressBar::hidden();
        bar.set_message(what.to_owned());
        Arc::new(Self {
            bar,
            visible: !quiet() && std::io::stderr().is_terminal(),
        })
    }

    /// The bar as a [`Reporter`] for the libraries' options.
    pub(crate) fn reporter(self: &Arc<Self>) -> Reporter {
        Reporter::new(self.clone())
    }

    /// Changes the label.
    pub(crate) fn set_message(&self, what: String) {
        self.bar.set_message(what);
    }

    /// Removes the bar (before a summary is printed).
    pub(crate) fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Progress for Bar {
    fn set_total(&self, total: u64, unit: &str) {
        let template = if unit == "bytes" {
            "{msg} [{bar:40}] {bytes}/{total_bytes}, {bytes_per_sec}, {eta} left".to_owned()
        } else {
            format!("{{msg}} [{{bar:40}}] {{pos}}/{{len}} {unit}, {{eta}} left")
        };
        self.bar.set_style(
            ProgressStyle::with_template(&template)
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        self.bar.set_length(total);
        if self.visible {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
            // the first draw is immediate: a short operation still shows its bar
            self.bar.tick();
        }
    }

    fn advance(&self, n: u64) {
        self.bar.inc(n);
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}
