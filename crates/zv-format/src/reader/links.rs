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
        mut number: impl FnMut(&[i64], u64) -> Option<u64>,
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
        number: &mut impl FnMut(&[i64], u64) -> Option<u64>,
        endpoints: Endpoints,
        out: &mut Vec<NumberedLink>,
    ) -> Result<()> {
        let coords = key.coords();
        // one link at a time, numbered into the vector it is kept in
        let mut one = |ends: &[u64], lr: u64| -> Result<()> {
            let numbered: Option<Vec<u64>> = ends.iter().map(|&r| number(coords, r)).collect();
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
            Ok(())
        };
        if self.skeleton {
            for &(ch, p, lr) in parents {
                one(&[ch, p], lr)?;
            }
        } else {
            let mut ends = Vec::with_capacity(rows.link_width());
            for (i, r) in rows.rows().enumerate() {
                ends.clear();
                ends.extend(r.iter().map(|&v| v as u64));
                one(&ends, i as u64)?;
            }
        }
        Ok(())
    }

    /// Appends the cross-chunk records (if any), numbered by `number`, their ordinals counted
    /// from `ordinal` (the number of chunk link rows before them).
    pub(crate) fn number_cross_chunk(
        &self,
        ordinal: usize,
        number: &mut impl FnMut(&[i64], u64) -> Option<u64>,
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
        number: &mut impl FnMut(&[i64], u64) -> Option<u64>,
        endpoints: Endpoints,
        out: &mut Vec<NumberedLink>,
    ) -> Result<()> {
        for r in range.start..range.end.min(l.len()) {
            let mut ends = Vec::with_capacity(l.link_width());
            for e in 0..l.link_width() {
                let Some((coords, row)) = l.endpoint(r, e) else {
                    break;
                };
                match (number(coords, row), endpoints) {
                    (Some(n), _) => ends.push(n),
                    (None, Endpoints::Inside) => break,
                    (None, Endpoints::All) => {
                        return Err(Error::inconsistent(
                            &self.ccl_key,
                            format!(
                                "record {r} names row {row} of chunk {}, which does not exist",
                                ChunkKey(coords.to_vec())
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

#[cfg(test)]
mod tests {
    use super::*;

    fn source(skeleton: bool, parent_first: bool) -> LinkSource {
        LinkSource {
            skeleton,
            parent_first,
            ccl: None,
            links_path: "0/links/0".into(),
            ccl_key: "0/cross_chunk_links/0/data".into(),
        }
    }

    /// Chunk `[1, 2]` has rows 0..3, numbered from 10; chunk `[5, 5]` rows 0..2 from 20.
    fn number(k: &[i64], r: u64) -> Option<u64> {
        match k {
            [1, 2] => (r < 3).then_some(10 + r),
            [5, 5] => (r < 2).then_some(20 + r),
            _ => None,
        }
    }

    #[test]
    fn chunk_rows_are_numbered_and_a_row_outside_is_left_out_or_named() {
        let key = ChunkKey(vec![1, 2]);
        let rows = LinkRows::new(2, vec![0, 1, 2, 7, 2, 0]).unwrap();
        let mut out = Vec::new();
        let s = source(false, false);
        s.number_chunk(
            &key,
            &rows,
            &[],
            4,
            &mut number,
            Endpoints::Inside,
            &mut out,
        )
        .unwrap();
        let got: Vec<(Vec<u64>, usize)> = out.iter().map(|l| (l.ends.clone(), l.ordinal)).collect();
        assert_eq!(got, vec![(vec![10, 11], 4), (vec![12, 10], 6)]);
        let e = s
            .number_chunk(&key, &rows, &[], 0, &mut number, Endpoints::All, &mut out)
            .unwrap_err()
            .to_string();
        assert!(e.contains("0/links/0/1.2"), "{e}");
        assert!(
            e.contains("link row 1 ([2, 7]) is outside the chunk"),
            "{e}"
        );
        // skeletons: the parent pairs, not the rows
        out.clear();
        source(true, false)
            .number_chunk(
                &key,
                &rows,
                &[(2, 0, 5)],
                0,
                &mut number,
                Endpoints::All,
                &mut out,
            )
            .unwrap();
        assert_eq!(
            out,
            vec![NumberedLink {
                ends: vec![12, 10],
                ordinal: 5
            }]
        );
    }

    #[test]
    fn records_are_numbered_swapped_for_parent_first_and_an_unknown_end_is_named() {
        let mut records = CrossChunkLinks::new(2, 2);
        records.push(&[(&[1, 2], 1), (&[5, 5], 0)]).unwrap();
        records.push(&[(&[5, 5], 1), (&[9, 9], 0)]).unwrap();
        records.push(&[(&[5, 5], 1), (&[1, 2], 2)]).unwrap();
        let mut out = Vec::new();
        source(true, true)
            .number_records(
                &records,
                100,
                0..9,
                &mut number,
                Endpoints::Inside,
                &mut out,
            )
            .unwrap();
        let got: Vec<(Vec<u64>, usize)> = out.iter().map(|l| (l.ends.clone(), l.ordinal)).collect();
        assert_eq!(got, vec![(vec![20, 11], 100), (vec![12, 21], 102)]);
        let e = source(false, false)
            .number_records(&records, 0, 0..3, &mut number, Endpoints::All, &mut out)
            .unwrap_err()
            .to_string();
        assert!(e.contains("0/cross_chunk_links/0/data"), "{e}");
        assert!(e.contains("record 1 names row 0 of chunk"), "{e}");
        assert!(e.contains("which does not exist"), "{e}");
    }
}
