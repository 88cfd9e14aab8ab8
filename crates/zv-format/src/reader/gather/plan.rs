//! Which fragments a group of objects names: every manifest reference resolved against the
//! scan (each block's chunk looked up once, its fragments checked against the chunk's count
//! before a range is expanded), as the objects' fragment columns.

use zv_core::data_type::DataType;

use super::super::level_scan::{LevelScan, ScannedChunk};
use super::super::raw_index::RawIndex;
use super::super::{blob_err, Level, ObjectIndex};
use crate::error::{Error, Result};
use crate::layout::manifest::{BlockFragments, Manifest};
use crate::names;

/// Where the manifests of the objects read come from.
#[derive(Clone, Copy)]
pub(crate) enum Manifests<'a> {
    /// A decoded index.
    Decoded(&'a ObjectIndex),
    /// zv's container or ZV 0.9's, each manifest decoded as it is used. Any fault is an error whose
    /// text says nothing: the caller then reads through the decoded index, which names it.
    Raw(&'a RawIndex),
}

impl Manifests<'_> {
    /// The number of objects of the index.
    pub(crate) fn num_objects(&self) -> u64 {
        match self {
            Manifests::Decoded(index) => index.num_objects,
            Manifests::Raw(raw) => raw.num_objects(),
        }
    }
}

/// The type and channels of an attribute's rows.
pub(super) type Layout = (DataType, usize);

/// The fragment references of one object, in manifest order.
pub(super) struct ObjectRefs {
    /// The chunk (index in the scan) of each reference.
    pub(super) chunks: Vec<u32>,
    /// The fragment of each reference.
    pub(super) fragments: Vec<u64>,
    /// Whether the chunks never decrease (each reference's rows then follow the rows of the
    /// references before it as the chunks are walked in order).
    pub(super) ordered: bool,
    /// Per vertex attribute of the scan: the layout of the object's rows (`None`: no chunk
    /// of the object has the attribute).
    pub(super) attrs: Vec<Option<Layout>>,
}

/// Per vertex attribute of `scan`: its layout when every scanned chunk has the attribute with
/// that one layout (`None`: some chunk lacks it or stores it otherwise, so objects are
/// checked block by block).
pub(super) fn uniform_layouts(scan: &LevelScan) -> Vec<Option<Layout>> {
    (0..scan.infos.len())
        .map(|i| {
            let mut layouts = scan.chunks.iter().map(|c| {
                c.attributes
                    .get(i)
                    .and_then(Option::as_ref)
                    .map(|a| (a.data_type(), a.channels()))
            });
            let first = layouts.next().flatten()?;
            layouts.all(|l| l == Some(first)).then_some(first)
        })
        .collect()
}

impl Level {
    /// The references of object `id` (an existing id of the index); `uniform` is
    /// [`uniform_layouts`] of `scan`. A manifest naming a chunk the scan does not hold or a
    /// fragment past its chunk's count is an error naming the object index.
    pub(super) fn object_refs(
        &self,
        source: Manifests<'_>,
        id: u64,
        scan: &LevelScan,
        uniform: &[Option<Layout>],
    ) -> Result<ObjectRefs> {
        let mut out = ObjectRefs {
            chunks: Vec::new(),
            fragments: Vec::new(),
            ordered: true,
            attrs: vec![None; scan.infos.len()],
        };
        let mixed = uniform.iter().any(Option::is_none);
        let index = match source {
            Manifests::Decoded(index) => index,
            Manifests::Raw(raw) => {
                // any fault: the caller reads through the decoded index, which names it
                let fault = || Error::inconsistent(self.p(&[names::OBJECT_INDEX]), "raw");
                let mut failed = None;
                let mut first = true;
                raw.visit(id, |chunk, fragments| {
                    if failed.is_some() {
                        return;
                    }
                    if first {
                        out.attrs.copy_from_slice(uniform);
                        first = false;
                    }
                    failed = match self.add_block(&mut out, chunk, &fragments, scan, mixed) {
                        Ok(true) => None,
                        Ok(false) => Some(fault()),
                        Err(e) => Some(e),
                    };
                })
                .map_err(|_| fault())?;
                return failed.map_or(Ok(out), Err);
            }
        };
        let Some(manifest) = index.manifests.get(id as usize) else {
            return Ok(out);
        };
        if !manifest.blocks.is_empty() {
            out.attrs.copy_from_slice(uniform);
        }
        let n = manifest
            .blocks
            .iter()
            .map(|b| b.fragments.len())
            .sum::<usize>();
        // the sum of checked blocks is bounded by the chunks' fragment counts; reserve only
        // what the manifest's own bytes could name
        out.chunks.reserve(n.min(1 << 20));
        out.fragments.reserve(n.min(1 << 20));
        for (b, block) in manifest.blocks.iter().enumerate() {
            if !self.add_block(&mut out, &block.chunk, &block.fragments, scan, mixed)? {
                return Err(self.manifest_error(index, id, manifest, b, scan));
            }
        }
        Ok(out)
    }

