//! The logical sections of the dump, as the reference's reader sees the store: its links
//! (with its level-global skeleton parent rule), each object's vertices, attributes and the
//! links that belong to it alone, the canonical (sorted) view and the high-level reader output.

use std::collections::HashMap;

use serde_json::{json, Map, Value};

use super::json::{cmp_rows, cmp_values, row_json, rows_json};
use super::Sections;
use crate::error::{Error, Result};
use crate::geometry::Geometry;
use crate::metadata::Layout;
use crate::names;
use crate::reader::level_scan::LevelScan;
use crate::reader::level_scan::ScannedChunk;
use crate::reader::links::Endpoints;
use crate::reader::skeleton::{fragment_parents, reference_parents};
use crate::reader::{Level, ObjectIndex, Positions};

/// The links of the reference's high-level reader, as level-global vertex indices (`None`
/// for geometries without links): the stored links, every endpoint required; skeletons take
/// the reference's level-global parent rule. ZV 0.9 stores read as zarr-vectors 0.9.2's
/// readers read them ([`v09_reader_links`]).
pub(super) fn reader_links(level: &Level, scan: &LevelScan) -> Result<Option<Vec<Vec<u64>>>> {
    let geometry = level.geometry();
    if !geometry.has_explicit_links() {
        return Ok(None);
    }
    if level.layout() == Layout::ChunkGrid {
        return v09_reader_links(level, scan).map(Some);
    }
    let links =
        level
            .link_source()?
            .number(&scan.chunks, |k, r| scan.global(k, r), Endpoints::All)?;
    if *geometry == Geometry::Skeleton {
        let parents = reference_parents(scan.total(), &links);
        return Ok(Some(parents.iter().map(|&(c, p, _)| vec![c, p]).collect()));
    }
    Ok(Some(links.into_iter().map(|l| l.ends).collect()))
}

/// The links of 0.9.2's `read_graph` / `read_mesh`: the records of `links/0` in its order
/// (offsets segments by name, so every cross-chunk record before the intra-chunk rows; cells by
/// their dotted key as text; rows in order). Skeletons take zv's per-fragment parent rule,
/// which is 0.9.2's (a fragment's first vertex has no implicit parent), later records winning.
fn v09_reader_links(level: &Level, scan: &LevelScan) -> Result<Vec<Vec<u64>>> {
    let source = level.link_source()?;
    let mut by_text: Vec<&ScannedChunk> = scan.chunks.iter().collect();
    by_text.sort_by_cached_key(|c| c.key().to_string());
    let mut links = source.number(by_text, |k, r| scan.global(k, r), Endpoints::All)?;
    let cross = source.records().unwrap_or(0).min(links.len());
    links.rotate_right(cross);
    if *level.geometry() == Geometry::Skeleton {
        let fragments: Vec<Vec<u64>> = scan
            .chunks
            .iter()
            .flat_map(|c| {
                c.chunk
                    .fragments
                    .iter()
                    .map(move |f| f.iter().map(|r| c.offset + r).collect())
            })
            .collect();
        let parents = fragment_parents(scan.total(), fragments, &links);
        return Ok(parents.iter().map(|&(c, p, _)| vec![c, p]).collect());
    }
    Ok(links.into_iter().map(|l| l.ends).collect())
}

/// Level-global vertex → the objects that hold it, with its first local index in each.
type Owners = HashMap<u64, Vec<(usize, u64)>>;

