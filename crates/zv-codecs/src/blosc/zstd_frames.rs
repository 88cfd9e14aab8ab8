//! c-blosc frames whose compressor is zstd, decoded in Rust (the rules of c-blosc 1.x's
//! `blosc_d`: a block's streams, the split rule, byte and bit unshuffle), each stream with
//! this thread's zstd context.
//!
//! Why by hand: c-blosc 1.x decodes every stream with `ZSTD_decompress`, which creates a
//! zstd context for each; creating one asks the CPU for its features (`cpuid`, which traps
//! to the hypervisor on a virtual machine): 31% of `zv validate`'s samples and 21% of
//! `zv export`'s on a ZV 0.9 graph store in blosc-zstd cells. No crate decodes c-blosc
//! frames with a caller's zstd context. Frames this module does not take (other
//! compressors, stored uncompressed, a block that the splits do not divide, a big-endian
//! host) go to c-blosc as before; the proptests compare both decoders on c-blosc's own
//! frames. The bit unshuffle is bitshuffle's scalar algorithm (c-blosc's
//! `bshuf_untrans_bit_elem_scal`: bytes transposed by bit row, then the bits of each eight
//! elements), where c-blosc would use its SIMD variant.

use super::header::{
    u32_at, BloscHeader, FLAG_BITSHUFFLE, FLAG_DONT_SPLIT, FLAG_SHUFFLE, HEADER_SIZE,
};

/// The compressor code of zstd.
pub(super) const ZSTD_CODE: u8 = 4;
/// The zstd stream format version c-blosc writes.
pub(super) const ZSTD_VERSION_FORMAT: u8 = 1;
/// c-blosc splits a block into `typesize` streams only up to this typesize...
const MAX_SPLITS: usize = 16;
/// ...and when each stream has at least this many bytes (c-blosc's `MIN_BUFFERSIZE`, also
/// the smallest input it compresses).
pub(super) const MIN_BUFFERSIZE: usize = 128;

/// The decoded bytes of `input` (its header parsed and its frame validated, `nbytes` > 0),
/// or `None` when this module does not take the frame (c-blosc then decodes it).
pub(super) fn decode(input: &[u8], header: &BloscHeader) -> Option<Result<Vec<u8>, String>> {
    if header.is_memcpyed()
        || header.compressor_code() != ZSTD_CODE
        || header.versionlz != ZSTD_VERSION_FORMAT
        || cfg!(target_endian = "big")
    {
        return None;
    }
    let typesize = usize::from(header.typesize);
    let (nbytes, blocksize) = (header.nbytes, header.blocksize);
    let nblocks = nbytes.div_ceil(blocksize);
    let leftover = nbytes % blocksize;
    let shuffle = header.flags & FLAG_SHUFFLE != 0 && typesize > 1;
    // bit shuffle where the byte shuffle is not asked, for blocks of at least one element
    let bitshuffle = header.flags & FLAG_BITSHUFFLE != 0 && !shuffle;
    let split = header.flags & FLAG_DONT_SPLIT == 0;
    // every block's splits must divide it (c-blosc's own frames always do)
    let splits = |bsize: usize, last: bool| {
        if split && typesize <= MAX_SPLITS && bsize / typesize >= MIN_BUFFERSIZE && !last {
            typesize
        } else {
            1
        }
    };
    let last_partial = leftover > 0;
    for j in 0..nblocks {
        let last = last_partial && j + 1 == nblocks;
        let bsize = if last { leftover } else { blocksize };
        if bsize % splits(bsize, last) != 0 {
            return None;
        }
    }
    let mut out = vec![0u8; nbytes];
    let (mut tmp, mut tmp2) = (Vec::new(), Vec::new());
    for (j, block) in out.chunks_mut(blocksize).enumerate() {
        let last = last_partial && j + 1 == nblocks;
        let bsize = block.len();
        let nsplits = splits(bsize, last);
        let neblock = bsize / nsplits;
        let start = u32_at(input, HEADER_SIZE + 4 * j)? as usize;
        let bits = bitshuffle && bsize >= typesize;
        if !(shuffle || bits) {
            if let Err(e) = decode_block(input, start, neblock, block) {
                return Some(Err(format!("block {j}: {e}")));
            }
            continue;
        }
        tmp.resize(bsize, 0);
        if let Err(e) = decode_block(input, start, neblock, &mut tmp) {
            return Some(Err(format!("block {j}: {e}")));
        }
        if shuffle {
            unshuffle(typesize, &tmp, block);
        } else {
            tmp2.resize(bsize, 0);
            bitunshuffle(typesize, &tmp, block, &mut tmp2);
        }
    }
    Some(Ok(out))
}

