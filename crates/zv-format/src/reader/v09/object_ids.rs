//! The row → object id table of a ZV 0.9 object index (`object_index/object_ids`, layout
//! `vlen_manifests_v2`): manifests are stored by row, and row `r` is object `object_ids[r]`.
//! zv's [`ObjectIndex`](crate::reader::ObjectIndex) holds manifests by id, so the rows are
//! placed at their ids; ids with no row get an empty manifest and are left out of
//! [`ObjectIndex::ids`](crate::reader::ObjectIndex::ids).

use crate::error::{Error, Result};
use crate::layout::manifest::Manifest;

/// How far the largest id may exceed the row count before the id space is refused rather
/// than laid out by id (one empty manifest per missing id).
pub(crate) const MAX_ID_GAP: u64 = 1 << 20;

/// Each row's object id, in row order, from the little-endian int64 `object_ids` bytes of
/// `n` rows; `key` names the array in errors.
pub(crate) fn row_ids(ids: &[u8], n: usize, key: &str) -> Result<Vec<u64>> {
    if ids.len() != n.saturating_mul(8) {
        return Err(Error::inconsistent(
            key,
            format!("{} bytes of int64 ids for {n} manifests", ids.len()),
        ));
    }
    let mut stored = Vec::with_capacity(n);
    for b in ids.chunks_exact(8) {
        let v = i64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
        let id = u64::try_from(v)
            .map_err(|_| Error::inconsistent(key, format!("object id {v} is negative")))?;
        stored.push(id);
    }
    Ok(stored)
}

/// The manifests by id and the stored ids (ascending; `None` when they are `0..rows`), from
/// the manifests by row and the little-endian int64 `object_ids` bytes; `key` names the
/// `object_ids` array in errors.
pub(crate) fn by_id(
    rows: Vec<Manifest>,
    ids: &[u8],
    key: &str,
) -> Result<(Vec<Manifest>, Option<Vec<u64>>)> {
    let n = rows.len();
    let mut stored = row_ids(ids, n, key)?;
    if stored.iter().enumerate().all(|(r, &id)| id == r as u64) {
        return Ok((rows, None));
    }
    let max = stored.iter().copied().max().unwrap_or(0);
    if max >= (n as u64).saturating_add(MAX_ID_GAP) {
        return Err(Error::Unsupported {
            key: key.to_owned(),
            what: format!(
                "object ids up to {max} for {n} objects (zv lays objects out by id and reads id \
                 spaces at most {MAX_ID_GAP} larger than the object count)"
            ),
        });
    }
    let len = usize::try_from(max + 1)
        .map_err(|_| Error::inconsistent(key, format!("object id {max} is too large")))?;
    let mut out = vec![Manifest::default(); len];
    let mut seen = vec![false; len];
    for (m, &id) in rows.into_iter().zip(&stored) {
        let i = id as usize;
        if std::mem::replace(&mut seen[i], true) {
            return Err(Error::inconsistent(
                key,
                format!("object id {id} is stored twice"),
            ));
        }
        out[i] = m;
    }
    stored.sort_unstable();
    Ok((out, Some(stored)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[i64]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn manifests(n: usize) -> Vec<Manifest> {
        (0..n)
            .map(|i| Manifest::from_refs(&[(vec![i as i64, 0, 0], 0)]))
            .collect()
    }

    #[test]
    fn identity_ids_keep_the_rows() {
        let (m, stored) = by_id(manifests(3), &ids(&[0, 1, 2]), "k").unwrap();
        assert_eq!((m, stored), (manifests(3), None));
    }

    #[test]
    fn sparse_ids_place_rows_at_their_ids() {
        let rows = manifests(3);
        let (m, stored) = by_id(rows.clone(), &ids(&[7, 2, 4]), "k").unwrap();
        assert_eq!(m.len(), 8);
        assert_eq!((&m[7], &m[2], &m[4]), (&rows[0], &rows[1], &rows[2]));
        assert_eq!(m[0], Manifest::default());
        assert_eq!(stored, Some(vec![2, 4, 7]));
    }

    #[test]
    fn bad_tables_are_errors_naming_the_key() {
        let key = "0/object_index/object_ids";
        for (rows, bytes) in [
            (2, ids(&[0])),
            (2, ids(&[0, -1])),
            (2, ids(&[3, 3])),
            (1, ids(&[1 << 40])),
            (1, vec![0u8; 5]),
        ] {
            let e = by_id(manifests(rows), &bytes, key).unwrap_err().to_string();
            assert!(e.contains(key), "{e}");
        }
    }
}
