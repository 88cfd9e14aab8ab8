//! Progress reporting for long operations (import, export, pyramid, validate), without any
//! user interface: a library reports *how much* work there is ([`Progress::set_total`]) and
//! *how much is done* ([`Progress::advance`]); a command line draws a bar from that, a test
//! records it. Every method has a no-op default, and [`NoProgress`] reports nowhere.
//!
//! An operation that reports calls `set_total` once (before the work, or as soon as the
//! amount is known) and, when it succeeds, has advanced by exactly that total. Reports may
//! come from several threads at once.
//!
//! ```
//! use std::sync::atomic::{AtomicU64, Ordering};
//! use zv_format::progress::{Progress, Reporter};
//!
//! #[derive(Default)]
//! struct Count(AtomicU64);
//! impl Progress for Count {
//!     fn advance(&self, n: u64) {
//!         self.0.fetch_add(n, Ordering::Relaxed);
//!     }
//! }
//! let count = std::sync::Arc::new(Count::default());
//! let reporter = Reporter::new(count.clone());
//! reporter.set_total(2, "chunks");
//! reporter.advance(2);
//! assert_eq!(count.0.load(Ordering::Relaxed), 2);
//! ```

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A receiver of progress reports (see the [module docs](self)).
pub trait Progress: Send + Sync {
    /// The work ahead: `total` units of `unit` (e.g. `"chunks"`, `"bytes"`, `"levels"`).
    fn set_total(&self, total: u64, unit: &str) {
        let _ = (total, unit);
    }

    /// `n` more units are done.
    fn advance(&self, n: u64) {
        let _ = n;
    }
}

/// Reports nowhere.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl Progress for NoProgress {}

/// A shared [`Progress`] that options structs can hold: cloneable, `Debug`, and reporting
/// nowhere by default.
#[derive(Clone)]
pub struct Reporter(Arc<dyn Progress>);

impl Reporter {
    /// Reports to `progress`.
    pub fn new(progress: Arc<dyn Progress>) -> Self {
        Self(progress)
    }
}

impl Default for Reporter {
    fn default() -> Self {
        Self(Arc::new(NoProgress))
    }
}

impl fmt::Debug for Reporter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Reporter")
    }
}

impl<P: Progress + ?Sized> Progress for &P {
    fn set_total(&self, total: u64, unit: &str) {
        (**self).set_total(total, unit);
    }

    fn advance(&self, n: u64) {
        (**self).advance(n);
    }
}

impl Progress for Reporter {
    fn set_total(&self, total: u64, unit: &str) {
        self.0.set_total(total, unit);
    }

    fn advance(&self, n: u64) {
        self.0.advance(n);
    }
}

/// A share of `budget` units of another [`Progress`] (its total set by the caller): advances
/// beyond the budget are dropped, and whatever is left of it is advanced when the share is
/// dropped. A part of an operation whose exact count is not known in advance (bytes a parser
/// reads, chunks a pass may stop short of) still adds exactly its budget.
pub struct Bounded<P: Progress> {
    inner: P,
    left: AtomicU64,
}

impl<P: Progress> Bounded<P> {
    /// A share of `budget` units of `inner`.
    pub fn new(inner: P, budget: u64) -> Self {
        Self {
            inner,
            left: AtomicU64::new(budget),
        }
    }
}

impl<P: Progress> Progress for Bounded<P> {
    fn set_total(&self, _total: u64, _unit: &str) {}

    fn advance(&self, n: u64) {
        let taken = self
            .left
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |l| {
                Some(l.saturating_sub(n))
            })
            .map_or(0, |before| before.min(n));
        if taken > 0 {
            self.inner.advance(taken);
        }
    }
}

impl<P: Progress> Drop for Bounded<P> {
    fn drop(&mut self) {
        let rest = self.left.swap(0, Ordering::Relaxed);
        if rest > 0 {
            self.inner.advance(rest);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[derive(Default)]
    struct Log(Mutex<Vec<(u64, String)>>);

    impl Progress for Log {
        fn set_total(&self, total: u64, unit: &str) {
            if let Ok(mut l) = self.0.lock() {
                l.push((total, unit.to_owned()));
            }
        }
    }

    #[derive(Default)]
    struct Sum(AtomicU64);

    impl Progress for Sum {
        fn advance(&self, n: u64) {
            self.0.fetch_add(n, Ordering::Relaxed);
        }
    }

    #[test]
    fn a_bounded_share_adds_exactly_its_budget() {
        let sum = Sum::default();
        {
            let share = Bounded::new(&sum, 10);
            share.advance(4);
            share.advance(9);
            share.advance(1);
        }
        assert_eq!(sum.0.load(Ordering::Relaxed), 10);
        {
            let short = Bounded::new(&sum, 5);
            short.advance(2);
        }
        assert_eq!(sum.0.load(Ordering::Relaxed), 15);
    }

    #[test]
    fn a_reporter_forwards_and_the_default_reports_nowhere() {
        let log = Arc::new(Log::default());
        Reporter::new(log.clone()).set_total(3, "levels");
        Reporter::default().set_total(5, "chunks");
        NoProgress.advance(1);
        let seen = log.0.lock().map(|l| l.clone()).unwrap_or_default();
        assert_eq!(seen, vec![(3, "levels".to_owned())]);
        assert_eq!(format!("{:?}", Reporter::default()), "Reporter");
    }
}
