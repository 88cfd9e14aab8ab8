//! The 16-byte header of a c-blosc 1.x frame, parsed and checked in safe code.
//!
//! ```text
//! offset size field
//! 0      1    version     blosc format version (2)
//! 1      1    versionlz   compressor format version
//! 2      1    flags       bit 0 byte shuffle, bit 1 memcpyed, bit 2 bit shuffle,
//!                         bit 3 reserved (must be 0), bits 5-7 compressor code
//! 3      1    typesize
//! 4      4    nbytes      u32 LE, decoded size
//! 8      4    blocksize   u32 LE
//! 12     4    cbytes      u32 LE, size of the whole frame, header included
//! 16     4·n  bstarts     u32 LE block starts (absent for memcpyed frames)
//! ```

/// The size of the frame header.
pub const HEADER_SIZE: usize = 16;
/// The blosc format version written by c-blosc 1.x.
pub(super) const VERSION_FORMAT: u8 = 2;
/// c-blosc's largest block size (`BLOSC_MAX_BLOCKSIZE`).
pub(super) const MAX_BLOCKSIZE: usize = (i32::MAX as usize - 255 * 4) / 3;
/// Flag: the blocks are byte-shuffled.
#[cfg_attr(not(feature = "zstd"), allow(dead_code))]
pub(super) const FLAG_SHUFFLE: u8 = 0x01;
/// Flag: the frame is the input stored as it is.
pub(super) const FLAG_MEMCPYED: u8 = 0x02;
/// Flag: the blocks are bit-shuffled.
#[cfg_attr(not(feature = "zstd"), allow(dead_code))]
pub(super) const FLAG_BITSHUFFLE: u8 = 0x04;
const FLAG_RESERVED: u8 = 0x08;
/// Flag: blocks are not split into one stream per byte of the type.
#[cfg_attr(not(feature = "zstd"), allow(dead_code))]
pub(super) const FLAG_DONT_SPLIT: u8 = 0x10;

/// A parsed frame header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BloscHeader {
    /// Blosc format version.
    pub version: u8,
    /// Compressor format version.
    pub versionlz: u8,
    /// Flags.
    pub flags: u8,
    /// Element size of the shuffle.
    pub typesize: u8,
    /// Decoded size.
    pub nbytes: usize,
    /// Block size.
    pub blocksize: usize,
    /// Frame size.
    pub cbytes: usize,
}

/// The little-endian `u32` at `at`.
pub(super) fn u32_at(input: &[u8], at: usize) -> Option<u32> {
    let b = input.get(at..at + 4)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

fn i32_field(input: &[u8], at: usize, name: &str) -> Result<usize, String> {
    let v = u32_at(input, at).ok_or_else(|| format!("truncated header ({} bytes)", input.len()))?;
    if v > i32::MAX as u32 {
        return Err(format!("{name} {v} is out of range"));
    }
    Ok(v as usize)
}

impl BloscHeader {
    /// Parses the header and checks that the frame is exactly `input`.
    pub fn parse(input: &[u8]) -> Result<Self, String> {
        if input.len() < HEADER_SIZE {
            return Err(format!(
                "frame of {} bytes is shorter than the {HEADER_SIZE}-byte header",
                input.len()
            ));
        }
        let header = Self {
            version: input[0],
            versionlz: input[1],
            flags: input[2],
            typesize: input[3],
            nbytes: i32_field(input, 4, "nbytes")?,
            blocksize: i32_field(input, 8, "blocksize")?,
            cbytes: i32_field(input, 12, "cbytes")?,
        };
        if header.version != VERSION_FORMAT {
            return Err(format!(
                "unsupported blosc format version {} (expected {VERSION_FORMAT})",
                header.version
            ));
        }
        if header.flags & FLAG_RESERVED != 0 {
            return Err(format!(
                "reserved flag bit set (flags {:#04x})",
                header.flags
            ));
        }
        if header.cbytes != input.len() {
            return Err(format!(
                "header says the frame has {} bytes, the stored value has {}",
                header.cbytes,
                input.len()
            ));
        }
        Ok(header)
    }

    /// Whether the payload is stored uncompressed.
    pub fn is_memcpyed(&self) -> bool {
        self.flags & FLAG_MEMCPYED != 0
    }

    /// The compressor code (0 blosclz, 1 lz4/lz4hc, 2 snappy, 3 zlib, 4 zstd).
    pub fn compressor_code(&self) -> u8 {
        self.flags >> 5
    }

    /// Checks everything c-blosc relies on before it touches the frame: typesize, block
    /// size, the memcpy size rule, the compressor and the block-start table.
    pub fn validate_frame(&self, input: &[u8]) -> Result<(), String> {
        if self.nbytes == 0 {
            return Ok(());
        }
        if self.typesize == 0 {
            return Err("typesize 0".into());
        }
        if self.blocksize == 0 || self.blocksize > self.nbytes || self.blocksize > MAX_BLOCKSIZE {
            return Err(format!(
                "block size {} is invalid for {} bytes",
                self.blocksize, self.nbytes
            ));
        }
        if self.is_memcpyed() {
            if self.nbytes.checked_add(HEADER_SIZE) != Some(self.cbytes) {
                return Err(format!(
                    "uncompressed frame of {} bytes cannot hold {} bytes",
                    self.cbytes, self.nbytes
                ));
            }
            return Ok(());
        }
        match self.compressor_code() {
            0 | 1 | 3 | 4 => {}
            2 => return Err("snappy frames are not supported by this build".into()),
            c => return Err(format!("unknown compressor code {c}")),
        }
        let nblocks = self.nbytes.div_ceil(self.blocksize);
        let table_end = nblocks
            .checked_mul(4)
            .and_then(|t| t.checked_add(HEADER_SIZE))
            .filter(|&e| e <= self.cbytes)
            .ok_or_else(|| {
                format!(
                    "frame of {} bytes is too short for {nblocks} block starts",
                    self.cbytes
                )
            })?;
        for i in 0..nblocks {
            let start = u32_at(input, HEADER_SIZE + 4 * i)
                .ok_or_else(|| "truncated block-start table".to_owned())?
                as usize;
            if start < table_end || start.saturating_add(4) > self.cbytes {
                return Err(format!(
                    "block {i} starts at {start}, outside {table_end}..{}",
                    self.cbytes
                ));
            }
        }
        Ok(())
    }
}
