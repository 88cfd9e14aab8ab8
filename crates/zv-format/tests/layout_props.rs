//! Property tests of the ZV byte layouts: `decode(encode(x)) == x` for every structure
//! (empty cases, large counts, random mixes of modes), and "arbitrary bytes never panic": every
//! decoder fed random and damaged blobs returns `Ok` or an error, and never allocates more than
//! a small multiple of its input (checked with a counting allocator).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use proptest::prelude::*;
use zv_core::data_type::DataType;
use zv_format::layout::attributes::{decode_present_mask, AttributeRows, DenseArray, Dictionary};
use zv_format::layout::cross_chunk::{CrossChunkLinks, RecordDecoder};
use zv_format::layout::fragment_index::{Fragment, FragmentIndex};
use zv_format::layout::groups::Groups;
use zv_format::layout::links::{LinkRows, RaggedLinks};
use zv_format::layout::manifest::{
    decode_stream, decode_vlen_items, decode_with_offsets, encode_stream, BlockFragments, Manifest,
    ManifestBlock,
};
use zv_testkit::alloc::{peak_alloc, CountingAllocator};
use zv_testkit::codec::{apply_damage, Damage};

// ---------------------------------------------------------------------------------------------
// The allocation of each decoder is measured with zv-testkit's counting allocator.

#[global_allocator]
static ALLOC: CountingAllocator = CountingAllocator;

/// The allocation bound of every decoder: a small multiple of the input plus a constant.
fn bound(input: usize) -> usize {
    32 * input + 4096
}

// ---------------------------------------------------------------------------------------------
// Strategies.

fn fragment() -> impl Strategy<Value = Fragment> {
    prop_oneof![
        (0u64..1 << 40, 0u64..1000).prop_map(|(start, count)| Fragment::Range { start, count }),
        prop::collection::vec(0u64..1 << 40, 0..12).prop_map(Fragment::Explicit),
    ]
}

fn fragments() -> impl Strategy<Value = Vec<Fragment>> {
    prop_oneof![
        1 => Just(Vec::new()),
        4 => prop::collection::vec(fragment(), 1..40),
        1 => prop::collection::vec(fragment(), 60..300),
    ]
}

fn block(sid_ndim: usize) -> impl Strategy<Value = ManifestBlock> {
    (
        prop::collection::vec(-1000i64..1000, sid_ndim),
        prop_oneof![
            (0u64..1 << 32).prop_map(BlockFragments::Single),
            (0u64..(1 << 32) - (1 << 20), 0u64..1 << 20)
                .prop_map(|(start, count)| BlockFragments::Range { start, count }),
            prop::collection::vec(0u64..1 << 32, 0..10).prop_map(BlockFragments::Explicit),
        ],
    )
        .prop_map(|(chunk, fragments)| ManifestBlock {
            chunk: chunk.into(),
            fragments,
        })
}

fn manifest(sid_ndim: usize) -> impl Strategy<Value = Manifest> {
    prop::collection::vec(block(sid_ndim), 0..12).prop_map(|blocks| Manifest { blocks })
}

