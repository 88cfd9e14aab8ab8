//! ZV 0.9 groups: `groups` is one `variable_length_bytes` array, element `g` the int64
//! member ids of group `g` (little-endian), or empty with the members given as a
//! `[start, stop)` range in the array's `group_ranges` attribute.

use serde_json::Value;

use crate::blob::{join, BlobData};
use crate::error::{Error, Result};
use crate::layout::groups::Groups;
use crate::reader::Level;

/// The most members a `group_ranges` range may expand to.
pub(crate) const MAX_RANGE_MEMBERS: u64 = 1 << 26;

impl Level {
    /// The groups of a ZV 0.9 level stored at `path`.
    pub(crate) fn read_groups_v09(&self, path: &str) -> Result<Groups> {
        let key = join(&[path, "zarr.json"]);
        let attributes = self.blobs.group_attributes(path)?.unwrap_or_default();
        let items = match self.blobs.read(path)? {
            None => Vec::new(),
            Some(BlobData::Elements(items)) => items,
            Some(BlobData::Bytes(_)) => {
                return Err(Error::metadata(
                    &key,
                    "groups must be variable_length_bytes",
                ))
            }
        };
        let ranges = attributes.get("group_ranges").and_then(Value::as_object);
        let mut members = Vec::with_capacity(items.len());
        for (g, item) in items.iter().enumerate() {
            if let Some(r) = ranges.and_then(|r| r.get(&g.to_string())) {
                members.push(range_members(r, g, &key)?);
            } else {
                members.push(decode_ids(item, g, path)?);
            }
        }
        Ok(Groups { members })
    }
}

/// The members of a `group_ranges` entry `[start, stop)`.
fn range_members(v: &Value, g: usize, key: &str) -> Result<Vec<u64>> {
    let bounds = v
        .as_array()
        .and_then(|a| match a.as_slice() {
            [a, b] => Some((a.as_u64()?, b.as_u64()?)),
            _ => None,
        })
        .filter(|(a, b)| a <= b && b - a <= MAX_RANGE_MEMBERS);
    let (start, stop) = bounds.ok_or_else(|| {
        Error::metadata(
            key,
            format!("`group_ranges` of group {g} is {v}, not [start, stop) of at most {MAX_RANGE_MEMBERS} ids"),
        )
    })?;
    Ok((start..stop).collect())
}

/// The int64 ids of group `g`'s element.
fn decode_ids(bytes: &[u8], g: usize, path: &str) -> Result<Vec<u64>> {
    if bytes.len() % 8 != 0 {
        return Err(Error::inconsistent(
            path,
            format!("group {g}: {} bytes are not whole int64 ids", bytes.len()),
        ));
    }
    bytes
        .chunks_exact(8)
        .map(|b| {
            let v = i64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
            u64::try_from(v)
                .map_err(|_| Error::inconsistent(path, format!("group {g}: object id {v}")))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ids_and_ranges() {
        let b: Vec<u8> = [3i64, 9].iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(decode_ids(&b, 0, "0/groups").unwrap(), vec![3, 9]);
        assert_eq!(
            range_members(&json!([2, 5]), 0, "k").unwrap(),
            vec![2, 3, 4]
        );
    }

    #[test]
    fn bad_groups_are_errors_naming_the_key() {
        let e = decode_ids(&[1, 2, 3], 1, "0/groups")
            .unwrap_err()
            .to_string();
        assert!(e.contains("0/groups"), "{e}");
        let neg: Vec<u8> = (-4i64).to_le_bytes().to_vec();
        assert!(decode_ids(&neg, 0, "0/groups").is_err());
        for bad in [json!([5, 2]), json!([0, 1u64 << 40]), json!("x")] {
            let e = range_members(&bad, 0, "0/groups/zarr.json")
                .unwrap_err()
                .to_string();
            assert!(e.contains("0/groups/zarr.json"), "{e}");
        }
    }
}