/// Writes the `objects` section (`null` without an object index) to `out`, one object at a
/// time; returns the `unassigned_links`: the reader's links that do not belong to exactly one
/// object, sorted.
pub(super) fn objects(
    index: Option<&ObjectIndex>,
    scan: &LevelScan,
    reader_links: Option<&[Vec<u64>]>,
    level: &Level,
    out: &mut dyn Sections,
) -> Result<Vec<Vec<u64>>> {
    let Some(index) = index else {
        out.put("objects", Value::Null)?;
        // zv-dump/1 sorts the unassigned links (as it sorts each object's)
        let mut unassigned = reader_links.map_or_else(Vec::new, <[Vec<u64>]>::to_vec);
        unassigned.sort();
        return Ok(unassigned);
    };
    let okey = level.p(&[names::OBJECT_INDEX]);
    // the ids present (0.9 ids may have gaps), each one's vertex count, and the owners of
    // every vertex; every row is checked here, before anything of the section is written
    let mut owners: Owners = HashMap::new();
    let mut present = Vec::with_capacity(index.manifests.len());
    let mut counts = Vec::with_capacity(index.manifests.len());
    for (id, m) in index.manifests.iter().enumerate() {
        if !index.contains(id as u64) {
            continue; // a gap in a ZV 0.9 store's sparse ids
        }
        let pos = present.len();
        let mut local = 0u64;
        for (c, _, frag) in scan.fragments(m, id as u64, &okey)? {
            for r in frag.iter() {
                if c.chunk.vertices.row(r as usize).is_none() {
                    return Err(Error::inconsistent(
                        &okey,
                        format!("row {r} of chunk {}", c.key()),
                    ));
                }
                let entry = owners.entry(c.offset + r).or_default();
                if !entry.iter().any(|(o, _)| *o == pos) {
                    entry.push((pos, local));
                }
                local += 1;
            }
        }
        present.push(id);
        counts.push(local);
    }
    let geometry = level.geometry();
    let mut unassigned = Vec::new();
    // zv-dump/1 gives object links to polylines, streamlines, graphs, skeletons and meshes
    let sequential = matches!(geometry, Geometry::Polyline | Geometry::Streamline);
    let mut per_object =
        match (reader_links, geometry) {
            (Some(links), Geometry::Graph | Geometry::Skeleton | Geometry::Mesh) => Some(
                assign_links(links, &owners, geometry, present.len(), &mut unassigned),
            ),
            _ => None,
        };
    drop(owners);
    out.nested_array("objects", present.len(), &mut |pos, o| {
        let id = present[pos];
        let frags = scan.fragments(&index.manifests[id], id as u64, &okey)?;
        o.put("id", json!(id))?;
        o.put("vertex_count", json!(counts[pos]))?;
        // rows checked above
        o.array(
            "vertices",
            &mut frags.iter().flat_map(|(c, _, frag)| {
                frag.iter()
                    .filter_map(|r| c.chunk.vertices.row(r as usize))
                    .map(|v| row_json(&v))
            }),
        )?;
        if !scan.infos.is_empty() {
            o.nested("vertex_attributes", &mut |va| {
                for (ai, info) in scan.infos.iter().enumerate() {
                    va.array(
                        &info.name,
                        &mut frags.iter().flat_map(|(c, _, frag)| {
                            let rows = c.attributes.get(ai).and_then(Option::as_ref);
                            frag.iter()
                                .filter_map(move |r| rows.and_then(|a| a.row_json(r as usize)))
                        }),
                    )?;
                }
                Ok(())
            })?;
        }
        if sequential {
            let n = counts[pos];
            o.array("links", &mut (1..n).map(|i| json!([i - 1, i])))?;
        } else if let Some(per_object) = &mut per_object {
            let mut ls = std::mem::take(&mut per_object[pos]);
            ls.sort();
            o.array("links", &mut ls.iter().map(|l| json!(l)))?;
        }
        Ok(())
    })?;
    unassigned.sort();
    Ok(unassigned)
}