    /// Adds the references of a block (fragments `fragments` of the chunk at `coords`) to
    /// `out`; `false` when the scan does not hold its chunk or the chunk has fewer fragments
    /// (nothing is added). `mixed`: the scan's chunks do not all store the attributes alike
    /// (each block's are merged in).
    #[inline]
    fn add_block(
        &self,
        out: &mut ObjectRefs,
        coords: &[i64],
        fragments: &BlockFragments,
        scan: &LevelScan,
        mixed: bool,
    ) -> Result<bool> {
        let Some(ci) = resolve(scan, coords, fragments) else {
            return Ok(false);
        };
        if mixed {
            self.merge_layouts(&mut out.attrs, &scan.chunks[ci], scan)?;
        }
        let ci = ci as u32;
        if out.chunks.last().is_some_and(|&last| last > ci) {
            out.ordered = false;
        }
        match fragments {
            BlockFragments::Single(f) => {
                out.fragments.push(*f);
                out.chunks.push(ci);
            }
            BlockFragments::Range { start, count } => {
                out.fragments.extend(*start..start + count);
                out.chunks.resize(out.fragments.len(), ci);
            }
            BlockFragments::Explicit(fs) => {
                out.fragments.extend_from_slice(fs);
                out.chunks.resize(out.fragments.len(), ci);
            }
        }
        Ok(true)
    }

    /// The layouts of the attributes of chunk `c` merged into one object's `attrs`: a layout
    /// other than the one before is an error naming the attribute.
    fn merge_layouts(
        &self,
        attrs: &mut [Option<Layout>],
        c: &ScannedChunk,
        scan: &LevelScan,
    ) -> Result<()> {
        for (i, a) in c.attributes.iter().enumerate() {
            let Some(a) = a else { continue };
            let layout = (a.data_type(), a.channels());
            match attrs[i] {
                None => attrs[i] = Some(layout),
                Some(l) if l != layout => {
                    let name = &scan.infos[i].name;
                    return Err(blob_err(self.p(&[names::VERTEX_ATTRIBUTES, name]))(
                        crate::layout::invalid(
                            "attribute rows",
                            "appending rows of another type or width",
                        ),
                    ));
                }
                Some(_) => {}
            }
        }
        Ok(())
    }

    /// The error of object `id`'s manifest, whose block `b` names a chunk the scan does not
    /// hold or fragments past its chunk's count.
    fn manifest_error(
        &self,
        index: &ObjectIndex,
        id: u64,
        manifest: &Manifest,
        b: usize,
        scan: &LevelScan,
    ) -> Error {
        let okey = self.p(&[names::OBJECT_INDEX, "zarr.json"]);
        match index.check_object(id, &okey, |c| scan.fragments_of(c)) {
            Err(e) => e,
            Ok(()) => Error::inconsistent(
                okey,
                format!(
                    "object {id}: block {b} of {} names a chunk not read",
                    manifest.blocks.len()
                ),
            ),
        }
    }
}

/// The scan index of the chunk at `coords`, if the scan holds it and it has every fragment of
/// `fragments`.
#[inline]
fn resolve(scan: &LevelScan, coords: &[i64], fragments: &BlockFragments) -> Option<usize> {
    let ci = scan.index(coords)?;
    let count = scan.chunks[ci].chunk.fragments.len() as u64;
    let in_bounds = match fragments {
        BlockFragments::Single(f) => *f < count,
        BlockFragments::Range { start, count: n } => {
            start.checked_add(*n).is_some_and(|e| e <= count)
        }
        BlockFragments::Explicit(v) => v.iter().all(|f| *f < count),
    };
    in_bounds.then_some(ci)
}
