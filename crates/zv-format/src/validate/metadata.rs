//! Level 2, metadata: the root and level schemas, their enumerations and numeric ranges,
//! and the per-array attributes — plus the level-5 rules on level chunk and bin shapes,
//! which read the same documents. Each document is parsed by the crate's metadata models;
//! a model's refusal that no specific rule explains is reported as the schema rule.

use serde_json::Value;

use super::finding::*;
use super::structure::{ArrayGroup, Layout, LINKS_FAMILY};
use crate::metadata::arrays::{
    CrossChunkLinksArray, DenseAttributeArray, FragmentIndexArray, GroupsArray, LinksArray,
    ObjectIndexArray, RowAttributeArray, VerticesArray, ZvArray, FRAGMENT_INDEX_V1,
};
use crate::metadata::json::{as_int, f64_list, positive_extents, whole_multiples};
use crate::metadata::{parse_version, JsonObject, LevelMetadata, RootMetadata};
use crate::names;

/// `links_convention` values.
pub(crate) const LINKS_CONVENTIONS: &[&str] = &[
    "explicit",
    "implicit_sequential",
    "implicit_sequential_with_branches",
];
const OBJECT_INDEX_CONVENTIONS: &[&str] = &["standard", "identity"];
const CROSS_CHUNK_STRATEGIES: &[&str] = &["explicit_links", "boundary_deduplication", "both"];
const CROSS_LEVEL_STORAGES: &[&str] = &["none", "implicit", "explicit"];
const GEOMETRY_TYPES: &[&str] = &[
    "point_cloud",
    "line",
    "polyline",
    "streamline",
    "skeleton",
    "graph",
    "mesh",
];
const CAPABILITIES_KNOWN: &[&str] = &[
    "fragment_index",
    "shared_fragments",
    "preserved_object_ids",
    "multiscale_links",
];
const VERTEX_ENCODINGS: &[&str] = &["raw", "draco"];

/// The parsed metadata, as far as it parses.
#[derive(Debug, Default)]
pub(crate) struct Parsed {
    /// The root metadata.
    pub(crate) root: Option<RootMetadata>,
    /// `(level, metadata)` of the levels whose document parses.
    pub(crate) levels: Vec<(u32, LevelMetadata)>,
}

/// Checks the metadata of `layout` (findings of every level; the caller filters).
pub(crate) fn check(layout: &Layout, out: &mut Vec<Finding>) -> Parsed {
    let mut parsed = Parsed::default();
    let start = out.len();
    let empty = JsonObject::new();
    let zv = layout
        .root
        .get(names::ROOT_ATTRIBUTE)
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    check_root(&layout.root, zv, out);
    match RootMetadata::from_attributes(&layout.root, "zarr.json") {
        Ok(r) => parsed.root = Some(r),
        Err(e) => {
            if out[start..].iter().all(|f| f.severity != Severity::Error) {
                out.push(Finding::new(&ROOT_SCHEMA, "zarr.json", e.to_string()));
            }
            return parsed;
        }
    }
    let Some(root) = parsed.root.clone() else {
        return parsed;
    };
    for level in &layout.levels {
        let (id, attrs, groups) = (&level.id, &level.attributes, &level.groups);
        let key = format!("{id}/zarr.json");
        let lv = attrs
            .get(names::LEVEL_ATTRIBUTE)
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let before = out.len();
        check_level(*id, lv, &root, &parsed.levels, &key, out);
        match LevelMetadata::from_attributes(attrs, *id, &root, &key) {
            Ok(m) => {
                check_level_bins(&m, &root, &key, out);
                parsed.levels.push((*id, m));
            }
            Err(e) => {
                if out[before..].iter().all(|f| f.severity != Severity::Error) {
                    out.push(Finding::new(&LEVEL_SCHEMA, &key, e.to_string()));
                }
            }
        }
        for g in groups {
            check_array(g, out);
        }
    }
    parsed
}

