//! c-blosc frames whose compressor is zstd, made in Rust: byte for byte the frame c-blosc
//! 1.21's `blosc_compress_ctx` makes with one thread (its block size rule, its header, one
//! stream a block, byte and bit shuffle, a stream stored as it is when zstd does not shrink
//! it, the whole input stored when the frame would not fit), each stream compressed with this
//! thread's zstd context.
//!
//! Why by hand: c-blosc 1.x compresses every stream with `ZSTD_compress`, which creates a zstd
//! context for each (an allocation of its tables and a `cpuid`, which traps to the hypervisor
//! on a virtual machine: 11% of a ZV 0.9 graph import's samples). No crate makes c-blosc
//! frames with a caller's zstd context. c-blosc's split rule (`BLOSC_FORWARD_COMPAT_SPLIT`)
//! never splits a zstd block, so each block is one stream. The proptest compares the frames
//! with c-blosc's own for any input, typesize, level, shuffle and block size.

use super::header::{
    FLAG_BITSHUFFLE, FLAG_DONT_SPLIT, FLAG_MEMCPYED, FLAG_SHUFFLE, HEADER_SIZE, MAX_BLOCKSIZE,
    VERSION_FORMAT,
};
use super::zstd_frames::{bitshuffle, shuffle, MIN_BUFFERSIZE, ZSTD_CODE, ZSTD_VERSION_FORMAT};

/// c-blosc's L1 size, the base of its block sizes.
const L1: usize = 32 * 1024;

/// The frame of `input` (at most `MAX_BUFFER_SIZE` bytes, `clevel` 0–9, `shuffle` 0–2,
/// `typesize` 1–255), or `None` when this module does not make it (a forced block size beyond
/// `i32`, a big-endian host): c-blosc then does.
pub(super) fn encode(
    input: &[u8],
    clevel: i32,
    shuffle_mode: i32,
    typesize: usize,
    forced_blocksize: usize,
) -> Option<Vec<u8>> {
    if cfg!(target_endian = "big")
        || forced_blocksize > i32::MAX as usize
        || !(1..=255).contains(&typesize)
        || !(0..=9).contains(&clevel)
    {
        return None;
    }
    let nbytes = input.len();
    let blocksize = blocksize(clevel, typesize, nbytes, forced_blocksize);
    let mut flags = FLAG_DONT_SPLIT | (ZSTD_CODE << 5);
    match shuffle_mode {
        0 => {}
        1 => flags |= FLAG_SHUFFLE,
        2 => flags |= FLAG_BITSHUFFLE,
        _ => return None,
    }
    let destsize = nbytes + HEADER_SIZE;
    let mut out = vec![0u8; destsize];
    out[0] = VERSION_FORMAT;
    out[1] = ZSTD_VERSION_FORMAT;
    out[3] = typesize as u8;
    out[4..8].copy_from_slice(&(nbytes as u32).to_le_bytes());
    out[8..12].copy_from_slice(&(blocksize as u32).to_le_bytes());
    // inputs shorter than c-blosc's smallest buffer are stored as they are
    let compressed = if clevel == 0 || nbytes < MIN_BUFFERSIZE {
        None
    } else {
        compress_blocks(input, &mut out, clevel, flags, typesize, blocksize)
    };
    let cbytes = match compressed {
        Some(n) => n,
        None => {
            flags |= FLAG_MEMCPYED;
            out[HEADER_SIZE..].copy_from_slice(input);
            destsize
        }
    };
    out[2] = flags;
    out[12..16].copy_from_slice(&(cbytes as u32).to_le_bytes());
    out.truncate(cbytes);
    Some(out)
}

/// c-blosc's `compute_blocksize` for zstd (a "high compression ratio" codec, never split).
fn blocksize(clevel: i32, typesize: usize, nbytes: usize, forced: usize) -> usize {
    if nbytes < typesize {
        return 1;
    }
    let mut size = nbytes;
    if forced != 0 {
        size = forced.clamp(MIN_BUFFERSIZE, MAX_BLOCKSIZE);
    } else if nbytes >= L1 {
        // doubled for zstd, then scaled by level
        let base = 2 * L1;
        size = match clevel {
            0 => base / 4,
            1 => base / 2,
            2 => base,
            3 => base * 2,
            4 | 5 => base * 4,
            6..=8 => base * 8,
            _ => base * 16,
        };
    }
    size = size.min(nbytes);
    if size > typesize {
        size = size / typesize * typesize;
    }
    size
}

