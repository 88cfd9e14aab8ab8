//! The checks of the whole input, made by [`ZvWriter::finish`](super::ZvWriter::finish)
//! before anything is written: chunk limits, link endpoints, skeleton parents, the object
//! and group counts (ids are dense indices) and the lengths of the per-object and per-group
//! attributes.

use std::collections::BTreeSet;

use super::spill::SpillHeader;
use super::{bad, FormatVersion, ZvWriter};
use crate::blob::join;
use crate::document::{Attribute, AttributeValues};
use crate::error::{AttributeKind, Error, InputItem, Result};
use crate::geometry::Geometry;
use crate::names;

/// Spare objects allowed beyond twice the vertices: object ids are dense indices (every id
/// below the largest costs an offset and a manifest), so `B ≤ 2·(vertices + polylines) +
/// SPARE_OBJECTS`, and likewise for groups.
pub const SPARE_OBJECTS: u64 = 1 << 20;

/// The object and group counts of a validated input.
#[derive(Debug, Clone, Copy)]
pub(super) struct Counts {
    /// The objects `B` (0 without objects).
    pub(super) objects: u64,
    /// The groups `G`.
    pub(super) groups: u64,
}

/// Checks that an attribute name can be a node name of its own (the attribute's group or
/// array is `<kind>_attributes/<name>`): not empty, no `/` or `\\`, no control character, not
/// only periods, not starting with `__` (reserved by Zarr v3), not `zarr.json`. A name like
/// `../x` or `0/vertices/…` would otherwise land on another node of the store.
pub(super) fn check_name(kind: AttributeKind, name: &str) -> Result<()> {
    let reason = if name.is_empty() {
        Some("an attribute name must not be empty")
    } else if name.contains(['/', '\\']) || name.chars().any(char::is_control) {
        Some("an attribute name is one node name: no `/`, `\\` or control characters")
    } else if name.chars().all(|c| c == '.') {
        Some("an attribute name must not be only periods")
    } else if name.starts_with("__") {
        Some("an attribute name must not start with `__` (reserved by Zarr v3)")
    } else if name == "zarr.json" {
        Some("an attribute name must not be `zarr.json`")
    } else {
        None
    };
    match reason {
        Some(r) => Err(Error::attribute(kind, name, r)),
        None => Ok(()),
    }
}

/// Checks that attribute `name` is a valid name with `n` rows, one per item of `what`.
fn check_rows(kind: AttributeKind, name: &str, a: &Attribute, n: u64, what: &str) -> Result<()> {
    check_name(kind, name)?;
    if a.values.len() as u64 != n {
        return Err(Error::attribute(
            kind,
            name,
            format!("has {} values for {n} {what}", a.values.len()),
        ));
    }
    Ok(())
}

impl ZvWriter {
    /// Checks everything that spans batches, before anything is written.
    pub(super) fn validate(&self) -> Result<Counts> {
        self.check_chunks()?;
        if !self.has_objects()
            && (!self.object_attributes.is_empty()
                || !self.groups.is_empty()
                || !self.fragment_attributes.is_empty())
        {
            return Err(bad(
                "object attributes, fragment attributes and groups need object ids",
            ));
        }
        self.check_links()?;
        self.check_v09_links()?;
        let objects = self.num_objects()?;
        self.check_object_attributes(objects)?;
        let groups = self.num_groups(objects)?;
        self.check_groups(objects, groups)?;
        Ok(Counts { objects, groups })
    }

    /// Categorical link attributes have no 0.9 layout (0.9.2 stores numbers only).
    fn check_v09_links(&self) -> Result<()> {
        if self.opts.format_version != FormatVersion::V0_9 {
            return Ok(());
        }
        match self
            .links
            .finish_columns()?
            .into_iter()
            .find(|c| c.dictionary.is_some())
        {
            None => Ok(()),
            Some(c) => Err(Error::Unsupported {
                key: join(&[&self.level, names::LINK_ATTRIBUTES, &c.name, "zarr.json"]),
                what: format!(
                    "categorical link attribute `{}` in the ZV 0.9 layout (write 0.7)",
                    c.name
                ),
            }),
        }
    }

    /// Chunk indices and rows must fit 32 bits.
    pub(super) fn check_chunks(&self) -> Result<()> {
        let occupied = self.spill.keys().len();
        if occupied as u64 > u32::MAX as u64 + 1 {
            return Err(bad(format!(
                "{occupied} occupied chunks (at most 2^32; use a larger chunk_shape)"
            )));
        }
        if let Some((k, c)) = self
            .spill
            .chunks()
            .find(|(_, c)| c.rows > u32::MAX as u64 || c.segments > u32::MAX as u64)
        {
            return Err(Error::input(
                InputItem::Chunk(k.clone()),
                format!(
                    "has {} vertices in {} pieces (at most 2^32 − 1 each; use a smaller chunk_shape)",
                    c.rows, c.segments
                ),
            ));
        }
        Ok(())
    }

