//! The per-chunk vertex blobs, written in parallel at finish: each chunk's spilled records
//! sorted into fragments (bins, objects, skeleton trees or polyline pieces), then its
//! `vertices`, `vertex_fragments`, vertex attribute and fragment attribute blobs.

use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use super::columns::FinishedColumn;
use super::objects::DenseAttribute;
use super::skeleton::SkeletonOrder;
use super::spill::{SpillHeader, HEADER_LEN};
use super::ZvWriter;
use crate::blob::join;
use crate::error::{AttributeKind, Error, Result};
use crate::layout::fragment_index::FragmentIndex;
use crate::metadata::ChunkKey;
use crate::names;

/// The fragments of one chunk, as the later stages need them.
#[derive(Debug, Default)]
struct ChunkFragments {
    /// The object of each fragment (stores with objects).
    objects: Vec<u64>,
    /// The row ranges of the fragments (linked geometries).
    spans: Vec<(u64, u64)>,
    /// The chunk's vertex rows.
    rows: u64,
}

/// What the chunk blobs tell the later stages: each chunk's fragments and, for linked
/// geometries, where every vertex went.
#[derive(Debug)]
pub(super) struct ChunkBlobs {
    chunks: Vec<ChunkFragments>,
    /// `chunk index << 32 | row` of every vertex, by global index (linked geometries and
    /// pyramid levels).
    places: Vec<AtomicU64>,
}

impl ChunkBlobs {
    /// The vertex rows written.
    pub(super) fn rows(&self) -> u64 {
        self.chunks.iter().map(|c| c.rows).sum()
    }

    /// The object of each fragment of chunk `ci` (stores with objects, but polylines).
    pub(super) fn objects(&self, ci: usize) -> &[u64] {
        &self.chunks[ci].objects
    }

    /// The vertex rows of chunk `ci`.
    pub(super) fn chunk_rows(&self, ci: usize) -> u64 {
        self.chunks[ci].rows
    }

    /// The number of fragments of chunk `ci` (linked geometries).
    pub(super) fn fragments(&self, ci: usize) -> usize {
        self.chunks[ci].spans.len()
    }

    /// The fragment holding row `row` of chunk `ci` (fragments are consecutive ranges).
    pub(super) fn fragment_of(&self, ci: usize, row: u64) -> u32 {
        self.chunks[ci]
            .spans
            .partition_point(|&(_, end)| end <= row) as u32
    }

    /// `chunk index << 32 | row` of every vertex by global index (linked geometries and
    /// pyramid levels), in the table's own allocation.
    pub(super) fn into_places(self) -> Vec<u64> {
        self.places.into_iter().map(AtomicU64::into_inner).collect()
    }

    /// The chunk index and row of vertex `g` (linked geometries and pyramid levels).
    pub(super) fn place(&self, g: u64) -> (usize, u64) {
        let v = self.places[g as usize].load(Ordering::Relaxed);
        ((v >> 32) as usize, v & 0xFFFF_FFFF)
    }
}

/// The records of `raw` (`len` bytes each) copied into the order `order` gives (the record
/// each position takes), in one pass over `raw` in address order.
///
/// The sorted order is random within a chunk, and the records were written long before (when
/// they were kept), so reading them in that order misses the cache on almost every record;
/// a pass in address order is streamed from memory by the hardware prefetcher, and its
/// writes land in a buffer of the chunk's size that stays in the cache. Every column is then
/// read from the copy in order (the suite's 1M-point write: about 10% less time at finish,
/// both ways in one process, 20–30 repetitions each). `None` when `order` is not a
/// permutation of the records.
fn in_order(raw: &[u8], order: &[u32], len: usize) -> Option<Vec<u8>> {
    let n = order.len();
    if len == 0 || n.checked_mul(len) != Some(raw.len()) || u32::try_from(n).is_err() {
        return None;
    }
    // the position of each record
    let mut at = vec![u32::MAX; n];
    for (pos, &i) in order.iter().enumerate() {
        let slot = at.get_mut(i as usize)?;
        if *slot != u32::MAX {
            return None; // a record twice
        }
        *slot = pos as u32;
    }
    let mut out = vec![0u8; raw.len()];
    for (rec, &pos) in raw.chunks_exact(len).zip(&at) {
        let p = pos as usize * len;
        crate::short_copy::copy(&mut out[p..p + len], rec);
    }
    Some(out)
}