fn numeric_type() -> impl Strategy<Value = DataType> {
    prop::sample::select(vec![
        DataType::Bool,
        DataType::Int8,
        DataType::Int16,
        DataType::Int32,
        DataType::Int64,
        DataType::UInt8,
        DataType::UInt16,
        DataType::UInt32,
        DataType::UInt64,
        DataType::Float16,
        DataType::Float32,
        DataType::Float64,
        DataType::Complex64,
        DataType::Complex128,
    ])
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 200,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

// ---------------------------------------------------------------------------------------------
// Round trips.

proptest! {
    #![proptest_config(config())]

    #[test]
    fn fragment_index_round_trips(frags in fragments()) {
        let idx = FragmentIndex::new(&frags).unwrap();
        let bytes = idx.encode();
        prop_assert_eq!(bytes.len(), idx.encoded_len());
        let back = FragmentIndex::decode(&bytes, None).unwrap();
        prop_assert_eq!(&back, &idx);
        prop_assert_eq!(back.to_fragments(), frags.clone());
        for (f, frag) in frags.iter().enumerate() {
            prop_assert_eq!(back.is_range(f), matches!(frag, Fragment::Range { .. }));
            prop_assert_eq!(back.get(f).unwrap().len(), match frag {
                Fragment::Range { count, .. } => *count as usize,
                Fragment::Explicit(v) => v.len(),
            });
        }
        prop_assert!(back.get(frags.len()).is_none());
    }

    #[test]
    fn fragment_index_from_rows_promotes_contiguous_rows(rows in prop::collection::vec(
        prop_oneof![
            (0u64..1000, 1u64..50).prop_map(|(s, n)| (s..s + n).collect::<Vec<u64>>()),
            prop::collection::vec(0u64..1000, 0..6),
        ], 0..50)) {
        let idx = FragmentIndex::from_rows(&rows).unwrap();
        let back = FragmentIndex::decode(&idx.encode(), None).unwrap();
        for (f, r) in rows.iter().enumerate() {
            prop_assert_eq!(back.get(f).unwrap().iter().collect::<Vec<_>>(), r.clone());
            let contiguous = !r.is_empty() && r.windows(2).all(|w| w[0] + 1 == w[1]);
            prop_assert_eq!(back.is_range(f), contiguous);
        }
    }

    #[test]
    fn manifests_and_containers_round_trip((sid_ndim, ms) in (0usize..5).prop_flat_map(|n| (Just(n), prop::collection::vec(manifest(n), 0..8)))) {
        for m in &ms {
            let b = m.encode(sid_ndim).unwrap();
            prop_assert_eq!(b.len(), m.encoded_len(sid_ndim));
            prop_assert_eq!(&Manifest::decode(&b, sid_ndim).unwrap(), m);
        }
        let (data, offsets) = encode_stream(&ms, sid_ndim).unwrap();
        prop_assert_eq!(&decode_stream(&data, sid_ndim, Some(ms.len())).unwrap(), &ms);
        prop_assert_eq!(&decode_stream(&data, sid_ndim, None).unwrap(), &ms);
        prop_assert_eq!(&decode_with_offsets(&data, &offsets, sid_ndim).unwrap(), &ms);
        let items: Vec<Vec<u8>> = ms.iter().map(|m| m.encode(sid_ndim).unwrap()).chain([Vec::new()]).collect();
        prop_assert_eq!(&decode_vlen_items(items.iter().map(Vec::as_slice), ms.len(), sid_ndim).unwrap(), &ms);
    }

    #[test]
    fn random_manifests_round_trip(m in manifest(3)) {
        let b = m.encode(3).unwrap();
        prop_assert_eq!(Manifest::decode(&b, 3).unwrap(), m);
    }

    /// A damaged manifest either is an error or decodes to blocks that encode to its bytes
    /// exactly: the decoder accepts nothing the format does not allow (its quick path for
    /// one-fragment blocks included), at every arity, on the stack and past it.
    #[test]
    fn damaged_manifests_decode_to_their_bytes_or_fail(
        (sid_ndim, m) in (0usize..7).prop_flat_map(|n| (Just(n), manifest(n))),
        d in prop_oneof![
            any::<usize>().prop_map(Damage::Truncate),
            any::<usize>().prop_map(Damage::FlipBit),
            (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Damage::SetByte(i, b)),
        ],
    ) {
        let bad = apply_damage(&m.encode(sid_ndim).unwrap(), &d);
        if let Ok(got) = Manifest::decode(&bad, sid_ndim) {
            prop_assert_eq!(got.encode(sid_ndim).unwrap(), bad);
        }
    }

    /// A filtered decode keeps exactly the blocks the filter accepts, in order, and ends
    /// where the whole decode ends.
    #[test]
    fn filtered_manifest_decodes_keep_the_accepted_blocks(m in manifest(3), parity in 0i64..2) {
        let b = m.encode(3).unwrap();
        let keep = |c: &[i64]| c[0].rem_euclid(2) == parity;
        let (got, end) = Manifest::decode_at_where(&b, 0, 3, keep).unwrap();
        let want: Vec<ManifestBlock> =
            m.blocks.iter().filter(|x| keep(x.chunk.as_slice())).cloned().collect();
        prop_assert_eq!(got.blocks, want);
        prop_assert_eq!(end, b.len());
    }

    #[test]
    fn planned_manifests_keep_fragment_order(refs in prop::collection::vec(
        (prop::sample::select(vec![vec![0i64, 0, 0], vec![1, 0, -1], vec![2, 2, 2]]), 0u64..20), 0..60)) {
        let m = Manifest::from_refs(&refs);
        let back: Vec<(Vec<i64>, u64)> = m.refs().map(|(c, f)| (c.to_vec(), f)).collect();
        prop_assert_eq!(back, refs.clone());
        // the plan is never larger than one block per reference
        let naive = Manifest { blocks: refs.iter().map(|(c, f)| ManifestBlock { chunk: c.clone().into(), fragments: BlockFragments::Single(*f) }).collect() };
        prop_assert!(m.encoded_len(3) <= naive.encoded_len(3));
        prop_assert_eq!(Manifest::decode(&m.encode(3).unwrap(), 3).unwrap(), m);
    }

    #[test]
    fn groups_round_trip(members in prop::collection::vec(prop::collection::vec(0u64..1 << 50, 0..20), 0..30)) {
        let g = Groups { members };
        let (data, offsets) = g.encode().unwrap();
        prop_assert_eq!(Groups::decode(&data, &offsets).unwrap(), g);
    }

    #[test]
    fn link_rows_round_trip(width in 1usize..5, rows in 0usize..100) {
        let values: Vec<i64> = (0..width * rows).map(|i| (i * 7 % 101) as i64).collect();
        let l = LinkRows::new(width, values).unwrap();
        prop_assert_eq!(LinkRows::decode(&l.encode(), width, Some(101)).unwrap(), l);
    }

    #[test]
    fn ragged_links_round_trip(width in 1usize..4, groups in prop::collection::vec(0usize..20, 0..6)) {
        let r = RaggedLinks {
            link_width: width,
            groups: groups.iter().map(|&n| (0..(n * width) as i64).collect()).collect(),
        };
        prop_assert_eq!(RaggedLinks::decode(&r.encode().unwrap(), width).unwrap(), r);
    }

    #[test]
    fn cross_chunk_links_round_trip(width in 1usize..5, sid in 1usize..5, n in 0usize..50) {
        let mut l = CrossChunkLinks::new(width, sid);
        for r in 0..n {
            let chunks: Vec<Vec<i64>> = (0..width).map(|k| (0..sid).map(|d| (r * 3 + k + d) as i64 - 5).collect()).collect();
            let eps: Vec<(&[i64], u64)> = chunks.iter().enumerate().map(|(k, c)| (c.as_slice(), (r + k) as u64)).collect();
            l.push(&eps).unwrap();
        }
        let back = CrossChunkLinks::decode(&l.encode(), n as u64, width, sid).unwrap();
        prop_assert_eq!(back.len(), n);
        prop_assert_eq!(back, l);
    }

    /// The records decoded from their encoding cut anywhere into pieces (as a blob read a
    /// stored chunk at a time hands them over) are the records decoded whole; with a byte
    /// more or less than the records, or a count other than the stored one, it is an error.
    #[test]
    fn cross_chunk_records_decode_piece_by_piece(
        width in 1usize..5,
        sid in 1usize..4,
        n in 0usize..30,
        cuts in prop::collection::vec(0usize..2000, 0..8),
        known in any::<bool>(),
    ) {
        let mut l = CrossChunkLinks::new(width, sid);
        for r in 0..n {
            let chunks: Vec<Vec<i64>> = (0..width).map(|k| (0..sid).map(|d| (r * 7 + k * 3 + d) as i64 - 9).collect()).collect();
            let eps: Vec<(&[i64], u64)> = chunks.iter().enumerate().map(|(k, c)| (c.as_slice(), (r * 5 + k) as u64)).collect();
            l.push(&eps).unwrap();
        }
        let bytes = l.encode();
        let mut at: Vec<usize> = cuts.iter().map(|&c| c % (bytes.len() + 1)).collect();
        at.push(0);
        at.push(bytes.len());
        at.sort_unstable();
        let count = known.then_some(n as u64);
        let mut d = RecordDecoder::new(width, sid).unwrap();
        d.expect(count, bytes.len() as u64).unwrap();
        for w in at.windows(2) {
            d.push(&bytes[w[0]..w[1]]);
        }
        prop_assert_eq!(d.finish(count).unwrap(), l.clone());
        // taken after every piece: the whole records so far, in order, the same records
        let mut t = RecordDecoder::new(width, sid).unwrap();
        t.check(count, bytes.len() as u64).unwrap();
        let mut taken = CrossChunkLinks::new(width, sid);
        let mut batches = 0;
        for w in at.windows(2) {
            t.push(&bytes[w[0]..w[1]]);
            let batch = t.take_whole().unwrap();
            prop_assert!(batch.len() * width * (sid + 1) * 8 <= w[1], "more records than bytes");
            batches += usize::from(!batch.is_empty());
            taken.append(&batch).unwrap();
        }
        let rest = t.finish(count).unwrap();
        prop_assert!(rest.is_empty());
        prop_assert_eq!(&taken, &l);
        prop_assert!(n == 0 || batches >= 1);
        prop_assert!(taken.append(&CrossChunkLinks::new(width + 1, sid)).is_err());
        prop_assert!(RecordDecoder::new(width, sid).unwrap().check(Some(n as u64 + 1), bytes.len() as u64).is_err());
        // a negative row is an error naming its record, whichever batch it is taken in
        if n > 0 {
            let mut neg = bytes.clone();
            let record = width * (sid + 1) * 8;
            let last = (n - 1) * record + sid * 8;
            neg[last..last + 8].copy_from_slice(&(-1i64).to_le_bytes());
            let mut t = RecordDecoder::new(width, sid).unwrap();
            let mut failed = None;
            for w in at.windows(2) {
                t.push(&neg[w[0]..w[1]]);
                if let Err(e) = t.take_whole() {
                    failed = Some(e.to_string());
                    break;
                }
            }
            let e = failed.expect("a negative row is an error");
            prop_assert!(e.contains(&format!("record {}", n - 1)), "{}", e);
            // checked as pushed (the records held): the error comes with the piece that
            // completes the bad record (any record), not before, naming it
            let bad = cuts.first().map_or(n - 1, |&c| c % n);
            let mut neg = bytes.clone();
            let at_row = bad * record + sid * 8;
            neg[at_row..at_row + 8].copy_from_slice(&(-1i64).to_le_bytes());
            let mut c = RecordDecoder::new(width, sid).unwrap();
            let mut failed_at = None;
            for w in at.windows(2) {
                c.push(&neg[w[0]..w[1]]);
                if let Err(e) = c.check_pushed() {
                    prop_assert!(e.to_string().contains(&format!("record {bad}")), "{}", e);
                    failed_at = Some(w[1]);
                    break;
                }
            }
            prop_assert_eq!(failed_at, at.iter().copied().find(|&x| x >= (bad + 1) * record));
        }
        // checked as pushed, good records: no error, and the same records
        let mut ok = RecordDecoder::new(width, sid).unwrap();
        for w in at.windows(2) {
            ok.push(&bytes[w[0]..w[1]]);
            prop_assert!(ok.check_pushed().is_ok());
        }
        prop_assert_eq!(ok.finish(count).unwrap(), l.clone());
        // a byte short, a byte over, a record more than stored
        let mut short = RecordDecoder::new(width, sid).unwrap();
        short.push(&bytes[..bytes.len().saturating_sub(1)]);
        prop_assert!(n == 0 || short.finish(count).is_err());
        let mut over = RecordDecoder::new(width, sid).unwrap();
        over.push(&bytes);
        over.push(&[0]);
        prop_assert!(over.finish(count).is_err());
        let mut more = RecordDecoder::new(width, sid).unwrap();
        more.push(&bytes);
        prop_assert!(more.finish(Some(n as u64 + 1)).is_err());
    }

    #[test]
    fn attribute_rows_round_trip(dt in numeric_type(), channels in 1usize..5, rows in 0u64..40, fill in any::<u8>()) {
        let size = dt.size().unwrap();
        let bytes: Vec<u8> = (0..rows as usize * channels * size).map(|i| (i as u8).wrapping_mul(fill) & if dt == DataType::Bool { 1 } else { 0xff }).collect();
        let r = AttributeRows::from_le(dt, channels, bytes.clone()).unwrap();
        prop_assert_eq!(AttributeRows::decode(&r.encode(), dt, rows, Some(channels)).unwrap(), r.clone());
        if rows > 0 {
            prop_assert_eq!(AttributeRows::decode(&bytes, dt, rows, None).unwrap().channels(), channels);
        }
        let dense = DenseArray::decode(&bytes, dt, &[rows, channels as u64]).unwrap();
        prop_assert_eq!(dense.encode(), bytes);
    }

    #[test]
    fn dictionaries_round_trip(values in prop::collection::vec(prop::option::of(prop::sample::select(vec!["axon", "soma", "dendrite", "", "é"])), 0..50)) {
        let refs: Vec<Option<&str>> = values.iter().map(|v| v.map(|s| s as &str)).collect();
        let (dict, codes) = Dictionary::encode(&refs).unwrap();
        let decoded = dict.decode(&codes).unwrap();
        prop_assert_eq!(decoded, values.iter().map(|v| v.map(str::to_owned)).collect::<Vec<_>>());
        let reread = AttributeRows::decode(&codes.encode(), codes.data_type(), values.len() as u64, Some(1)).unwrap();
        prop_assert_eq!(reread, codes);
    }
}

// ---------------------------------------------------------------------------------------------
// Arbitrary and damaged bytes.

/// Every decoder, on `bytes`; returns nothing, must not panic, and must stay within the
/// allocation bound.
fn decode_everything(bytes: &[u8], small: u64) {
    let decoders: Vec<Box<dyn Fn()>> = vec![
        Box::new(|| drop(FragmentIndex::decode(bytes, None))),
        Box::new(|| drop(FragmentIndex::decode(bytes, Some(small)))),
        Box::new(|| drop(Manifest::decode(bytes, 3))),
        Box::new(|| drop(Manifest::decode(bytes, 0))),
        Box::new(|| drop(Manifest::decode_at_where(bytes, 0, 3, |c| c[0] % 2 == 0))),
        Box::new(|| drop(decode_stream(bytes, 3, None))),
        Box::new(|| drop(decode_stream(bytes, 2, Some(small as usize)))),
        Box::new(|| drop(decode_with_offsets(bytes, bytes, 3))),
        Box::new(|| drop(decode_vlen_items([bytes, bytes], 1, 3))),
        Box::new(|| drop(Groups::decode(bytes, bytes))),
        Box::new(|| drop(Groups::decode(bytes, &0i64.to_le_bytes()))),
        Box::new(|| drop(LinkRows::decode(bytes, 2, Some(small)))),
        Box::new(|| drop(LinkRows::decode(bytes, 3, None))),
        Box::new(|| drop(RaggedLinks::decode(bytes, 2))),
        Box::new(|| drop(CrossChunkLinks::decode(bytes, small, 2, 3))),
        Box::new(|| drop(CrossChunkLinks::decode(bytes, u64::MAX, 3, 3))),
        Box::new(|| drop(AttributeRows::decode(bytes, DataType::Float32, small, None))),
        Box::new(|| {
            drop(AttributeRows::decode(
                bytes,
                DataType::UInt8,
                small,
                Some(3),
            ))
        }),
        Box::new(|| drop(DenseArray::decode(bytes, DataType::Int64, &[small, 2]))),
        Box::new(|| {
            drop(DenseArray::decode(
                bytes,
                DataType::Int64,
                &[u64::MAX, u64::MAX],
            ))
        }),
        Box::new(|| drop(decode_present_mask(bytes, small))),
    ];
    for (i, d) in decoders.iter().enumerate() {
        let peak = peak_alloc(d);
        assert!(
            peak <= bound(bytes.len()),
            "decoder {i} allocated {peak} bytes for a {}-byte input",
            bytes.len()
        );
    }
}

fn valid_blobs() -> Vec<Vec<u8>> {
    let idx = FragmentIndex::new(&[
        Fragment::Range { start: 0, count: 4 },
        Fragment::Explicit(vec![3, 1, 2]),
        Fragment::Range { start: 4, count: 0 },
    ])
    .unwrap();
    let m = Manifest::from_refs(&[
        (vec![0, 0, 0], 0),
        (vec![0, 0, 0], 1),
        (vec![1, -1, 0], 5),
        (vec![1, -1, 0], 2),
    ]);
    let (stream, offsets) = encode_stream(&[m.clone(), Manifest::default(), m.clone()], 3).unwrap();
    let g = Groups {
        members: vec![vec![0, 2], vec![], vec![1]],
    }
    .encode()
    .unwrap();
    let mut ccl = CrossChunkLinks::new(2, 3);
    ccl.push(&[(&[0, 0, 0], 2), (&[1, 0, 0], 0)]).unwrap();
    vec![
        idx.encode(),
        m.encode(3).unwrap(),
        stream,
        offsets,
        g.0,
        g.1,
        LinkRows::new(2, vec![0, 1, 1, 2]).unwrap().encode(),
        RaggedLinks {
            link_width: 2,
            groups: vec![vec![0, 0, 1, 0]],
        }
        .encode()
        .unwrap(),
        ccl.encode(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..700), small in 0u64..64) {
        decode_everything(&bytes, small);
    }

    #[test]
    fn damaged_valid_blobs_never_panic(which in 0usize..9, d in prop_oneof![
        any::<usize>().prop_map(Damage::Truncate),
        any::<usize>().prop_map(Damage::FlipBit),
        prop::collection::vec(any::<u8>(), 1..16).prop_map(Damage::Extend),
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Damage::SetByte(i, b)),
    ], small in 0u64..16) {
        let blobs = valid_blobs();
        let bad = apply_damage(&blobs[which], &d);
        decode_everything(&bad, small);
    }
}

