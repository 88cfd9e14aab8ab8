//! The whole-store fuzz case: a reference fixture loaded into an in-memory store, mutated by a
//! list of edits, then opened and read the way `zv dump` and the reader API read it.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use arbitrary::Arbitrary;
use serde_json::Value;
use zv_core::key::StoreKey;
use zv_core::store::Store;
use zv_format::ZvStore;

/// One fixture store: its keys (sorted) and values.
pub type Fixture = Vec<(String, Vec<u8>)>;

/// The fixture stores (`*.zarr` under `ZV_FIXTURES`, or the shared fixtures beside the
/// workspace), loaded once, in name order.
pub fn fixtures() -> &'static [Fixture] {
    static FIXTURES: OnceLock<Vec<Fixture>> = OnceLock::new();
    FIXTURES.get_or_init(|| {
        let dir = zv_testkit::env::fixtures_dir();
        let mut stores: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("cannot list the fixtures in {}: {e}", dir.display()))
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "zarr"))
            .collect();
        stores.sort();
        assert!(
            !stores.is_empty(),
            "no *.zarr fixtures in {}",
            dir.display()
        );
        stores.iter().map(|root| load(root)).collect()
    })
}

fn load(root: &Path) -> Fixture {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()));
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(bytes) = std::fs::read(&path) {
                let key = path
                    .strip_prefix(root)
                    .map(|p| p.to_string_lossy().replace('\\', "/"))
                    .unwrap_or_default();
                out.push((key, bytes));
            }
        }
    }
    out.sort();
    out
}

/// A replacement for one leaf of a `zarr.json`.
#[derive(Debug, Clone, Arbitrary)]
pub enum Leaf {
    /// An integer.
    Int(i64),
    /// `2^k` (huge shapes and counts).
    Pow2(u8),
    /// A float.
    Float(f64),
    /// A string.
    Str(String),
    /// `null`.
    Null,
    /// A boolean.
    Bool(bool),
    /// An empty list.
    EmptyList,
}

/// One edit of the fixture's keys (key indices are taken modulo the number of keys).
#[derive(Debug, Clone, Arbitrary)]
pub enum Edit {
    /// Replace a value.
    Replace { key: u16, bytes: Vec<u8> },
    /// Keep only the first `len` bytes.
    Truncate { key: u16, len: u16 },
    /// Flip one bit (position modulo the value's bits).
    FlipBit { key: u16, bit: u32 },
    /// Overwrite bytes at an offset (modulo the length), extending the value if needed.
    Overwrite { key: u16, at: u16, bytes: Vec<u8> },
    /// Append bytes.
    Append { key: u16, bytes: Vec<u8> },
    /// Delete the key.
    Delete { key: u16 },
    /// Swap two keys' values.
    Swap { a: u16, b: u16 },
    /// Replace the `leaf`-th number, string, boolean or null of a JSON value (a `zarr.json`).
    SetJson { key: u16, leaf: u16, value: Leaf },
    /// Remove the `member`-th object member anywhere in a JSON value.
    RemoveJson { key: u16, member: u16 },
}

/// A whole-store case.
#[derive(Debug, Clone, Arbitrary)]
pub struct Case {
    /// The fixture (modulo the number of fixtures).
    pub fixture: u8,
    /// The edits, in order.
    pub edits: Vec<Edit>,
    /// Objects to read on every level.
    pub objects: Vec<u16>,
    /// The query box, as fractions (of 255) of the root bounds: three lows, three highs.
    pub query: [u8; 6],
}

fn index(n: usize, k: u16) -> Option<usize> {
    (n > 0).then(|| k as usize % n)
}

/// Visits the JSON leaves in document order; `f` returns `true` to stop.
fn leaves(v: &mut Value, f: &mut dyn FnMut(&mut Value) -> bool) -> bool {
    match v {
        Value::Array(a) => a.iter_mut().any(|x| leaves(x, f)),
        Value::Object(o) => o.values_mut().any(|x| leaves(x, f)),
        leaf => f(leaf),
    }
}

/// Removes the `k`-th object member (depth first); returns `true` once removed.
fn remove_member(v: &mut Value, k: &mut usize) -> bool {
    match v {
        Value::Array(a) => a.iter_mut().any(|x| remove_member(x, k)),
        Value::Object(o) => {
            if *k < o.len() {
                let name = o.keys().nth(*k).cloned().unwrap_or_default();
                o.shift_remove(&name);
                return true;
            }
            *k -= o.len();
            o.values_mut().any(|x| remove_member(x, k))
        }
        _ => false,
    }
}

fn leaf_value(l: &Leaf) -> Value {
    match l {
        Leaf::Int(i) => Value::from(*i),
        Leaf::Pow2(k) => Value::from(1u64 << (k % 64)),
        Leaf::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
        Leaf::Str(s) => Value::from(s.as_str()),
        Leaf::Null => Value::Null,
        Leaf::Bool(b) => Value::Bool(*b),
        Leaf::EmptyList => Value::Array(Vec::new()),
    }
}