/// Each object's links in its local indices: a link belongs to an object when that object
/// alone holds every endpoint (mesh faces start at their smallest index); the others go to
/// `unassigned`.
fn assign_links(
    links: &[Vec<u64>],
    owners: &Owners,
    geometry: &Geometry,
    num_objects: usize,
    unassigned: &mut Vec<Vec<u64>>,
) -> Vec<Vec<Vec<u64>>> {
    let mut per_object: Vec<Vec<Vec<u64>>> = vec![Vec::new(); num_objects];
    for l in links {
        // the objects that own every endpoint
        let mut candidates: Option<Vec<usize>> = None;
        for g in l {
            let owners_here: Vec<usize> = owners
                .get(g)
                .map(|v| v.iter().map(|(o, _)| *o).collect())
                .unwrap_or_default();
            candidates = Some(match candidates {
                None => owners_here,
                Some(c) => c.into_iter().filter(|o| owners_here.contains(o)).collect(),
            });
        }
        let Some([o]) = candidates.as_deref() else {
            unassigned.push(l.clone());
            continue;
        };
        let mut local: Vec<u64> = l
            .iter()
            .filter_map(|g| {
                owners
                    .get(g)
                    .and_then(|v| v.iter().find(|(oo, _)| oo == o))
                    .map(|(_, li)| *li)
            })
            .collect();
        if *geometry == Geometry::Mesh {
            if let Some(pos) = local
                .iter()
                .enumerate()
                .min_by_key(|(_, v)| **v)
                .map(|(i, _)| i)
            {
                local.rotate_left(pos);
            }
        }
        per_object[*o].push(local);
    }
    per_object
}

/// The `canonical` section's entries: sorted vertices, and edges or faces as sorted
/// coordinates, written to `out` as they are made. A link is kept as its vertex numbers (a
/// face with the corner to start from) and compared through the positions, so that sorting
/// millions of links copies no coordinates.
pub(super) fn canonical(
    positions: &Positions,
    geometry: &Geometry,
    links: Option<&[Vec<u64>]>,
    out: &mut dyn Sections,
) -> Result<()> {
    let mut sorted: Vec<&[f64]> = positions.iter().collect();
    sorted.sort_by(|a, b| cmp_rows(a, b));
    out.put("vertex_count", json!(positions.len()))?;
    out.array("vertices_sorted", &mut sorted.iter().map(|r| row_json(r)))?;
    drop(sorted);
    let links = links.unwrap_or(&[]);
    let name = match geometry {
        Geometry::Graph | Geometry::Skeleton => "edges_xyz_sorted",
        Geometry::Mesh => "faces_xyz_sorted",
        _ => return Ok(()),
    };
    let row = |g: u64| endpoint(positions, g);
    // each link and the corner it starts from: a face's least corner, in the rows' order
    let mut items: Vec<(&[u64], usize)> = links
        .iter()
        .map(|l| {
            let start = match geometry {
                Geometry::Mesh => (0..l.len())
                    .min_by(|&a, &b| cmp_rows(row(l[a]), row(l[b])))
                    .unwrap_or(0),
                _ => 0,
            };
            (l.as_slice(), start)
        })
        .collect();
    items.sort_by(|&(a, i), &(b, j)| {
        cmp_values(link_values(positions, a, i), link_values(positions, b, j))
    });
    out.array(
        name,
        &mut items
            .iter()
            .map(|&(l, start)| Value::Array(corners(l, start).map(|g| row_json(row(g))).collect())),
    )
}

/// The position of vertex `g` (empty when there is none).
fn endpoint(positions: &Positions, g: u64) -> &[f64] {
    positions.get(g as usize).unwrap_or_default()
}

/// The coordinates of link `l`'s corners from corner `start` on, one after the other.
fn link_values<'a>(
    positions: &'a Positions,
    l: &'a [u64],
    start: usize,
) -> impl Iterator<Item = f64> + 'a {
    corners(l, start).flat_map(|g| endpoint(positions, g).iter().copied())
}

/// The corners of link `l` from corner `start` on, wrapping around.
fn corners(l: &[u64], start: usize) -> impl Iterator<Item = u64> + '_ {
    (0..l.len()).map(move |k| l[(start + k) % l.len()])
}

