//! Small helpers for tests that compare stores or need repeatable random inputs: a
//! deterministic generator ([`Rng`], xorshift64*) and every key of a store with its bytes
//! ([`contents`]), for "the same store, byte for byte" checks.

use std::collections::BTreeMap;

use zv_core::key::StorePrefix;
use zv_core::store::Store;

/// A small, fast, deterministic generator (xorshift64*): the same seed gives the same values
/// on every machine.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed` (any value, 0 included).
    pub fn new(seed: u64) -> Self {
        Rng(seed | 1)
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `0..n` (`n` ≥ 1; below 2^53, as it scales [`Rng::unit`]).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.unit() * n as f64) as u64).min(n.saturating_sub(1))
    }
}

/// Every key of `store` with its bytes (panics on a store error: a test helper).
pub fn contents(store: &dyn Store) -> BTreeMap<String, Vec<u8>> {
    store
        .list_prefix(&StorePrefix::root())
        .expect("list the store")
        .into_iter()
        .map(|k| {
            let v = store.get(&k).expect("read a key").expect("a listed key");
            (k.to_string(), v.to_vec())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generator_repeats_and_stays_in_the_unit_interval() {
        let (mut a, mut b) = (Rng::new(7), Rng::new(7));
        for _ in 0..1000 {
            let x = a.unit();
            assert_eq!(x, b.unit());
            assert!((0.0..1.0).contains(&x));
        }
        assert_ne!(Rng::new(0).unit(), Rng::new(2).unit());
    }
}
