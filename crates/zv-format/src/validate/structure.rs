//! Level 1, structure: the root document, the level groups, the per-array groups and their
//! discriminators, and the chunk keys of per-chunk arrays. In a ZV 0.9 store (`blobs` opened
//! with [`StoreLayout::ChunkGrid`]) the per-chunk arrays are chunk-grid arrays (their grid, origin
//! and `nonempty_chunks` checked here) and `links/<d>` is a family of offsets segments.

use super::finding::{
    Finding, ARRAY_DOCUMENT, CHUNK_KEY, LEVEL_GROUPS, LINK_SEGMENTS, ROOT_DOCUMENT, UNKNOWN_ARRAY,
    V09_UNREAD, VERTICES_ARRAY,
};
use crate::blob::{join, Blobs};
use crate::layout::offset_links::parse_segment;
use crate::metadata::arrays::ZvArray;
use crate::metadata::{ChunkKey, JsonObject, Layout as StoreLayout};
use crate::names;
use crate::reader::{is_level_name, parse_delta};

/// One per-array group of a level.
#[derive(Debug, Clone)]
pub(crate) struct ArrayGroup {
    /// The group's node path (`0/links/0`).
    pub(crate) path: String,
    /// What it holds.
    pub(crate) kind: ZvArray,
    /// Whether it holds one blob per chunk.
    pub(crate) per_chunk: bool,
    /// The group's attributes (empty without a `zarr.json`).
    pub(crate) attributes: JsonObject,
    /// The level delta of a links or link attribute array (its `<d>` folder).
    pub(crate) delta: Option<i32>,
}

impl ArrayGroup {
    /// The key of the group's document.
    pub(crate) fn key(&self) -> String {
        join(&[&self.path, "zarr.json"])
    }
}

/// What level 1 found out about a store: the root attributes and the levels with their
/// array groups.
#[derive(Debug, Default)]
pub(crate) struct Layout {
    /// The root group's attributes.
    pub(crate) root: JsonObject,
    /// The levels, ascending.
    pub(crate) levels: Vec<LevelLayout>,
}

/// One level group as level 1 found it.
#[derive(Debug)]
pub(crate) struct LevelLayout {
    /// The level number.
    pub(crate) id: u32,
    /// The level group's attributes (empty without a `zarr.json`).
    pub(crate) attributes: JsonObject,
    /// The level's array groups.
    pub(crate) groups: Vec<ArrayGroup>,
}

/// Checks the structure, appending findings; `None` when the root is unusable.
pub(crate) fn check(blobs: &Blobs, out: &mut Vec<Finding>) -> Option<Layout> {
    let root = match blobs.group_attributes("") {
        Ok(Some(a)) => a,
        Ok(None) => {
            out.push(Finding::new(
                &ROOT_DOCUMENT,
                "zarr.json",
                "there is no root group document (not a Zarr v3 hierarchy)",
            ));
            return None;
        }
        Err(e) => {
            out.push(Finding::new(&ROOT_DOCUMENT, "zarr.json", e.to_string()));
            return None;
        }
    };
    if !root
        .get(names::ROOT_ATTRIBUTE)
        .is_some_and(|v| v.is_object())
    {
        out.push(Finding::new(
            &ROOT_DOCUMENT,
            "zarr.json",
            "the root attributes have no `zarr_vectors` object (not a ZV store)",
        ));
        return None;
    }
    let children = match blobs.children("") {
        Ok(c) => c,
        Err(e) => {
            out.push(Finding::new(&LEVEL_GROUPS, "", e.to_string()));
            return None;
        }
    };
    let mut ids: Vec<u32> = children
        .iter()
        .filter(|c| is_level_name(c))
        .filter_map(|c| c.parse().ok())
        .collect();
    ids.sort_unstable();
    if !ids.contains(&0) {
        out.push(Finding::new(
            &LEVEL_GROUPS,
            "0/zarr.json",
            format!("level 0 is missing (level groups: {ids:?})"),
        ));
    }
    let mut layout = Layout {
        root,
        levels: Vec::new(),
    };
    for id in ids {
        let path = id.to_string();
        let attributes = match blobs.group_attributes(&path) {
            Ok(a) => a.unwrap_or_default(),
            Err(e) => {
                out.push(Finding::new(
                    &LEVEL_GROUPS,
                    join(&[&path, "zarr.json"]),
                    e.to_string(),
                ));
                continue;
            }
        };
        let groups = level_arrays(blobs, &path, out);
        if !groups.iter().any(|g| g.kind == ZvArray::Vertices) {
            out.push(Finding::new(
                &VERTICES_ARRAY,
                join(&[&path, names::VERTICES]),
                format!("level {id} has no `vertices` array"),
            ));
        }
        if blobs.layout() == StoreLayout::ChunkGrid {
            check_unread(&groups, out);
            super::grid::check_grids(blobs, &groups, out);
        } else {
            check_chunk_keys(blobs, &groups, out);
        }
        layout.levels.push(LevelLayout {
            id,
            attributes,
            groups,
        });
    }
    Some(layout)
}