#[test]
fn headers_claiming_huge_counts_allocate_nothing_large() {
    // fragment index: F = R = u32::MAX with a 24-byte blob
    let mut fi = Vec::new();
    fi.extend_from_slice(&0x5A56_4647u32.to_le_bytes());
    fi.extend_from_slice(&[1, 0, 0, 0]);
    fi.extend_from_slice(&u32::MAX.to_le_bytes());
    fi.extend_from_slice(&u32::MAX.to_le_bytes());
    fi.extend_from_slice(&[0xff; 8]);
    let peak = peak_alloc(|| assert!(FragmentIndex::decode(&fi, None).is_err()));
    assert!(peak <= bound(fi.len()), "{peak}");
    // manifest: 2^32-1 blocks; mode-2 block with 2^32-1 fragments
    let peak = peak_alloc(|| assert!(Manifest::decode(&[0xff, 0xff, 0xff, 0xff, 0], 3).is_err()));
    assert!(peak <= bound(5), "{peak}");
    let mut m2 = vec![1, 0, 0, 0];
    m2.push(2);
    m2.extend_from_slice(&u32::MAX.to_le_bytes());
    let peak = peak_alloc(|| assert!(Manifest::decode(&m2, 0).is_err()));
    assert!(peak <= bound(m2.len()), "{peak}");
    // ragged links: K = 2^62
    let mut r = Vec::new();
    r.extend_from_slice(&(1i64 << 62).to_le_bytes());
    let peak = peak_alloc(|| assert!(RaggedLinks::decode(&r, 2).is_err()));
    assert!(peak <= bound(r.len()), "{peak}");
    // a stream said to hold a billion manifests
    let peak = peak_alloc(|| assert!(decode_stream(&[0, 0, 0, 0], 3, Some(1 << 30)).is_err()));
    assert!(peak <= bound(4), "{peak}");
}

