//! The three containers of a level's manifests (`docs/format-decisions.md`, "Object index
//! container"): the manifest-block stream
//! (`object_index/data`), the stream with its offset table (`object_index/offsets`) and the
//! reference's vlen items (`object_index/manifests`).

use super::Manifest;
use crate::layout::{i64s, invalid, LayoutError};

/// Encodes the manifests of a level as the manifest-block stream and its offset table:
/// `(data, offsets)` where `offsets` is `int64[B]` little-endian byte offsets.
pub fn encode_stream(
    manifests: &[Manifest],
    sid_ndim: usize,
) -> Result<(Vec<u8>, Vec<u8>), LayoutError> {
    let mut data = Vec::with_capacity(manifests.iter().map(|m| m.encoded_len(sid_ndim)).sum());
    let mut offsets = Vec::with_capacity(8 * manifests.len());
    for m in manifests {
        offsets.extend_from_slice(&(data.len() as i64).to_le_bytes());
        m.encode_into(&mut data, sid_ndim)?;
    }
    Ok((data, offsets))
}

/// Decodes a manifest-block stream (manifests back to back, no offsets). With `expected`, the
/// stream must hold exactly that many manifests. Trailing bytes are an error.
pub fn decode_stream(
    data: &[u8],
    sid_ndim: usize,
    expected: Option<usize>,
) -> Result<Vec<Manifest>, LayoutError> {
    // Every manifest takes at least 4 bytes.
    if let Some(n) = expected {
        if n.saturating_mul(4) > data.len() {
            return Err(invalid(
                "manifest stream",
                format!("{} bytes cannot hold {n} manifests", data.len()),
            ));
        }
    }
    let mut out = Vec::with_capacity(expected.unwrap_or(data.len() / 4).min(data.len() / 4));
    let mut pos = 0;
    while pos < data.len() && expected.is_none_or(|n| out.len() < n) {
        let (m, end) = Manifest::decode_at(data, pos, sid_ndim)?;
        out.push(m);
        pos = end;
    }
    if let Some(n) = expected {
        if out.len() != n {
            return Err(invalid(
                "manifest stream",
                format!("holds {} manifests, expected {n}", out.len()),
            ));
        }
    }
    if pos != data.len() {
        return Err(LayoutError::TrailingBytes {
            what: "manifest stream",
            end: pos,
            extra: data.len() - pos,
        });
    }
    Ok(out)
}

/// Decodes a manifest-block stream with its `int64[B]` byte-offset table (no terminal entry;
/// the last manifest runs to the end). Each manifest must fill its span exactly.
pub fn decode_with_offsets(
    data: &[u8],
    offsets: &[u8],
    sid_ndim: usize,
) -> Result<Vec<Manifest>, LayoutError> {
    const W: &str = "object index offsets";
    let offs = i64s(offsets, W)?;
    let mut out = Vec::with_capacity(offs.len().min(data.len() / 4 + 1));
    for (i, &o) in offs.iter().enumerate() {
        let start = usize::try_from(o)
            .ok()
            .filter(|&s| s <= data.len())
            .ok_or_else(|| {
                invalid(
                    W,
                    format!("offset {i} ({o}) is outside the {}-byte stream", data.len()),
                )
            })?;
        let end = match offs.get(i + 1) {
            Some(&next) => usize::try_from(next)
                .ok()
                .filter(|&e| e >= start && e <= data.len())
                .ok_or_else(|| {
                    invalid(
                        W,
                        format!(
                            "offset {} ({next}) is before offset {i} or past the stream",
                            i + 1
                        ),
                    )
                })?,
            None => data.len(),
        };
        if i == 0 && start != 0 {
            return Err(invalid(W, format!("the first offset is {start}, not 0")));
        }
        out.push(Manifest::decode(&data[start..end], sid_ndim)?);
    }
    if offs.is_empty() && !data.is_empty() {
        return Err(invalid(W, "no offsets but a non-empty stream"));
    }
    Ok(out)
}

/// Decodes the manifests of the reference's vlen container: `items` are the elements of
/// `object_index/manifests` in object order, `num_objects` of them real; items past
/// `num_objects` are padding and must be empty. A real item of length 0 reads as an empty
/// manifest.
pub fn decode_vlen_items<'a>(
    items: impl IntoIterator<Item = &'a [u8]>,
    num_objects: usize,
    sid_ndim: usize,
) -> Result<Vec<Manifest>, LayoutError> {
    let mut out = Vec::new();
    for (i, item) in items.into_iter().enumerate() {
        if i < num_objects {
            out.push(if item.is_empty() {
                Manifest::default()
            } else {
                Manifest::decode(item, sid_ndim)?
            });
        } else if !item.is_empty() {
            return Err(invalid(
                "object index manifests",
                format!("item {i} is past num_objects {num_objects} but not empty padding"),
            ));
        }
    }
    if out.len() != num_objects {
        return Err(invalid(
            "object index manifests",
            format!("{} manifests, num_objects is {num_objects}", out.len()),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::tests::single;
    use super::*;

    #[test]
    fn containers() {
        let ms = vec![
            Manifest::default(),
            Manifest {
                blocks: vec![single(&[0, 0, 0], 1)],
            },
            Manifest::from_refs(&[(vec![1, 1, 1], 0), (vec![1, 1, 1], 1)]),
        ];
        let (data, offsets) = encode_stream(&ms, 3).unwrap();
        assert_eq!(decode_stream(&data, 3, Some(3)).unwrap(), ms);
        assert_eq!(decode_stream(&data, 3, None).unwrap(), ms);
        assert!(decode_stream(&data, 3, Some(2)).is_err());
        assert!(decode_stream(&data, 3, Some(4)).is_err());
        assert_eq!(decode_with_offsets(&data, &offsets, 3).unwrap(), ms);
        let mut bad = offsets.clone();
        bad[8] = 200;
        assert!(decode_with_offsets(&data, &bad, 3).is_err());
        let items: Vec<Vec<u8>> = ms
            .iter()
            .map(|m| m.encode(3).unwrap())
            .chain([vec![], vec![]])
            .collect();
        assert_eq!(
            decode_vlen_items(items.iter().map(Vec::as_slice), 3, 3).unwrap(),
            ms
        );
        assert!(
            decode_vlen_items(items.iter().map(Vec::as_slice), 6, 3).is_err(),
            "too few items"
        );
        assert_eq!(
            decode_vlen_items(items.iter().map(Vec::as_slice), 4, 3).unwrap()[3],
            Manifest::default()
        );
        assert!(
            decode_vlen_items(items.iter().map(Vec::as_slice), 2, 3).is_err(),
            "non-empty padding"
        );
        assert_eq!(decode_stream(&[], 3, Some(0)).unwrap(), vec![]);
        assert_eq!(encode_stream(&[], 3).unwrap(), (vec![], vec![]));
    }
}
