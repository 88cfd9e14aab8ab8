//! The cross-level links of one step, in the reference's layout: at the fine level,
//! `links/+1/<key>` (a ragged blob, one group of rows `(fine_row, coarse_row)`) for the pairs
//! whose chunk keys are equal as tuples, and `cross_chunk_links/+1/data` records
//! `((fine_chunk, fine_row), (coarse_chunk, coarse_row))` for the others; with explicit
//! storage, the same pairs from the coarse side under `-1` at the coarse level.

use std::collections::BTreeMap;

use serde_json::Map;

use crate::blob::{join, Blobs};
use crate::error::{Error, Result};
use crate::layout::cross_chunk::CrossChunkLinks;
use crate::layout::links::RaggedLinks;
use crate::layout::LayoutError;
use crate::metadata::arrays::{CrossChunkLinksArray, LinksArray};
use crate::metadata::ChunkKey;
use crate::names;
use crate::reader::delta_name;
use crate::writer::CodecChoice;

/// A fine vertex without a parent (its object was dropped).
pub(crate) const NO_PARENT: u64 = u64::MAX;

/// The parent metavertex (its number at the coarse level) of every row of every fine chunk.
#[derive(Debug, Default)]
pub(crate) struct ParentMap {
    /// (fine chunk, parent of each row or [`NO_PARENT`]), in chunk order.
    pub(crate) chunks: Vec<(ChunkKey, Vec<u64>)>,
}

impl ParentMap {
    /// A map from `(fine chunk, row, metavertex)` triples in any order (the geometries read
    /// object by object); rows never set have [`NO_PARENT`].
    pub(crate) fn from_rows(rows: BTreeMap<ChunkKey, Vec<u64>>) -> Self {
        Self {
            chunks: rows.into_iter().collect(),
        }
    }
}

/// Sets `rows[key][row] = parent` in a [`ParentMap::from_rows`] table.
pub(crate) fn set_parent(
    rows: &mut BTreeMap<ChunkKey, Vec<u64>>,
    key: &ChunkKey,
    row: u64,
    parent: u64,
) {
    let r = match rows.get_mut(key) {
        Some(r) => r,
        None => rows.entry(key.clone()).or_default(),
    };
    let row = row as usize;
    if r.len() <= row {
        r.resize(row + 1, NO_PARENT);
    }
    r[row] = parent;
}

/// One cross-level pair: (chunk, row) at the level written, (chunk, row) at the other.
type Pair<'a> = ((&'a ChunkKey, u64), (&'a ChunkKey, u64));

/// Writes the links of the pairs `pairs` (sorted by their first chunk) at level `level`
/// under `delta`: a ragged blob per chunk for same-key pairs, records for the others.
/// Returns (rows in ragged blobs, cross-chunk records).
fn write_side(
    blobs: &Blobs,
    level: &str,
    delta: i32,
    pairs: &[Pair<'_>],
    sid_ndim: usize,
    codecs: &CodecChoice,
) -> Result<(u64, u64)> {
    let d = delta_name(delta);
    let links = join(&[level, names::LINKS]);
    let ccl_path = join(&[level, names::CROSS_CHUNK_LINKS, &d, names::DATA]);
    let ccl_err = |source: LayoutError| Error::Blob {
        key: ccl_path.clone(),
        source,
    };
    let mut ccl = CrossChunkLinks::new(2, sid_ndim);
    let mut rows_total = 0u64;
    let mut i = 0;
    while i < pairs.len() {
        let key = pairs[i].0 .0;
        let mut rows = Vec::new();
        while i < pairs.len() && pairs[i].0 .0 == key {
            let ((a, ra), (b, rb)) = pairs[i];
            if a.0 == b.0 {
                rows.extend([ra as i64, rb as i64]);
            } else {
                ccl.push(&[(&a.0, ra), (&b.0, rb)]).map_err(ccl_err)?;
            }
            i += 1;
        }
        if rows.is_empty() {
            continue;
        }
        rows_total += rows.len() as u64 / 2;
        let path = join(&[&links, &d, &key.to_string()]);
        let blob = RaggedLinks {
            link_width: 2,
            groups: vec![rows],
        }
        .encode()
        .map_err(|source| Error::Blob {
            key: path.clone(),
            source,
        })?;
        blobs.write_bytes(&path, &blob, &codecs.codecs(8, true))?;
    }
    blobs.write_group(&links, Map::new())?;
    blobs.write_group(
        &join(&[&links, &d]),
        LinksArray::new(2, delta, Some(rows_total)).to_attributes(),
    )?;
    let records = ccl.len() as u64;
    if records > 0 {
        let group = join(&[level, names::CROSS_CHUNK_LINKS]);
        blobs.write_group(&group, Map::new())?;
        blobs.write_bytes(&ccl_path, &ccl.encode(), &codecs.codecs(8, false))?;
        blobs.write_group(
            &join(&[&group, &d]),
            CrossChunkLinksArray::new(delta, 2, records, sid_ndim).to_attributes(),
        )?;
    }
    Ok((rows_total, records))
}

/// Writes the `+1` links of `fine` (and, when `explicit`, the `-1` links of `coarse`):
/// `parents` gives each fine row's metavertex, `places` each metavertex's (chunk, row).
/// Returns the number of fine → coarse pairs.
pub(crate) fn write_cross_level(
    blobs: &Blobs,
    (fine, coarse): (u32, u32),
    parents: &ParentMap,
    places: &[(ChunkKey, u64)],
    sid_ndim: usize,
    explicit: bool,
    codecs: &CodecChoice,
) -> Result<u64> {
    let mut up: Vec<Pair<'_>> = Vec::new();
    for (key, rows) in &parents.chunks {
        for (r, &g) in rows.iter().enumerate() {
            if g == NO_PARENT {
                continue;
            }
            let Some((ck, cr)) = places.get(g as usize) else {
                return Err(Error::InvalidInput(format!(
                    "pyramid level {coarse}: metavertex {g} was not written"
                )));
            };
            up.push(((key, r as u64), (ck, *cr)));
        }
    }
    let n = up.len() as u64;
    write_side(blobs, &fine.to_string(), 1, &up, sid_ndim, codecs)?;
    if explicit {
        let mut down: Vec<Pair<'_>> = up.into_iter().map(|(a, b)| (b, a)).collect();
        down.sort_by(|x, y| {
            (x.0 .0, x.0 .1, x.1 .0, x.1 .1).cmp(&(y.0 .0, y.0 .1, y.1 .0, y.1 .1))
        });
        write_side(blobs, &coarse.to_string(), -1, &down, sid_ndim, codecs)?;
    }
    Ok(n)
}
