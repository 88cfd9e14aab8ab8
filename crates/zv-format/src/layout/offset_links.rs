//! ZV 0.9 link placement (`docs/format-decisions.md`, "ZV 0.9 stores", "Links"): the rules
//! that decide where a link record of level delta 0 is filed, shared by the reader and the
//! writer.
//!
//! A record of `link_width` endpoints `(chunk, row)` is filed at the cell of its *source*
//! chunk in the array named by the other endpoints' chunk offsets from the source (its
//! **offsets segment**: `"+1.-1.0"`, several joined by `_`; `self` for width 1). A record
//! whose endpoints all lie in one chunk goes to the all-zero segment ([`intra_segment`]) in
//! the order written. Any other record of an undirected family is stored once, canonically:
//! its endpoints sorted by `(chunk coordinates, row)`, the first of them the source, and a
//! `perm_idx` column (the Lehmer code of the sort, [`lehmer_encode`]) restores the order
//! written. A directed family keeps the order written (source = endpoint 0, no `perm_idx`).
//!
//! ```
//! use zv_format::layout::cross_chunk::CrossChunkLinks;
//! use zv_format::layout::offset_links::{partition, lehmer_decode};
//! let mut links = CrossChunkLinks::new(2, 2);
//! links.push(&[(&[1, 0], 4), (&[0, 0], 7)])?;   // an edge 1.0 → 0.0
//! let cells = partition(&links, false)?;
//! // canonically the source is chunk 0.0, the other endpoint one chunk along axis 0
//! let cell = &cells[&("+1.0".to_owned(), vec![0, 0])];
//! assert_eq!(cell.rows, vec![1, 7, 4]);         // [perm_idx, v_0, v_1]
//! assert_eq!(cell.records, vec![0]);            // record 0 of `links`
//! assert_eq!(lehmer_decode(1, 2), Some(vec![1, 0]));
//! # Ok::<(), zv_format::layout::LayoutError>(())
//! ```

use std::collections::BTreeMap;

use super::cross_chunk::CrossChunkLinks;
use super::{invalid, LayoutError};

const WHAT: &str = "link placement";

/// The segment of a width-1 family (no offsets).
pub const SELF_SEGMENT: &str = "self";

/// The largest `link_width` whose permutations are coded (`L!` must fit an int64).
pub const MAX_PERM_WIDTH: usize = 20;

/// The name of the all-zero (intra-chunk) offsets segment of a family of `width` over
/// `sid` chunk axes.
pub fn intra_segment(sid: usize, width: usize) -> String {
    if width <= 1 {
        return SELF_SEGMENT.to_owned();
    }
    let zero = vec!["0"; sid].join(".");
    vec![zero; width - 1].join("_")
}

/// The segment name of `offsets` (`[[1, -1, 0], [0, 2, 0]]` → `"+1.-1.0_0.+2.0"`; no offsets
/// → `self`).
pub fn format_segment(offsets: &[Vec<i64>]) -> String {
    if offsets.is_empty() {
        return SELF_SEGMENT.to_owned();
    }
    offsets
        .iter()
        .map(|o| {
            o.iter()
                .map(|&c| match c {
                    0 => "0".to_owned(),
                    c if c > 0 => format!("+{c}"),
                    c => c.to_string(),
                })
                .collect::<Vec<_>>()
                .join(".")
        })
        .collect::<Vec<_>>()
        .join("_")
}

