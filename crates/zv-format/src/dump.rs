//! The "zv-dump/1" document: a store's content as JSON, in the format described in
//! `docs/format-decisions.md`, comparable with the reference's dumps.
//!
//! The stored sections (module `raw`) give what the store holds as it is stored. The logical
//! sections (module `reference`: objects, the canonical view and the high-level reader output)
//! follow the reference's reading of the store, including its quirks: the `reader` edges of a
//! skeleton use the reference's level-global `parent = i − 1` rule (zv's own
//! [`crate::reader::Level::object`] rebuilds parents per fragment instead), and object links
//! of graphs, skeletons and meshes are the reader's links that belong to exactly one object.
//! Both read the level once, through one scan.

mod json;
mod lines;
mod raw;
mod reference;

use serde_json::{json, Map, Value};

use crate::blob::join;
use crate::error::Result;
use crate::geometry::Geometry;
use crate::names;
use crate::reader::{is_level_name, Level, ZvStore};

pub use json::num;

/// The format name.
pub const DUMP_FORMAT: &str = "zv-dump/1";

/// The dump of a whole store.
pub fn dump(store: &ZvStore) -> Result<Value> {
    let mut top = Map::new();
    top.insert("dump_format".into(), Value::from(DUMP_FORMAT));
    top.insert(
        "root_attributes".into(),
        Value::Object(store.root_attributes().clone()),
    );
    top.insert("root_metadata".into(), raw::root_metadata(store));
    // non-level groups under the root
    let mut tree = Map::new();
    for child in store.blobs().children("")? {
        if is_level_name(&child) {
            continue;
        }
        raw::walk_tree(store, &child, &child, &mut tree)?;
    }
    top.insert("root_group_attributes_tree".into(), Value::Object(tree));
    top.insert("level_ids".into(), json!(store.level_ids()));
    let mut levels = Map::new();
    for &id in store.level_ids() {
        let level = store.level(id)?;
        levels.insert(id.to_string(), dump_level(store, &level)?);
    }
    top.insert("levels".into(), Value::Object(levels));
    Ok(Value::Object(top))
}

fn dump_level(store: &ZvStore, level: &Level) -> Result<Value> {
    level.check_chunk_arrays()?;
    let scan = level.scan(level.link_deltas()?.contains(&0))?;
    let geometry = level.geometry();
    let lp = level.id().to_string();
    let mut out = Map::new();
    out.insert(
        "level_attributes".into(),
        Value::Object(level.attributes().clone()),
    );
    out.insert("level_metadata".into(), raw::level_metadata(level));
    let mut tree = Map::new();
    for child in store.blobs().children(&lp)? {
        raw::walk_tree(store, &join(&[&lp, &child]), &child, &mut tree)?;
    }
    out.insert("group_attributes_tree".into(), Value::Object(tree));
    out.insert("array_chunk_keys".into(), raw::array_chunk_keys(level)?);
    out.insert(
        "chunk_keys".into(),
        json::keys_json(scan.chunks.iter().map(|c| c.key())),
    );
    out.insert("chunks".into(), raw::chunks_json(&scan));
    out.insert(
        "vertex_attribute_info".into(),
        raw::vertex_attribute_info(&scan),
    );
    out.insert("links".into(), raw::links_json(level, &scan)?);
    out.insert(
        "link_attributes".into(),
        raw::link_attributes_json(level, &scan)?,
    );
    out.insert(
        "cross_chunk_links".into(),
        raw::cross_chunk_links_json(level)?,
    );
    out.insert(
        "cross_chunk_link_attributes".into(),
        raw::cross_chunk_link_attributes_json(level)?,
    );
    let index = level.object_index()?;
    if let Some(index) = &index {
        index.check_fragments(&level.p(&[names::OBJECT_INDEX]), |c| scan.fragments_of(c))?;
    }
    out.insert(
        "object_index".into(),
        index.as_ref().map_or(Value::Null, raw::object_index_json),
    );
    let reader_links = reference::reader_links(level, &scan)?;
    let (objects, unassigned) =
        reference::objects_json(index.as_ref(), &scan, reader_links.as_deref(), level)?;
    out.insert("objects".into(), objects);
    if matches!(
        geometry,
        Geometry::Graph | Geometry::Skeleton | Geometry::Mesh
    ) {
        out.insert("unassigned_links".into(), unassigned);
    }
    raw::dense_sections(level, &mut out)?;
    out.insert(
        "canonical".into(),
        reference::canonical(&scan, geometry, reader_links.as_deref()),
    );
    out.insert(
        "reader".into(),
        reference::reader_json(&scan, level, reader_links.as_deref(), index.as_ref())?,
    );
    Ok(Value::Object(out))
}