/// The blocks of `input` compressed into `out` after the header and the block starts, as
/// c-blosc's `serial_blosc` and `blosc_c` do: the frame's size, or `None` when it would not
/// fit in `out` (the input is then stored as it is).
fn compress_blocks(
    input: &[u8],
    out: &mut [u8],
    clevel: i32,
    flags: u8,
    typesize: usize,
    blocksize: usize,
) -> Option<usize> {
    let maxbytes = out.len();
    let nblocks = input.len().div_ceil(blocksize);
    // c-blosc's zstd levels: 1, 3, ... 15 for blosc's 1-8, zstd's maximum for 9
    let level = if clevel < 9 {
        clevel * 2 - 1
    } else {
        zstd::zstd_safe::max_c_level()
    };
    let shuffled = flags & FLAG_SHUFFLE != 0 && typesize > 1;
    let bits = flags & FLAG_BITSHUFFLE != 0;
    let (mut tmp, mut tmp2) = (Vec::new(), Vec::new());
    let mut ntbytes = HEADER_SIZE + 4 * nblocks;
    for (j, block) in input.chunks(blocksize).enumerate() {
        let start = HEADER_SIZE + 4 * j;
        out.get_mut(start..start + 4)?
            .copy_from_slice(&(ntbytes as u32).to_le_bytes());
        let bsize = block.len();
        let data: &[u8] = if shuffled {
            tmp.resize(bsize, 0);
            shuffle(typesize, block, &mut tmp);
            &tmp
        } else if bits && bsize >= typesize {
            tmp.resize(bsize, 0);
            tmp2.resize(bsize, 0);
            bitshuffle(typesize, block, &mut tmp, &mut tmp2);
            &tmp
        } else {
            block
        };
        // one stream: its compressed size, then its bytes
        let size_at = ntbytes;
        ntbytes += 4;
        let room = maxbytes.checked_sub(ntbytes).filter(|&r| r > 0)?;
        let maxout = bsize.min(room);
        let dest = &mut out[ntbytes..ntbytes + maxout];
        let mut cbytes = crate::zstd::compress_at_level_into(data, level, dest).unwrap_or(0);
        if cbytes == 0 || cbytes == bsize {
            // zstd could not shrink it: stored as it is, if it fits
            out.get_mut(ntbytes..ntbytes + bsize)?.copy_from_slice(data);
            cbytes = bsize;
        }
        out[size_at..size_at + 4].copy_from_slice(&(cbytes as u32).to_le_bytes());
        ntbytes += cbytes;
    }
    Some(ntbytes)
}

#[cfg(test)]
mod tests {
    use super::super::ffi;
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]
        /// The frames made here are c-blosc's own, byte for byte, for any input (repetitive,
        /// random or mixed), typesize, level, shuffle and block size (automatic or forced),
        /// and they decode to the input.
        #[test]
        fn frames_are_c_blosc_frames(
            data in prop_oneof![
                prop::collection::vec(0u8..6, 0..70_000),
                prop::collection::vec(any::<u8>(), 0..3_000),
                (prop::collection::vec(any::<u8>(), 0..400), 1usize..200)
                    .prop_map(|(v, r)| v.repeat(r)),
            ],
            typesize in prop_oneof![Just(1usize), Just(2), Just(4), Just(8), 1usize..=255],
            clevel in 0i32..10,
            shuffle_mode in 0i32..3,
            forced in prop_oneof![Just(0usize), 1usize..5000, Just(40_000)],
        ) {
            let c = ffi::compress(&data, clevel, shuffle_mode, typesize, "zstd", forced).unwrap();
            let rust = encode(&data, clevel, shuffle_mode, typesize, forced).unwrap();
            prop_assert!(rust == c, "{} bytes here, {} by c-blosc", rust.len(), c.len());
            let header = super::super::BloscHeader::parse(&rust).unwrap();
            if header.nbytes > 0 {
                prop_assert_eq!(ffi::decompress(&rust, &header).unwrap(), data);
            }
        }
    }

    #[test]
    fn block_sizes_follow_c_blosc() {
        // automatic: 64 KiB scaled by level from 32 KiB of input; the input when smaller
        assert_eq!(blocksize(5, 4, 1 << 20, 0), 256 * 1024);
        assert_eq!(blocksize(9, 4, 4 << 20, 0), 1 << 20);
        assert_eq!(blocksize(1, 4, 100_000, 0), 32 * 1024);
        assert_eq!(blocksize(5, 4, 20_000, 0), 20_000);
        // a multiple of the typesize; 1 when the input is smaller than one element
        assert_eq!(blocksize(5, 3, 20_000, 0), 19_998);
        assert_eq!(blocksize(5, 8, 7, 0), 1);
        // forced: at least 128 bytes, at most the input
        assert_eq!(blocksize(5, 4, 20_000, 10), 128);
        assert_eq!(blocksize(5, 4, 20_000, 50_000), 20_000);
        // nothing taken that c-blosc does otherwise
        assert!(encode(&[1, 2, 3], 5, 1, 4, usize::MAX).is_none());
        assert!(encode(&[1, 2, 3], 10, 1, 4, 0).is_none());
    }
}