/// Sorts a chunk's records into fragments: by fragment, then (skeletons) by DFS rank, else in
/// arrival order, which is the order within the fragment.
fn sort_records(recs: &mut Vec<&[u8]>, skeleton: Option<&SkeletonOrder>) {
    let fragment = |r: &[u8]| SpillHeader::fragment_of(r);
    if let Some(s) = skeleton {
        // DFS ranks are unique: the order is total
        recs.sort_unstable_by_key(|r| (fragment(r), s.rank(SpillHeader::decode(r).vertex)));
        return;
    }
    if recs.windows(2).all(|w| fragment(w[0]) <= fragment(w[1])) {
        return; // polylines: pieces are numbered as they start
    }
    let (lo, hi) = recs.iter().fold((u64::MAX, 0), |(lo, hi), r| {
        let f = fragment(r);
        (lo.min(f), hi.max(f))
    });
    if hi - lo <= 2 * recs.len() as u64 {
        // a counting sort over the fragments (stable)
        let mut start = vec![0usize; (hi - lo) as usize + 2];
        for r in recs.iter() {
            start[(fragment(r) - lo) as usize + 1] += 1;
        }
        for i in 1..start.len() {
            start[i] += start[i - 1];
        }
        let mut out: Vec<&[u8]> = vec![&[]; recs.len()];
        for r in recs.iter() {
            let slot = &mut start[(fragment(r) - lo) as usize];
            out[*slot] = r;
            *slot += 1;
        }
        *recs = out;
        return;
    }
    // (fragment, arrival index) pairs are unique: sorting them is the stable sort by fragment
    let mut keyed: Vec<(u64, u32)> = recs
        .iter()
        .enumerate()
        .map(|(i, r)| (fragment(r), i as u32))
        .collect();
    keyed.sort_unstable();
    *recs = keyed.iter().map(|&(_, i)| recs[i as usize]).collect();
}

/// The fragments of every chunk, found before the chunk blobs and the object index are
/// written: the object of each fragment of each chunk (stores with objects, but polylines)
/// and, while the records are all in memory, each chunk's records in fragment order.
#[derive(Debug, Default)]
pub(super) struct SortedChunks {
    /// The object of each fragment, by chunk (empty: not found this way).
    pub(super) objects: Vec<Vec<u64>>,
    /// By chunk, its record numbers in fragment order and the vertex count of each fragment
    /// (empty: found as the chunk is written).
    known: Vec<(Vec<u32>, Vec<u64>)>,
}

/// What every chunk's writing shares.
struct ChunkContext<'a> {
    skeleton: Option<&'a SkeletonOrder>,
    columns: &'a [FinishedColumn],
    fragment_columns: &'a [DenseAttribute<'a>],
    /// Polylines with fragment attributes: the object of each piece of each chunk.
    owners: Vec<Vec<u64>>,
    places: Vec<AtomicU64>,
    /// Each chunk's records in fragment order and its fragments' vertex counts, when known
    /// ([`SortedChunks`]).
    sorted: Option<&'a SortedChunks>,
}

impl ZvWriter {
    /// The object of each fragment of each chunk, for the object index, found before the
    /// chunk blobs are written (in parallel); none for polylines (their pieces are known) and
    /// stores without objects. While every record is held in memory, each chunk's sorted
    /// order is kept too, so that the chunk blobs do not sort again.
    pub(super) fn fragment_objects(
        &self,
        skeleton: Option<&SkeletonOrder>,
    ) -> Result<SortedChunks> {
        if !self.has_objects() || self.opts.geometry.is_sequential() {
            return Ok(SortedChunks::default());
        }
        let keep_orders = !self.spill.spilled();
        let len = self.record_len();
        type Sorted = (Vec<u64>, (Vec<u32>, Vec<u64>));
        let sorted: Vec<Sorted> = (0..self.spill.keys().len())
            .into_par_iter()
            .map(|ci| {
                let raw = self.spill.read(ci)?;
                let mut recs: Vec<&[u8]> = raw.chunks_exact(len).collect();
                sort_records(&mut recs, skeleton);
                let (counts, fragments) = self.fragments(&recs, skeleton);
                if !keep_orders {
                    return Ok((fragments.objects, Default::default()));
                }
                let base = raw.as_ptr() as usize;
                let order = recs
                    .iter()
                    .map(|r| ((r.as_ptr() as usize - base) / len.max(1)) as u32)
                    .collect();
                Ok((fragments.objects, (order, counts)))
            })
            .collect::<Result<_>>()?;
        let (objects, known): (Vec<_>, Vec<_>) = sorted.into_iter().unzip();
        Ok(SortedChunks {
            objects,
            known: if keep_orders { known } else { Vec::new() },
        })
    }