/// The array groups of the level at `level`, each with its document checked.
fn level_arrays(blobs: &Blobs, level: &str, out: &mut Vec<Finding>) -> Vec<ArrayGroup> {
    let mut found: Vec<(String, ZvArray, bool, Option<i32>)> = Vec::new();
    let grid = blobs.layout() == StoreLayout::ChunkGrid;
    let children = |path: &str, out: &mut Vec<Finding>| -> Vec<String> {
        blobs.children(path).unwrap_or_else(|e| {
            out.push(Finding::new(&ARRAY_DOCUMENT, path, e.to_string()));
            Vec::new()
        })
    };
    for name in children(level, out) {
        let p = join(&[level, &name]);
        match name.as_str() {
            names::VERTICES => found.push((p, ZvArray::Vertices, true, None)),
            names::VERTEX_FRAGMENTS => found.push((p, ZvArray::VertexFragments, true, None)),
            names::LINK_FRAGMENTS => found.push((p, ZvArray::LinkFragments, true, None)),
            names::OBJECT_INDEX => found.push((p, ZvArray::ObjectIndex, false, None)),
            names::GROUPS => found.push((p, ZvArray::Groups, false, None)),
            names::LINKS if grid => {
                for d in children(&p, out) {
                    let fp = join(&[&p, &d]);
                    match parse_delta(&d) {
                        Some(delta) => {
                            found.push((fp.clone(), links_family(), false, Some(delta)));
                            for seg in link_segments(blobs, &fp, &fp, level, out) {
                                found.push((seg, ZvArray::Links, true, Some(delta)));
                            }
                        }
                        None => out.push(unknown(&fp, "not a level delta")),
                    }
                }
            }
            names::LINKS | names::CROSS_CHUNK_LINKS => {
                let (kind, per_chunk) = if name == names::LINKS {
                    (ZvArray::Links, true)
                } else {
                    (ZvArray::CrossChunkLinks, false)
                };
                for d in children(&p, out) {
                    if let Some(delta) = parse_delta(&d) {
                        found.push((join(&[&p, &d]), kind.clone(), per_chunk, Some(delta)));
                    } else {
                        out.push(unknown(&join(&[&p, &d]), "not a level delta"));
                    }
                }
            }
            names::VERTEX_ATTRIBUTES
            | names::FRAGMENT_ATTRIBUTES
            | names::OBJECT_ATTRIBUTES
            | names::GROUP_ATTRIBUTES => {
                let (kind, per_chunk) = match name.as_str() {
                    names::VERTEX_ATTRIBUTES => (ZvArray::VertexAttribute, true),
                    names::FRAGMENT_ATTRIBUTES => (ZvArray::FragmentAttribute, true),
                    names::OBJECT_ATTRIBUTES => (ZvArray::ObjectAttribute, false),
                    _ => (ZvArray::GroupAttribute, false),
                };
                for n in children(&p, out) {
                    found.push((join(&[&p, &n]), kind.clone(), per_chunk, None));
                }
            }
            names::LINK_ATTRIBUTES if grid => {
                // ZV 0.9: per attribute and delta, a family mirroring `links/<d>`'s segments
                for n in children(&p, out) {
                    let np = join(&[&p, &n]);
                    for d in children(&np, out) {
                        let fp = join(&[&np, &d]);
                        let Some(delta) = parse_delta(&d) else {
                            out.push(unknown(&fp, "not a level delta"));
                            continue;
                        };
                        found.push((fp.clone(), link_attribute_family(), false, Some(delta)));
                        let links = join(&[level, names::LINKS, &d]);
                        for seg in link_segments(blobs, &links, &fp, level, out) {
                            found.push((seg, ZvArray::LinkAttribute, true, Some(delta)));
                        }
                    }
                }
            }
            names::LINK_ATTRIBUTES | names::CROSS_CHUNK_LINK_ATTRIBUTES => {
                let (kind, per_chunk) = if name == names::LINK_ATTRIBUTES {
                    (ZvArray::LinkAttribute, true)
                } else {
                    (ZvArray::CrossChunkLinkAttribute, false)
                };
                for n in children(&p, out) {
                    let np = join(&[&p, &n]);
                    for d in children(&np, out) {
                        if let Some(delta) = parse_delta(&d) {
                            found.push((join(&[&np, &d]), kind.clone(), per_chunk, Some(delta)));
                        } else {
                            out.push(unknown(&join(&[&np, &d]), "not a level delta"));
                        }
                    }
                }
            }
            _ => out.push(unknown(&p, "not an array of a ZV level")),
        }
    }
    let mut groups = Vec::new();
    for (path, kind, per_chunk, delta) in found {
        let key = join(&[&path, "zarr.json"]);
        let attributes = match blobs.group_attributes(&path) {
            Ok(a) => a.unwrap_or_default(),
            Err(e) => {
                out.push(Finding::new(&ARRAY_DOCUMENT, key, e.to_string()));
                continue;
            }
        };
        match ZvArray::from_attributes(&attributes, &key) {
            Err(e) => out.push(Finding::new(&ARRAY_DOCUMENT, &key, e.to_string())),
            Ok(Some(found)) if found != kind => out.push(Finding::new(
                &ARRAY_DOCUMENT,
                &key,
                format!(
                    "`zv_array` is `{}`, but this group holds `{}`",
                    found.name(),
                    kind.name()
                ),
            )),
            Ok(_) => {}
        }
        groups.push(ArrayGroup {
            path,
            kind,
            per_chunk,
            attributes,
            delta,
        });
    }
    groups
}

