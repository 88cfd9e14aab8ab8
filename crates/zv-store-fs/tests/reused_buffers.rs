//! Large reads reuse the buffers of earlier reads (module `pool`): a value read into a reused
//! buffer is exactly that value (no bytes of the previous one, the right length, whole and
//! ranged reads alike), and a value still held is never overwritten by a later read.
#![allow(clippy::unwrap_used, clippy::panic)]

use bytes::Bytes;
use zv_core::key::StoreKey;
use zv_core::store::{ByteRange, ReadableStore, WritableStore};
use zv_store_fs::FilesystemStore;

fn pattern(n: usize, seed: u8) -> Bytes {
    Bytes::from(
        (0..n)
            .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
            .collect::<Vec<u8>>(),
    )
}

#[test]
fn large_values_read_one_after_another_are_exact() {
    let dir = tempfile::tempdir().unwrap();
    let store = FilesystemStore::new(dir.path()).unwrap();
    let sizes = [3 << 20, (3 << 20) - 4097, 2 << 20, (5 << 20) + 3];
    let keys: Vec<StoreKey> = (0..sizes.len())
        .map(|i| StoreKey::new(format!("c/{i}")).unwrap())
        .collect();
    for (i, (k, &n)) in keys.iter().zip(&sizes).enumerate() {
        store.set(k, pattern(n, i as u8)).unwrap();
    }
    for round in 0..3 {
        for (i, (k, &n)) in keys.iter().zip(&sizes).enumerate() {
            let got = store.get(k).unwrap().unwrap();
            assert_eq!(got, pattern(n, i as u8), "round {round}, value {i}");
            let capped = store.get_capped(k, n as u64).unwrap().unwrap();
            assert_eq!(capped, got);
            let range = ByteRange::FromStart {
                offset: 1 << 20,
                length: Some((1 << 20) - 7),
            };
            let part = store.get_range(k, range).unwrap().unwrap();
            assert_eq!(part, got.slice((1 << 20)..(2 << 20) - 7), "value {i}");
        }
    }
    // values held at once are distinct buffers, unchanged by later reads
    let held: Vec<Bytes> = keys
        .iter()
        .map(|k| store.get(k).unwrap().unwrap())
        .collect();
    let again: Vec<Bytes> = keys
        .iter()
        .map(|k| store.get(k).unwrap().unwrap())
        .collect();
    for (i, (h, &n)) in held.iter().zip(&sizes).enumerate() {
        assert_eq!(*h, pattern(n, i as u8));
        assert_eq!(*h, again[i]);
    }
    drop(store);
    // buffers outliving their store stay readable
    assert_eq!(held[0], pattern(sizes[0], 0));
}
