//! Region reads: each chunk the region touches is decoded whole, or, when the codec pipeline
//! decodes partially (`sharding_indexed`) and the region covers only part of the chunk, only
//! the part the region needs is read (through byte ranges) and decoded.

use std::borrow::Cow;
use std::sync::{Mutex, PoisonError};

use bytes::Bytes;
use rayon::prelude::*;

use super::Array;
use crate::codec::{ArrayBytes, CodecError, StoreChunkReader};
use crate::error::{Error, Result};
use crate::grid::{box_runs, Region};
use crate::key::StoreKey;

/// What one chunk contributes to a fixed-size region read (see [`Array::fetch_chunk`]).
enum Fetched {
    /// Stored bytes of a whole chunk (its box, its key), to decode (to pieces where the codecs
    /// can) and copy.
    Encoded(Region, StoreKey, Bytes),
    /// A chunk that is not stored (its box, its key): the fill value.
    Missing(Region, StoreKey),
    /// Decoded elements covering the box.
    Decoded(Region, ArrayBytes<'static>),
}

/// Where `part` starts within the box `source` and within `region`.
fn offsets_in(part: &Region, source: &Region, region: &Region) -> (Vec<u64>, Vec<u64>) {
    let rel = |origin: &[u64]| -> Vec<u64> {
        part.start()
            .iter()
            .zip(origin)
            .map(|(p, o)| p - o)
            .collect()
    };
    (rel(source.start()), rel(region.start()))
}

impl Array {
    /// The decoded elements of chunk `coords` needed for `region`, with the box (array
    /// coordinates) they cover: the whole chunk (one store read), or, when the pipeline decodes
    /// partially and `region` covers only part of the chunk, just that part (byte-range reads).
    fn retrieve_chunk_part(
        &self,
        coords: &[u64],
        region: &Region,
    ) -> Result<(Region, ArrayBytes<'static>)> {
        let chunk_box = self.grid.chunk_box(coords);
        let in_array = self.grid.chunk_region(coords);
        let part = in_array.as_ref().and_then(|r| r.intersect(region));
        if let (true, Some(chunk_box), Some(in_array), Some(part)) = (
            self.chain.supports_partial_decode(),
            &chunk_box,
            &in_array,
            &part,
        ) {
            if part != in_array {
                let key = self.chunk_key(coords)?;
                let chunk_err = |source| Error::Chunk {
                    key: key.to_string(),
                    source,
                };
                let in_chunk: Vec<u64> = part
                    .start()
                    .iter()
                    .zip(chunk_box.start())
                    .map(|(p, c)| p - c)
                    .collect();
                let local =
                    Region::new(in_chunk, part.shape().to_vec()).map_err(|e| self.region_err(e))?;
                let reader = StoreChunkReader::new(self.store.as_ref(), &key);
                let data = match self
                    .chain
                    .partial_decode(&reader, &local)
                    .map_err(chunk_err)?
                {
                    Some(d) => d,
                    None => {
                        let repr = self
                            .chain
                            .decoded_representation()
                            .with_shape(part.shape().to_vec())
                            .map_err(chunk_err)?;
                        ArrayBytes::fill(&repr).map_err(chunk_err)?
                    }
                };
                return Ok((part.clone(), data));
            }
        }
        let source = chunk_box.unwrap_or_else(|| Region::whole(&[]));
        Ok((source, self.retrieve_chunk(coords)?))
    }

    /// What chunk `coords` contributes to `region`: its stored bytes (one read), to be decoded
    /// (to pieces where the codecs can: `sharding_indexed`'s inner chunks) and copied straight
    /// into the result, unless the codecs decode partially and `region` covers only part of
    /// the chunk: then the decoded part [`Array::retrieve_chunk_part`] gives.
    fn fetch_chunk(&self, coords: &[u64], region: &Region) -> Result<Fetched> {
        let chunk_box = self.grid.chunk_box(coords);
        let whole = !self.chain.supports_partial_decode()
            || self
                .grid
                .chunk_region(coords)
                .is_some_and(|r| r.intersect(region).as_ref() == Some(&r));
        if let (true, Some(chunk_box)) = (whole, chunk_box) {
            self.check_coords(coords)?;
            let key = self.chunk_key(coords)?;
            return Ok(match self.store.get_capped(&key, self.chunk_cap)? {
                Some(bytes) => Fetched::Encoded(chunk_box, key, bytes),
                None => Fetched::Missing(chunk_box, key),
            });
        }
        self.retrieve_chunk_part(coords, region)
            .map(|(b, d)| Fetched::Decoded(b, d))
    }

