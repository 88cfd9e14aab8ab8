//! The store conformance suite.
//!
//! [`check_store`] runs a model-based property test: random sequences of operations are
//! applied to a fresh store and to a `BTreeMap` model, and every result must agree. Keys are
//! drawn from a small hierarchy (`a/`, `b/c/`, … with leaves `x`, `zarr.json`, `0`) in which no
//! key is a prefix "directory" of another key, as in every Zarr hierarchy, so that filesystem
//! stores can represent every state.

mod read_only;
mod two_writers;

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use zv_core::key::{StoreKey, StorePrefix};
use zv_core::store::{ByteRange, Store, StoreKeysPrefixes, StoreResult};

pub use read_only::{check_read_only_store, check_reads, sample_values, write_values};
pub use two_writers::check_two_writers_create;

/// One operation of the model-based test.
#[derive(Debug, Clone)]
pub enum StoreOp {
    /// `set(key, value)`.
    Set(String, Vec<u8>),
    /// `get(key)`.
    Get(String),
    /// `get_range(key, range)`.
    GetRange(String, ByteRange),
    /// `delete(key)`.
    Delete(String),
    /// `list()`.
    List,
    /// `list_prefix(prefix)`.
    ListPrefix(String),
    /// `list_dir(prefix)`.
    ListDir(String),
    /// `delete_prefix(prefix)`.
    DeletePrefix(String),
    /// `size(key)`.
    Size(String),
}

fn dirs() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["", "a/", "b/", "a/b/", "b/c/", "a/b/c/", "c/d/"])
        .prop_map(str::to_owned)
}

fn key() -> impl Strategy<Value = String> {
    (
        dirs(),
        prop::sample::select(vec!["x", "y", "zarr.json", "0", "-1.0.2"]),
    )
        .prop_map(|(d, leaf)| format!("{d}{leaf}"))
}

fn value() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(Vec::new()),
        prop::collection::vec(any::<u8>(), 0..64),
        prop::collection::vec(any::<u8>(), 0..4096),
    ]
}

fn range() -> impl Strategy<Value = ByteRange> {
    prop_oneof![
        (0u64..80, prop::option::of(0u64..80))
            .prop_map(|(offset, length)| ByteRange::FromStart { offset, length }),
        (0u64..80).prop_map(ByteRange::Suffix),
    ]
}

/// The operation strategy of the model-based test.
pub fn store_op() -> impl Strategy<Value = StoreOp> {
    prop_oneof![
        4 => (key(), value()).prop_map(|(k, v)| StoreOp::Set(k, v)),
        3 => key().prop_map(StoreOp::Get),
        2 => (key(), range()).prop_map(|(k, r)| StoreOp::GetRange(k, r)),
        2 => key().prop_map(StoreOp::Delete),
        1 => Just(StoreOp::List),
        1 => dirs().prop_map(StoreOp::ListPrefix),
        1 => dirs().prop_map(StoreOp::ListDir),
        1 => dirs().prop_map(StoreOp::DeletePrefix),
        1 => key().prop_map(StoreOp::Size),
    ]
}

fn model_list_dir(model: &BTreeMap<String, Vec<u8>>, prefix: &str) -> StoreKeysPrefixes {
    let mut out = StoreKeysPrefixes::default();
    for k in model.keys().filter(|k| k.starts_with(prefix)) {
        let rest = &k[prefix.len()..];
        match rest.find('/') {
            None => out.keys.push(StoreKey::new(k.clone()).unwrap()),
            Some(i) => {
                let p = StorePrefix::new(format!("{prefix}{}/", &rest[..i])).unwrap();
                if !out.prefixes.contains(&p) {
                    out.prefixes.push(p);
                }
            }
        }
    }
    out.prefixes.sort();
    out
}

