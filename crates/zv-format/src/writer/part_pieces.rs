//! Polylines in a distributed write ([`crate::parts`]). A part takes whole polylines (every
//! part owning one of a polyline's chunks gets the polyline) and keeps the pieces in its own
//! chunks; the other pieces still count, so each kept piece carries its number in the
//! polyline. The receipt lists the kept pieces (polyline, number, chunk, fragment, first and
//! last row) and the polylines the part saw with their piece counts. The commit joins every
//! part's pieces into each polyline's pieces in path order and makes the cross-chunk record
//! between consecutive pieces in different chunks, from the last row of one to the first row
//! of the next — what a single writer records as it goes.

use rayon::prelude::*;

use super::polylines::Polylines;
use crate::error::{Error, InputItem, Result};
use crate::parts::PieceReceipt;

/// The pieces a part keeps, and the polylines it saw.
#[derive(Debug, Clone, Default)]
pub(super) struct PartPieces {
    /// The pieces kept, in the order they were started.
    pieces: Vec<PieceReceipt>,
    /// `[polyline, pieces in all chunks]` of each polyline with a piece kept here, or with no
    /// vertices at all.
    seen: Vec<[u64; 2]>,
    /// The id after the last polyline given.
    next: u64,
    /// The current polyline: its id, its pieces so far, and whether one is kept.
    current: Option<(u64, u64, bool)>,
}

impl PartPieces {
    /// The id after the last polyline given (the next polyline's id by default).
    pub(super) fn next_id(&self) -> u64 {
        self.next
    }

    /// Starts polyline `id`.
    pub(super) fn begin(&mut self, id: u64) {
        self.next = id.saturating_add(1);
        self.current = Some((id, 0, false));
    }

    /// Counts a piece in another part's chunk.
    pub(super) fn skip_piece(&mut self) {
        if let Some(c) = &mut self.current {
            c.1 += 1;
        }
    }

    /// Starts a kept piece in chunk `chunk` (the part's index) at `row`, fragment `fragment`.
    pub(super) fn start_piece(&mut self, chunk: u32, row: u64, fragment: u64) {
        if let Some((id, seq, kept)) = &mut self.current {
            self.pieces.push(PieceReceipt {
                polyline: *id,
                seq: *seq,
                chunk: u64::from(chunk),
                fragment,
                first_row: row,
                last_row: row,
            });
            *seq += 1;
            *kept = true;
        }
    }

    /// The current piece reaches `row`.
    pub(super) fn extend_piece(&mut self, row: u64) {
        if let Some(p) = self.pieces.last_mut() {
            p.last_row = row;
        }
    }

    /// Ends the current polyline.
    pub(super) fn end(&mut self) {
        if let Some((id, seq, kept)) = self.current.take() {
            if kept || seq == 0 {
                self.seen.push([id, seq]);
            }
        }
    }

    /// The kept pieces and the polylines seen, for the receipt.
    pub(super) fn into_receipt(self) -> (Vec<PieceReceipt>, Vec<[u64; 2]>) {
        (self.pieces, self.seen)
    }
}

/// One part's pieces for the commit: its receipt's pieces and polylines, with the commit's
/// index of each of the part's chunks.
pub(super) struct PartInput {
    /// The part's number (named in errors).
    pub(super) part: u32,
    /// The commit's chunk index of each chunk of the receipt.
    pub(super) chunks: Vec<u32>,
    /// The receipt's pieces.
    pub(super) pieces: Vec<PieceReceipt>,
    /// The receipt's polylines and piece counts.
    pub(super) seen: Vec<[u64; 2]>,
}

/// A piece placed in the commit's chunks: polyline, number, chunk, fragment, first and last
/// row.
type Placed = (u64, u64, u32, u64, u64, u64);

