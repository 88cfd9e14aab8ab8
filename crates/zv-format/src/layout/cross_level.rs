//! ZV 0.9 cross-level link placement (`docs/format-decisions.md`, "ZV 0.9 stores",
//! "Cross-level links"): the rules, shared by the reader and the writer, that say where a
//! pair `(vertex at level L, vertex at level L + d)` is filed under `L/links/<d>`.
//!
//! Two levels of a pyramid may have different chunk shapes, each a whole multiple of the
//! root's (its **chunk scale**, per axis). A pair is filed at the cell of its level-`L`
//! chunk `s` (the source), in the offsets segment `t − anchor(s)`, where `t` is the other
//! level's chunk and `anchor(s) = floor(s · r_L / r_{L+d})` is the source expressed in the
//! other level's grid (zarr-vectors 0.9.2's `anchor_chunk`). With equal scales the anchor is
//! the source itself. Rows are `[row at L, row at L + d]`, never with `perm_idx` (the levels
//! tell the endpoints apart); every cell, the all-zero segment's too, is one ragged blob.
//!
//! ```
//! use zv_format::layout::cross_level::{anchor, chunk_scale};
//! let fine = chunk_scale(&[10.0, 10.0], &[10.0, 10.0], 2).unwrap();
//! let coarse = chunk_scale(&[20.0, 40.0], &[10.0, 10.0], 2).unwrap();
//! assert_eq!(coarse, vec![2, 4]);
//! // fine chunk (-3, 5) lies in coarse chunk (-2, 1)
//! assert_eq!(anchor(&[-3, 5], &fine, &coarse), Some(vec![-2, 1]));
//! ```

use std::collections::BTreeMap;

use super::offset_links::format_segment;

/// The chunk scale of a level: its chunk shape as a whole multiple of the root's, per axis,
/// padded at the front with 1 up to `arity` chunk-key components (an attribute-chunking axis
/// never scales). An error when a ratio is not a positive whole number.
pub fn chunk_scale(
    level_chunk: &[f64],
    root_chunk: &[f64],
    arity: usize,
) -> Result<Vec<i64>, String> {
    if level_chunk.len() != root_chunk.len() || root_chunk.len() > arity {
        return Err(format!(
            "chunk shape {level_chunk:?} does not match the root's {root_chunk:?}"
        ));
    }
    let mut out = vec![1i64; arity - root_chunk.len()];
    for (&c, &r) in level_chunk.iter().zip(root_chunk) {
        let q = c / r;
        let whole = q.round();
        if !(whole >= 1.0 && (q - whole).abs() < 1e-9 && whole < 1e15) {
            return Err(format!(
                "chunk shape {level_chunk:?} is not a whole multiple of the root's {root_chunk:?}"
            ));
        }
        out.push(whole as i64);
    }
    Ok(out)
}

/// `floor(src · scale_src / scale_trg)` per axis: chunk `src` of a level with `scale_src`,
/// in the grid of a level with `scale_trg` (`None` on overflow or a rank mismatch).
pub fn anchor(src: &[i64], scale_src: &[i64], scale_trg: &[i64]) -> Option<Vec<i64>> {
    if src.len() != scale_src.len() || src.len() != scale_trg.len() {
        return None;
    }
    src.iter()
        .zip(scale_src.iter().zip(scale_trg))
        .map(|(&c, (&s, &t))| {
            if t <= 0 {
                return None;
            }
            Some(c.checked_mul(s)?.div_euclid(t))
        })
        .collect()
}

/// The cells of a side of cross-level pairs: `(segment, source chunk)` → flat int64 rows
/// `[source row, target row]`, pairs in the order given within a cell.
pub type PairCells = BTreeMap<(String, Vec<i64>), Vec<i64>>;

/// Files the pairs `((source chunk, row), (target chunk, row))` of one side (the source at
/// the level written, with `scale_src`; the target at the other level, `scale_trg`). `None`
/// when an anchor or offset overflows.
pub fn partition_pairs<'a>(
    pairs: impl IntoIterator<Item = ((&'a [i64], u64), (&'a [i64], u64))>,
    scale_src: &[i64],
    scale_trg: &[i64],
) -> Option<PairCells> {
    let mut cells = PairCells::new();
    for ((s, rs), (t, rt)) in pairs {
        let a = anchor(s, scale_src, scale_trg)?;
        let offset: Vec<i64> = t
            .iter()
            .zip(&a)
            .map(|(&x, &y)| x.checked_sub(y))
            .collect::<Option<_>>()?;
        if offset.len() != s.len() {
            return None;
        }
        let rows = cells
            .entry((format_segment(&[offset]), s.to_vec()))
            .or_default();
        rows.extend([i64::try_from(rs).ok()?, i64::try_from(rt).ok()?]);
    }
    Some(cells)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_and_anchors() {
        assert_eq!(chunk_scale(&[10.0], &[10.0], 2).unwrap(), vec![1, 1]);
        assert!(chunk_scale(&[15.0], &[10.0], 1).is_err());
        assert!(chunk_scale(&[5.0], &[10.0], 1).is_err());
        assert_eq!(anchor(&[-1, 3], &[1, 1], &[2, 2]), Some(vec![-1, 1]));
        assert_eq!(anchor(&[-1, 3], &[2, 2], &[1, 1]), Some(vec![-2, 6]));
        assert_eq!(anchor(&[i64::MAX], &[2], &[1]), None);
    }

    #[test]
    fn pairs_are_filed_by_offset_from_the_anchor() {
        let (a, b, c) = (vec![0i64, 0], vec![1i64, 0], vec![0i64, 0]);
        let cells = partition_pairs(
            [
                ((&a[..], 3), (&c[..], 0)),
                ((&b[..], 1), (&c[..], 2)),
                ((&a[..], 4), (&c[..], 1)),
            ],
            &[1, 1],
            &[2, 2],
        )
        .unwrap();
        assert_eq!(cells[&("0.0".to_owned(), a.clone())], vec![3, 0, 4, 1]);
        // fine chunk (1, 0) anchors at coarse (0, 0): offset zero too
        assert_eq!(cells[&("0.0".to_owned(), b.clone())], vec![1, 2]);
        let cells = partition_pairs([((&a[..], 0), (&b[..], 5))], &[1, 1], &[1, 1]).unwrap();
        assert_eq!(cells[&("+1.0".to_owned(), a)], vec![0, 5]);
    }
}
