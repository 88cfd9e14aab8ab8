//! What a [`Level`] reads once: the level-wide arrays (object index, object attributes,
//! cross-chunk links, groups) and the array group documents (how attributes are typed, the
//! link width), decoded on first use and shared by every clone of the `Level`. A `Level` is
//! therefore a snapshot of them: open the level again to see a store that changed.
//!
//! The values made from documents alone are [`Serial`]: made by the first thread that asks
//! while the others wait (module `serial`). The level-wide arrays ([`once`]) are read with
//! parallel work inside, where a pool thread that waited for a lock could deadlock the pool,
//! so they are not made under one.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use super::links::LinkSource;
use super::{AttributeInfo, DenseAttribute, Level, ObjectIndex};
use crate::error::Result;
use crate::layout::groups::Groups;
use crate::metadata::JsonObject;
use crate::serial::{Serial, SerialMap};

/// The values a level decodes once.
#[derive(Debug, Default)]
pub(crate) struct LevelCache {
    /// The object index (`None`: the level has none).
    pub object_index: OnceLock<Option<Arc<ObjectIndex>>>,
    /// The object attributes.
    pub object_attributes: OnceLock<Arc<BTreeMap<String, DenseAttribute>>>,
    /// The groups (`None`: the level has none).
    pub groups: OnceLock<Option<Arc<Groups>>>,
    /// What numbering the level's links needs (cross-chunk records, conventions).
    pub link_source: OnceLock<Arc<LinkSource>>,
    /// The `link_width` of `links/0`.
    pub link_width: Serial<usize>,
    /// Every vertex attribute's storage, in name order.
    pub vertex_attributes: Serial<Arc<Vec<AttributeInfo>>>,
    /// Attribute storage by array group path.
    pub attribute_infos: SerialMap<String, AttributeInfo>,
    /// Whether the level has a `vertex_fragments` array.
    pub has_fragment_array: Serial<bool>,
    /// The `object_index` group's attributes (`None`: the level has no such group).
    pub object_index_attributes: Serial<Option<Arc<JsonObject>>>,
    /// Whether the level has an `object_index` array.
    pub has_object_index: Serial<bool>,
    /// Whether the level has a `link_fragments` array (its group document checked).
    pub has_link_fragment_array: Serial<bool>,
}

/// The value of `cell`, made by `make` on first use (an error is returned, not kept: a later
/// call tries again).
pub(crate) fn once<T: Clone>(cell: &OnceLock<T>, make: impl FnOnce() -> Result<T>) -> Result<T> {
    if let Some(v) = cell.get() {
        return Ok(v.clone());
    }
    let v = make()?;
    Ok(cell.get_or_init(|| v).clone())
}

impl Level {
    /// The object attributes, read once.
    pub(crate) fn shared_object_attributes(&self) -> Result<Arc<BTreeMap<String, DenseAttribute>>> {
        once(&self.cache.object_attributes, || {
            self.read_object_attributes().map(Arc::new)
        })
    }

    /// The groups, read once.
    pub(crate) fn shared_groups(&self) -> Result<Option<Arc<Groups>>> {
        once(&self.cache.groups, || Ok(self.read_groups()?.map(Arc::new)))
    }

    /// How the attribute whose array group is `group` is stored, read once per group.
    pub(crate) fn attribute_info(&self, group: &str, name: &str) -> Result<AttributeInfo> {
        (self.cache.attribute_infos).get_or_make(group, || self.read_attribute_info(group, name))
    }

    /// Every vertex attribute's storage, in name order, read once.
    pub(crate) fn shared_vertex_attribute_infos(&self) -> Result<Arc<Vec<AttributeInfo>>> {
        self.cache.vertex_attributes.get_or_make(|| {
            self.vertex_attribute_names()?
                .iter()
                .map(|n| self.vertex_attribute_info(n))
                .collect::<Result<Vec<_>>>()
                .map(Arc::new)
        })
    }
}
