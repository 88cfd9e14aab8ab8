//! The cross-level links of one step, in the reference's layout: at the fine level,
//! `links/+1/<key>` (a ragged blob, one group of rows `(fine_row, coarse_row)`) for the pairs
//! whose chunk keys are equal as tuples, and `cross_chunk_links/+1/data` records
//! `((fine_chunk, fine_row), (coarse_chunk, coarse_row))` for the others; with explicit
//! storage, the same pairs from the coarse side under `-1` at the coarse level.

use std::collections::BTreeMap;

use rayon::prelude::*;
use serde_json::Map;

use crate::blob::{join, Blobs, RECORD_CHUNK_BYTES};
use crate::error::{Error, Result};
use crate::io_pool::window_len;
use crate::layout::cross_chunk::CrossChunkLinks;
use crate::layout::links::RaggedLinks;
use crate::metadata::arrays::{CrossChunkLinksArray, LinksArray};
use crate::metadata::ChunkKey;
use crate::names;
use crate::reader::delta_name;
use crate::writer::{CodecChoice, Places};

pub(crate) use super::parents::{set_parent, ParentMap, NO_PARENT};

/// Writes `rows` (flat `[row here, row there]` pairs) as the ragged blob at `path`, one group
/// of width 2: a chunk's cross-level links in either layout.
pub(super) fn write_pair_rows(
    blobs: &Blobs,
    path: &str,
    rows: Vec<i64>,
    codecs: &[zv_core::metadata::ExtensionMetadata],
) -> Result<()> {
    let blob = RaggedLinks {
        link_width: 2,
        groups: vec![rows],
    }
    .encode()
    .map_err(|source| Error::Blob {
        key: path.to_owned(),
        source,
    })?;
    blobs.write_bytes(path, &blob, codecs)
}

/// One cross-level pair: (chunk, row) at the level written, (chunk, row) at the other.
pub(super) type Pair<'a> = ((&'a ChunkKey, u64), (&'a ChunkKey, u64));

/// The links of one side of a step at level `level` under `delta`, written a window of chunks
/// at a time ([`SideWriter::groups`]): a ragged blob per chunk for the pairs whose two chunk keys are
/// equal, cross-chunk records (streamed into their blob) for the others.
struct SideWriter<'a> {
    blobs: &'a Blobs,
    level: String,
    delta: i32,
    sid_ndim: usize,
    codecs: &'a CodecChoice,
    records: Option<crate::blob::BlobStream<'a>>,
    rows_total: u64,
    records_total: u64,
}

impl<'a> SideWriter<'a> {
    /// A side whose pairs include `records` cross-chunk ones (counted beforehand: the record
    /// blob's size is fixed when it starts).
    fn new(
        blobs: &'a Blobs,
        level: u32,
        delta: i32,
        sid_ndim: usize,
        codecs: &'a CodecChoice,
        records: u64,
        chunk_cap: u64,
    ) -> Result<Self> {
        let level = level.to_string();
        let stream = if records > 0 {
            let path = join(&[
                &level,
                names::CROSS_CHUNK_LINKS,
                &delta_name(delta),
                names::DATA,
            ]);
            let bytes = records * 2 * (sid_ndim as u64 + 1) * 8;
            Some(blobs.stream_bytes(&path, bytes, chunk_cap, &codecs.codecs(8, false))?)
        } else {
            None
        };
        Ok(Self {
            blobs,
            level,
            delta,
            sid_ndim,
            codecs,
            records: stream,
            rows_total: 0,
            records_total: 0,
        })
    }

