//! Region reads: each chunk the region touches is decoded whole, or, when the codec pipeline
//! decodes partially (`sharding_indexed`) and the region covers only part of the chunk, only
//! the part the region needs is read (through byte ranges) and decoded.

use std::borrow::Cow;

use rayon::prelude::*;

use super::Array;
use crate::codec::{ArrayBytes, StoreChunkReader};
use crate::error::{Error, Result};
use crate::grid::{box_runs, Region};

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
                out_fixed
                    .try_reserve_exact(total)
                    .map_err(|_| too_large(&format!("{total} bytes")))?;
                out_fixed.resize(total, 0u8);
            }
            None => {
                out_elements
                    .try_reserve_exact(n)
                    .map_err(|_| too_large(&format!("{n} elements")))?;
                out_elements.resize(n, &[]);
            }
        }
        let decoded: Vec<(Vec<u64>, Region, ArrayBytes<'static>)> = self
            .grid
            .chunks_in(region)
            .par_bridge()
            .map(|c| self.retrieve_chunk_part(&c, region).map(|(b, d)| (c, b, d)))
            .collect::<Result<_>>()?;
        match self.data_type().size() {
            Some(es) => {
                let mut out = out_fixed;
                for (coords, source, data) in &decoded {
                    let ArrayBytes::Fixed(src) = data else {
                        continue;
                    };
                    self.copy_chunk_part(
                        coords,
                        region,
                        |so, doff, len| {
                            let (s, d) = (so * es, doff * es);
                            let l = len * es;
                            match (src.get(s..s + l), out.get_mut(d..d + l)) {
                                (Some(a), Some(b)) => {
                                    b.copy_from_slice(a);
                                    true
                                }
                                _ => false,
                            }
                        },
                        source,
                    )?;
                }
                Ok(ArrayBytes::Fixed(Cow::Owned(out)))
            }
            None => {
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