/// Decodes the streams of one block, starting at `start`, into `dest` (`neblock` bytes a
/// stream): each stream is its compressed size (`i32`) and its bytes, stored as they are
/// when that size is `neblock`, else a zstd frame of exactly `neblock` bytes.
fn decode_block(input: &[u8], start: usize, neblock: usize, dest: &mut [u8]) -> Result<(), String> {
    let mut at = start;
    for (k, part) in dest.chunks_mut(neblock.max(1)).enumerate() {
        let size = u32_at(input, at)
            .filter(|&c| c <= i32::MAX as u32)
            .ok_or_else(|| format!("stream {k} has no valid size at {at}"))?
            as usize;
        at += 4;
        let bytes = input
            .get(at..at.saturating_add(size))
            .ok_or_else(|| format!("stream {k} of {size} bytes runs past the frame"))?;
        if size == neblock {
            part.copy_from_slice(bytes);
        } else {
            crate::zstd::decompress_exactly_into(bytes, part)
                .map_err(|e| format!("stream {k}: {e}"))?;
        }
        at += size;
    }
    Ok(())
}

/// Undoes c-blosc's byte shuffle of one block: `src` holds byte `b` of every element, for
/// each `b` in turn; `dest` gets the elements back. Trailing bytes that make no whole
/// element are as stored.
fn unshuffle(typesize: usize, src: &[u8], dest: &mut [u8]) {
    let n = src.len() / typesize;
    let whole = n * typesize;
    match typesize {
        2 => transpose::<2>(&src[..whole], &mut dest[..whole], n),
        4 => transpose::<4>(&src[..whole], &mut dest[..whole], n),
        8 => transpose::<8>(&src[..whole], &mut dest[..whole], n),
        _ => {
            for (i, element) in dest[..whole].chunks_exact_mut(typesize).enumerate() {
                for (b, byte) in element.iter_mut().enumerate() {
                    *byte = src[b * n + i];
                }
            }
        }
    }
    dest[whole..].copy_from_slice(&src[whole..]);
}

/// c-blosc's byte shuffle of one block (`blosc_internal_shuffle`), which [`unshuffle`] undoes:
/// byte `b` of every element, for each `b` in turn, then the trailing bytes that make no
/// whole element as they are.
pub(super) fn shuffle(typesize: usize, src: &[u8], dest: &mut [u8]) {
    let n = src.len() / typesize;
    let whole = n * typesize;
    for (b, stream) in dest[..whole].chunks_exact_mut(n.max(1)).enumerate() {
        for (i, byte) in stream.iter_mut().enumerate() {
            *byte = src[i * typesize + b];
        }
    }
    dest[whole..].copy_from_slice(&src[whole..]);
}

/// c-blosc's bit shuffle of one block (`blosc_internal_bitshuffle`, bitshuffle's scalar
/// `bshuf_trans_bit_elem_scal`), which [`bitunshuffle`] undoes: a block whose element count
/// is a multiple of 8 has its bytes transposed by element, the bits of each eight bytes
/// transposed into bit rows, and the rows of each eight grouped by element byte; trailing
/// bytes that make no whole element stay as they are. Any other block is stored as it is.
/// `tmp` is room for the block.
pub(super) fn bitshuffle(typesize: usize, src: &[u8], dest: &mut [u8], tmp: &mut [u8]) {
    let size = src.len() / typesize;
    if size % 8 != 0 {
        dest.copy_from_slice(src);
        return;
    }
    let whole = size * typesize;
    // the bytes transposed by element (`bshuf_trans_byte_elem_scal`), into `dest`
    shuffle(typesize, &src[..whole], &mut dest[..whole]);
    // the bits of each eight bytes into eight bit rows (`bshuf_trans_bit_byte_scal`)
    let rows = whole / 8;
    for ii in 0..rows {
        let mut x = u64::from_le_bytes(dest[ii * 8..ii * 8 + 8].try_into().unwrap_or([0; 8]));
        x = transpose_bits_8x8(x);
        for kk in 0..8 {
            tmp[kk * rows + ii] = x as u8;
            x >>= 8;
        }
    }
    // the rows of each eight regrouped by element byte (`bshuf_trans_bitrow_eight`)
    let r = size / 8;
    for ii in 0..8 {
        for jj in 0..typesize {
            let to = (jj * 8 + ii) * r;
            let from = (ii * typesize + jj) * r;
            dest[to..to + r].copy_from_slice(&tmp[from..from + r]);
        }
    }
    dest[whole..].copy_from_slice(&src[whole..]);
}

