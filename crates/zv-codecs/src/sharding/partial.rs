//! Partial reads of a shard: the index with one ranged read, then only the inner chunks a
//! region needs, decoded in parallel (an inner chunk that is itself a shard is read partially
//! in turn). Neighbouring inner chunks are read with one ranged read: those that touch, and on
//! stores where a request costs more than bytes, those up to the reader's
//! [`coalesce_gap`](zv_core::codec::ChunkReader::coalesce_gap) apart (the bytes between are
//! read and dropped).

use std::borrow::Cow;

use rayon::prelude::*;
use zv_core::codec::{
    assemble, ArrayBytes, ChunkReader, ChunkRepresentation, CodecError, SubReader,
};
use zv_core::grid::Region;
use zv_core::store::ByteRange;

use super::index::IndexLimits;
use super::{IndexLocation, ShardingCodec, NAME};

/// A stored inner chunk: its coordinates in the shard, its offset and its size in bytes.
type Inner = (Vec<u64>, u64, u64);

/// The longest run of bytes read at once for neighbouring inner chunks (a longer chunk is
/// still read whole, by itself).
const MAX_RUN: u64 = 64 << 20;

/// `chunks` grouped in runs read with one request each: by offset, a chunk joins the run
/// before it when it starts at most `gap` bytes after the run's end and the run stays under
/// [`MAX_RUN`] bytes.
fn runs_of(mut chunks: Vec<Inner>, gap: u64) -> Vec<Vec<Inner>> {
    chunks.sort_by_key(|(_, offset, _)| *offset);
    let mut runs: Vec<(u64, u64, Vec<Inner>)> = Vec::new();
    for chunk in chunks {
        let (offset, end) = (chunk.1, chunk.1.saturating_add(chunk.2));
        match runs.last_mut() {
            Some((start, run_end, run))
                if offset <= run_end.saturating_add(gap)
                    && end.max(*run_end) - *start <= MAX_RUN =>
            {
                *run_end = end.max(*run_end);
                run.push(chunk);
            }
            _ => runs.push((offset, end, vec![chunk])),
        }
    }
    runs.into_iter().map(|(_, _, run)| run).collect()
}

impl ShardingCodec {
    /// The read of a shard's index that a partial decode starts with, and where the index
    /// then lies in the shard when that is known without the shard's length (at its start).
    pub(super) fn index_read(&self) -> (ByteRange, Option<std::ops::Range<u64>>) {
        let size = self.index_size() as u64;
        match self.config().index_location {
            IndexLocation::Start => (
                ByteRange::FromStart {
                    offset: 0,
                    length: Some(size),
                },
                Some(0..size),
            ),
            IndexLocation::End => (ByteRange::Suffix(size), None),
        }
    }