    /// Writes every chunk's vertex blobs, in parallel (`sorted`: the chunks' fragments when
    /// found before, else `None`).
    pub(super) fn write_chunk_blobs(
        &self,
        skeleton: Option<&SkeletonOrder>,
        columns: &[FinishedColumn],
        fragment_columns: &[DenseAttribute<'_>],
        sorted: Option<&SortedChunks>,
    ) -> Result<ChunkBlobs> {
        let keys = self.spill.keys();
        let owners = if self.opts.geometry.is_sequential() && !fragment_columns.is_empty() {
            let segments = self.spill.chunks().map(|(_, c)| c.segments);
            self.polylines.owners(segments)
        } else {
            Vec::new()
        };
        let places = if self.tracks_places() {
            (0..self.n_vertices).map(|_| AtomicU64::new(0)).collect()
        } else {
            Vec::new()
        };
        let ctx = ChunkContext {
            skeleton,
            columns,
            fragment_columns,
            owners,
            places,
            sorted: sorted.filter(|s| !s.known.is_empty()),
        };
        let chunks = keys
            .par_iter()
            .enumerate()
            .map(|(ci, key)| self.write_chunk(ci, key, &ctx))
            .collect::<Result<_>>()?;
        Ok(ChunkBlobs {
            chunks,
            places: ctx.places,
        })
    }

    /// The blobs of chunk `ci`.
    fn write_chunk(
        &self,
        ci: usize,
        key: &ChunkKey,
        ctx: &ChunkContext<'_>,
    ) -> Result<ChunkFragments> {
        let raw = self.spill.read(ci)?;
        let len = self.record_len();
        let ordered;
        let (recs, counts, mut fragments) = match ctx.sorted {
            Some(sorted) => {
                let (order, counts) = &sorted.known[ci];
                // the order was made from these records: anything else is the writer's fault
                ordered = in_order(&raw, order, len).ok_or_else(|| {
                    Error::InvalidInput(format!(
                        "{}: the sorted order of chunk {key} does not match its records",
                        self.level
                    ))
                })?;
                let recs: Vec<&[u8]> = ordered.chunks_exact(len).collect();
                let mut spans = Vec::with_capacity(counts.len());
                let mut start = 0;
                for &c in counts {
                    spans.push((start, start + c));
                    start += c;
                }
                let fragments = ChunkFragments {
                    objects: sorted.objects[ci].clone(),
                    spans,
                    rows: 0,
                };
                (recs, Cow::Borrowed(counts.as_slice()), fragments)
            }
            None => {
                let mut recs: Vec<&[u8]> = raw.chunks_exact(len).collect();
                sort_records(&mut recs, ctx.skeleton);
                let (counts, fragments) = self.fragments(&recs, ctx.skeleton);
                (recs, Cow::Owned(counts), fragments)
            }
        };
        let name = key.to_string();
        self.write_vertices(&name, &recs, &counts)?;
        let base = HEADER_LEN + self.grid.vertex_bytes();
        for c in ctx.columns {
            let cells = recs.iter().map(|r| c.cell(r, base));
            let path = join(&[&self.level, names::VERTEX_ATTRIBUTES, &c.name, &name]);
            self.write_rows(&path, &c.encode(cells))?;
        }
        // fragment attributes: the value of each fragment's object
        let owners = if self.opts.geometry.is_sequential() {
            ctx.owners.get(ci).map_or(&[][..], Vec::as_slice)
        } else {
            &fragments.objects
        };
        for f in ctx.fragment_columns {
            let rows = f
                .rows
                .gather(owners.iter().copied())
                .map_err(|e| Error::attribute(AttributeKind::Fragment, f.name, e.to_string()))?;
            self.write_rows(
                &join(&[&self.level, names::FRAGMENT_ATTRIBUTES, f.name, &name]),
                &rows,
            )?;
        }
        if self.tracks_places() {
            for (i, r) in recs.iter().enumerate() {
                ctx.places[SpillHeader::decode(r).vertex as usize]
                    .store(((ci as u64) << 32) | i as u64, Ordering::Relaxed);
            }
        }
        if !self.linked() {
            fragments.spans = Vec::new();
        }
        fragments.rows = recs.len() as u64;
        Ok(fragments)
    }

    /// The vertex count of each fragment of sorted records, and the fragments: one per bin
    /// (point clouds without objects), else one per run of records of the same object (and
    /// skeleton tree).
    fn fragments(
        &self,
        recs: &[&[u8]],
        skeleton: Option<&SkeletonOrder>,
    ) -> (Vec<u64>, ChunkFragments) {
        let mut out = ChunkFragments::default();
        if !self.has_objects() {
            let nbins = self.grid.bins() as usize;
            let mut per_bin = vec![0u64; nbins];
            for r in recs {
                per_bin[(SpillHeader::fragment_of(r) as usize).min(nbins - 1)] += 1;
            }
            return (per_bin, out);
        }
        // the fragment of a record: its object (skeletons: object and tree)
        let group_key = |r: &[u8]| {
            let h = SpillHeader::decode(r);
            (h.fragment, skeleton.map_or(0, |s| s.tree(h.vertex)))
        };
        let mut counts = Vec::new();
        let mut i = 0;
        while i < recs.len() {
            let k = group_key(recs[i]);
            let mut j = i + 1;
            while j < recs.len() && group_key(recs[j]) == k {
                j += 1;
            }
            out.objects.push(k.0);
            out.spans.push((i as u64, j as u64));
            counts.push((j - i) as u64);
            i = j;
        }
        (counts, out)
    }

    /// Writes a chunk's `vertices` and `vertex_fragments` blobs.
    fn write_vertices(&self, name: &str, recs: &[&[u8]], counts: &[u64]) -> Result<()> {
        let vbytes = self.grid.vertex_bytes();
        // room to frame the blob in place as a grid cell (ZV 0.9)
        let mut v = Vec::with_capacity(recs.len() * vbytes + crate::blob::CELL_HEADROOM);
        for r in recs {
            crate::short_copy::append(&mut v, &r[HEADER_LEN..HEADER_LEN + vbytes]);
        }
        self.blobs.write_vec(
            &join(&[&self.level, names::VERTICES, name]),
            v,
            &self.codecs(self.grid.vsize),
        )?;
        let fi = FragmentIndex::consecutive(counts).map_err(|source| Error::Blob {
            key: name.to_owned(),
            source,
        })?;
        self.blobs.write_vec(
            &join(&[&self.level, names::VERTEX_FRAGMENTS, name]),
            fi.encode(),
            &self.codecs(8),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::in_order;

    #[test]
    fn records_are_copied_into_the_sorted_order() {
        let len = 3;
        let raw: Vec<u8> = (0..15u8).collect(); // records 0..5 of 3 bytes
        let order = [3u32, 0, 4, 1, 2];
        let expected: Vec<u8> = order
            .iter()
            .flat_map(|&i| raw[i as usize * len..(i as usize + 1) * len].to_vec())
            .collect();
        assert_eq!(in_order(&raw, &order, len), Some(expected));
        assert_eq!(in_order(&[], &[], len), Some(Vec::new()));
    }

    #[test]
    fn an_order_that_is_not_a_permutation_is_refused() {
        let raw: Vec<u8> = (0..12u8).collect();
        assert_eq!(in_order(&raw, &[0, 1, 1, 2], 3), None); // a record twice
        assert_eq!(in_order(&raw, &[0, 1, 2, 4], 3), None); // past the records
        assert_eq!(in_order(&raw, &[0, 1, 2], 3), None); // fewer positions than records
        assert_eq!(in_order(&raw, &[0, 1, 2, 3], 0), None);
    }
}