fn edit_json(bytes: &mut Vec<u8>, f: impl FnOnce(&mut Value)) {
    if let Ok(mut v) = serde_json::from_slice::<Value>(bytes) {
        f(&mut v);
        if let Ok(b) = serde_json::to_vec_pretty(&v) {
            *bytes = b;
        }
    }
}

/// Applies the edits to a copy of the fixture.
pub fn apply(fixture: &Fixture, edits: &[Edit]) -> Vec<(String, Option<Vec<u8>>)> {
    let mut kv: Vec<(String, Option<Vec<u8>>)> = fixture
        .iter()
        .map(|(k, v)| (k.clone(), Some(v.clone())))
        .collect();
    let n = kv.len();
    for e in edits {
        match e {
            Edit::Replace { key, bytes } => {
                if let Some(i) = index(n, *key) {
                    kv[i].1 = Some(bytes.clone());
                }
            }
            Edit::Truncate { key, len } => {
                if let Some(Some(v)) = index(n, *key).map(|i| &mut kv[i].1) {
                    v.truncate(*len as usize);
                }
            }
            Edit::FlipBit { key, bit } => {
                if let Some(Some(v)) = index(n, *key).map(|i| &mut kv[i].1) {
                    if !v.is_empty() {
                        let b = *bit as usize % (v.len() * 8);
                        v[b / 8] ^= 1 << (b % 8);
                    }
                }
            }
            Edit::Overwrite { key, at, bytes } => {
                if let Some(Some(v)) = index(n, *key).map(|i| &mut kv[i].1) {
                    let at = *at as usize % (v.len() + 1);
                    let end = at + bytes.len();
                    if v.len() < end {
                        v.resize(end, 0);
                    }
                    v[at..end].copy_from_slice(bytes);
                }
            }
            Edit::Append { key, bytes } => {
                if let Some(Some(v)) = index(n, *key).map(|i| &mut kv[i].1) {
                    v.extend_from_slice(bytes);
                }
            }
            Edit::Delete { key } => {
                if let Some(i) = index(n, *key) {
                    kv[i].1 = None;
                }
            }
            Edit::Swap { a, b } => {
                if let (Some(a), Some(b)) = (index(n, *a), index(n, *b)) {
                    let va = kv[a].1.take();
                    kv[a].1 = kv[b].1.take();
                    kv[b].1 = va;
                }
            }
            Edit::SetJson { key, leaf, value } => {
                if let Some(Some(v)) = index(n, *key).map(|i| &mut kv[i].1) {
                    edit_json(v, |doc| {
                        let mut k = *leaf as usize;
                        leaves(doc, &mut |x| {
                            if k == 0 {
                                *x = leaf_value(value);
                                return true;
                            }
                            k -= 1;
                            false
                        });
                    });
                }
            }
            Edit::RemoveJson { key, member } => {
                if let Some(Some(v)) = index(n, *key).map(|i| &mut kv[i].1) {
                    edit_json(v, |doc| {
                        remove_member(doc, &mut (*member as usize));
                    });
                }
            }
        }
    }
    kv
}

/// Builds the mutated in-memory store of a case.
pub fn build(case: &Case) -> Arc<dyn Store> {
    let all = fixtures();
    let fixture = &all[case.fixture as usize % all.len()];
    let store: Arc<dyn Store> = Arc::new(zv_store_mem::MemoryStore::new());
    for (key, value) in apply(fixture, &case.edits) {
        if let (Ok(k), Some(v)) = (StoreKey::new(key), value) {
            let _ = store.set(&k, v.into());
        }
    }
    store
}

/// Runs a case: open, then per level (at most four) a few objects and a box query, then the
/// dump. Errors are fine; panics, hangs and runaway allocations are findings.
pub fn run(case: &Case) {
    zv_format::link_plugins();
    let store = build(case);
    let Ok(zv) = ZvStore::open(store) else {
        return;
    };
    let ids: Vec<u32> = zv.level_ids().iter().copied().take(4).collect();
    let (lo, hi) = query_box(&zv, &case.query);
    for id in ids {
        let Ok(level) = zv.level(id) else {
            continue;
        };
        for &o in case.objects.iter().take(4) {
            let _ = level.object(u64::from(o));
        }
        let _ = level.query_box(&lo, &hi);
    }
    let _ = zv_format::dump::dump(&zv);
}

fn query_box(zv: &ZvStore, q: &[u8; 6]) -> (Vec<f64>, Vec<f64>) {
    let root = zv.root();
    let ndim = root.ndim();
    let [blo, bhi] = &root.bounds;
    let at = |d: usize, f: u8| {
        let (a, b) = (
            blo.get(d).copied().unwrap_or(0.0),
            bhi.get(d).copied().unwrap_or(1.0),
        );
        a + (b - a) * f64::from(f) / 255.0
    };
    let lo = (0..ndim).map(|d| at(d, q[d % 3])).collect();
    let hi = (0..ndim).map(|d| at(d, q[3 + d % 3])).collect();
    (lo, hi)
}
