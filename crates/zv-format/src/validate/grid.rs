//! The chunk grids of a ZV 0.9 store: level 1 checks each per-chunk array's grid (a
//! `variable_length_bytes` array of the level's rank, `chunk_grid_origin` of that rank,
//! `nonempty_chunks` keys inside the grid), level 3 checks that `nonempty_chunks` lists
//! exactly the cells the store holds. The arrays are opened through the reader's
//! [`GridArray`](crate::blob::GridArray), so the validator and the reader agree on what a
//! grid is.

use std::collections::BTreeSet;

use super::finding::{Finding, Rule, CHUNK_GRID, NONEMPTY_CHUNKS};
use super::structure::ArrayGroup;
use crate::blob::Blobs;
use crate::metadata::arrays::ZvArray;
use crate::metadata::ChunkKey;

/// At most this many findings per array and rule; the last counts the rest.
const MAX_PER_ARRAY: usize = 20;

/// Level 1: the grid of every per-chunk array in `groups` (one level's arrays). The level's
/// rank is its `vertices` grid's.
pub(crate) fn check_grids(blobs: &Blobs, groups: &[ArrayGroup], out: &mut Vec<Finding>) {
    let mut ordered: Vec<&ArrayGroup> = groups.iter().filter(|g| g.per_chunk).collect();
    ordered.sort_by_key(|g| g.kind != ZvArray::Vertices);
    let mut rank = None;
    for g in ordered {
        let key = g.key();
        let grid = match blobs.grid(&g.path) {
            Ok(Some(grid)) => grid,
            Ok(None) => {
                out.push(Finding::new(
                    &CHUNK_GRID,
                    &key,
                    format!(
                        "`{}` is not an array node (a ZV 0.9 per-chunk array is one \
                         variable_length_bytes array over the level's chunk grid)",
                        g.path
                    ),
                ));
                continue;
            }
            Err(e) => {
                out.push(Finding::new(&CHUNK_GRID, &key, e.to_string()));
                continue;
            }
        };
        let r = grid.shape().len();
        match rank {
            None => rank = Some(r),
            Some(level) if level != r => {
                out.push(Finding::new(
                    &CHUNK_GRID,
                    &key,
                    format!("the array has rank {r}, the level's `vertices` has rank {level}"),
                ));
                continue;
            }
            Some(_) => {}
        }
        let listed = match grid.listed() {
            Ok(listed) => listed.unwrap_or_default(),
            Err(e) => {
                out.push(Finding::new(&CHUNK_GRID, &key, e.to_string()));
                continue;
            }
        };
        let outside: Vec<String> = listed
            .iter()
            .filter(|k| !grid.contains(k))
            .map(|k| {
                format!(
                    "chunk {k} listed in `nonempty_chunks` lies outside the grid \
                     (`chunk_grid_origin` {:?}, shape {:?})",
                    grid.origin(),
                    grid.shape()
                )
            })
            .collect();
        push_capped(&CHUNK_GRID, |_| key.clone(), outside, out);
    }
}

/// Level 3: for every per-chunk array of a level that has `nonempty_chunks`, the listed keys
/// against the cells the store holds. A listed cell that is empty and a stored cell that is
/// not listed are findings naming the cell's store key.
pub(crate) fn check_listings(blobs: &Blobs, groups: &[ArrayGroup], out: &mut Vec<Finding>) {
    for g in groups.iter().filter(|g| g.per_chunk) {
        let Ok(Some(grid)) = blobs.grid(&g.path) else {
            continue; // reported at level 1
        };
        let Ok(Some(listed)) = grid.listed() else {
            continue; // without the attribute, nothing to check; a bad one is level 1's
        };
        let stored: BTreeSet<ChunkKey> = match grid.stored_keys() {
            Ok(k) => k.into_iter().collect(),
            Err(e) => {
                out.push(Finding::new(&NONEMPTY_CHUNKS, g.key(), e.to_string()));
                continue;
            }
        };
        let listed_set: BTreeSet<&ChunkKey> = listed.iter().collect();
        let mut cells: Vec<(ChunkKey, String)> = listed
            .iter()
            .filter(|k| grid.contains(k) && !stored.contains(*k))
            .map(|k| {
                let msg = format!(
                    "chunk {k} is listed in `{}`'s `nonempty_chunks`, but its cell is empty",
                    g.path
                );
                (k.clone(), msg)
            })
            .collect();
        cells.extend(stored.iter().filter(|k| !listed_set.contains(k)).map(|k| {
            let msg = format!(
                "the cell of chunk {k} holds data, but `{}`'s `nonempty_chunks` does not list \
                 it (zarr-vectors 0.9.2 reads only the chunks listed)",
                g.path
            );
            (k.clone(), msg)
        }));
        let (keys, messages): (Vec<ChunkKey>, Vec<String>) = cells.into_iter().unzip();
        push_capped(
            &NONEMPTY_CHUNKS,
            |i| grid.cell_store_key(&keys[i]),
            messages,
            out,
        );
    }
}

/// Pushes `messages` as findings of `rule`, message `i` at `key(i)`, at most
/// [`MAX_PER_ARRAY`]; the last one counts the rest.
fn push_capped(
    rule: &Rule,
    key: impl Fn(usize) -> String,
    messages: Vec<String>,
    out: &mut Vec<Finding>,
) {
    let n = messages.len();
    for (i, m) in messages.into_iter().enumerate() {
        if i + 1 == MAX_PER_ARRAY && n > MAX_PER_ARRAY {
            let m = format!("{m} (and {} more)", n - MAX_PER_ARRAY);
            out.push(Finding::new(rule, key(i), m));
            break;
        }
        out.push(Finding::new(rule, key(i), m));
    }
}