#[test]
fn large_counts_round_trip() {
    // 200k fragments mixing ranges and explicit lists
    let frags: Vec<Fragment> = (0..200_000u64)
        .map(|i| {
            if i % 7 == 0 {
                Fragment::Explicit(vec![i, i / 2])
            } else {
                Fragment::Range {
                    start: i * 3,
                    count: i % 4,
                }
            }
        })
        .collect();
    let idx = FragmentIndex::new(&frags).unwrap();
    let back = FragmentIndex::decode(&idx.encode(), None).unwrap();
    assert_eq!(back.len(), 200_000);
    assert_eq!(back.to_fragments(), frags);
    // 50k manifests, one with 20k blocks
    let mut ms: Vec<Manifest> = (0..50_000i64)
        .map(|i| Manifest::from_refs(&[(vec![i % 5, -(i % 3), 0], (i % 11) as u64)]))
        .collect();
    ms.push(Manifest::from_refs(
        &(0..20_000u64)
            .map(|i| (vec![(i / 100) as i64, 0, 0], i % 100))
            .collect::<Vec<_>>(),
    ));
    let (data, offsets) = encode_stream(&ms, 3).unwrap();
    assert_eq!(decode_with_offsets(&data, &offsets, 3).unwrap(), ms);
    assert_eq!(decode_stream(&data, 3, Some(ms.len())).unwrap(), ms);
    // 100k groups
    let g = Groups {
        members: (0..100_000u64)
            .map(|i| (0..i % 4).map(|k| i + k).collect())
            .collect(),
    };
    let (d, o) = g.encode().unwrap();
    assert_eq!(Groups::decode(&d, &o).unwrap(), g);
}
