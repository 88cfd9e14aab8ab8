//! Timing samples: minimum and median of repetitions, and ratios between figures measured in
//! the same run.

use std::time::Instant;

/// The repeated timings of one figure, in seconds.
#[derive(Debug, Clone, Default)]
pub(crate) struct Samples(Vec<f64>);

impl Samples {
    /// Adds one timing.
    pub(crate) fn push(&mut self, seconds: f64) {
        self.0.push(seconds);
    }

    /// Times `f` once and records it.
    pub(crate) fn time<T, E>(&mut self, f: impl FnOnce() -> Result<T, E>) -> Result<T, E> {
        let start = Instant::now();
        let out = f()?;
        self.push(start.elapsed().as_secs_f64());
        Ok(out)
    }

    fn sorted(&self) -> Vec<f64> {
        let mut v = self.0.clone();
        v.sort_by(f64::total_cmp);
        v
    }

    /// The fastest repetition.
    pub(crate) fn min(&self) -> f64 {
        self.sorted().first().copied().unwrap_or(f64::NAN)
    }

    /// The median repetition.
    pub(crate) fn median(&self) -> f64 {
        let v = self.sorted();
        match v.len() {
            0 => f64::NAN,
            n if n % 2 == 1 => v[n / 2],
            n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
        }
    }

    /// Whether nothing was measured.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// `a / b` for minimum and median.
pub(crate) fn ratios(a: &Samples, b: &Samples) -> (f64, f64) {
    (a.min() / b.min(), a.median() / b.median())
}