/// Joins the parts' pieces (see the [module docs](self)) into polylines `0..P`, `P` the
/// larger of `at_least` and the largest polyline seen + 1. `rows[ci]` is chunk `ci`'s row
/// count. Every polyline below `P` must be seen by a part and have each of its pieces kept by
/// exactly one; each chunk's fragments must be its pieces, each once. Returns the polylines
/// and each chunk's piece count.
pub(super) fn join(
    parts: Vec<PartInput>,
    at_least: u64,
    rows: &[u64],
) -> Result<(Polylines, Vec<u64>)> {
    let mut seen: Vec<[u64; 2]> = Vec::new();
    let mut placed: Vec<Placed> = Vec::new();
    for p in parts {
        for piece in &p.pieces {
            let ci = usize::try_from(piece.chunk)
                .ok()
                .and_then(|c| p.chunks.get(c))
                .copied()
                .ok_or_else(|| {
                    part_error(
                        p.part,
                        format!("a piece names chunk {} of its receipt", piece.chunk),
                    )
                })?;
            let in_chunk = rows.get(ci as usize).copied().unwrap_or(0);
            if piece.first_row > piece.last_row || piece.last_row >= in_chunk {
                return Err(part_error(
                    p.part,
                    format!(
                        "a piece of polyline {} has rows {}..={} in a chunk of {in_chunk}",
                        piece.polyline, piece.first_row, piece.last_row
                    ),
                ));
            }
            placed.push((
                piece.polyline,
                piece.seq,
                ci,
                piece.fragment,
                piece.first_row,
                piece.last_row,
            ));
        }
        seen.extend(p.seen);
    }
    seen.par_sort_unstable();
    seen.dedup();
    placed.par_sort_unstable_by_key(|p| (p.0, p.1));
    let count = seen
        .last()
        .map_or(0, |s| s[0].saturating_add(1))
        .max(at_least);
    let mut out = Polylines::default();
    let mut segments = vec![0u64; rows.len()];
    let mut next = placed.iter().peekable();
    let mut declared = seen.iter().peekable();
    for id in 0..count {
        let polyline = || InputItem::Polyline(id);
        let Some(&[_, n]) = declared.next_if(|s| s[0] == id) else {
            return Err(Error::input(
                polyline(),
                "is in no part's receipt (no part owning one of its chunks was given it)",
            ));
        };
        if let Some(&&[_, other]) = declared.peek().filter(|s| s[0] == id) {
            return Err(Error::input(
                polyline(),
                format!("has {n} pieces in one part's receipt, {other} in another's"),
            ));
        }
        out.begin_joined();
        let mut prev: Option<&Placed> = None;
        for seq in 0..n {
            let Some(p) = next.next_if(|p| p.0 == id) else {
                return Err(missing_piece(id, seq, n));
            };
            if p.1 != seq {
                return Err(if p.1 < seq {
                    Error::input(polyline(), format!("has piece {} in two parts", p.1))
                } else {
                    missing_piece(id, seq, n)
                });
            }
            let segment = &mut segments[p.2 as usize];
            *segment += 1;
            out.push_joined(prev.map(|q| (q.2, q.5)), p.2, p.4, p.3)?;
            prev = Some(p);
        }
        if let Some(p) = next.next_if(|p| p.0 == id) {
            return Err(Error::input(
                polyline(),
                if p.1 < n {
                    format!("has piece {} in two parts", p.1)
                } else {
                    format!("has piece {} of {n} in a receipt", p.1)
                },
            ));
        }
    }
    if let Some(p) = next.next() {
        return Err(Error::input(
            InputItem::Polyline(p.0),
            "has pieces but no part saw the polyline",
        ));
    }
    check_fragments(&placed, &segments)?;
    Ok((out, segments))
}

/// Each chunk's fragments are its pieces, each once: `0..segments[ci]`.
fn check_fragments(placed: &[Placed], segments: &[u64]) -> Result<()> {
    let mut taken: Vec<Vec<bool>> = segments.iter().map(|&n| vec![false; n as usize]).collect();
    for p in placed {
        let slot = taken[p.2 as usize].get_mut(p.3 as usize);
        match slot {
            Some(s) if !*s => *s = true,
            _ => {
                return Err(Error::input(
                    InputItem::Polyline(p.0),
                    format!(
                        "piece {} is fragment {} of a chunk with {} pieces, or shares it",
                        p.1, p.3, segments[p.2 as usize]
                    ),
                ))
            }
        }
    }
    Ok(())
}

/// Piece `seq` of the `n` of polyline `id` is in no receipt.
fn missing_piece(id: u64, seq: u64, n: u64) -> Error {
    Error::input(
        InputItem::Polyline(id),
        format!(
            "piece {seq} of its {n} is in no receipt (the part owning its chunk was not given the polyline)"
        ),
    )
}