/// The listed keys as strings, or "`<what>` failed: `<error>`".
fn key_names(
    listed: StoreResult<Vec<StoreKey>>,
    what: impl FnOnce() -> String,
) -> Result<Vec<String>, String> {
    match listed {
        Ok(keys) => Ok(keys.into_iter().map(|k| k.to_string()).collect()),
        Err(e) => Err(format!("{} failed: {e}", what())),
    }
}

/// Applies `ops` to `store` and to a `BTreeMap` model; returns a description of the first
/// disagreement.
pub fn run_ops(store: &dyn Store, ops: &[StoreOp]) -> Result<(), String> {
    let mut model: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    for (i, op) in ops.iter().enumerate() {
        let fail = |what: String| Err(format!("op {i} {op:?}: {what}"));
        match op {
            StoreOp::Set(k, v) => {
                let key = StoreKey::new(k.clone()).unwrap();
                if let Err(e) = store.set(&key, Bytes::from(v.clone())) {
                    return fail(format!("set failed: {e}"));
                }
                model.insert(k.clone(), v.clone());
            }
            StoreOp::Get(k) => {
                let key = StoreKey::new(k.clone()).unwrap();
                let got = store
                    .get(&key)
                    .map_err(|e| format!("op {i}: get failed: {e}"))?;
                if got.as_deref() != model.get(k).map(Vec::as_slice) {
                    return fail(format!("get returned {:?}", got.map(|b| b.len())));
                }
            }
            StoreOp::Size(k) => {
                let key = StoreKey::new(k.clone()).unwrap();
                let got = store
                    .size(&key)
                    .map_err(|e| format!("op {i}: size failed: {e}"))?;
                if got != model.get(k).map(|v| v.len() as u64) {
                    return fail(format!("size returned {got:?}"));
                }
            }
            StoreOp::GetRange(k, r) => {
                let key = StoreKey::new(k.clone()).unwrap();
                let got = store.get_range(&key, *r);
                match (model.get(k), got) {
                    (None, Ok(None)) => {}
                    (Some(v), Ok(Some(b))) => match r.to_range(v.len() as u64) {
                        Some(rg) if b[..] == v[rg.start as usize..rg.end as usize] => {}
                        _ => return fail(format!("wrong range bytes ({} bytes)", b.len())),
                    },
                    (Some(v), Err(_)) if r.to_range(v.len() as u64).is_none() => {}
                    (m, g) => {
                        return fail(format!(
                            "model has {:?} bytes, store returned {g:?}",
                            m.map(Vec::len)
                        ))
                    }
                }
            }
            StoreOp::Delete(k) => {
                let key = StoreKey::new(k.clone()).unwrap();
                if let Err(e) = store.delete(&key) {
                    return fail(format!("delete failed: {e}"));
                }
                model.remove(k);
            }
            StoreOp::List => {
                let got = key_names(store.list(), || format!("op {i}: list"))?;
                let want: Vec<String> = model.keys().cloned().collect();
                if got != want {
                    return fail(format!("list returned {got:?}, model has {want:?}"));
                }
            }
            StoreOp::ListPrefix(p) => {
                let prefix = StorePrefix::new(p.clone()).unwrap();
                let got = key_names(store.list_prefix(&prefix), || {
                    format!("op {i}: list_prefix")
                })?;
                let want: Vec<String> = model
                    .keys()
                    .filter(|k| k.starts_with(p.as_str()))
                    .cloned()
                    .collect();
                if got != want {
                    return fail(format!("list_prefix returned {got:?}, model has {want:?}"));
                }
            }
            StoreOp::ListDir(p) => {
                let prefix = StorePrefix::new(p.clone()).unwrap();
                let got = store
                    .list_dir(&prefix)
                    .map_err(|e| format!("op {i}: list_dir failed: {e}"))?;
                let want = model_list_dir(&model, p);
                if got != want {
                    return fail(format!("list_dir returned {got:?}, model has {want:?}"));
                }
            }
            StoreOp::DeletePrefix(p) => {
                let prefix = StorePrefix::new(p.clone()).unwrap();
                if let Err(e) = store.delete_prefix(&prefix) {
                    return fail(format!("delete_prefix failed: {e}"));
                }
                model.retain(|k, _| !k.starts_with(p.as_str()));
            }
        }
    }
    // Final state must agree too.
    let got = key_names(store.list(), || "final list".to_owned())?;
    let want: Vec<String> = model.keys().cloned().collect();
    if got != want {
        return Err(format!("final list {got:?}, model {want:?}"));
    }
    Ok(())
}