/// Writes the `reader` section to `out`: what the reference's high-level reader function
/// returns (graphs, skeletons and meshes a vertex and a link at a time).
pub(super) fn reader(
    scan: &LevelScan,
    positions: &Positions,
    level: &Level,
    links: Option<&[Vec<u64>]>,
    index: Option<&ObjectIndex>,
    out: &mut dyn Sections,
) -> Result<()> {
    let geometry = level.geometry();
    let (function, vertices, count, links_name, links_count) = match geometry {
        Geometry::Mesh => (
            "read_mesh",
            "vertices",
            "vertex_count",
            "faces",
            "face_count",
        ),
        Geometry::Graph | Geometry::Skeleton => (
            "read_graph",
            "positions",
            "node_count",
            "edges",
            "edge_count",
        ),
        _ => return out.put("reader", reader_json(scan, positions, level, index)?),
    };
    let links = links.unwrap_or(&[]);
    out.nested("reader", &mut |r| {
        r.put("function", json!(function))?;
        r.put("geometry_type", json!(geometry.name()))?;
        r.array(vertices, &mut positions.iter().map(row_json))?;
        r.put(count, json!(positions.len()))?;
        r.array(links_name, &mut links.iter().map(|l| json!(l)))?;
        r.put(links_count, json!(links.len()))
    })
}

/// The `reader` section of geometries without explicit links.
fn reader_json(
    scan: &LevelScan,
    positions: &Positions,
    level: &Level,
    index: Option<&ObjectIndex>,
) -> Result<Value> {
    let geometry = level.geometry();
    let positions = rows_json(positions);
    let n = positions.as_array().map_or(0, Vec::len);
    Ok(match geometry {
        Geometry::PointCloud => {
            let mut va = Map::new();
            for (ai, info) in scan.infos.iter().enumerate() {
                let mut vals = Vec::new();
                for rows in scan.chunks.iter().filter_map(|c| c.attributes[ai].as_ref()) {
                    match &info.dictionary {
                        // the reference's read_points gives categories (null when missing)
                        Some(dict) => vals.extend(
                            dict.decode_values(rows)
                                .map_err(|source| Error::Blob {
                                    key: level.p(&[names::VERTEX_ATTRIBUTES, &info.name]),
                                    source,
                                })?
                                .into_iter()
                                .map(|v| v.unwrap_or(Value::Null)),
                        ),
                        None => vals.extend((0..rows.num_rows()).filter_map(|r| rows.row_json(r))),
                    }
                }
                va.insert(info.name.clone(), Value::Array(vals));
            }
            json!({"function": "read_points", "geometry_type": geometry.name(), "positions": positions,
                   "vertex_count": n, "vertex_attributes": va})
        }
        Geometry::Polyline | Geometry::Streamline => {
            let polylines = polylines(scan, level, index)?;
            let total: usize = polylines.iter().map(Vec::len).sum();
            let polylines: Vec<Value> = polylines.into_iter().map(Value::Array).collect();
            json!({"function": "read_polylines", "geometry_type": geometry.name(), "polyline_count": polylines.len(),
                   "polylines": polylines, "vertex_count": total})
        }
        Geometry::Line if level.layout() == Layout::ChunkGrid => {
            super::lines::read_lines(scan, level, index)?
        }
        // the 0.7.0 reference has no high-level reader for other geometries (graphs,
        // skeletons and meshes are `reader`'s)
        Geometry::Line
        | Geometry::Other(_)
        | Geometry::Mesh
        | Geometry::Graph
        | Geometry::Skeleton => json!({
            "geometry_type": geometry.name(),
            "note": format!("no high-level reader wired for geometry_type '{}'", geometry.name()),
        }),
    })
}

/// The reference's polylines: each object's vertices in manifest order, empty ones left out.
fn polylines(
    scan: &LevelScan,
    level: &Level,
    index: Option<&ObjectIndex>,
) -> Result<Vec<Vec<Value>>> {
    let okey = level.p(&[names::OBJECT_INDEX]);
    let mut out = Vec::new();
    for (id, m) in index.map_or(&[][..], |i| &i.manifests).iter().enumerate() {
        let mut pl = Vec::new();
        for (c, _, frag) in scan.fragments(m, id as u64, &okey)? {
            pl.extend(
                frag.iter()
                    .filter_map(|r| c.chunk.vertices.row(r as usize))
                    .map(|r| row_json(&r)),
            );
        }
        if !pl.is_empty() {
            out.push(pl);
        }
    }
    Ok(out)
}