/// An error in part `part`'s receipt.
fn part_error(part: u32, reason: String) -> Error {
    Error::InvalidInput(format!("part {part}'s receipt: {reason}"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn piece(polyline: u64, seq: u64, chunk: u64, fragment: u64, rows: (u64, u64)) -> PieceReceipt {
        PieceReceipt {
            polyline,
            seq,
            chunk,
            fragment,
            first_row: rows.0,
            last_row: rows.1,
        }
    }

    fn input(part: u32, pieces: Vec<PieceReceipt>, seen: Vec<[u64; 2]>) -> PartInput {
        PartInput {
            part,
            chunks: vec![0, 1],
            pieces,
            seen,
        }
    }

    fn err(parts: Vec<PartInput>, at_least: u64) -> String {
        join(parts, at_least, &[10, 10]).unwrap_err().to_string()
    }

    #[test]
    fn pieces_join_into_paths_with_crossings() {
        // polyline 0: chunk 0 rows 0..=2, chunk 1 rows 0..=1, chunk 0 row 3; polyline 1 empty
        let a = input(
            0,
            vec![piece(0, 0, 0, 0, (0, 2)), piece(0, 2, 0, 1, (3, 3))],
            vec![[0, 3], [1, 0]],
        );
        let b = input(1, vec![piece(0, 1, 1, 0, (0, 1))], vec![[0, 3]]);
        let (p, segments) = join(vec![b, a], 2, &[4, 2]).unwrap();
        assert_eq!(p.count(), 2);
        assert_eq!(segments, vec![2, 1]);
        let paths: Vec<Vec<(u32, u32)>> = p.pieces().map(<[_]>::to_vec).collect();
        assert_eq!(paths, vec![vec![(0, 0), (1, 0), (0, 1)], vec![]]);
        assert_eq!(p.crossings(), &[[0, 2, 1, 0], [1, 1, 0, 3]]);
    }

    #[test]
    fn inconsistent_receipts_are_errors_naming_the_polyline() {
        let whole = || input(0, vec![piece(0, 0, 0, 0, (0, 1))], vec![[0, 1]]);
        // a piece twice
        let e = err(
            vec![
                whole(),
                input(1, vec![piece(0, 0, 1, 0, (0, 0))], vec![[0, 1]]),
            ],
            1,
        );
        assert!(e.contains("polyline 0") && e.contains("two parts"), "{e}");
        // parts disagree on the count
        let e = err(vec![whole(), input(1, vec![], vec![[0, 2]])], 1);
        assert!(e.contains("1 pieces in one part's receipt, 2"), "{e}");
        // a polyline below the count that no part saw
        let e = err(vec![whole()], 2);
        assert!(
            e.contains("polyline 1") && e.contains("no part's receipt"),
            "{e}"
        );
        // rows beyond the chunk, a chunk the receipt does not have, a fragment used twice
        let e = err(
            vec![input(0, vec![piece(0, 0, 0, 0, (3, 12))], vec![[0, 1]])],
            1,
        );
        assert!(e.contains("rows 3..=12 in a chunk of 10"), "{e}");
        let e = err(
            vec![input(0, vec![piece(0, 0, 5, 0, (0, 0))], vec![[0, 1]])],
            1,
        );
        assert!(e.contains("names chunk 5"), "{e}");
        let e = err(
            vec![input(
                0,
                vec![piece(0, 0, 0, 0, (0, 0)), piece(0, 1, 0, 0, (1, 1))],
                vec![[0, 2]],
            )],
            1,
        );
        assert!(e.contains("fragment 0") && e.contains("shares it"), "{e}");
        // a piece past the count its polyline has, pieces of a polyline nobody saw
        let e = err(
            vec![input(
                0,
                vec![piece(0, 0, 0, 0, (0, 0)), piece(0, 1, 1, 0, (0, 0))],
                vec![[0, 1]],
            )],
            1,
        );
        assert!(e.contains("piece 1 of 1"), "{e}");
        let e = err(
            vec![input(0, vec![piece(3, 0, 0, 0, (0, 0))], vec![[0, 0]])],
            1,
        );
        assert!(e.contains("polyline 3") && e.contains("no part saw"), "{e}");
    }
}