/// What the reader does not read in a ZV 0.9 level (the attributes of cross-level links) is a
/// finding: the rest of the level could not be checked honestly without it.
fn check_unread(groups: &[ArrayGroup], out: &mut Vec<Finding>) {
    for g in groups {
        let what = match (&g.kind, g.delta) {
            (ZvArray::Other(f), Some(d)) if f == LINK_ATTRIBUTE_FAMILY && d != 0 => {
                "attributes of cross-level links of a ZV 0.9 store"
            }
            _ => continue,
        };
        out.push(Finding::new(
            &V09_UNREAD,
            g.key(),
            format!("this build does not read {what} (`{}`)", g.path),
        ));
    }
}

/// The discriminator of a ZV 0.9 links family group (`links/<d>`).
pub(crate) const LINKS_FAMILY: &str = "links_family";

/// The kind of a ZV 0.9 links family group.
pub(crate) fn links_family() -> ZvArray {
    ZvArray::Other(LINKS_FAMILY.to_owned())
}

/// The discriminator of a ZV 0.9 link attribute family group (`link_attributes/<n>/<d>`).
pub(crate) const LINK_ATTRIBUTE_FAMILY: &str = "link_attribute_family";

/// The kind of a ZV 0.9 link attribute family group.
fn link_attribute_family() -> ZvArray {
    ZvArray::Other(LINK_ATTRIBUTE_FAMILY.to_owned())
}