    /// Writes the pairs the chunks of `items` have at this level (`pairs_of` makes each one's:
    /// its first chunk and its pairs, all with that first chunk, in the order they are
    /// stored): their ragged blobs in parallel, then their cross-chunk records in item order.
    /// The first error in item order is returned.
    fn groups<'p, T: Sync>(
        &mut self,
        items: &[T],
        pairs_of: impl Fn(&T) -> Result<(&'p ChunkKey, Vec<Pair<'p>>)> + Sync,
    ) -> Result<()> {
        let this = &*self;
        let made: Vec<Result<(u64, CrossChunkLinks)>> = items
            .par_iter()
            .map(|item| {
                let (key, pairs) = pairs_of(item)?;
                this.chunk_rows(key, &pairs)
            })
            .collect();
        for m in made {
            let (rows, ccl) = m?;
            self.rows_total += rows;
            if ccl.is_empty() {
                continue;
            }
            self.records_total += ccl.len() as u64;
            let path = self.records_path();
            let stream = self
                .records
                .as_mut()
                .ok_or_else(|| Error::InvalidInput(format!("{path}: more records than counted")))?;
            stream.write(&ccl.encode())?;
        }
        Ok(())
    }

    /// The path of this side's cross-chunk record blob.
    fn records_path(&self) -> String {
        let d = delta_name(self.delta);
        join(&[&self.level, names::CROSS_CHUNK_LINKS, &d, names::DATA])
    }

    /// Writes the ragged blob of the pairs of chunk `key` whose two chunk keys are equal;
    /// returns their number and the others as cross-chunk records.
    fn chunk_rows(&self, key: &ChunkKey, pairs: &[Pair<'_>]) -> Result<(u64, CrossChunkLinks)> {
        let mut rows = Vec::new();
        let mut ccl = CrossChunkLinks::new(2, self.sid_ndim);
        for &((a, ra), (b, rb)) in pairs {
            if a.0 == b.0 {
                rows.extend([ra as i64, rb as i64]);
            } else {
                ccl.push(&[(&a.0, ra), (&b.0, rb)])
                    .map_err(|source| Error::Blob {
                        key: self.records_path(),
                        source,
                    })?;
            }
        }
        let n = rows.len() as u64 / 2;
        if n > 0 {
            let d = delta_name(self.delta);
            let path = join(&[&self.level, names::LINKS, &d, &key.to_string()]);
            write_pair_rows(self.blobs, &path, rows, &self.codecs.codecs(8, true))?;
        }
        Ok((n, ccl))
    }

    /// Ends the side: the record blob's `zarr.json`, then (with `documents`) the group
    /// documents. Returns (rows in ragged blobs, cross-chunk records).
    fn finish(self, documents: bool) -> Result<(u64, u64)> {
        if documents {
            write_links_documents(self.blobs, &self.level, self.delta, self.rows_total)?;
        }
        if let Some(stream) = self.records {
            stream.finish()?;
            let group = join(&[&self.level, names::CROSS_CHUNK_LINKS]);
            self.blobs.write_group(&group, Map::new())?;
            self.blobs.write_group(
                &join(&[&group, &delta_name(self.delta)]),
                CrossChunkLinksArray::new(self.delta, 2, self.records_total, self.sid_ndim)
                    .to_attributes(),
            )?;
        }
        Ok((self.rows_total, self.records_total))
    }
}

/// The documents of `level`'s `links/` group and of its `delta` links (`rows` in all).
pub(crate) fn write_links_documents(
    blobs: &Blobs,
    level: &str,
    delta: i32,
    rows: u64,
) -> Result<()> {
    let links = join(&[level, names::LINKS]);
    blobs.write_group(&links, Map::new())?;
    blobs.write_group(
        &join(&[&links, &delta_name(delta)]),
        LinksArray::new(2, delta, Some(rows)).to_attributes(),
    )
}

/// The ragged `±k` link blobs of one part of a distributed build (no documents: the commit
/// writes them from the parts' row counts). Returns the rows of the `+k` side and of the
/// `−k` side (0 unless `explicit`). A pair whose chunk keys differ (a cross-chunk record,
/// level-global) is an error: distributed builds keep the chunk shape.
pub(crate) fn write_cross_level_blobs(
    blobs: &Blobs,
    levels: (u32, u32),
    parents: &ParentMap,
    places: &Places,
    (sid_ndim, explicit): (usize, bool),
    codecs: &CodecChoice,
) -> Result<[u64; 2]> {
    let sides = write_sides(
        blobs,
        levels,
        parents,
        places,
        (sid_ndim, explicit),
        codecs,
        (RECORD_CHUNK_BYTES, false),
    )?;
    if sides.records > 0 {
        return Err(Error::InvalidInput(format!(
            "pyramid level {}: {} cross-level pairs join chunks of different keys (a distributed build keeps the chunk shape)",
            levels.1, sides.records
        )));
    }
    Ok([sides.up, sides.down])
}

