//! Level 3, level-wide rows: object attributes have a row per object, the groups decode and
//! name objects of the level, group attributes have a row per group. (Per-chunk attribute
//! rows are checked in the chunk pass.)

use super::error_key;
use super::finding::*;
use super::manifests::push_capped;
use crate::metadata::arrays::GroupsArray;
use crate::names;
use crate::reader::{Level, ObjectIndex};

/// Checks the dense attributes and groups of `level`; `index` is its object index.
pub(crate) fn check(level: &Level, index: Option<&ObjectIndex>, out: &mut Vec<Finding>) {
    let num_objects = index.map(|i| i.num_objects);
    // ZV 0.9: a dense row per object index row (stored id), whatever the ids are
    let object_rows = index.map(ObjectIndex::stored_objects);
    match level.object_attributes() {
        Err(e) => out.push(Finding::new(
            &OBJECT_ATTRIBUTE,
            error_key(&e, &level.p(&[names::OBJECT_ATTRIBUTES])),
            e.to_string(),
        )),
        Ok(attrs) => {
            for (name, a) in attrs {
                let rows = a.shape.first().copied().unwrap_or(0);
                if let Some(n) = object_rows.filter(|&n| n != rows) {
                    out.push(Finding::new(
                        &OBJECT_ATTRIBUTE,
                        level.p(&[names::OBJECT_ATTRIBUTES, &name]),
                        format!("{rows} rows, the level has {n} objects"),
                    ));
                }
            }
        }
    }
    let groups_path = level.p(&[names::GROUPS]);
    let groups = match level.groups() {
        Err(e) => {
            out.push(Finding::new(&GROUPS, &groups_path, e.to_string()));
            None
        }
        Ok(g) => g,
    };
    if let Some(g) = &groups {
        let attrs = level
            .blobs()
            .group_attributes(&groups_path)
            .ok()
            .flatten()
            .unwrap_or_default();
        let key = crate::blob::join(&[&groups_path, "zarr.json"]);
        if let Ok(model) = GroupsArray::from_attributes(&attrs, &key) {
            if let Some(n) = model.num_groups.filter(|&n| n != g.len() as u64) {
                out.push(Finding::new(
                    &GROUPS,
                    &groups_path,
                    format!("`num_groups` is {n}, the data holds {} groups", g.len()),
                ));
            }
        }
        if let (Some(n), Some(index)) = (num_objects, index) {
            let bad: Vec<String> = g
                .members
                .iter()
                .enumerate()
                .flat_map(|(gid, m)| {
                    m.iter()
                        .filter(|&&o| !index.contains(o))
                        .map(move |o| match &index.ids {
                            None => format!("group {gid} names object {o}, the level has {n}"),
                            Some(_) => format!(
                                "group {gid} names object {o}, which the object index does not list"
                            ),
                        })
                })
                .collect();
            push_capped(&GROUPS, &groups_path, bad, out);
        }
    }
    match level.group_attributes() {
        Err(e) => out.push(Finding::new(
            &GROUP_ATTRIBUTE,
            error_key(&e, &level.p(&[names::GROUP_ATTRIBUTES])),
            e.to_string(),
        )),
        Ok(attrs) => {
            let n = groups.as_ref().map_or(0, |g| g.len() as u64);
            for (name, a) in attrs {
                let rows = a.shape.first().copied().unwrap_or(0);
                if rows != n {
                    out.push(Finding::new(
                        &GROUP_ATTRIBUTE,
                        level.p(&[names::GROUP_ATTRIBUTES, &name]),
                        format!("{rows} rows, the level has {n} groups"),
                    ));
                }
            }
        }
    }
}