    /// The elements of `region`, in C order.
    pub fn retrieve_region(&self, region: &Region) -> Result<ArrayBytes<'static>> {
        region
            .check_within(self.shape())
            .map_err(|e| self.region_err(e))?;
        let n = usize::try_from(region.num_elements().unwrap_or(u64::MAX)).map_err(|_| {
            Error::InvalidInput {
                path: self.path.to_string(),
                reason: format!("region {region} is too large"),
            }
        })?;
        let too_large = |what: &str| Error::InvalidInput {
            path: self.path.to_string(),
            reason: format!("region {region} is too large to hold in memory ({what})"),
        };
        // The result is allocated (fallibly) before any chunk is read or decoded.
        let mut out_fixed = Vec::new();
        let mut out_elements: Vec<&[u8]> = Vec::new();
        match self.data_type().size() {
            Some(es) => {
                let total = n
                    .checked_mul(es)
                    .ok_or_else(|| too_large("size overflows"))?;
                // Zeroed by the allocator: fresh pages are zeroed by the kernel when the
                // decoded data first writes them, not once more here.
                out_fixed = crate::zeroed::try_zeroed_bytes(total)
                    .ok_or_else(|| too_large(&format!("{total} bytes")))?;
            }
            None => {
                out_elements
                    .try_reserve_exact(n)
                    .map_err(|_| too_large(&format!("{n} elements")))?;
                out_elements.resize(n, &[]);
            }
        }
        match self.data_type().size() {
            Some(es) => {
                let mut out = out_fixed;
                self.read_fixed_bands(region, es, &mut out)?;
                Ok(ArrayBytes::Fixed(Cow::Owned(out)))
            }
            None => {
                let decoded: Vec<(Vec<u64>, Region, ArrayBytes<'static>)> = self
                    .grid
                    .chunks_in(region)
                    .par_bridge()
                    .map(|c| self.retrieve_chunk_part(&c, region).map(|(b, d)| (c, b, d)))
                    .collect::<Result<_>>()?;
                let mut elements = out_elements;
                for (coords, source, data) in &decoded {
                    self.copy_chunk_part(
                        coords,
                        region,
                        |so, doff, len| {
                            for i in 0..len {
                                match (data.element(so + i), elements.get_mut(doff + i)) {
                                    (Some(e), Some(slot)) => *slot = e,
                                    _ => return false,
                                }
                            }
                            true
                        },
                        source,
                    )?;
                }
                Ok(ArrayBytes::from_elements(elements))
            }
        }
    }

    /// Decodes the chunks `region` touches and copies their elements (`es` bytes each) into
    /// `out`, the region in C order, zeroed on entry (missing chunks whose fill value is zero
    /// are not copied). The work goes by band: the chunks sharing their first
    /// grid coordinate cover a contiguous run of rows of the region, so each band's part of
    /// `out` is a slice of its own, and bands are decoded and copied in parallel, each holding
    /// only its own decoded chunks.
    fn read_fixed_bands(&self, region: &Region, es: usize, out: &mut [u8]) -> Result<()> {
        let bad = || Error::InvalidInput {
            path: self.path.to_string(),
            reason: format!("region {region} does not match the chunk grid"),
        };
        let row_elems = region.shape().iter().skip(1).product::<u64>();
        let row_elems = usize::try_from(row_elems).map_err(|_| bad())?;
        // (first row of the band within the region, rows, chunk coordinates)
        let mut bands: Vec<(usize, usize, Vec<Vec<u64>>)> = Vec::new();
        for c in self.grid.chunks_in(region) {
            match bands.last_mut() {
                Some((_, _, coords)) if coords.first().and_then(|f| f.first()) == c.first() => {
                    coords.push(c)
                }
                _ => {
                    let (first, rows) =
                        match self.grid.chunk_region(&c).and_then(|r| r.intersect(region)) {
                            Some(part) if region.ndim() > 0 => {
                                (part.start()[0] - region.start()[0], part.shape()[0])
                            }
                            _ => (0, 1),
                        };
                    let first = usize::try_from(first).map_err(|_| bad())?;
                    let rows = usize::try_from(rows).map_err(|_| bad())?;
                    bands.push((first, rows, vec![c]));
                }
            }
        }
        let row_bytes = row_elems.checked_mul(es).ok_or_else(bad)?;
        let mut work = Vec::with_capacity(bands.len());
        let mut rest = out;
        let mut consumed = 0usize;
        for (first, rows, coords) in bands {
            if first != consumed {
                return Err(bad());
            }
            let len = rows.checked_mul(row_bytes).ok_or_else(bad)?;
            if len > rest.len() {
                return Err(bad());
            }
            let (slice, tail) = rest.split_at_mut(len);
            rest = tail;
            consumed += rows;
            work.push((first * row_elems, slice, coords));
        }
        // A band's chunks are fetched a few at a time (as many as there are threads), so
        // that a band holds few stored chunks at once however wide the region is.
        let group = rayon::current_num_threads().max(1);
        work.into_par_iter().try_for_each(|(base, dst, coords)| {
            for coords in coords.chunks(group) {
                self.copy_group(region, es, base, dst, coords)?;
            }
            Ok(())
        })
    }

