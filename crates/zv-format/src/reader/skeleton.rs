//! Skeleton parents: how a skeleton's stored links give each vertex its parent.
//!
//! - Stored rows ([`Level::skeleton_parents`]): width 2 rows are `[child, parent]` (the
//!   reference's form); width 1 rows are parents tied to vertex fragments by `link_fragments`
//!   (the spec's form).
//! - Cross-chunk records are `(parent, child)` in stores whose `links/0` has width 1, else
//!   `(child, parent)` ([`Level::skeleton_ccl_parent_first`]; swapped by
//!   [`super::links`]).
//! - zv's rule ([`fragment_parents`]): inside each fragment, a vertex's parent is the vertex
//!   before it; stored links override.
//! - The reference's rule ([`reference_parents`], used by the dump only): level-global
//!   `parent(i) = i − 1`, overridden by stored links (vertex 0 has a parent only when a
//!   link gives it one).

use super::links::NumberedLink;
use super::Level;
use crate::error::{Error, Result};
use crate::layout::fragment_index::FragmentIndex;
use crate::layout::links::LinkRows;
use crate::metadata::ChunkKey;
use crate::names;

impl Level {
    /// Whether skeleton cross-chunk records are `(parent, child)` (the spec's form, taken for
    /// stores whose `links/0` has `link_width` 1) rather than the reference's
    /// `(child, parent)` (every other store).
    pub fn skeleton_ccl_parent_first(&self) -> Result<bool> {
        Ok(self.link_width()? == 1)
    }

    /// The explicit parents stored in chunk `key`'s `links/0` rows of a skeleton, as
    /// `(child row, parent row, link row)`. Rows of width 2 are `[child, parent]` (the reference's
    /// form). Rows of width 1 (the spec's form) are parents: the rows of link fragment `k`
    /// (at most one) give the parent of the first row of vertex fragment `k`, the other rows
    /// of a fragment having the implicit sequential parent.
    pub fn skeleton_parents(
        &self,
        key: &ChunkKey,
        fragments: &FragmentIndex,
        links: &LinkRows,
    ) -> Result<Vec<(u64, u64, u64)>> {
        let path = self.chunk_blob(&[&self.link_rows_array(0)?], key);
        match links.link_width() {
            2 => Ok(links
                .rows()
                .enumerate()
                .map(|(i, r)| (r[0] as u64, r[1] as u64, i as u64))
                .collect()),
            1 => self.width_one_parents(key, &path, fragments, links),
            w => Err(Error::inconsistent(
                &path,
                format!("skeleton links have width {w} (1 or 2 expected)"),
            )),
        }
    }

    /// [`Level::skeleton_parents`] of width-1 rows, through the chunk's link fragments.
    fn width_one_parents(
        &self,
        key: &ChunkKey,
        path: &str,
        fragments: &FragmentIndex,
        links: &LinkRows,
    ) -> Result<Vec<(u64, u64, u64)>> {
        let lf = self
            .link_fragments(key, links.len() as u64)?
            .ok_or_else(|| Error::Missing {
                key: self.blobs.missing_key(&self.p(&[names::LINK_FRAGMENTS, &key.to_string()])),
                what: format!(
                    "the link fragments that tie the width-1 parent rows of `{path}` to vertex fragments"
                ),
            })?;
        if lf.len() != fragments.len() {
            return Err(Error::inconsistent(
                path,
                format!(
                    "{} link fragments for {} vertex fragments (width-1 parent rows need one per vertex fragment)",
                    lf.len(),
                    fragments.len()
                ),
            ));
        }
        let mut out = Vec::new();
        for (k, (lrows, vrows)) in lf.iter().zip(fragments.iter()).enumerate() {
            let mut it = lrows.iter();
            let Some(lr) = it.next() else { continue };
            if it.next().is_some() {
                return Err(Error::inconsistent(
                    path,
                    format!("link fragment {k} holds more than one parent row"),
                ));
            }
            let child = vrows.iter().next().ok_or_else(|| {
                Error::inconsistent(
                    path,
                    format!(
                        "link fragment {k} gives a parent to vertex fragment {k}, which is empty"
                    ),
                )
            })?;
            let parent = links
                .row(lr as usize)
                .map(|r| r[0] as u64)
                .ok_or_else(|| Error::inconsistent(path, format!("link row {lr}")))?;
            out.push((child, parent, lr));
        }
        Ok(out)
    }
}