/// Runs the whole store conformance suite on stores made by `make` (each call must return a
/// new, empty store), with 128 random operation sequences (`ZV_STORE_CASES` overrides).
/// Panics with a description of the first failure.
pub fn check_store<F>(name: &str, make: F)
where
    F: Fn() -> Arc<dyn Store>,
{
    check_store_cases(name, 128, make);
}

/// [`check_store`] with `cases` random operation sequences by default (`ZV_STORE_CASES`
/// overrides): fewer for stores whose every operation is a network request.
pub fn check_store_cases<F>(name: &str, cases: u32, make: F)
where
    F: Fn() -> Arc<dyn Store>,
{
    check_basics(name, &make);
    check_concurrent_writes(name, &make);
    check_set_new(name, &make);
    let cases = std::env::var("ZV_STORE_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(cases);
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&prop::collection::vec(store_op(), 1..60), |ops| {
        let store = make();
        run_ops(store.as_ref(), &ops).map_err(TestCaseError::fail)
    });
    if let Err(e) = result {
        panic!("store `{name}` failed the model-based test: {e}");
    }
}

/// `set_new` creates a missing key and refuses an existing one, leaving its value.
fn check_set_new(name: &str, make: &dyn Fn() -> Arc<dyn Store>) {
    let store = make();
    let k = StoreKey::new("zarr.json").unwrap();
    store.set_new(&k, Bytes::from_static(b"first")).unwrap();
    let again = store.set_new(&k, Bytes::from_static(b"second"));
    assert!(
        matches!(again, Err(zv_core::store::StoreError::AlreadyExists { .. })),
        "{name}: set_new of an existing key must be AlreadyExists, was {again:?}"
    );
    assert_eq!(
        store.get(&k).unwrap().as_deref(),
        Some(&b"first"[..]),
        "{name}: a refused set_new changed the value"
    );
}

fn check_basics(name: &str, make: &dyn Fn() -> Arc<dyn Store>) {
    let store = make();
    let k = StoreKey::new("g/arr/c/0/0").unwrap();
    assert_eq!(
        store.get(&k).unwrap(),
        None,
        "{name}: fresh store is not empty"
    );
    assert!(
        store.delete(&k).is_ok(),
        "{name}: deleting a missing key must succeed"
    );
    store.set(&k, Bytes::from_static(b"0123456789")).unwrap();
    let r = store
        .get_range(
            &k,
            ByteRange::FromStart {
                offset: 2,
                length: Some(3),
            },
        )
        .unwrap()
        .unwrap();
    assert_eq!(&r[..], b"234", "{name}: ranged get");
    assert_eq!(
        &store.get_range(&k, ByteRange::Suffix(2)).unwrap().unwrap()[..],
        b"89",
        "{name}: suffix get"
    );
    assert!(
        store
            .get_range(
                &k,
                ByteRange::FromStart {
                    offset: 8,
                    length: Some(5)
                }
            )
            .is_err(),
        "{name}: a range past the end must be an error"
    );
    store.set(&k, Bytes::new()).unwrap();
    assert_eq!(
        store.get(&k).unwrap().as_deref(),
        Some(&b""[..]),
        "{name}: empty value"
    );
    let listing = store.list_dir(&StorePrefix::new("g/").unwrap()).unwrap();
    assert_eq!(listing.prefixes, vec![StorePrefix::new("g/arr/").unwrap()]);
    assert!(listing.keys.is_empty());
    assert!(store
        .list_dir(&StorePrefix::new("nothing/").unwrap())
        .unwrap()
        .prefixes
        .is_empty());
    store.delete_prefix(&StorePrefix::root()).unwrap();
    assert!(
        store.list().unwrap().is_empty(),
        "{name}: delete_prefix(root)"
    );
}