fn check_root(root: &JsonObject, zv: &JsonObject, out: &mut Vec<Finding>) {
    let key = "zarr.json";
    let mut push = |rule: &Rule, msg: String| out.push(Finding::new(rule, key, msg));
    match zv.get("zv_version") {
        Some(Value::String(v)) => match parse_version(v) {
            Some((0, 7 | 9, _)) => {}
            Some(_) => push(
                &ZV_VERSION,
                format!("`zv_version` is {v}; this build reads 0.7.x and 0.9.x"),
            ),
            None => push(
                &ZV_VERSION,
                format!("`zv_version` {v:?} is not MAJOR.MINOR[.PATCH]"),
            ),
        },
        Some(other) => push(
            &ZV_VERSION,
            format!("`zv_version` is {other}, not a string"),
        ),
        None => push(&ZV_VERSION, "`zarr_vectors` has no `zv_version`".into()),
    }
    let axes: Vec<&Value> = root
        .get("multiscales")
        .and_then(Value::as_array)
        .and_then(|m| m.first())
        .and_then(|m| m.get("axes"))
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    let ndim = axes.len();
    let axis_names: Vec<&str> = axes
        .iter()
        .filter_map(|a| a.get("name").and_then(Value::as_str).or(a.as_str()))
        .collect();
    for (i, n) in axis_names.iter().enumerate() {
        if axis_names[..i].contains(n) {
            push(&AXES, format!("axis name `{n}` appears twice"));
        }
    }
    for a in &axes {
        if let Some(u) = a.get("unit").and_then(Value::as_str) {
            if u.trim().is_empty() || matches!(u, "unknown" | "none" | "unit" | "units") {
                push(&AXES, format!("axis unit {u:?} is a placeholder"));
            }
        }
    }
    if ndim > 0 {
        let list = |k: &str| zv.get(k).map(|v| f64_list(v, k));
        match list("chunk_shape") {
            Some(Ok(c)) => {
                if let Err(e) = positive_extents(&c, ndim, "chunk_shape") {
                    push(&ROOT_SHAPES, e);
                }
                if let Some(Ok(b)) = list("base_bin_shape") {
                    if let Err(e) = positive_extents(&b, ndim, "base_bin_shape") {
                        push(&BASE_BIN_SHAPE, e);
                    } else if !whole_multiples(&c, &b) {
                        push(
                            &BASE_BIN_SHAPE,
                            format!("base_bin_shape {b:?} does not divide chunk_shape {c:?}"),
                        );
                    }
                }
            }
            Some(Err(e)) => push(&ROOT_SHAPES, e),
            None => push(&ROOT_SHAPES, "`chunk_shape` is missing".into()),
        }
        let bounds = zv.get("bounds").and_then(Value::as_array);
        let sides: Option<Vec<Vec<f64>>> = bounds
            .filter(|b| b.len() == 2)
            .and_then(|b| b.iter().map(|s| f64_list(s, "bounds").ok()).collect());
        match sides.as_deref() {
            Some([lo, hi]) if lo.len() == ndim && hi.len() == ndim => {
                if lo
                    .iter()
                    .zip(hi)
                    .any(|(l, h)| l.partial_cmp(h).is_none_or(|o| o.is_gt()))
                {
                    push(
                        &ROOT_SHAPES,
                        format!("bounds min {lo:?} exceeds max {hi:?}"),
                    );
                }
            }
            _ => push(
                &ROOT_SHAPES,
                format!("`bounds` must be [min, max] with {ndim} numbers each"),
            ),
        }
    }
    let enums: [(&str, &[&str]); 4] = [
        ("links_convention", LINKS_CONVENTIONS),
        ("object_index_convention", OBJECT_INDEX_CONVENTIONS),
        ("cross_chunk_strategy", CROSS_CHUNK_STRATEGIES),
        ("cross_level_storage", CROSS_LEVEL_STORAGES),
    ];
    for (k, allowed) in enums {
        if let Some(v) = zv.get(k).filter(|v| !v.is_null()) {
            if !v.as_str().is_some_and(|s| allowed.contains(&s)) {
                push(
                    &ENUMERATIONS,
                    format!("`{k}` is {v}; allowed: {}", allowed.join(", ")),
                );
            }
        }
    }
    for g in zv
        .get("geometry_types")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if !g.as_str().is_some_and(|s| GEOMETRY_TYPES.contains(&s)) {
            push(
                &ENUMERATIONS,
                format!("geometry type {g} is not one of {GEOMETRY_TYPES:?}"),
            );
        }
    }
    if let Some(d) = zv.get("cross_level_depth").and_then(as_int) {
        if d < -1 {
            push(
                &CROSS_LEVEL_DEPTH,
                format!("`cross_level_depth` is {d}, below -1"),
            );
        }
    }
    if let Some(r) = zv.get("reduction_factor").and_then(as_int) {
        if r < 2 {
            push(
                &REDUCTION_FACTOR,
                format!("`reduction_factor` is {r}, below 2"),
            );
        }
    }
    for c in zv
        .get("format_capabilities")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if !c.as_str().is_some_and(|s| CAPABILITIES_KNOWN.contains(&s)) {
            push(
                &CAPABILITIES,
                format!("capability {c} is not a token the spec defines"),
            );
        }
    }
}