/// zv's skeleton rule inside one chunk of `rows` vertex rows: the `(child, parent)` row
/// pairs of the chunk, each vertex's parent being the vertex before it in its fragment of
/// `fragments`, overridden by the `stored` `(child row, parent row, link row)` triples of
/// [`Level::skeleton_parents`]. Parents given by cross-chunk records are not applied here:
/// a caller drops the pairs of the children those records name. For drawing a skeleton chunk
/// by chunk without numbering the level.
pub fn chunk_parents(
    rows: u64,
    fragments: &FragmentIndex,
    stored: &[(u64, u64, u64)],
) -> Vec<(u64, u64)> {
    let links: Vec<NumberedLink> = stored
        .iter()
        .map(|&(c, p, lr)| NumberedLink {
            ends: vec![c, p],
            ordinal: lr as usize,
        })
        .collect();
    let spans = fragments.iter().map(|f| f.iter().collect::<Vec<u64>>());
    fragment_parents(rows, spans, &links)
        .into_iter()
        .map(|(c, p, _)| (c, p))
        .collect()
}

/// A vertex's parent: `(child, parent, ordinal of the stored link)`, the ordinal `None` for
/// an implicit parent.
pub(crate) type Parent = (u64, u64, Option<usize>);

/// zv's skeleton rule over `n` numbered vertices: inside each fragment (its vertices in
/// order), a vertex's parent is the vertex before it; then each stored `[child, parent]`
/// link overrides (later links win). One entry per vertex that has a parent, in child order.
pub(crate) fn fragment_parents<F: IntoIterator<Item = u64>>(
    n: u64,
    fragments: impl IntoIterator<Item = F>,
    links: &[NumberedLink],
) -> Vec<Parent> {
    fragment_parents_in(0, n, fragments, links)
}

/// [`fragment_parents`] for the vertices `first..first + n` of a larger numbering (one
/// chunk of a level): `fragments` lie in that range, links whose child lies outside it are
/// ignored, parents may be anywhere. The rule is per child, so a level's parents are its
/// chunks' parents back to back when each chunk gets its own links and the cross-chunk
/// links whose child it holds (in their order).
pub(crate) fn fragment_parents_in<F: IntoIterator<Item = u64>>(
    first: u64,
    n: u64,
    fragments: impl IntoIterator<Item = F>,
    links: &[NumberedLink],
) -> Vec<Parent> {
    let mut parent: Vec<Option<(u64, Option<usize>)>> = vec![None; n as usize];
    let slot = |v: u64| v.checked_sub(first).map(|i| i as usize);
    for fragment in fragments {
        let mut prev = None;
        for v in fragment {
            if let (Some(p), Some(s)) = (prev, slot(v).and_then(|i| parent.get_mut(i))) {
                *s = Some((p, None));
            }
            prev = Some(v);
        }
    }
    override_parents(first, parent, links)
}

/// The reference's skeleton rule over `n` level-global vertices: `parent(i) = i − 1` for
/// every `i > 0`, overridden by each stored `[child, parent]` link (later links win; the
/// reference's `read_graph` overrides vertex 0's entry like any other). In child order.
pub(crate) fn reference_parents(n: u64, links: &[NumberedLink]) -> Vec<Parent> {
    let parent = (0..n).map(|i| (i > 0).then(|| (i - 1, None))).collect();
    override_parents(0, parent, links)
}

/// Applies the stored `[child, parent]` links (other widths, and children outside
/// `first..first + parent.len()`, are ignored) to `parent` (indexed by child − `first`), and
/// lists the vertices that have one.
fn override_parents(
    first: u64,
    mut parent: Vec<Option<(u64, Option<usize>)>>,
    links: &[NumberedLink],
) -> Vec<Parent> {
    for l in links {
        if let [c, p] = l.ends.as_slice() {
            let i = c.checked_sub(first).map(|i| i as usize);
            if let Some(slot) = i.and_then(|i| parent.get_mut(i)) {
                *slot = Some((*p, Some(l.ordinal)));
            }
        }
    }
    parent
        .into_iter()
        .enumerate()
        .filter_map(|(c, x)| x.map(|(p, o)| (first + c as u64, p, o)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_parents_are_sequential_per_fragment_then_stored() {
        // fragments [0, 1, 2] and [3, 4]; a stored link makes 3's parent 1 and overrides 4's
        let fragments = FragmentIndex::consecutive(&[3, 2]).unwrap();
        let parents = chunk_parents(5, &fragments, &[(3, 1, 0), (4, 0, 1)]);
        assert_eq!(parents, vec![(1, 0), (2, 1), (3, 1), (4, 0)]);
        assert!(chunk_parents(2, &FragmentIndex::default(), &[]).is_empty());
    }
}