/// Undoes c-blosc's bit shuffle of one block (`blosc_internal_bitunshuffle`): a block whose
/// element count is a multiple of 8 had its elements' bits transposed (trailing bytes that
/// make no whole element are as stored); any other block is as stored. `tmp` is room for
/// the block.
fn bitunshuffle(typesize: usize, src: &[u8], dest: &mut [u8], tmp: &mut [u8]) {
    let size = src.len() / typesize;
    if size % 8 != 0 {
        dest.copy_from_slice(src);
        return;
    }
    let whole = size * typesize;
    // the bytes transposed by bit row (`bshuf_trans_byte_bitrow_scal`)
    let row = size / 8;
    for jj in 0..typesize {
        for kk in 0..8 {
            let from = &src[(jj * 8 + kk) * row..(jj * 8 + kk + 1) * row];
            for (ii, &byte) in from.iter().enumerate() {
                tmp[ii * 8 * typesize + jj * 8 + kk] = byte;
            }
        }
    }
    // the bits of each eight elements (`bshuf_shuffle_bit_eightelem_scal`, little-endian)
    let group = 8 * typesize;
    for jj in (0..group).step_by(8) {
        for ii in (0..whole).step_by(group) {
            let mut x = u64::from_le_bytes(tmp[ii + jj..ii + jj + 8].try_into().unwrap_or([0; 8]));
            x = transpose_bits_8x8(x);
            for kk in 0..8 {
                dest[ii + jj / 8 + kk * typesize] = x as u8;
                x >>= 8;
            }
        }
    }
    dest[whole..].copy_from_slice(&src[whole..]);
}

/// The 8×8 bit matrix packed in `x`, transposed (bitshuffle's `TRANS_BIT_8X8`).
#[inline]
fn transpose_bits_8x8(mut x: u64) -> u64 {
    let mut t = (x ^ (x >> 7)) & 0x00AA_00AA_00AA_00AA;
    x = x ^ t ^ (t << 7);
    t = (x ^ (x >> 14)) & 0x0000_CCCC_0000_CCCC;
    x = x ^ t ^ (t << 14);
    t = (x ^ (x >> 28)) & 0x0000_0000_F0F0_F0F0;
    x ^ t ^ (t << 28)
}

/// [`unshuffle`] for a typesize known at compile time.
#[inline]
fn transpose<const T: usize>(src: &[u8], dest: &mut [u8], n: usize) {
    let streams: [&[u8]; T] = std::array::from_fn(|b| &src[b * n..(b + 1) * n]);
    for (i, element) in dest.chunks_exact_mut(T).enumerate() {
        for b in 0..T {
            element[b] = streams[b][i];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::ffi;
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]
        /// c-blosc's own zstd frames (any typesize, level, shuffle and block size), whole or
        /// with a byte damaged, decode here as c-blosc decodes them: the same bytes, or an
        /// error for both; every frame this module should take is taken.
        #[test]
        fn frames_decode_as_c_blosc_decodes_them(
            data in prop::collection::vec(0u8..6, 0..12_000),
            typesize in prop_oneof![Just(1usize), Just(2), Just(4), Just(8), 1usize..20, Just(32)],
            clevel in 0i32..10,
            shuffle in 0i32..3,
            blocksize in prop_oneof![Just(0usize), 1usize..5000],
            damage in prop::option::of((any::<prop::sample::Index>(), 1u8..=255)),
        ) {
            let mut frame = ffi::compress(&data, clevel, shuffle, typesize, "zstd", blocksize).unwrap();
            if let Some((at, x)) = damage {
                let i = HEADER_SIZE + at.index(frame.len().saturating_sub(HEADER_SIZE).max(1));
                if i < frame.len() {
                    frame[i] ^= x;
                }
            }
            let Ok(header) = BloscHeader::parse(&frame) else { return Ok(()) };
            if header.validate_frame(&frame).is_err() || header.nbytes == 0 {
                return Ok(());
            }
            let c = ffi::decompress(&frame, &header);
            match decode(&frame, &header) {
                Some(rust) => {
                    prop_assert_eq!(rust.as_ref().ok(), c.as_ref().ok(), "rust {:?}, c-blosc {:?}", rust.as_ref().err(), c.as_ref().err());
                    if damage.is_none() {
                        prop_assert_eq!(rust.unwrap(), data);
                    }
                }
                None => {
                    // only what c-blosc must decode is left to it
                    prop_assert!(header.is_memcpyed() || damage.is_some(), "flags {:#x}", header.flags);
                }
            }
        }
    }

    #[test]
    fn unshuffle_restores_elements() {
        for typesize in [2usize, 3, 4, 8, 16] {
            let elements = 37;
            let data: Vec<u8> = (0..elements * typesize + typesize - 1)
                .map(|i| (i * 31 % 251) as u8)
                .collect();
            let whole = elements * typesize;
            // shuffled: byte b of every element, then the trailing bytes as they are
            let mut shuffled = Vec::new();
            for b in 0..typesize {
                shuffled.extend((0..elements).map(|e| data[e * typesize + b]));
            }
            shuffled.extend_from_slice(&data[whole..]);
            let mut back = vec![0u8; data.len()];
            unshuffle(typesize, &shuffled, &mut back);
            assert_eq!(back, data, "typesize {typesize}");
        }
    }
}