/// The `width − 1` offsets of segment `seg` (`"+1.-1.0_0.+2.0"`), each of `sid` components.
pub fn parse_segment(seg: &str, sid: usize, width: usize) -> Result<Vec<Vec<i64>>, String> {
    if width <= 1 {
        return if seg == SELF_SEGMENT {
            Ok(Vec::new())
        } else {
            Err(format!(
                "segment `{seg}` of a width-1 family (`{SELF_SEGMENT}` expected)"
            ))
        };
    }
    let parts: Vec<&str> = seg.split('_').collect();
    if parts.len() != width - 1 {
        return Err(format!(
            "segment `{seg}` has {} offsets, link_width {width} needs {}",
            parts.len(),
            width - 1
        ));
    }
    parts
        .iter()
        .map(|p| {
            let c: Vec<i64> = p
                .split('.')
                .map(|x| match x {
                    "0" => Some(0),
                    _ if x.starts_with('+') || x.starts_with('-') => x.parse().ok(),
                    _ => None,
                })
                .collect::<Option<_>>()
                .ok_or_else(|| format!("segment `{seg}`: `{p}` is not an offset"))?;
            if c.len() == sid {
                Ok(c)
            } else {
                Err(format!(
                    "segment `{seg}`: `{p}` does not have {sid} components"
                ))
            }
        })
        .collect()
}

/// The Lehmer code of the permutation `perm` of `0..L` (`perm[i]`: the input position of
/// canonical position `i`), in `[0, L!)`. `None` when `perm` is not a permutation or `L` is
/// 0 or above [`MAX_PERM_WIDTH`].
pub fn lehmer_encode(perm: &[usize]) -> Option<i64> {
    let width = perm.len();
    if width == 0 || width > MAX_PERM_WIDTH {
        return None;
    }
    let mut fact: u64 = (1..=width as u64).product();
    let mut available: Vec<usize> = (0..width).collect();
    let mut code = 0u64;
    for (i, p) in perm.iter().enumerate() {
        fact /= (width - i) as u64;
        let idx = available.iter().position(|a| a == p)?;
        code += idx as u64 * fact;
        available.remove(idx);
    }
    i64::try_from(code).ok()
}

/// The permutation with Lehmer code `code` over `width` positions (the inverse of
/// [`lehmer_encode`]): `out[i]` is the input position of canonical position `i`. `None`
/// when the code is outside `[0, width!)`.
pub fn lehmer_decode(code: i64, width: usize) -> Option<Vec<usize>> {
    if width == 0 || width > MAX_PERM_WIDTH {
        return None;
    }
    let mut fact: u64 = (1..=width as u64).product();
    let mut code = u64::try_from(code).ok().filter(|&c| c < fact)?;
    let mut available: Vec<usize> = (0..width).collect();
    let mut out = Vec::with_capacity(width);
    for i in 0..width {
        fact /= (width - i) as u64;
        let idx = usize::try_from(code / fact).ok()?;
        code %= fact;
        out.push(available.remove(idx));
    }
    Some(out)
}

/// Whether the rows of a segment carry `perm_idx` (zarr-vectors' `links_has_perm`): never
/// for the all-zero segment (`intra`) or cross-level links; always for `duplicate` storage;
/// else for undirected families.
pub fn has_perm(intra: bool, delta: i32, directed: bool, store: &str) -> bool {
    !intra && delta == 0 && (store == "duplicate" || !directed)
}

/// One cell of a family's cross-chunk records.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cell {
    /// The cell's flat int64 rows `[perm_idx?, v_0, …]`.
    pub rows: Vec<i64>,
    /// The record each row is, by its index in the records partitioned (the rows of the
    /// cell's link attributes follow them).
    pub records: Vec<usize>,
}

/// The cells of a family's cross-chunk records: `(segment, source chunk)` → the cell.
pub type Cells = BTreeMap<(String, Vec<i64>), Cell>;

