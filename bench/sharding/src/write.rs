//! The benchmark array: its layout, its values, and writing it once with zarrs.

use std::path::Path;
use std::sync::Arc;

use rayon::prelude::*;
use zarrs::array::codec::ZstdCodec;
use zarrs::array::{data_type, ArrayBuilder};
use zarrs::filesystem::FilesystemStore;

use crate::BoxError;

/// The inner codec chain of the benchmark array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InnerCodec {
    /// `bytes` (little endian) alone.
    Bytes,
    /// `bytes` then `zstd` level 3, no checksum.
    Zstd,
}

impl InnerCodec {
    /// The name used on the command line, in directory names and in the report.
    pub fn name(self) -> &'static str {
        match self {
            Self::Bytes => "bytes",
            Self::Zstd => "bytes+zstd(3)",
        }
    }

    /// A file-name friendly name.
    pub fn slug(self) -> &'static str {
        match self {
            Self::Bytes => "bytes",
            Self::Zstd => "zstd",
        }
    }
}

/// Array, shard and inner chunk shapes (2-D, uint16).
#[derive(Debug, Clone)]
pub struct Layout {
    /// The array shape.
    pub shape: [u64; 2],
    /// The shard (outer chunk) shape.
    pub shard: [u64; 2],
    /// The inner chunk shape.
    pub inner: [u64; 2],
}

impl Layout {
    /// 16384 × 32768 uint16 (1 GiB), shards 4096 × 4096, inner chunks 512 × 512.
    pub fn full() -> Self {
        Self {
            shape: [16384, 32768],
            shard: [4096, 4096],
            inner: [512, 512],
        }
    }

    /// 2048 × 4096 (16 MiB), shards 1024 × 1024, inner chunks 256 × 256: a quick check.
    pub fn small() -> Self {
        Self {
            shape: [2048, 4096],
            shard: [1024, 1024],
            inner: [256, 256],
        }
    }

    /// The number of bytes of the whole array.
    pub fn nbytes(&self) -> u64 {
        self.shape[0] * self.shape[1] * 2
    }

    /// Inner chunks per dimension over the whole array.
    pub fn inner_grid(&self) -> [u64; 2] {
        [self.shape[0] / self.inner[0], self.shape[1] / self.inner[1]]
    }
}

/// The value at `(y, x)`: a smooth image-like field plus a little noise, so that zstd
/// compresses it to a realistic ratio (neither constant nor random).
pub fn value(y: u64, x: u64) -> u16 {
    let (fy, fx) = (y as f64, x as f64);
    let smooth = 20000.0
        + 8000.0 * (fy / 310.0).sin() * (fx / 470.0).cos()
        + 3000.0 * ((fx + fy) / 1500.0).sin();
    let mut h = y.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ x.wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    h ^= h >> 29;
    h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h ^= h >> 32;
    (smooth as u64 + (h & 0x3F)) as u16
}

/// Writes the benchmark array with zarrs into `root` (a new filesystem store), shards in
/// parallel, and syncs every file so that the page cache holds no dirty data.
pub fn write_with_zarrs(root: &Path, layout: &Layout, codec: InnerCodec) -> Result<(), BoxError> {
    std::fs::create_dir_all(root)?;
    let store = Arc::new(FilesystemStore::new(root)?);
    let mut builder = ArrayBuilder::new(
        layout.shape.to_vec(),
        layout.shard.to_vec(),
        data_type::uint16(),
        0u16,
    );
    builder.subchunk_shape(layout.inner.to_vec());
    if codec == InnerCodec::Zstd {
        builder.bytes_to_bytes_codecs(vec![Arc::new(ZstdCodec::new(3, false))]);
    }
    let array = builder.build(store, "/")?;
    array.store_metadata()?;
    let grid = [
        layout.shape[0] / layout.shard[0],
        layout.shape[1] / layout.shard[1],
    ];
    let shards: Vec<[u64; 2]> = (0..grid[0])
        .flat_map(|i| (0..grid[1]).map(move |j| [i, j]))
        .collect();
    shards
        .par_iter()
        .try_for_each(|&[i, j]| -> Result<(), BoxError> {
            let [h, w] = layout.shard;
            let mut data = Vec::with_capacity((h * w) as usize);
            for y in 0..h {
                for x in 0..w {
                    data.push(value(i * h + y, j * w + x));
                }
            }
            array.store_chunk(&[i, j], data)?;
            Ok(())
        })?;
    for path in crate::files_under(root)? {
        std::fs::File::open(&path)?.sync_all()?;
    }
    Ok(())
}