/// What [`write_sides`] wrote: the pairs, the rows of each side's ragged blobs, the
/// cross-chunk records of each side.
struct Sides {
    pairs: u64,
    up: u64,
    down: u64,
    records: u64,
}

/// Writes the `+k` links of `fine` (and, when `explicit`, the `-k` links of `coarse`), `k` =
/// `coarse − fine`: `parents` gives each fine row's metavertex at `coarse`, `places` each
/// metavertex's (chunk, row). Returns the number of fine → coarse pairs. Memory holds a
/// window of chunks' pairs at a time ([`window_len`] fine chunks, or coarse chunks for `-k`,
/// paired and written in parallel), not the step's; the cross-chunk records are streamed in
/// chunk order whatever the threads.
pub(crate) fn write_cross_level(
    blobs: &Blobs,
    (fine, coarse): (u32, u32),
    parents: &ParentMap,
    places: &Places,
    sid_ndim: usize,
    explicit: bool,
    codecs: &CodecChoice,
) -> Result<u64> {
    write_cross_level_chunked(
        blobs,
        (fine, coarse),
        parents,
        places,
        (sid_ndim, explicit),
        codecs,
        RECORD_CHUNK_BYTES,
    )
}

/// [`write_cross_level`] with the record blobs' chunk size.
fn write_cross_level_chunked(
    blobs: &Blobs,
    levels: (u32, u32),
    parents: &ParentMap,
    places: &Places,
    shape: (usize, bool),
    codecs: &CodecChoice,
    chunk_cap: u64,
) -> Result<u64> {
    let sides = write_sides(
        blobs,
        levels,
        parents,
        places,
        shape,
        codecs,
        (chunk_cap, true),
    )?;
    Ok(sides.pairs)
}

/// A step's fine → coarse pairs, made a chunk at a time from each fine row's metavertex
/// (`parents`) and each metavertex's place (`places`, at level `coarse`); one rule for both
/// layouts.
pub(super) struct StepPairs<'a> {
    parents: &'a ParentMap,
    places: &'a Places,
    coarse: u32,
}

/// What one pass over a step's parents finds: the pairs, those whose two chunk keys differ,
/// and per coarse chunk (in key order) the fine chunks with rows in it.
pub(super) struct Census<'a> {
    pub(super) pairs: u64,
    pub(super) records: u64,
    pub(super) children: Vec<(&'a ChunkKey, Vec<usize>)>,
}

impl<'a> StepPairs<'a> {
    pub(super) fn new(parents: &'a ParentMap, places: &'a Places, coarse: u32) -> Self {
        Self {
            parents,
            places,
            coarse,
        }
    }

    /// The number of fine chunks.
    pub(super) fn fine_chunks(&self) -> usize {
        self.parents.len()
    }

    /// The place of metavertex `g`.
    fn place(&self, g: u64) -> Result<(&'a ChunkKey, u64)> {
        self.places.get(g).ok_or_else(|| {
            Error::InvalidInput(format!(
                "pyramid level {}: metavertex {g} was not written",
                self.coarse
            ))
        })
    }

    /// One pass over the parents (see [`Census`]).
    pub(super) fn census(&self) -> Result<Census<'a>> {
        let (mut pairs, mut records) = (0u64, 0u64);
        let mut children: BTreeMap<&ChunkKey, Vec<usize>> = BTreeMap::new();
        for i in 0..self.parents.len() {
            let (key, rows) = (self.parents.key(i), self.parents.rows(i)?);
            for &g in rows.iter().filter(|&&g| g != NO_PARENT) {
                let (ck, _) = self.place(g)?;
                pairs += 1;
                if ck.0 != key.0 {
                    records += 1;
                }
                let list = children.entry(ck).or_default();
                if list.last() != Some(&i) {
                    list.push(i);
                }
            }
        }
        Ok(Census {
            pairs,
            records,
            children: children.into_iter().collect(),
        })
    }

    /// The `+k` pairs of fine chunk `i`, its rows in order.
    pub(super) fn up(&self, i: usize) -> Result<(&'a ChunkKey, Vec<Pair<'a>>)> {
        let (key, rows) = (self.parents.key(i), self.parents.rows(i)?);
        let mut pairs = Vec::with_capacity(rows.len());
        for (r, &g) in rows.iter().enumerate() {
            if g != NO_PARENT {
                pairs.push(((key, r as u64), self.place(g)?));
            }
        }
        Ok((key, pairs))
    }

    /// The `-k` pairs of coarse chunk `ck` (whose fine chunks with rows in it are
    /// `fine_chunks`), sorted (coarse row, fine chunk, fine row), as sorting all of the
    /// step's pairs would order them.
    pub(super) fn down(&self, ck: &'a ChunkKey, fine_chunks: &[usize]) -> Result<Vec<Pair<'a>>> {
        let mut pairs = Vec::new();
        for &i in fine_chunks {
            let (key, rows) = (self.parents.key(i), self.parents.rows(i)?);
            for (r, &g) in rows.iter().enumerate() {
                if g == NO_PARENT {
                    continue;
                }
                let (c, cr) = self.place(g)?;
                if c == ck {
                    pairs.push(((c, cr), (key, r as u64)));
                }
            }
        }
        pairs.sort_unstable();
        Ok(pairs)
    }
}