/// The cells of the cross-chunk records `links` of a delta-0 family with `canonical`
/// storage: `(segment, source chunk)` → the cell's flat int64 rows `[perm_idx?, v_0, …]`
/// (`perm_idx` when the family is undirected) and their records, in the order given. Every record
/// must span at least two chunks; a record within one chunk, an offset that overflows or a
/// width without Lehmer codes is an error.
pub fn partition(links: &CrossChunkLinks, directed: bool) -> Result<Cells, LayoutError> {
    let width = links.link_width();
    let with_perm = has_perm(false, 0, directed, "canonical");
    let mut cells = Cells::new();
    let mut ends: Vec<(&[i64], u64)> = Vec::with_capacity(width);
    for r in 0..links.len() {
        ends.clear();
        for k in 0..width {
            ends.push(
                links
                    .endpoint(r, k)
                    .ok_or_else(|| invalid(WHAT, format!("record {r} is incomplete")))?,
            );
        }
        if ends.iter().all(|e| e.0 == ends[0].0) {
            return Err(invalid(
                WHAT,
                format!("record {r} lies within one chunk (an intra-chunk link)"),
            ));
        }
        let mut sigma: Vec<usize> = (0..width).collect();
        if !directed {
            sigma.sort_by(|&a, &b| ends[a].cmp(&ends[b]));
        }
        let source = ends[sigma[0]].0;
        let offsets = sigma[1..]
            .iter()
            .map(|&j| {
                ends[j]
                    .0
                    .iter()
                    .zip(source)
                    .map(|(c, s)| c.checked_sub(*s))
                    .collect::<Option<Vec<i64>>>()
                    .ok_or_else(|| invalid(WHAT, format!("record {r}: a chunk offset overflows")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let cell = cells
            .entry((format_segment(&offsets), source.to_vec()))
            .or_default();
        cell.records.push(r);
        if with_perm {
            cell.rows.push(lehmer_encode(&sigma).ok_or_else(|| {
                invalid(WHAT, format!("link_width {width} has no permutation code"))
            })?);
        }
        for &j in &sigma {
            cell.rows.push(
                i64::try_from(ends[j].1)
                    .map_err(|_| invalid(WHAT, format!("record {r}: a row exceeds int64")))?,
            );
        }
    }
    Ok(cells)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn segments_name_offsets() {
        assert_eq!(intra_segment(3, 2), "0.0.0");
        assert_eq!(intra_segment(2, 3), "0.0_0.0");
        assert_eq!(intra_segment(3, 1), "self");
        assert_eq!(
            parse_segment("+1.-1.0_0.+2.0", 3, 3).unwrap(),
            vec![vec![1, -1, 0], vec![0, 2, 0]]
        );
        assert_eq!(
            format_segment(&[vec![1, -1, 0], vec![0, 2, 0]]),
            "+1.-1.0_0.+2.0"
        );
        assert_eq!(format_segment(&[]), "self");
        assert_eq!(parse_segment("self", 3, 1).unwrap(), Vec::<Vec<i64>>::new());
        for bad in ["+1.-1", "1.0.0", "+1.x.0", "+1.0.0_0.0.0", "self"] {
            assert!(parse_segment(bad, 3, 2).is_err(), "{bad}");
        }
    }

    #[test]
    fn lehmer_codes_match_zarr_vectors_examples() {
        assert_eq!(lehmer_decode(0, 2).unwrap(), vec![0, 1]);
        assert_eq!(lehmer_decode(1, 2).unwrap(), vec![1, 0]);
        assert_eq!(lehmer_decode(5, 3).unwrap(), vec![2, 1, 0]);
        assert_eq!(lehmer_decode(3, 3).unwrap(), vec![1, 2, 0]);
        assert_eq!(lehmer_encode(&[1, 2, 0]), Some(3));
        assert!(lehmer_decode(6, 3).is_none());
        assert!(lehmer_decode(-1, 2).is_none());
        assert!(lehmer_decode(0, 0).is_none());
        assert!(lehmer_decode(0, 64).is_none());
        assert!(lehmer_encode(&[0, 0]).is_none());
        assert!(lehmer_encode(&[]).is_none());
    }

    #[test]
    fn records_are_filed_canonically_or_as_written() {
        let mut links = CrossChunkLinks::new(3, 2);
        links
            .push(&[(&[0, 1], 5), (&[-1, 0], 2), (&[0, 1], 3)])
            .unwrap();
        let undirected = partition(&links, false).unwrap();
        // sorted: (-1.0, 2), (0.1, 3), (0.1, 5) = input positions 1, 2, 0
        assert_eq!(
            undirected[&("+1.+1_+1.+1".to_owned(), vec![-1, 0])].rows,
            vec![lehmer_encode(&[1, 2, 0]).unwrap(), 2, 3, 5]
        );
        let directed = partition(&links, true).unwrap();
        assert_eq!(
            directed[&("-1.-1_0.0".to_owned(), vec![0, 1])].rows,
            vec![5, 2, 3]
        );
        let mut intra = CrossChunkLinks::new(2, 2);
        intra.push(&[(&[0, 1], 5), (&[0, 1], 2)]).unwrap();
        assert!(partition(&intra, false).is_err());
        let mut far = CrossChunkLinks::new(2, 1);
        far.push(&[(&[i64::MIN], 0), (&[i64::MAX], 0)]).unwrap();
        assert!(partition(&far, true).is_err());
    }

    proptest! {
        #[test]
        fn lehmer_codes_round_trip(perm in Just((0..6usize).collect::<Vec<_>>()).prop_shuffle(), w in 1usize..=6) {
            let perm: Vec<usize> = perm.into_iter().filter(|&p| p < w).collect();
            let code = lehmer_encode(&perm).unwrap();
            let fact: i64 = (1..=w as i64).product();
            prop_assert!((0..fact).contains(&code));
            prop_assert_eq!(lehmer_decode(code, w).unwrap(), perm);
        }

        #[test]
        fn segment_names_round_trip(offs in prop::collection::vec(prop::collection::vec(-1000i64..1000, 3), 1..4)) {
            let name = format_segment(&offs);
            prop_assert_eq!(parse_segment(&name, 3, offs.len() + 1).unwrap(), offs);
        }

        /// Every placed record decodes back to its endpoints in the order written.
        #[test]
        fn placement_round_trips(
            recs in prop::collection::vec(prop::collection::vec(((-2i64..2, -2i64..2), 0u64..9), 3), 1..20),
            directed in any::<bool>(),
        ) {
            let mut links = CrossChunkLinks::new(3, 2);
            let mut written = Vec::new();
            for r in &recs {
                let chunks: Vec<[i64; 2]> = r.iter().map(|((a, b), _)| [*a, *b]).collect();
                if chunks.iter().all(|c| *c == chunks[0]) {
                    continue;
                }
                let ends: Vec<(&[i64], u64)> = chunks.iter().zip(r).map(|(c, (_, v))| (&c[..], *v)).collect();
                links.push(&ends).unwrap();
                written.push(r.iter().map(|((a, b), v)| (vec![*a, *b], *v as i64)).collect::<Vec<_>>());
            }
            let mut back = vec![Vec::new(); written.len()];
            for ((seg, src), cell) in partition(&links, directed).unwrap() {
                let offs = parse_segment(&seg, 2, 3).unwrap();
                let ncols = 3 + usize::from(!directed);
                prop_assert_eq!(cell.records.len() * ncols, cell.rows.len());
                for (row, &record) in cell.rows.chunks_exact(ncols).zip(&cell.records) {
                    let (perm, vis) = if directed { (0, row) } else { (row[0], &row[1..]) };
                    let order = lehmer_decode(perm, 3).unwrap();
                    let mut rec = vec![(Vec::new(), 0); 3];
                    for (i, &v) in vis.iter().enumerate() {
                        let c = if i == 0 { src.clone() } else { src.iter().zip(&offs[i - 1]).map(|(s, o)| s + o).collect() };
                        rec[order[i]] = (c, v);
                    }
                    // each row is the record it says it is
                    back[record] = rec;
                }
            }
            prop_assert_eq!(back, written);
        }
    }
}
