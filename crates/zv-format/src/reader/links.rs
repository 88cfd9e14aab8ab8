//! Links as numbered vertices: the one path from the stored links of a level — the delta-0
//! rows of each chunk (for skeletons, the `[child, parent]` pairs read from them) and the
//! delta-0 cross-chunk records, swapped to `[child, parent]` where a skeleton stores them
//! parent first — to links between vertex numbers of the caller's choosing (an object's local
//! indices, level-global indices). The skeleton parent rules of [`super::skeleton`] and every
//! reader of links (objects, dump, export) start from here.

use std::sync::Arc;

use super::level_scan::ScannedChunk;
use super::{CrossChunk, Level};
use crate::blob::join;
use crate::error::{Error, Result};
use crate::geometry::Geometry;
use crate::layout::cross_chunk::CrossChunkLinks;
use crate::layout::links::LinkRows;
use crate::metadata::{ChunkKey, Layout};
use crate::names;

/// How an endpoint that the numbering does not hold is treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Endpoints {
    /// Every endpoint must be numbered (an unknown one is an error naming the blob); a
    /// cross-chunk record ends at its first placeholder endpoint.
    All,
    /// Links with an endpoint outside the numbering, and incomplete cross-chunk records, are
    /// left out: the links inside one object.
    Inside,
}

/// A stored link with numbered endpoints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NumberedLink {
    /// The endpoints; a skeleton link is `[child, parent]`.
    pub ends: Vec<u64>,
    /// The link's position among the stored link rows read — the chunks' rows in order, then
    /// the cross-chunk records — which is the order of link attribute values.
    pub ordinal: usize,
}

/// What numbering a level's links needs besides its chunks, read once.
#[derive(Debug)]
pub(crate) struct LinkSource {
    /// Whether the level holds a skeleton (chunk links are read as parent pairs).
    skeleton: bool,
    /// Whether the cross-chunk records are `(parent, child)`.
    parent_first: bool,
    /// The delta-0 cross-chunk records.
    ccl: Option<CrossChunk>,
    /// The path of the delta-0 link rows, for errors.
    links_path: String,
    /// The key of the cross-chunk records, for errors.
    ccl_key: String,
}

impl Level {
    /// The cross-chunk records and skeleton conventions that numbering the level's links
    /// needs, read once per level.
    pub(crate) fn link_source(&self) -> Result<Arc<LinkSource>> {
        super::cache::once(&self.cache.link_source, || {
            self.read_link_source(true).map(Arc::new)
        })
    }

    /// [`Level::link_source`] without the cross-chunk records (not cached): for a caller that
    /// reads them a batch at a time ([`Level::visit_cross_chunk_links`],
    /// [`LinkSource::number_records`]).
    pub(crate) fn link_conventions(&self) -> Result<LinkSource> {
        self.read_link_source(false)
    }

    fn read_link_source(&self, records: bool) -> Result<LinkSource> {
        let skeleton = self.geometry == Geometry::Skeleton;
        Ok(LinkSource {
            skeleton,
            parent_first: skeleton && self.skeleton_ccl_parent_first()?,
            ccl: if records {
                self.cross_chunk_links(0)?
            } else {
                None
            },
            links_path: self.p(&[&self.link_rows_array(0)?]),
            ccl_key: if self.blobs.layout() == Layout::ChunkGrid {
                self.p(&[names::LINKS, "0"])
            } else {
                self.p(&[names::CROSS_CHUNK_LINKS, "0", names::DATA])
            },
        })
    }
}

impl LinkSource {
    /// The number of delta-0 cross-chunk records (`None` without a `cross_chunk_links/0`
    /// group).
    pub(crate) fn records(&self) -> Option<usize> {
        self.ccl.as_ref().map(|c| c.links.len())
    }