/// [`write_cross_level_chunked`], with the group documents when `documents`.
fn write_sides(
    blobs: &Blobs,
    (fine, coarse): (u32, u32),
    parents: &ParentMap,
    places: &Places,
    (sid_ndim, explicit): (usize, bool),
    codecs: &CodecChoice,
    (chunk_cap, documents): (u64, bool),
) -> Result<Sides> {
    let step = StepPairs::new(parents, places, coarse);
    // a first pass counts the pairs and the cross-chunk ones (the same on both sides), and
    // notes which fine chunks have parents in each coarse chunk
    let census = step.census()?;
    let records = census.records;
    let k = i32::try_from(coarse - fine)
        .map_err(|_| Error::InvalidInput(format!("levels {fine} and {coarse}")))?;
    let mut up = SideWriter::new(blobs, fine, k, sid_ndim, codecs, records, chunk_cap)?;
    let all: Vec<usize> = (0..step.fine_chunks()).collect();
    for window in all.chunks(window_len()) {
        up.groups(window, |&i| step.up(i))?;
    }
    let (up_rows, _) = up.finish(documents)?;
    let mut down_rows = 0;
    if explicit {
        let mut down = SideWriter::new(blobs, coarse, -k, sid_ndim, codecs, records, chunk_cap)?;
        for window in census.children.chunks(window_len()) {
            down.groups(window, |(ck, fine_chunks)| {
                Ok((*ck, step.down(ck, fine_chunks)?))
            })?;
        }
        down_rows = down.finish(documents)?.0;
    }
    Ok(Sides {
        pairs: census.pairs,
        up: up_rows,
        down: down_rows,
        records,
    })
}

/// Where a pyramid's cross-level links go: the store's own layout, ZV 0.7 ([`write_cross_level`])
/// or ZV 0.9 ([`super::links_v09::write_cross_level_v09`], which needs each level's chunk
/// scale: its chunk shape as a multiple of the root's).
pub(crate) struct CrossLevelLinks<'a> {
    pub(crate) blobs: &'a Blobs,
    /// ZV 0.9: the chunk scale of every level, level 0 first; `None`: ZV 0.7.
    pub(crate) v09_scales: Option<Vec<Vec<i64>>>,
    pub(crate) sid_ndim: usize,
    pub(crate) explicit: bool,
    pub(crate) codecs: &'a CodecChoice,
}