    /// The elements of `region` (shard coordinates) of the shard `reader` reads, or `None` if
    /// the shard is not stored.
    pub(super) fn decode_region(
        &self,
        reader: &dyn ChunkReader,
        region: &Region,
        repr: &ChunkRepresentation,
    ) -> Result<Option<ArrayBytes<'static>>, CodecError> {
        let size = self.index_size() as u64;
        let (range, index_range) = self.index_read();
        let Some(encoded_index) = reader.read(range)? else {
            return Ok(None);
        };
        if encoded_index.len() as u64 != size {
            return Err(CodecError::corrupt(
                NAME,
                format!(
                    "read {} bytes of the {size}-byte index (truncated shard)",
                    encoded_index.len()
                ),
            ));
        }
        let limits = IndexLimits {
            shard_len: None,
            index_range,
            inner_size: None,
        };
        let index = self.decode_index(&encoded_index, &limits)?;
        let stored: Vec<Inner> = self
            .grid()
            .chunks_in(region)
            .filter_map(|c| {
                let (offset, nbytes) = index.entry(self.linear(&c))?;
                Some((c, offset, nbytes))
            })
            .collect();
        // inner chunks read in part themselves (nested shards) one by one; whole ones by runs
        let (nested, whole): (Vec<Inner>, Vec<Inner>) = stored
            .into_iter()
            .partition(|(c, _, _)| self.reads_in_part(c, region));
        let mut pieces: Vec<(Region, ArrayBytes<'static>)> = nested
            .par_iter()
            .map(|(c, offset, nbytes)| self.read_inner(reader, c, *offset, *nbytes, region))
            .collect::<Result<_, _>>()?;
        let runs = runs_of(whole, reader.coalesce_gap());
        let decoded: Vec<Vec<(Region, ArrayBytes<'static>)>> = runs
            .par_iter()
            .map(|run| self.read_run(reader, run))
            .collect::<Result<_, _>>()?;
        pieces.extend(decoded.into_iter().flatten());
        if let [(b, _)] = pieces.as_slice() {
            if b == region {
                // One inner chunk (or part of one) is exactly the region: no assembly.
                return Ok(pieces.pop().map(|(_, d)| d));
            }
        }
        let refs: Vec<(&Region, &ArrayBytes<'_>)> = pieces.iter().map(|(b, d)| (b, d)).collect();
        assemble(region, repr, &refs).map(Some)
    }

    /// Whether inner chunk `coords` is read in part: its codecs decode part of it and `region`
    /// needs only part.
    fn reads_in_part(&self, coords: &[u64], region: &Region) -> bool {
        self.inner.supports_partial_decode()
            && self
                .grid()
                .chunk_box(coords)
                .is_some_and(|b| b.intersect(region).is_some_and(|p| p != b))
    }

    /// Reads the whole inner chunks of `run` with one ranged read (their span) and decodes
    /// each, with the box (shard coordinates) it covers.
    fn read_run(
        &self,
        reader: &dyn ChunkReader,
        run: &[Inner],
    ) -> Result<Vec<(Region, ArrayBytes<'static>)>, CodecError> {
        let vanished = || CodecError::corrupt(NAME, "the shard vanished while it was read");
        let start = run.iter().map(|(_, o, _)| *o).min().unwrap_or(0);
        let end = run
            .iter()
            .map(|(_, o, n)| o.saturating_add(*n))
            .max()
            .unwrap_or(start);
        let bytes = reader
            .read(ByteRange::FromStart {
                offset: start,
                length: Some(end - start),
            })?
            .ok_or_else(vanished)?;
        if bytes.len() as u64 != end - start {
            return Err(CodecError::corrupt(
                NAME,
                format!(
                    "read {} bytes of the inner chunks at {start}..{end} (truncated shard)",
                    bytes.len()
                ),
            ));
        }
        run.iter()
            .map(|(c, offset, nbytes)| {
                let chunk_box = self
                    .grid()
                    .chunk_box(c)
                    .ok_or_else(|| CodecError::Overflow(format!("inner chunk {c:?}")))?;
                // within the bytes read: offset ≥ start and offset + nbytes ≤ end
                let at = usize::try_from(offset - start)
                    .map_err(|_| CodecError::Overflow(format!("inner chunk {c:?}")))?;
                let n = usize::try_from(*nbytes)
                    .map_err(|_| CodecError::Overflow(format!("inner chunk {c:?}")))?;
                let piece = bytes.get(at..at + n).ok_or_else(vanished)?;
                let data = self.inner.decode(Cow::Borrowed(piece))?;
                Ok((chunk_box, data.into_owned()))
            })
            .collect()
    }

    /// The part of inner chunk `coords` (stored at `offset`, `nbytes` bytes) that `region`
    /// needs, with the box (shard coordinates) it covers.
    fn read_inner(
        &self,
        reader: &dyn ChunkReader,
        coords: &[u64],
        offset: u64,
        nbytes: u64,
        region: &Region,
    ) -> Result<(Region, ArrayBytes<'static>), CodecError> {
        let vanished = || CodecError::corrupt(NAME, "the shard vanished while it was read");
        let chunk_box = self
            .grid()
            .chunk_box(coords)
            .ok_or_else(|| CodecError::Overflow(format!("inner chunk {coords:?}")))?;
        let sub = SubReader::new(reader, offset, nbytes);
        let part = chunk_box
            .intersect(region)
            .unwrap_or_else(|| chunk_box.clone());
        if self.inner.supports_partial_decode() && part != chunk_box {
            let local: Vec<u64> = part
                .start()
                .iter()
                .zip(chunk_box.start())
                .map(|(p, c)| p - c)
                .collect();
            let local = Region::new(local, part.shape().to_vec())
                .map_err(|e| CodecError::corrupt(NAME, e.to_string()))?;
            let data = self
                .inner
                .partial_decode(&sub, &local)?
                .ok_or_else(vanished)?;
            return Ok((part, data));
        }
        let whole = ByteRange::FromStart {
            offset: 0,
            length: None,
        };
        let bytes = sub.read(whole)?.ok_or_else(vanished)?;
        let data = self.inner.decode(Cow::Owned(bytes.into()))?;
        Ok((chunk_box, data.into_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(i: u64, offset: u64, n: u64) -> Inner {
        (vec![i], offset, n)
    }

    #[test]
    fn neighbours_within_the_gap_share_a_run() {
        let chunks = vec![c(2, 100, 50), c(0, 0, 10), c(1, 10, 90), c(3, 400, 5)];
        // touching ranges only
        let runs = runs_of(chunks.clone(), 0);
        let ids: Vec<Vec<u64>> = runs
            .iter()
            .map(|r| r.iter().map(|x| x.0[0]).collect())
            .collect();
        assert_eq!(ids, vec![vec![0, 1, 2], vec![3]]);
        // a gap of 250 bytes joins the last
        let runs = runs_of(chunks, 250);
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].len(), 4);
    }

    #[test]
    fn a_run_stays_under_its_bound() {
        let big = MAX_RUN / 2 + 1;
        let runs = runs_of(
            vec![c(0, 0, big), c(1, big, big), c(2, 2 * big, 1)],
            u64::MAX,
        );
        assert_eq!(runs.len(), 2, "{runs:?}");
        // a chunk longer than the bound is a run of its own
        let runs = runs_of(vec![c(0, 0, 2 * MAX_RUN)], 0);
        assert_eq!(runs.len(), 1);
    }
}
