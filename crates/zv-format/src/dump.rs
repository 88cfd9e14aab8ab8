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
//!
//! [`dump`] builds the document; [`dump_to`] writes the same bytes as each section is made
//! (module `sections`), holding one section at a time.

mod json;
mod lines;
mod raw;
mod reference;
mod sections;

use serde_json::{json, Map, Value};

use crate::blob::join;
use crate::error::Result;
use crate::geometry::Geometry;
use crate::names;
use crate::reader::{is_level_name, Level, ZvStore};
use sections::Sections;

pub use json::num;

/// The format name.
pub const DUMP_FORMAT: &str = "zv-dump/1";

/// The dump of a whole store.
pub fn dump(store: &ZvStore) -> Result<Value> {
    let mut top = Map::new();
    dump_into(store, &mut top)?;
    Ok(Value::Object(top))
}

/// Writes the dump of a whole store to `out`, as `serde_json` writes [`dump`]'s document
/// (`pretty`: `to_writer_pretty`, else `to_writer`), byte for byte, without a line break at
/// the end. Each section is written as soon as it is made, so the dump holds one section of
/// one level at a time rather than the whole document.
pub fn dump_to(store: &ZvStore, out: &mut dyn std::io::Write, pretty: bool) -> Result<()> {
    let mut top = sections::Streamed::open(out, pretty, 1)?;
    dump_into(store, &mut top)?;
    top.close()
}

/// The sections of the dump of a whole store, in order.
fn dump_into(store: &ZvStore, top: &mut dyn Sections) -> Result<()> {
    top.put("dump_format", Value::from(DUMP_FORMAT))?;
    top.put(
        "root_attributes",
        Value::Object(store.root_attributes().clone()),
    )?;
    top.put("root_metadata", raw::root_metadata(store))?;
    // non-level groups under the root
    let mut tree = Map::new();
    for child in store.blobs().children("")? {
        if is_level_name(&child) {
            continue;
        }
        raw::walk_tree(store, &child, &child, &mut tree)?;
    }
    top.put("root_group_attributes_tree", Value::Object(tree))?;
    top.put("level_ids", json!(store.level_ids()))?;
    top.nested("levels", &mut |levels| {
        for &id in store.level_ids() {
            let level = store.level(id)?;
            levels.nested(&id.to_string(), &mut |out| dump_level(store, &level, out))?;
        }
        Ok(())
    })
}

fn dump_level(store: &ZvStore, level: &Level, out: &mut dyn Sections) -> Result<()> {
    level.check_chunk_arrays()?;
    let scan = level.scan(level.link_deltas()?.contains(&0))?;
    let geometry = level.geometry();
    let lp = level.id().to_string();
    out.put(
        "level_attributes",
        Value::Object(level.attributes().clone()),
    )?;
    out.put("level_metadata", raw::level_metadata(level))?;
    let mut tree = Map::new();
    for child in store.blobs().children(&lp)? {
        raw::walk_tree(store, &join(&[&lp, &child]), &child, &mut tree)?;
    }
    out.put("group_attributes_tree", Value::Object(tree))?;
    out.put("array_chunk_keys", raw::array_chunk_keys(level)?)?;
    out.put(
        "chunk_keys",
        json::keys_json(scan.chunks.iter().map(|c| c.key())),
    )?;
    out.put("chunks", raw::chunks_json(&scan))?;
    out.put("vertex_attribute_info", raw::vertex_attribute_info(&scan))?;
    out.put("links", raw::links_json(level, &scan)?)?;
    out.put("link_attributes", raw::link_attributes_json(level, &scan)?)?;
    out.put("cross_chunk_links", raw::cross_chunk_links_json(level)?)?;
    out.put(
        "cross_chunk_link_attributes",
        raw::cross_chunk_link_attributes_json(level)?,
    )?;
    let index = level.object_index()?;
    if let Some(index) = &index {
        index.check_fragments(&level.p(&[names::OBJECT_INDEX]), |c| scan.fragments_of(c))?;
    }
    out.put(
        "object_index",
        index.as_ref().map_or(Value::Null, raw::object_index_json),
    )?;
    let reader_links = reference::reader_links(level, &scan)?;
    let unassigned =
        reference::objects(index.as_ref(), &scan, reader_links.as_deref(), level, out)?;
    if matches!(
        geometry,
        Geometry::Graph | Geometry::Skeleton | Geometry::Mesh
    ) {
        out.put("unassigned_links", json!(unassigned))?;
    }
    raw::dense_sections(level, out)?;
    // every vertex position, once for the two sections that list them
    let positions = scan.positions();
    out.nested("canonical", &mut |c| {
        reference::canonical(&positions, geometry, reader_links.as_deref(), c)
    })?;
    reference::reader(
        &scan,
        &positions,
        level,
        reader_links.as_deref(),
        index.as_ref(),
        out,
    )
}
