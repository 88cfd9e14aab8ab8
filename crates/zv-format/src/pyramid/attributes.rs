//! The attributes a coarse level carries over from its fine level: object attributes (rows
//! of dropped objects absent), fragment attributes (one value per kept object, from its first
//! fine fragment), groups and group attributes (unchanged).

use std::collections::BTreeMap;

use super::source::SourceLevel;
use crate::document::{Attribute, AttributeValues};
use crate::error::{Error, Result};
use crate::layout::attributes::{AttributeRows, DenseArray};
use crate::metadata::ChunkKey;
use crate::names;

/// The object attributes of the coarse level: the fine level's, rows of dropped objects
/// absent.
pub(super) fn object_attributes(
    source: &SourceLevel,
    keep: &[bool],
) -> Result<BTreeMap<String, Attribute>> {
    let attributes = source.level.object_attributes()?;
    dense_attributes(source, names::OBJECT_ATTRIBUTES, attributes, Some(keep))
}

/// The fragment attributes of the coarse level, as the writer takes them (one value per
/// object, stored on each of its coarse fragments): each kept object's value is that of its
/// first fine fragment in manifest order (zv writes one value per object on all its
/// fragments); objects dropped or without fragments have none.
pub(super) fn fragment_attributes(
    source: &SourceLevel,
    keep: &[bool],
) -> Result<BTreeMap<String, Attribute>> {
    let level = &source.level;
    let attribute_names = level.fragment_attribute_names()?;
    if attribute_names.is_empty() {
        // no object index read (a part of a distributed build reads only its blocks of it)
        return Ok(BTreeMap::new());
    }
    let Some(index) = level.object_index()? else {
        return Ok(BTreeMap::new());
    };
    let n = index.manifests.len();
    // the first (chunk, fragment) of each kept object, by chunk
    let mut wanted: BTreeMap<ChunkKey, Vec<(usize, u64)>> = BTreeMap::new();
    for (o, m) in index.manifests.iter().enumerate() {
        if keep.get(o) != Some(&true) {
            continue;
        }
        if let Some((chunk, f)) = m.refs().next() {
            wanted
                .entry(ChunkKey(chunk.to_vec()))
                .or_default()
                .push((o, f));
        }
    }
    // each of those chunks' fragment count, read once for every attribute
    let mut counts = Vec::with_capacity(wanted.len());
    for (key, objects) in &wanted {
        if let Some(chunk) = level.chunk(key)? {
            counts.push((key, objects, chunk.fragments.len() as u64));
        }
    }
    let mut dense = BTreeMap::new();
    for name in attribute_names {
        let info = level.fragment_attribute_info(&name)?;
        let mut rows: Vec<Option<Vec<u8>>> = vec![None; n];
        let mut layout = None;
        for &(key, objects, fragments) in &counts {
            let Some(values) = level.fragment_attribute(&info, key, fragments)? else {
                continue;
            };
            let here = (values.data_type(), values.channels());
            if *layout.get_or_insert(here) != here {
                return Err(Error::inconsistent(
                    level.p(&[names::FRAGMENT_ATTRIBUTES, &name, &key.to_string()]),
                    "rows of another type or width than the other chunks'",
                ));
            }
            for &(o, f) in objects {
                rows[o] = values.row_bytes(f as usize).map(<[u8]>::to_vec);
            }
        }
        let Some((data_type, channels)) = layout else {
            continue;
        };
        let width = channels * data_type.size().unwrap_or(1);
        let present: Vec<bool> = rows.iter().map(Option::is_some).collect();
        let bytes: Vec<u8> = rows
            .into_iter()
            .flat_map(|r| r.unwrap_or_else(|| vec![0; width]))
            .collect();
        let rows = AttributeRows::from_le(data_type, channels, bytes).map_err(|e| Error::Blob {
            key: level.p(&[names::FRAGMENT_ATTRIBUTES, &name]),
            source: e,
        })?;
        let mut shape = vec![n as u64];
        if channels != 1 || info.channels().is_some_and(|c| c != 1) {
            shape.push(channels as u64);
        }
        dense.insert(
            name.clone(),
            crate::reader::DenseAttribute {
                name,
                data_type,
                shape: shape.clone(),
                values: DenseArray { shape, rows },
                present_mask: Some(present),
                dictionary: info.dictionary,
                attributes: info.attributes,
            },
        );
    }
    dense_attributes(source, names::FRAGMENT_ATTRIBUTES, dense, Some(keep))
}

/// A level's groups as the writer takes them: members by group id, and group attributes.
pub(super) type GroupsOf = (BTreeMap<u64, Vec<u64>>, BTreeMap<String, Attribute>);

/// The groups of the coarse level: the fine level's members (object ids are kept, dropped
/// objects are empty) and group attributes, unchanged.
pub(super) fn groups(source: &SourceLevel) -> Result<Option<GroupsOf>> {
    let Some(groups) = source.level.groups()? else {
        return Ok(None);
    };
    let members = (0u64..).zip(groups.members).collect();
    let attributes = source.level.group_attributes()?;
    let attributes = dense_attributes(source, names::GROUP_ATTRIBUTES, attributes, None)?;
    Ok(Some((members, attributes)))
}

/// Dense attributes (of objects or groups, under `container`) read from the fine level, as
/// the writer takes them; rows `keep` marks `false` are absent (`None`: every row is kept).
fn dense_attributes(
    source: &SourceLevel,
    container: &str,
    attributes: BTreeMap<String, crate::reader::DenseAttribute>,
    keep: Option<&[bool]>,
) -> Result<BTreeMap<String, Attribute>> {
    let mut out = BTreeMap::new();
    for (name, a) in attributes {
        let present: Option<Vec<bool>> = match (keep, &a.present_mask) {
            (None, None) => None,
            _ => Some(
                (0..a.values.rows.num_rows())
                    .map(|o| {
                        keep.is_none_or(|k| k.get(o) == Some(&true))
                            && a.present_mask
                                .as_ref()
                                .is_none_or(|m| m.get(o) == Some(&true))
                    })
                    .collect(),
            ),
        };
        let values = match &a.dictionary {
            Some(d) => {
                let strings = d.decode(&a.values.rows).map_err(|e| Error::Blob {
                    key: format!("{}/{container}/{name}/data", source.level.id()),
                    source: e,
                })?;
                AttributeValues::Categorical(
                    strings
                        .into_iter()
                        .enumerate()
                        .map(|(r, s)| {
                            s.filter(|_| present.as_ref().is_none_or(|p| p.get(r) == Some(&true)))
                        })
                        .collect(),
                )
            }
            None => AttributeValues::Numeric {
                rows: a.values.rows.clone(),
                present,
            },
        };
        let channel_names = a
            .attributes
            .get("channel_names")
            .and_then(|v| serde_json::from_value(v.clone()).ok());
        out.insert(
            name,
            Attribute {
                values,
                channel_names,
            },
        );
    }
    Ok(out)
}
