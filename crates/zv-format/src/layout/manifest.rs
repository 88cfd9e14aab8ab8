//! Object manifests and their containers (`docs/format-decisions.md`, "Manifest blocks",
//! "Object index container").
//!
//! An object's manifest is an ordered list of blocks; each block names a chunk and one or more
//! fragments of it. Layout of one manifest (no alignment anywhere):
//!
//! ```text
//! u32 B                        number of blocks (0: an empty manifest, 4 bytes in all)
//! repeat B times:
//!   i64 chunk[sid_ndim]        chunk coordinates (may be negative)
//!   u8  mode
//!   mode 0 (single):   i64 fragment                       8·n + 1 + 8 bytes
//!   mode 1 (range):    i64 start, i64 count               8·n + 1 + 16
//!   mode 2 (explicit): u32 k, i64 fragment[k]             8·n + 1 + 4 + 8·k
//! ```
//!
//! Containers of the manifests of a level's `B` objects:
//!
//! - **stream** (`object_index/data`, the spec's form): the manifests back to back; manifests
//!   are self-delimiting, so the stream parses sequentially;
//! - **stream + offsets** (`object_index/offsets`): `int64[B]` byte offsets of each manifest in
//!   the stream, no terminal entry (what zv writes, and the reference's legacy layout);
//! - **vlen items** (`object_index/manifests`, the 0.7.0 reference): one manifest per element of
//!   a `variable_length_bytes` array, the last chunk padded with empty items.
//!
//! ```
//! use zv_format::layout::manifest::{BlockFragments, Manifest};
//! // fragments (chunk, fragment) in vertex order; the encoder picks the most compact modes
//! let m = Manifest::from_refs(&[(vec![1, 2, 3], 4), (vec![1, 2, 4], 0), (vec![1, 2, 4], 1), (vec![1, 2, 4], 2)]);
//! assert_eq!(m.blocks[1].fragments, BlockFragments::Range { start: 0, count: 3 });
//! let bytes = m.encode(3)?;
//! assert_eq!(Manifest::decode(&bytes, 3)?, m);
//! # Ok::<(), zv_format::layout::LayoutError>(())
//! ```

mod containers;
mod coords;
mod decode;
mod plan;

pub use containers::{decode_stream, decode_vlen_items, decode_with_offsets, encode_stream};
pub use coords::ChunkCoords;

use super::{invalid, put_i64s, to_i64, LayoutError};
use plan::plan_blocks;

const WHAT: &str = "object manifest";

/// Fragment indices are below 2^32: a fragment index counts its fragments in a `u32`.
const MAX_FRAGMENTS: u64 = 1 << 32;

/// The fragments a block names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlockFragments {
    /// Mode 0: one fragment.
    Single(u64),
    /// Mode 1: fragments `start .. start + count`.
    Range {
        /// First fragment.
        start: u64,
        /// Number of fragments.
        count: u64,
    },
    /// Mode 2: these fragments, in order.
    Explicit(Vec<u64>),
}

impl BlockFragments {
    /// The mode byte.
    pub fn mode(&self) -> u8 {
        match self {
            BlockFragments::Single(_) => 0,
            BlockFragments::Range { .. } => 1,
            BlockFragments::Explicit(_) => 2,
        }
    }

    /// The fragments in order.
    pub fn iter(&self) -> Box<dyn Iterator<Item = u64> + '_> {
        match self {
            BlockFragments::Single(f) => Box::new(std::iter::once(*f)),
            BlockFragments::Range { start, count } => Box::new(*start..start + count),
            BlockFragments::Explicit(v) => Box::new(v.iter().copied()),
        }
    }

    /// The number of fragments.
    pub fn len(&self) -> usize {
        match self {
            BlockFragments::Single(_) => 1,
            BlockFragments::Range { count, .. } => *count as usize,
            BlockFragments::Explicit(v) => v.len(),
        }
    }

    /// Whether the block names no fragment.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One block: a chunk and fragments of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestBlock {
    /// The chunk coordinates (arity `sid_ndim`).
    pub chunk: ChunkCoords,
    /// The fragments.
    pub fragments: BlockFragments,
}

/// The manifest of one object.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Manifest {
    /// The blocks, in vertex order.
    pub blocks: Vec<ManifestBlock>,
}

fn block_size(sid_ndim: usize, mode: u8, k: usize) -> usize {
    8 * sid_ndim
        + 1
        + match mode {
            0 => 8,
            1 => 16,
            _ => 4 + 8 * k,
        }
}