    /// Every link names existing vertices; skeleton links form trees within objects.
    fn check_links(&self) -> Result<()> {
        let n = self.n_vertices;
        let mesh = self.opts.geometry == Geometry::Mesh;
        for i in 0..self.links.count() {
            let link = self.links.link(i);
            if mesh {
                if let Some(v) = link.iter().find(|&&v| v >= n) {
                    return Err(Error::input(
                        InputItem::Face(i as u64),
                        format!("names vertex {v}, which does not exist ({n} vertices)"),
                    ));
                }
            } else if link.iter().any(|&v| v >= n) {
                return Err(Error::input(
                    InputItem::Edge(i as u64),
                    format!(
                        "{:?} names a vertex that does not exist ({n} vertices)",
                        &*link
                    ),
                ));
            }
        }
        if self.opts.geometry == Geometry::Skeleton {
            let mut has_parent = vec![false; n as usize];
            for (i, e) in self.links.edges().enumerate() {
                if std::mem::replace(&mut has_parent[e[0] as usize], true) {
                    return Err(Error::input(
                        InputItem::Vertex(e[0]),
                        "skeleton vertex with more than one parent",
                    ));
                }
                if self.vertex_object.get(e[0] as usize) != self.vertex_object.get(e[1] as usize) {
                    return Err(Error::input(
                        InputItem::Edge(i as u64),
                        format!("skeleton link {e:?} joins two objects"),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The number of objects `B` (0 without objects): see
    /// [`ZvWriter::set_num_objects`](super::ZvWriter::set_num_objects). Object ids are dense
    /// indices, so `B` may exceed the vertex and polyline count by at most `vertices +
    /// polylines + SPARE_OBJECTS`.
    fn num_objects(&self) -> Result<u64> {
        if !self.has_objects() {
            if self.num_objects_hint > 0 {
                return Err(bad(
                    "set_num_objects needs object ids (this point cloud has none)",
                ));
            }
            return Ok(0);
        }
        let from_ids = if self.opts.geometry.is_sequential() {
            self.polylines.count()
        } else {
            match self.max_object {
                Some(m) => m.checked_add(1).ok_or_else(|| {
                    Error::input(
                        InputItem::Object(m),
                        "object id too large (object ids are dense indices 0..B)",
                    )
                })?,
                None => 0,
            }
        };
        let b = self
            .object_attributes
            .values()
            .map(|a| a.values.len() as u64)
            .chain([from_ids, self.num_objects_hint])
            .max()
            .unwrap_or(0);
        let items = self.n_vertices + self.polylines.count();
        let limit = items.saturating_mul(2).saturating_add(SPARE_OBJECTS);
        if b > limit {
            return Err(bad(format!(
                "{b} objects for {items} vertices: object ids are dense indices 0..B (every id below the largest is an object), so B may be at most {limit}; renumber the objects densely and keep the original ids as an object attribute"
            )));
        }
        Ok(b)
    }

    /// Object and fragment attributes have one row per object; a fragment attribute may be
    /// null only for objects without vertices (they have no fragments).
    pub(super) fn check_object_attributes(&self, b: u64) -> Result<()> {
        for (name, a) in &self.object_attributes {
            check_rows(AttributeKind::Object, name, a, b, "objects")?;
        }
        for (name, a) in &self.fragment_attributes {
            check_rows(AttributeKind::Fragment, name, a, b, "objects")?;
            if let AttributeValues::Numeric {
                present: Some(p), ..
            } = &a.values
            {
                let nulls: BTreeSet<u64> = p
                    .iter()
                    .enumerate()
                    .filter(|(_, &v)| !v)
                    .map(|(o, _)| o as u64)
                    .collect();
                if let Some(o) = self.objects_with_vertices(&nulls)?.first() {
                    return Err(Error::attribute(
                        AttributeKind::Fragment,
                        name,
                        format!("is null for object {o}, which has vertices"),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Which of `wanted` have at least one vertex.
    fn objects_with_vertices(&self, wanted: &BTreeSet<u64>) -> Result<BTreeSet<u64>> {
        let mut found = BTreeSet::new();
        if wanted.is_empty() {
            return Ok(found);
        }
        if self.opts.geometry.is_sequential() {
            found.extend(wanted.iter().filter(|&&o| self.polylines.has_vertices(o)));
            return Ok(found);
        }
        let rl = self.record_len();
        for ci in 0..self.spill.keys().len() {
            let raw = self.spill.read(ci)?;
            for r in raw.chunks_exact(rl) {
                let o = SpillHeader::fragment_of(r);
                if wanted.contains(&o) {
                    found.insert(o);
                }
            }
        }
        Ok(found)
    }

    /// The number of groups `G` (the largest group id + 1), which is bounded like `B`.
    pub(super) fn num_groups(&self, b: u64) -> Result<u64> {
        let Some(&m) = self.groups.keys().next_back() else {
            return Ok(0);
        };
        let members: u64 = self.groups.values().map(|m| m.len() as u64).sum();
        let limit = b
            .saturating_add(members)
            .saturating_mul(2)
            .saturating_add(SPARE_OBJECTS);
        if m >= limit {
            return Err(Error::input(
                InputItem::Group(m),
                format!("group id too large: groups are dense indices 0..G, and G may be at most {limit} here; renumber the groups densely"),
            ));
        }
        Ok(m + 1)
    }

    /// Groups list existing objects once each; group attributes have one row per group and
    /// no nulls.
    pub(super) fn check_groups(&self, b: u64, g: u64) -> Result<()> {
        if self.groups.is_empty() && !self.group_attributes.is_empty() {
            return Err(bad("group attributes need groups"));
        }
        for (&gid, members) in &self.groups {
            let mut sorted = members.clone();
            sorted.sort_unstable();
            if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
                return Err(Error::input(
                    InputItem::Group(gid),
                    format!("lists object {} twice", w[0]),
                ));
            }
            if let Some(o) = members.iter().find(|&&o| o >= b) {
                return Err(Error::input(
                    InputItem::Group(gid),
                    format!("lists object {o}, which does not exist ({b} objects)"),
                ));
            }
        }
        for (name, a) in &self.group_attributes {
            check_rows(AttributeKind::Group, name, a, g, "groups")?;
            if matches!(
                &a.values,
                AttributeValues::Numeric {
                    present: Some(_),
                    ..
                }
            ) {
                return Err(Error::attribute(
                    AttributeKind::Group,
                    name,
                    "has null values".to_owned(),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use zv_core::data_type::DataType;

    use super::super::{WriterOptions, ZvWriter};
    use crate::document::{Attribute, AttributeValues};
    use crate::error::{AttributeKind, Error, InputItem};
    use crate::geometry::Geometry;
    use crate::layout::attributes::AttributeRows;

    fn writer(geometry: Geometry) -> ZvWriter {
        let store = Arc::new(zv_store_mem::MemoryStore::new());
        ZvWriter::create(store, WriterOptions::new(geometry, vec![10.0, 10.0])).unwrap()
    }

    #[test]
    fn input_errors_name_the_item() {
        let none = BTreeMap::new();
        let mut w = writer(Geometry::Graph);
        w.add_vertices(&[vec![1.0, 1.0], vec![2.0, 2.0]], None, &none)
            .unwrap();
        w.add_edges(&[[0, 1], [1, 5]], &none).unwrap();
        let err = w.finish().unwrap_err();
        assert!(
            matches!(
                &err,
                Error::Input {
                    item: InputItem::Edge(1),
                    ..
                }
            ),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            "invalid input: edge 1: [1, 5] names a vertex that does not exist (2 vertices)"
        );

        // a vertex number past 2^32 (the links' numbers are widened) is named as given
        let mut w = writer(Geometry::Graph);
        w.add_vertices(&[vec![1.0, 1.0], vec![2.0, 2.0]], None, &none)
            .unwrap();
        w.add_edges(&[[0, 1], [1, 0], [1 << 40, 0]], &none).unwrap();
        let err = w.finish().unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid input: edge 2: [1099511627776, 0] names a vertex that does not exist (2 vertices)"
        );

        let mut w = writer(Geometry::PointCloud);
        let err = w
            .add_vertices(&[vec![1.0, 1.0], vec![f64::NAN, 1.0]], None, &none)
            .unwrap_err();
        assert!(
            matches!(
                &err,
                Error::Input {
                    item: InputItem::Vertex(1),
                    ..
                }
            ),
            "{err:?}"
        );

        let mut w = writer(Geometry::PointCloud);
        w.add_vertices(&[vec![1.0, 1.0]], Some(&[0]), &none)
            .unwrap();
        let mut groups = BTreeMap::new();
        groups.insert(0, vec![0, 0]);
        w.set_groups(groups, BTreeMap::new());
        let err = w.finish().unwrap_err();
        assert!(
            matches!(
                &err,
                Error::Input {
                    item: InputItem::Group(0),
                    ..
                }
            ),
            "{err:?}"
        );

        let mut w = writer(Geometry::PointCloud);
        w.add_vertices(&[vec![1.0, 1.0]], Some(&[0]), &none)
            .unwrap();
        let mut attrs = BTreeMap::new();
        let rows = AttributeRows::from_f64s(DataType::Int32, 1, &[1.0, 2.0]).unwrap();
        attrs.insert(
            "a".to_owned(),
            Attribute {
                values: AttributeValues::Numeric {
                    rows,
                    present: None,
                },
                channel_names: None,
            },
        );
        // fragment attributes do not add objects: two values for one object
        w.set_fragment_attributes(attrs);
        let err = w.finish().unwrap_err();
        let expected = InputItem::Attribute {
            kind: AttributeKind::Fragment,
            name: "a".into(),
        };
        assert!(
            matches!(&err, Error::Input { item, .. } if *item == expected),
            "{err:?}"
        );
    }
}