impl CrossLevelLinks<'_> {
    /// Writes the `+k` links of `fine` (and, when explicit, the `-k` links of `coarse`) in
    /// the store's layout; the fine → coarse pairs written.
    pub(crate) fn write(
        &self,
        (fine, coarse): (u32, u32),
        parents: &ParentMap,
        places: &Places,
    ) -> Result<u64> {
        let Some(scales) = &self.v09_scales else {
            return write_cross_level(
                self.blobs,
                (fine, coarse),
                parents,
                places,
                self.sid_ndim,
                self.explicit,
                self.codecs,
            );
        };
        let scale = |l: u32| {
            scales
                .get(l as usize)
                .ok_or_else(|| Error::InvalidInput(format!("pyramid level {l}: no chunk scale")))
        };
        super::links_v09::write_cross_level_v09(
            self.blobs.store(),
            (fine, coarse),
            parents,
            places,
            (scale(fine)?, scale(coarse)?),
            self.explicit,
            self.codecs,
        )
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use zv_core::key::StorePrefix;
    use zv_core::store::{ListableStore, ReadableStore};

    use super::*;

    /// A step of 3 fine chunks (rows 0..n) with parents in 2 coarse chunks, some dropped.
    fn step() -> (ParentMap, Places) {
        let coarse = [ChunkKey(vec![0, 0]), ChunkKey(vec![1, 0])];
        let mut places = Places::default();
        for g in 0..40u64 {
            places.push(&coarse[(g % 2) as usize], g / 2).unwrap();
        }
        let mut rows = BTreeMap::new();
        for (c, key) in [vec![0, 0], vec![1, 0], vec![2, 1]].into_iter().enumerate() {
            let key = ChunkKey(key);
            for r in 0..57u64 {
                let g = (r * 7 + c as u64 * 3) % 41; // 40: dropped
                let g = if g == 40 { NO_PARENT } else { g };
                set_parent(&mut rows, &key, r, g);
            }
        }
        (ParentMap::from_rows(rows), places)
    }

    fn write(chunk_cap: u64) -> (Arc<zv_store_mem::MemoryStore>, u64) {
        let store = Arc::new(zv_store_mem::MemoryStore::new());
        let blobs = Blobs::new(store.clone());
        let (parents, places) = step();
        let codecs = CodecChoice::parse("none").unwrap();
        let n = write_cross_level_chunked(
            &blobs,
            (0, 1),
            &parents,
            &places,
            (2, true),
            &codecs,
            chunk_cap,
        )
        .unwrap();
        (store, n)
    }

    #[test]
    fn records_streamed_in_small_chunks_read_back_as_one_blob() {
        let (whole, n) = write(u64::MAX);
        let (chunked, m) = write(100);
        assert_eq!(n, m);
        assert!(n > 100, "{n} pairs");
        let (wb, cb) = (Blobs::new(whole.clone()), Blobs::new(chunked.clone()));
        for path in ["0/cross_chunk_links/+1/data", "1/cross_chunk_links/-1/data"] {
            let a = wb.read_bytes(path).unwrap().unwrap();
            let b = cb.read_bytes(path).unwrap().unwrap();
            assert!(!a.is_empty(), "{path}");
            assert_eq!(a, b, "{path}");
            let chunks = |s: &zv_store_mem::MemoryStore| {
                s.list_prefix(&StorePrefix::new(format!("{path}/c/")).unwrap())
                    .unwrap()
                    .len()
            };
            assert_eq!(chunks(&whole), 1, "{path}");
            assert!(chunks(&chunked) > 3, "{path}: {} chunks", chunks(&chunked));
        }
        // everything else is written the same
        let keys = whole.list_prefix(&StorePrefix::root()).unwrap();
        for key in keys
            .iter()
            .filter(|k| !k.as_str().contains("cross_chunk_links"))
        {
            assert_eq!(whole.get(key).unwrap(), chunked.get(key).unwrap(), "{key}");
        }
    }

    #[test]
    fn up_and_down_pairs_are_the_inverse_of_each_other() {
        let (store, n) = write(64);
        let blobs = Blobs::new(store);
        let width = 2 * (2 + 1) * 8;
        let pairs = |path: &str| -> Vec<Vec<i64>> {
            let bytes = blobs.read_bytes(path).unwrap().unwrap_or_default();
            let records = bytes.len() / width;
            let ccl = CrossChunkLinks::decode(&bytes, records as u64, 2, 2).unwrap();
            (0..records)
                .map(|r| {
                    let (c0, r0) = ccl.endpoint(r, 0).unwrap();
                    let (c1, r1) = ccl.endpoint(r, 1).unwrap();
                    [c0, &[r0 as i64], c1, &[r1 as i64]].concat()
                })
                .collect()
        };
        let up = pairs("0/cross_chunk_links/+1/data");
        let mut down: Vec<Vec<i64>> = pairs("1/cross_chunk_links/-1/data")
            .into_iter()
            .map(|p| [&p[3..6], &p[0..3]].concat())
            .collect();
        let mut sorted_up = up.clone();
        sorted_up.sort();
        down.sort();
        assert_eq!(sorted_up, down);
        // fine chunk [0, 0] and coarse chunk [0, 0] share a key: those pairs are ragged rows
        assert!((up.len() as u64) < n);
    }
}