fn check_concurrent_writes(name: &str, make: &dyn Fn() -> Arc<dyn Store>) {
    let store = make();
    std::thread::scope(|s| {
        for t in 0..4u8 {
            let store = &store;
            s.spawn(move || {
                for i in 0..50u8 {
                    let key = StoreKey::new(format!("t{t}/c/{i}")).unwrap();
                    store.set(&key, Bytes::from(vec![t; i as usize])).unwrap();
                }
                // and one shared key written by everybody: last writer wins, never torn
                let shared = StoreKey::new("shared").unwrap();
                store.set(&shared, Bytes::from(vec![t; 1000])).unwrap();
            });
        }
    });
    assert_eq!(
        store.list().unwrap().len(),
        201,
        "{name}: concurrent writes lost keys"
    );
    for t in 0..4u8 {
        for i in 0..50u8 {
            let key = StoreKey::new(format!("t{t}/c/{i}")).unwrap();
            assert_eq!(
                store.get(&key).unwrap().unwrap().to_vec(),
                vec![t; i as usize]
            );
        }
    }
    let shared = store
        .get(&StoreKey::new("shared").unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(shared.len(), 1000, "{name}: torn value");
    assert!(shared.iter().all(|&b| b == shared[0]), "{name}: torn value");
}

/// A store wrapper that records every key read (`get`, ranged `get`, `size`) and every
/// prefix listed, for tests that check which blobs an operation touches; optionally as an
/// object store would answer: each request after a delay, with many wanted in flight.
#[derive(Debug)]
pub struct CountingStore {
    inner: Arc<dyn Store>,
    reads: std::sync::Mutex<Vec<String>>,
    /// The round trip of each read, in `reads`' order (see [`CountingStore::rounds`]).
    rounds: std::sync::Mutex<Vec<usize>>,
    /// The latest round trip of the reads answered so far.
    answered: std::sync::atomic::AtomicUsize,
    listings: std::sync::Mutex<Vec<String>>,
    latency: Option<(std::time::Duration, usize)>,
}

impl CountingStore {
    /// Wraps `inner`.
    pub fn new(inner: Arc<dyn Store>) -> Self {
        Self {
            inner,
            reads: std::sync::Mutex::new(Vec::new()),
            rounds: std::sync::Mutex::new(Vec::new()),
            answered: std::sync::atomic::AtomicUsize::new(0),
            listings: std::sync::Mutex::new(Vec::new()),
            latency: None,
        }
    }

    /// Wraps `inner`, answering each request after `delay` and asking for `concurrency`
    /// requests in flight (as an object store does), so that the requests of parallel work
    /// overlap as they do on one.
    pub fn with_latency(
        inner: Arc<dyn Store>,
        delay: std::time::Duration,
        concurrency: usize,
    ) -> Self {
        Self {
            latency: Some((delay, concurrency)),
            ..Self::new(inner)
        }
    }

    fn note(&self, key: &StoreKey) {
        use std::sync::atomic::Ordering;
        let round = self.answered.load(Ordering::SeqCst) + 1;
        if let (Ok(mut r), Ok(mut t)) = (self.reads.lock(), self.rounds.lock()) {
            r.push(key.to_string());
            t.push(round);
        }
        self.wait();
        self.answered.fetch_max(round, Ordering::SeqCst);
    }

    fn note_listing(&self, prefix: &StorePrefix) {
        if let Ok(mut l) = self.listings.lock() {
            l.push(prefix.to_string());
        }
        self.wait();
    }

    fn wait(&self) {
        if let Some((delay, _)) = self.latency {
            std::thread::sleep(delay);
        }
    }

    /// The keys read since the last [`CountingStore::reset`], in order.
    pub fn reads(&self) -> Vec<String> {
        self.reads.lock().map(|r| r.clone()).unwrap_or_default()
    }

    /// The round trip of each read of [`CountingStore::reads`]: one more than the latest
    /// round trip of the reads answered when it was asked (the first reads are round trip
    /// 1; reads asked together are one round trip). With a latency, the length of the
    /// chains of reads that wait on each other: what a store far away makes a reader wait
    /// for. (A thread held up for longer than the latency before asking counts a round trip
    /// late, so tests compare round trips, not counts of them against a bound.)
    pub fn rounds(&self) -> Vec<usize> {
        self.rounds.lock().map(|r| r.clone()).unwrap_or_default()
    }

    /// The prefixes listed since the last [`CountingStore::reset`], in order.
    pub fn listings(&self) -> Vec<String> {
        self.listings.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// Forgets the recorded reads and listings.
    pub fn reset(&self) {
        if let (Ok(mut r), Ok(mut t)) = (self.reads.lock(), self.rounds.lock()) {
            r.clear();
            t.clear();
        }
        self.answered.store(0, std::sync::atomic::Ordering::SeqCst);
        if let Ok(mut l) = self.listings.lock() {
            l.clear();
        }
    }
}

impl zv_core::store::ReadableStore for CountingStore {
    fn get(&self, key: &StoreKey) -> zv_core::store::StoreResult<Option<bytes::Bytes>> {
        self.note(key);
        self.inner.get(key)
    }

    fn get_range(
        &self,
        key: &StoreKey,
        range: ByteRange,
    ) -> zv_core::store::StoreResult<Option<bytes::Bytes>> {
        self.note(key);
        self.inner.get_range(key, range)
    }

    fn get_capped(
        &self,
        key: &StoreKey,
        max: u64,
    ) -> zv_core::store::StoreResult<Option<bytes::Bytes>> {
        self.note(key);
        self.inner.get_capped(key, max)
    }

    fn size(&self, key: &StoreKey) -> zv_core::store::StoreResult<Option<u64>> {
        self.note(key);
        self.inner.size(key)
    }

    fn concurrency(&self) -> usize {
        self.latency
            .map_or_else(|| self.inner.concurrency(), |(_, n)| n)
    }

    fn coalesce_gap(&self) -> u64 {
        self.inner.coalesce_gap()
    }
}

impl zv_core::store::WritableStore for CountingStore {
    fn set(&self, key: &StoreKey, value: bytes::Bytes) -> zv_core::store::StoreResult<()> {
        self.inner.set(key, value)
    }

    fn delete(&self, key: &StoreKey) -> zv_core::store::StoreResult<()> {
        self.inner.delete(key)
    }

    fn sync(&self) -> zv_core::store::StoreResult<()> {
        self.inner.sync()
    }
}

impl zv_core::store::ListableStore for CountingStore {
    fn list_prefix(&self, prefix: &StorePrefix) -> zv_core::store::StoreResult<Vec<StoreKey>> {
        self.note_listing(prefix);
        self.inner.list_prefix(prefix)
    }

    fn list_dir(&self, prefix: &StorePrefix) -> zv_core::store::StoreResult<StoreKeysPrefixes> {
        self.note_listing(prefix);
        self.inner.list_dir(prefix)
    }
}

impl Store for CountingStore {
    fn set_new(&self, key: &StoreKey, value: bytes::Bytes) -> zv_core::store::StoreResult<()> {
        self.inner.set_new(key, value)
    }

    fn delete_prefix(&self, prefix: &StorePrefix) -> zv_core::store::StoreResult<()> {
        self.inner.delete_prefix(prefix)
    }
}