    /// The stored links of `chunks` (their link rows, or skeleton parents, in the order
    /// given), then the cross-chunk records, with each endpoint `(chunk, row)` numbered by
    /// `number`.
    pub(crate) fn number<'a>(
        &self,
        chunks: impl IntoIterator<Item = &'a ScannedChunk>,
        mut number: impl FnMut(&ChunkKey, u64) -> Option<u64>,
        endpoints: Endpoints,
    ) -> Result<Vec<NumberedLink>> {
        let mut out = Vec::new();
        let mut ordinal = 0;
        for c in chunks {
            let Some(rows) = &c.links else { continue };
            self.number_chunk(
                c.key(),
                rows,
                &c.parents,
                ordinal,
                &mut number,
                endpoints,
                &mut out,
            )?;
            ordinal += rows.len();
        }
        self.number_cross_chunk(ordinal, &mut number, endpoints, &mut out)?;
        Ok(out)
    }

    /// Appends the stored links of chunk `key` — its link `rows`, or for skeletons its
    /// `parents` (as [`Level::skeleton_parents`] reads them) — numbered by `number`, their
    /// ordinals counted from `ordinal`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn number_chunk(
        &self,
        key: &ChunkKey,
        rows: &LinkRows,
        parents: &[(u64, u64, u64)],
        ordinal: usize,
        number: &mut impl FnMut(&ChunkKey, u64) -> Option<u64>,
        endpoints: Endpoints,
        out: &mut Vec<NumberedLink>,
    ) -> Result<()> {
        let stored: Vec<(Vec<u64>, u64)> = if self.skeleton {
            parents
                .iter()
                .map(|&(ch, p, lr)| (vec![ch, p], lr))
                .collect()
        } else {
            rows.rows()
                .enumerate()
                .map(|(i, r)| (r.iter().map(|&v| v as u64).collect(), i as u64))
                .collect()
        };
        for (ends, lr) in stored {
            let numbered: Option<Vec<u64>> = ends.iter().map(|&r| number(key, r)).collect();
            match (numbered, endpoints) {
                (Some(ends), _) => out.push(NumberedLink {
                    ends,
                    ordinal: ordinal + lr as usize,
                }),
                (None, Endpoints::Inside) => {}
                (None, Endpoints::All) => {
                    return Err(Error::inconsistent(
                        join(&[&self.links_path, &key.to_string()]),
                        format!("link row {lr} ({ends:?}) is outside the chunk"),
                    ))
                }
            }
        }
        Ok(())
    }

    /// Appends the cross-chunk records (if any), numbered by `number`, their ordinals counted
    /// from `ordinal` (the number of chunk link rows before them).
    pub(crate) fn number_cross_chunk(
        &self,
        ordinal: usize,
        number: &mut impl FnMut(&ChunkKey, u64) -> Option<u64>,
        endpoints: Endpoints,
        out: &mut Vec<NumberedLink>,
    ) -> Result<()> {
        match &self.ccl {
            Some(ccl) => {
                let all = 0..ccl.links.len();
                self.number_records(&ccl.links, ordinal, all, number, endpoints, out)
            }
            None => Ok(()),
        }
    }

    /// Appends the cross-chunk records `links` in `range` (records of the level's delta-0
    /// group, read by the caller: all of them, or a batch of
    /// [`Level::visit_cross_chunk_links`]), numbered by `number`; record `r`'s ordinal is
    /// `ordinal + r` whatever the range. Records past the last are none.
    pub(crate) fn number_records(
        &self,
        l: &CrossChunkLinks,
        ordinal: usize,
        range: std::ops::Range<usize>,
        number: &mut impl FnMut(&ChunkKey, u64) -> Option<u64>,
        endpoints: Endpoints,
        out: &mut Vec<NumberedLink>,
    ) -> Result<()> {
        for r in range.start..range.end.min(l.len()) {
            let mut ends = Vec::with_capacity(l.link_width());
            for e in 0..l.link_width() {
                let Some((coords, row)) = l.endpoint(r, e) else {
                    break;
                };
                let key = ChunkKey(coords.to_vec());
                match (number(&key, row), endpoints) {
                    (Some(n), _) => ends.push(n),
                    (None, Endpoints::Inside) => break,
                    (None, Endpoints::All) => {
                        return Err(Error::inconsistent(
                            &self.ccl_key,
                            format!(
                                "record {r} names row {row} of chunk {key}, which does not exist"
                            ),
                        ))
                    }
                }
            }
            if endpoints == Endpoints::Inside && ends.len() < l.link_width() {
                continue;
            }
            if self.parent_first {
                ends.reverse();
            }
            out.push(NumberedLink {
                ends,
                ordinal: ordinal + r,
            });
        }
        Ok(())
    }
}