    /// Fetches the chunks `coords` (in parallel) and copies their parts of `region` into
    /// `dst`, the rows of a band starting at element `base` of the region. Chunks whose codecs
    /// decode to pieces have each piece copied as soon as it is decoded.
    fn copy_group(
        &self,
        region: &Region,
        es: usize,
        base: usize,
        dst: &mut [u8],
        coords: &[Vec<u64>],
    ) -> Result<()> {
        let repr = self.chain.decoded_representation();
        let zero_fill = repr.fill_value().as_bytes().iter().all(|&b| b == 0);
        let fetched: Vec<Fetched> = coords
            .par_iter()
            .map(|c| self.fetch_chunk(c, region))
            .collect::<Result<_>>()?;
        // Pieces are decoded in parallel; each is copied under the band's lock (the copy is
        // short next to the decoding, and the band's rows interleave the pieces).
        let dst = Mutex::new(dst);
        for (c, f) in coords.iter().zip(fetched) {
            let copy = |source: &Region, data: &ArrayBytes<'_>| -> Result<()> {
                let ArrayBytes::Fixed(src) = data else {
                    return Ok(());
                };
                let mut dst = dst.lock().unwrap_or_else(PoisonError::into_inner);
                self.copy_chunk_part(
                    c,
                    region,
                    |so, doff, len| {
                        let (s, l) = (so * es, len * es);
                        let Some(d) = doff.checked_sub(base).map(|d| d * es) else {
                            return false;
                        };
                        match (src.get(s..s + l), dst.get_mut(d..d + l)) {
                            (Some(a), Some(b)) => {
                                b.copy_from_slice(a);
                                true
                            }
                            _ => false,
                        }
                    },
                    source,
                )
            };
            match &f {
                Fetched::Decoded(b, d) => copy(b, d)?,
                Fetched::Encoded(chunk_box, key, bytes) => {
                    self.copy_pieces(chunk_box, key, bytes, &copy)?
                }
                Fetched::Missing(..) if zero_fill => {}
                Fetched::Missing(chunk_box, key) => {
                    let fill = ArrayBytes::fill(repr).map_err(|source| Error::Chunk {
                        key: key.to_string(),
                        source,
                    })?;
                    copy(chunk_box, &fill)?
                }
            }
        }
        Ok(())
    }

    /// Decodes a stored chunk at `chunk_box` and gives `copy` its pieces (array coordinates),
    /// borrowed from `bytes` where the codecs allow: its codecs' pieces, each as soon as it is
    /// decoded, else the whole decoded chunk.
    fn copy_pieces(
        &self,
        chunk_box: &Region,
        key: &StoreKey,
        bytes: &Bytes,
        copy: &(dyn Fn(&Region, &ArrayBytes<'_>) -> Result<()> + Sync),
    ) -> Result<()> {
        let chunk_err = |source| Error::Chunk {
            key: key.to_string(),
            source,
        };
        let sink = |b: &Region, data: &ArrayBytes<'_>| {
            let start = b.start().iter().zip(chunk_box.start()).map(|(p, o)| p + o);
            let source = Region::new(start.collect(), b.shape().to_vec())
                .map_err(|e| CodecError::corrupt("pieces", e.to_string()))?;
            copy(&source, data).map_err(|e| CodecError::corrupt("pieces", e.to_string()))
        };
        if !self.chain.decode_pieces(bytes, &sink).map_err(chunk_err)? {
            // Decoded from where the store put the bytes: codecs that leave them as stored
            // (`bytes` alone) copy nothing here.
            let whole = self.chain.decode(Cow::Borrowed(bytes)).map_err(chunk_err)?;
            copy(chunk_box, &whole)?;
        }
        Ok(())
    }

    /// Calls `copy(src_offset, dst_offset, len)` (in elements) for each run of the part of
    /// chunk `coords` that lies in `region`; the source buffer holds the box `source` (array
    /// coordinates: the whole chunk, or the part of it that was decoded), the destination is
    /// the region.
    fn copy_chunk_part(
        &self,
        coords: &[u64],
        region: &Region,
        mut copy: impl FnMut(usize, usize, usize) -> bool,
        source: &Region,
    ) -> Result<()> {
        let Some(part) = self
            .grid
            .chunk_region(coords)
            .and_then(|r| r.intersect(region))
            .and_then(|r| r.intersect(source))
            .or_else(|| (region.ndim() == 0).then(|| Region::whole(&[])))
        else {
            return Ok(());
        };
        let (in_source, in_region) = offsets_in(&part, source, region);
        for (so, doff, len) in box_runs(
            source.shape(),
            &in_source,
            region.shape(),
            &in_region,
            part.shape(),
        ) {
            if !copy(so, doff, len) {
                return Err(Error::InvalidInput {
                    path: self.path.to_string(),
                    reason: format!("decoded chunk {coords:?} is smaller than the chunk shape"),
                });
            }
        }
        Ok(())
    }
}