/// Calls `block` with each block of the most compact blocks of `refs`, in order (the rule
/// of [`Manifest::from_refs`]).
fn blocks_of<C: AsRef<[i64]>>(refs: &[(C, u64)], mut block: impl FnMut(&[i64], BlockFragments)) {
    let mut frags = Vec::new();
    let mut i = 0;
    while i < refs.len() {
        let chunk = refs[i].0.as_ref();
        let mut j = i + 1;
        while j < refs.len() && same_coords(refs[j].0.as_ref(), chunk) {
            j += 1;
        }
        if j == i + 1 {
            // what the program picks for one fragment: mode 0 is the smallest block
            block(chunk, BlockFragments::Single(refs[i].1));
            i = j;
            continue;
        }
        frags.clear();
        frags.extend(refs[i..j].iter().map(|r| r.1));
        for fragments in plan_blocks(&frags, chunk.len()) {
            block(chunk, fragments);
        }
        i = j;
    }
}

/// Whether two chunk coordinates are equal: compared element by element (an inlined loop
/// that stops at the first difference, where slice equality calls `memcmp` for each pair of
/// references — most neighbours in a manifest differ).
#[inline]
fn same_coords(a: &[i64], b: &[i64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// Appends the encoding of one block (chunk `chunk`, `fragments`) to `out`.
fn encode_block(
    chunk: &[i64],
    fragments: &BlockFragments,
    out: &mut Vec<u8>,
    sid_ndim: usize,
) -> Result<(), LayoutError> {
    if chunk.len() != sid_ndim {
        return Err(invalid(
            WHAT,
            format!(
                "chunk {chunk:?} has {} coordinates, sid_ndim is {sid_ndim}",
                chunk.len()
            ),
        ));
    }
    let in_range = match fragments {
        BlockFragments::Single(f) => *f < MAX_FRAGMENTS,
        BlockFragments::Range { start, count } => start
            .checked_add(*count)
            .is_some_and(|e| e <= MAX_FRAGMENTS),
        BlockFragments::Explicit(v) => v.iter().all(|f| *f < MAX_FRAGMENTS),
    };
    if !in_range {
        return Err(invalid(
            WHAT,
            format!("fragments {fragments:?} go past 2^32 (a chunk has fewer)"),
        ));
    }
    put_i64s(out, chunk.iter().copied());
    out.push(fragments.mode());
    match fragments {
        BlockFragments::Single(f) => out.extend_from_slice(&to_i64(*f, WHAT)?.to_le_bytes()),
        BlockFragments::Range { start, count } => {
            out.extend_from_slice(&to_i64(*start, WHAT)?.to_le_bytes());
            out.extend_from_slice(&to_i64(*count, WHAT)?.to_le_bytes());
        }
        BlockFragments::Explicit(v) => {
            let k = u32::try_from(v.len())
                .map_err(|_| invalid(WHAT, "more than u32::MAX fragments in a block"))?;
            out.extend_from_slice(&k.to_le_bytes());
            for f in v {
                out.extend_from_slice(&to_i64(*f, WHAT)?.to_le_bytes());
            }
        }
    }
    Ok(())
}

impl Manifest {
    /// The manifest of fragment references `(chunk, fragment)` in vertex order, choosing the
    /// most compact blocks: for each run of references to the same chunk, a dynamic program
    /// picks mode 1 for consecutive fragments, mode 0 for a lone fragment and mode 2 for the
    /// rest, minimising the encoded size (ties prefer mode 1, then mode 0).
    ///
    /// The chunk of a reference is anything that reads as coordinates (`Vec<i64>`, `&[i64]`,
    /// …), so that a writer need not copy its keys. A lone reference to a chunk (the usual
    /// case for objects spread over many chunks) is one mode-0 block, without the program.
    pub fn from_refs<C: AsRef<[i64]>>(refs: &[(C, u64)]) -> Self {
        let mut blocks = Vec::new();
        blocks_of(refs, |chunk, fragments| {
            blocks.push(ManifestBlock {
                chunk: chunk.into(),
                fragments,
            })
        });
        Self { blocks }
    }

    /// Appends the encoding of [`Manifest::from_refs`]`(refs)` to `out` without building the
    /// manifest (a writer encodes many large ones). On an error, `out` is left with part of
    /// the encoding.
    pub fn encode_refs_into<C: AsRef<[i64]>>(
        refs: &[(C, u64)],
        out: &mut Vec<u8>,
        sid_ndim: usize,
    ) -> Result<(), LayoutError> {
        let at = out.len();
        out.extend_from_slice(&[0; 4]);
        let (mut n, mut failed) = (0u64, None);
        blocks_of(refs, |chunk, fragments| {
            if failed.is_none() {
                failed = encode_block(chunk, &fragments, out, sid_ndim).err();
                n += 1;
            }
        });
        if let Some(e) = failed {
            return Err(e);
        }
        let n = u32::try_from(n).map_err(|_| invalid(WHAT, "more than u32::MAX blocks"))?;
        out[at..at + 4].copy_from_slice(&n.to_le_bytes());
        Ok(())
    }

    /// The fragment references `(chunk, fragment)` in order, blocks expanded.
    pub fn refs(&self) -> impl Iterator<Item = (&[i64], u64)> + '_ {
        self.blocks
            .iter()
            .flat_map(|b| b.fragments.iter().map(move |f| (b.chunk.as_slice(), f)))
    }

    /// Checks every block against the fragment count of its chunk, given by `fragments_of`
    /// (`None`: the chunk has no vertices), without expanding ranges, so that a hostile range
    /// costs nothing. Returns a description of the first bad block.
    pub fn check_fragments(
        &self,
        mut fragments_of: impl FnMut(&[i64]) -> Option<u64>,
    ) -> Result<(), String> {
        for (i, b) in self.blocks.iter().enumerate() {
            let name = || {
                b.chunk
                    .iter()
                    .map(i64::to_string)
                    .collect::<Vec<_>>()
                    .join(".")
            };
            let Some(f) = fragments_of(&b.chunk) else {
                return Err(format!(
                    "block {i} names chunk {}, which has no vertices",
                    name()
                ));
            };
            let ok = match &b.fragments {
                BlockFragments::Single(x) => *x < f,
                BlockFragments::Range { start, count } => {
                    start.checked_add(*count).is_some_and(|e| e <= f)
                }
                BlockFragments::Explicit(v) => v.iter().all(|x| *x < f),
            };
            if !ok {
                return Err(format!(
                    "block {i} names fragments {:?} of chunk {}, which has {f}",
                    b.fragments,
                    name()
                ));
            }
        }
        Ok(())
    }

    /// The size of the encoding.
    pub fn encoded_len(&self, sid_ndim: usize) -> usize {
        4 + self
            .blocks
            .iter()
            .map(|b| block_size(sid_ndim, b.fragments.mode(), b.fragments.len()))
            .sum::<usize>()
    }

    /// Appends the encoding to `out`. Every block's chunk must have `sid_ndim` coordinates.
    pub fn encode_into(&self, out: &mut Vec<u8>, sid_ndim: usize) -> Result<(), LayoutError> {
        let n = u32::try_from(self.blocks.len())
            .map_err(|_| invalid(WHAT, "more than u32::MAX blocks"))?;
        out.extend_from_slice(&n.to_le_bytes());
        for b in &self.blocks {
            encode_block(&b.chunk, &b.fragments, out, sid_ndim)?;
        }
        Ok(())
    }

    /// The encoding.
    pub fn encode(&self, sid_ndim: usize) -> Result<Vec<u8>, LayoutError> {
        let mut out = Vec::with_capacity(self.encoded_len(sid_ndim));
        self.encode_into(&mut out, sid_ndim)?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A mode-0 block (shared with the container tests).
    pub(super) fn single(chunk: &[i64], f: u64) -> ManifestBlock {
        ManifestBlock {
            chunk: chunk.into(),
            fragments: BlockFragments::Single(f),
        }
    }

    #[test]
    fn golden_pts1_objects() {
        let m0 = Manifest {
            blocks: vec![single(&[0, 0, 0], 0)],
        };
        let b = m0.encode(3).unwrap();
        assert_eq!(b.len(), 37);
        assert_eq!(&b[..4], &[1, 0, 0, 0]);
        assert!(b[4..].iter().all(|&x| x == 0));
        let m1 = Manifest {
            blocks: vec![single(&[1, 0, 0], 0), single(&[1, 1, 0], 0)],
        };
        let b = m1.encode(3).unwrap();
        assert_eq!(b.len(), 70);
        assert_eq!(&b[..12], &[2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(Manifest::decode(&b, 3).unwrap(), m1);
    }

    #[test]
    fn golden_mixed_123_bytes() {
        let m = Manifest {
            blocks: vec![
                single(&[1, 2, 3], 4),
                ManifestBlock {
                    chunk: vec![1, 2, 4].into(),
                    fragments: BlockFragments::Range { start: 0, count: 3 },
                },
                ManifestBlock {
                    chunk: vec![0, 0, 0].into(),
                    fragments: BlockFragments::Explicit(vec![5, 2]),
                },
            ],
        };
        let b = m.encode(3).unwrap();
        assert_eq!(b.len(), 123);
        let mut want = vec![3, 0, 0, 0];
        for v in [1i64, 2, 3] {
            want.extend_from_slice(&v.to_le_bytes());
        }
        want.push(0);
        want.extend_from_slice(&4i64.to_le_bytes());
        for v in [1i64, 2, 4] {
            want.extend_from_slice(&v.to_le_bytes());
        }
        want.push(1);
        want.extend_from_slice(&0i64.to_le_bytes());
        want.extend_from_slice(&3i64.to_le_bytes());
        for v in [0i64, 0, 0] {
            want.extend_from_slice(&v.to_le_bytes());
        }
        want.push(2);
        want.extend_from_slice(&2u32.to_le_bytes());
        want.extend_from_slice(&5i64.to_le_bytes());
        want.extend_from_slice(&2i64.to_le_bytes());
        assert_eq!(b, want);
        assert_eq!(Manifest::decode(&b, 3).unwrap(), m);
    }

    #[test]
    fn empty_manifest_is_four_bytes() {
        assert_eq!(Manifest::default().encode(3).unwrap(), vec![0, 0, 0, 0]);
    }
}