fn check_level(
    id: u32,
    lv: &JsonObject,
    root: &RootMetadata,
    parents: &[(u32, LevelMetadata)],
    key: &str,
    out: &mut Vec<Finding>,
) {
    let mut push = |rule: &Rule, msg: String| out.push(Finding::new(rule, key, msg));
    let given = |k: &str| lv.get(k).filter(|v| !v.is_null());
    if let Some(l) = given("level") {
        if l.as_u64() != Some(u64::from(id)) {
            push(
                &LEVEL_NUMBER,
                format!("`level` is {l} but the group is named {id}"),
            );
        }
    }
    let parent = given("parent_level").map(|p| p.as_u64());
    let preserves = given("preserves_object_ids").and_then(Value::as_bool) == Some(true);
    if id == 0 {
        if parent.is_some() {
            push(&LEVEL_PARENT, "level 0 has a `parent_level`".into());
        }
        if preserves {
            push(&LEVEL_PARENT, "level 0 says `preserves_object_ids`".into());
        }
    } else {
        match parent {
            None => push(&LEVEL_PARENT, format!("level {id} has no `parent_level`")),
            Some(Some(p)) if p < u64::from(id) => {}
            Some(p) => push(
                &LEVEL_PARENT,
                format!("`parent_level` {p:?} is not a level below {id}"),
            ),
        }
        let has_bins = root.dataset(id).is_some_and(|d| d.translation.is_some())
            || given("bin_shape").or_else(|| given("bin_size")).is_some();
        if !has_bins {
            push(
                &LEVEL_PARENT,
                format!(
                    "level {id} has no bin grid (no NGFF dataset entry `{id}` nor `bin_shape`)"
                ),
            );
        }
    }
    if let Some(s) = given("object_sparsity") {
        if !s.as_f64().is_some_and(|s| s > 0.0 && s <= 1.0) {
            push(
                &OBJECT_SPARSITY,
                format!("`object_sparsity` is {s}, not in (0, 1]"),
            );
        }
    }
    if preserves && given("inherited_num_objects").is_none() {
        push(
            &INHERITED_OBJECTS,
            "`preserves_object_ids` is true but `inherited_num_objects` is missing".into(),
        );
    }
    if let Some(Ok(c)) = given("chunk_shape").map(|v| f64_list(v, "chunk_shape")) {
        let parent_shape = parent
            .flatten()
            .and_then(|p| parents.iter().find(|(l, _)| u64::from(*l) == p))
            .map(|(_, m)| m.effective_chunk_shape(root));
        if positive_extents(&c, root.ndim(), "chunk_shape").is_err()
            || !whole_multiples(&c, &root.chunk_shape)
        {
            push(
                &LEVEL_CHUNK_SHAPE,
                format!(
                    "level chunk_shape {c:?} is not a whole multiple of the root chunk_shape {:?}",
                    root.chunk_shape
                ),
            );
        } else if let Some(p) = parent_shape.filter(|p| !whole_multiples(&c, p)) {
            push(
                &LEVEL_CHUNK_SHAPE,
                format!("level chunk_shape {c:?} is not a whole multiple of its parent's {p:?}"),
            );
        }
    }
}