/// The offsets segments under `dir` (their paths), a ZV 0.9 links family or a link
/// attribute family mirroring the links family `family`; a child whose name is not a segment
/// of `family`'s width and the level's arity is a finding.
fn link_segments(
    blobs: &Blobs,
    family: &str,
    dir: &str,
    level: &str,
    out: &mut Vec<Finding>,
) -> Vec<String> {
    let key = join(&[dir, "zarr.json"]);
    let attrs = blobs
        .group_attributes(family)
        .ok()
        .flatten()
        .unwrap_or_default();
    let width = attrs
        .get("link_width")
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(2) as usize;
    let sid = attrs
        .get("sid_ndim")
        .and_then(serde_json::Value::as_u64)
        .map(|s| s as usize)
        .or_else(|| level_arity(blobs, level));
    let names = blobs.children(dir).unwrap_or_else(|e| {
        out.push(Finding::new(&LINK_SEGMENTS, &key, e.to_string()));
        Vec::new()
    });
    let mut segments = Vec::new();
    for seg in names {
        let path = join(&[dir, &seg]);
        match sid.map(|sid| parse_segment(&seg, sid, width)) {
            Some(Ok(_)) => segments.push(path),
            Some(Err(why)) => out.push(Finding::new(
                &LINK_SEGMENTS,
                join(&[&path, "zarr.json"]),
                format!("`{seg}` is not an offsets segment of `{dir}`: {why}"),
            )),
            None => out.push(Finding::new(
                &LINK_SEGMENTS,
                &key,
                "the family has no `sid_ndim` and the level's chunk arity is unknown",
            )),
        }
    }
    segments
}

/// The chunk-key arity of a ZV 0.9 level: the rank of its `vertices` grid array.
fn level_arity(blobs: &Blobs, level: &str) -> Option<usize> {
    match blobs.node(&join(&[level, names::VERTICES])) {
        Ok(Some(zv_core::metadata::NodeMetadata::Array(a))) => Some(a.shape.len()),
        _ => None,
    }
}

fn unknown(path: &str, why: &str) -> Finding {
    Finding::new(&UNKNOWN_ARRAY, path, format!("`{path}` is {why}"))
}

/// Every blob name of a per-chunk array is a chunk key of the arity of the level's first
/// `vertices` key.
fn check_chunk_keys(blobs: &Blobs, groups: &[ArrayGroup], out: &mut Vec<Finding>) {
    let mut arity = None;
    let mut ordered: Vec<&ArrayGroup> = groups.iter().filter(|g| g.per_chunk).collect();
    ordered.sort_by_key(|g| g.kind != ZvArray::Vertices);
    for g in ordered {
        let names = match blobs.blob_names(&g.path) {
            Ok(n) => n,
            Err(e) => {
                out.push(Finding::new(&CHUNK_KEY, &g.path, e.to_string()));
                continue;
            }
        };
        for n in names {
            let key = join(&[&g.path, &n]);
            match n.parse::<ChunkKey>() {
                Err(_) => out.push(Finding::new(
                    &CHUNK_KEY,
                    key,
                    format!("`{n}` is not a chunk key (integers joined by `.`)"),
                )),
                Ok(k) => match arity {
                    None => arity = Some(k.arity()),
                    Some(a) if a != k.arity() => out.push(Finding::new(
                        &CHUNK_KEY,
                        key,
                        format!(
                            "chunk key `{n}` has {} coordinates, the level's chunks have {a}",
                            k.arity()
                        ),
                    )),
                    Some(_) => {}
                },
            }
        }
    }
}
