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

mod filing;

pub use filing::{ends_of, partition, Cell, CellPlan, Cells, Ends, EndsFn, PlannedCell};

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

    }
}