fn check_level_bins(m: &LevelMetadata, root: &RootMetadata, key: &str, out: &mut Vec<Finding>) {
    let (c, b) = (m.effective_chunk_shape(root), m.effective_bin_shape(root));
    if !whole_multiples(&c, &b) {
        out.push(Finding::new(
            &LEVEL_BIN_SHAPE,
            key,
            format!("the bin shape {b:?} does not divide the chunk shape {c:?}"),
        ));
    }
}

/// The per-array attributes of one array group.
fn check_array(g: &ArrayGroup, out: &mut Vec<Finding>) {
    let key = g.key();
    let a = &g.attributes;
    let folder_delta = g.delta;
    let problem: Result<Option<String>, crate::Error> = match &g.kind {
        ZvArray::Vertices => VerticesArray::from_attributes(a, &key).map(|v| {
            (!VERTEX_ENCODINGS.contains(&v.encoding.as_str()))
                .then(|| format!("vertices `encoding` {:?} is not raw or draco", v.encoding))
        }),
        ZvArray::VertexFragments | ZvArray::LinkFragments => {
            FragmentIndexArray::from_attributes(a, &key).map(|f| {
                f.encoding
                    .filter(|e| e != FRAGMENT_INDEX_V1)
                    .map(|e| format!("fragment `encoding` {e:?} is not {FRAGMENT_INDEX_V1}"))
            })
        }
        ZvArray::Other(family) if family == LINKS_FAMILY => LinksArray::from_attributes(a, &key)
            .map(|l| {
                if l.link_width == 0 {
                    Some("`link_width` is 0".to_owned())
                } else {
                    delta_mismatch(l.level_delta, folder_delta)
                }
            }),
        ZvArray::Links => LinksArray::from_attributes(a, &key).map(|l| {
            if l.link_width == 0 {
                Some("`link_width` is 0".to_owned())
            } else {
                delta_mismatch(l.level_delta, folder_delta)
            }
        }),
        ZvArray::CrossChunkLinks => CrossChunkLinksArray::from_attributes(a, &key).map(|l| {
            if l.link_width == 0 {
                Some("`link_width` is 0".to_owned())
            } else {
                delta_mismatch(l.level_delta, folder_delta)
            }
        }),
        ZvArray::ObjectIndex => ObjectIndexArray::from_attributes(a, &key).map(|_| None),
        ZvArray::Groups => GroupsArray::from_attributes(a, &key).map(|_| None),
        ZvArray::ObjectAttribute | ZvArray::GroupAttribute => {
            DenseAttributeArray::from_attributes(a, &key).map(|_| None)
        }
        _ => RowAttributeArray::from_attributes(a, &key).map(|r| {
            if matches!(
                g.kind,
                ZvArray::LinkAttribute | ZvArray::CrossChunkLinkAttribute
            ) {
                delta_mismatch(r.level_delta, folder_delta)
            } else {
                None
            }
        }),
    };
    match problem {
        Ok(None) => {}
        Ok(Some(msg)) => out.push(Finding::new(&ARRAY_METADATA, key, msg)),
        Err(e) => out.push(Finding::new(&ARRAY_METADATA, key, e.to_string())),
    }
}

fn delta_mismatch(stored: Option<i32>, folder: Option<i32>) -> Option<String> {
    match (stored, folder) {
        (Some(s), Some(f)) if s != f => {
            Some(format!("`level_delta` is {s} but the folder is delta {f}"))
        }
        _ => None,
    }
}
