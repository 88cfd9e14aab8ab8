//! Filing a family's cross-chunk records into their cells (the rule of the
//! [parent module](super)): [`CellPlan`] without holding the records, [`partition`] with
//! every cell's rows.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use super::super::cross_chunk::CrossChunkLinks;
use super::super::{invalid, LayoutError};
use super::{format_segment, has_perm, lehmer_encode, WHAT};

/// One cell of a family's cross-chunk records.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cell {
    /// The cell's flat int64 rows `[perm_idx?, v_0, …]`.
    pub rows: Vec<i64>,
    /// The record each row is, by its index in the records partitioned (the rows of the
    /// cell's link attributes follow them).
    pub records: Vec<usize>,
}

/// The cells of a family's cross-chunk records: `(segment, source chunk)` → the cell.
pub type Cells = BTreeMap<(String, Vec<i64>), Cell>;

/// The endpoints `(chunk coordinates, row)` of a record, borrowed from where the records are.
pub type Ends<'a> = Vec<(&'a [i64], u64)>;

/// Where records' endpoints come from: `ends(r, out)` appends record `r`'s endpoints to `out`.
pub trait EndsFn<'a>: Fn(usize, &mut Ends<'a>) -> Result<(), LayoutError> {}

impl<'a, F: Fn(usize, &mut Ends<'a>) -> Result<(), LayoutError>> EndsFn<'a> for F {}

/// The cells of the cross-chunk records `links` of a delta-0 family with `canonical`
/// storage: `(segment, source chunk)` → the cell's flat int64 rows `[perm_idx?, v_0, …]`
/// (`perm_idx` when the family is undirected) and their records, in the order given. Every record
/// must span at least two chunks; a record within one chunk, an offset that overflows or a
/// width without Lehmer codes is an error. The rows of every cell at once; [`CellPlan`] files
/// records without holding them.
pub fn partition(links: &CrossChunkLinks, directed: bool) -> Result<Cells, LayoutError> {
    let ends = ends_of(links);
    let plan = CellPlan::new(links.len(), directed, &ends)?;
    plan.cells()
        .map(|cell| {
            let rows = plan.rows(cell.records, &ends)?;
            let key = (cell.segment.to_owned(), cell.source.to_vec());
            Ok((
                key,
                Cell {
                    rows,
                    records: cell.records.to_vec(),
                },
            ))
        })
        .collect()
}

/// The endpoints of the records of `links`, as [`CellPlan`] takes them (a record past the
/// end is an error).
pub fn ends_of<'a>(links: &'a CrossChunkLinks) -> impl EndsFn<'a> + 'a {
    move |r, out| {
        for k in 0..links.link_width() {
            out.push(
                links
                    .endpoint(r, k)
                    .ok_or_else(|| invalid(WHAT, format!("record {r} is incomplete")))?,
            );
        }
        Ok(())
    }
}

/// Files record `r` with endpoints `ends`: the endpoint order into `sigma` (sorted by
/// `(chunk coordinates, row)` when undirected, as written when directed; `sigma[0]` is the
/// source) and the chunk offsets of the other endpoints from the source into `offsets`
/// (flat, in `sigma` order). A record within one chunk or an offset that overflows is an
/// error. The one placement rule of the module docs.
fn file(
    r: usize,
    ends: &[(&[i64], u64)],
    directed: bool,
    sigma: &mut Vec<usize>,
    offsets: &mut Vec<i64>,
) -> Result<(), LayoutError> {
    if ends.iter().all(|e| e.0 == ends[0].0) {
        return Err(invalid(
            WHAT,
            format!("record {r} lies within one chunk (an intra-chunk link)"),
        ));
    }
    sigma.clear();
    sigma.extend(0..ends.len());
    if !directed {
        sigma.sort_by(|&a, &b| ends[a].cmp(&ends[b]));
    }
    let source = ends[sigma[0]].0;
    offsets.clear();
    for &j in &sigma[1..] {
        for (c, s) in ends[j].0.iter().zip(source) {
            let o = c
                .checked_sub(*s)
                .ok_or_else(|| invalid(WHAT, format!("record {r}: a chunk offset overflows")))?;
            offsets.push(o);
        }
    }
    Ok(())
}

/// One cell of a [`CellPlan`].
#[derive(Debug, Clone, Copy)]
pub struct PlannedCell<'p> {
    /// The offsets segment.
    pub segment: &'p str,
    /// The source chunk's coordinates.
    pub source: &'p [i64],
    /// The records filed in the cell, in the order given.
    pub records: &'p [usize],
}

/// Where a family's cross-chunk records are filed, without their rows: each record's cell
/// (segment, source chunk), by the rule of the module docs. A writer files a level's records
/// from its links and the vertices' places, and makes each cell's rows as it writes the cell
/// ([`CellPlan::rows`]): 16 bytes a record while planned, instead of the records (64 bytes an
/// edge over three axes) and the cells' rows at once.
#[derive(Debug)]
pub struct CellPlan<'a> {
    directed: bool,
    width: usize,
    segments: Vec<String>,
    sources: Vec<&'a [i64]>,
    /// The records in cell order.
    records: Vec<usize>,
    /// Per cell: segment, source, the end of its records in `records`.
    cells: Vec<(u32, u32, usize)>,
}

impl<'a> CellPlan<'a> {
    /// Files `count` records; `ends(r, out)` appends record `r`'s endpoints to `out` (each
    /// record must have as many as the first). Cells are ordered by segment name, then
    /// source chunk coordinates; a cell's records keep the order given. Errors are those of
    /// `ends` and of the rule (a record within one chunk, an overflowing offset, a width
    /// that differs or has no Lehmer code in an undirected family).
    pub fn new(
        count: usize,
        directed: bool,
        mut ends: impl FnMut(usize, &mut Ends<'a>) -> Result<(), LayoutError>,
    ) -> Result<Self, LayoutError> {
        let mut segment_ids: FxHashMap<Vec<i64>, u32> = FxHashMap::default();
        let mut offsets_of: Vec<Vec<i64>> = Vec::new();
        let mut source_ids: FxHashMap<&'a [i64], u32> = FxHashMap::default();
        let mut sources: Vec<&'a [i64]> = Vec::new();
        let mut entries: Vec<(u32, u32, usize)> = Vec::new();
        entries
            .try_reserve_exact(count)
            .map_err(|_| invalid(WHAT, format!("no memory to file {count} records")))?;
        let (mut out, mut sigma, mut offsets) = (Ends::new(), Vec::new(), Vec::new());
        let mut width = None;
        for r in 0..count {
            out.clear();
            ends(r, &mut out)?;
            let w = *width.get_or_insert(out.len());
            if out.len() != w || w == 0 {
                return Err(invalid(
                    WHAT,
                    format!("record {r} has {} endpoints, the first {w}", out.len()),
                ));
            }
            file(r, &out, directed, &mut sigma, &mut offsets)?;
            let next = segment_ids.len() as u32;
            let segment = match segment_ids.get(offsets.as_slice()) {
                Some(&id) => id,
                None => {
                    segment_ids.insert(offsets.clone(), next);
                    offsets_of.push(offsets.clone());
                    next
                }
            };
            let source = out[sigma[0]].0;
            let next = sources.len() as u32;
            let source = *source_ids.entry(source).or_insert_with(|| {
                sources.push(source);
                next
            });
            entries.push((segment, source, r));
        }
        let width = width.unwrap_or(0);
        if !directed && width > 0 && lehmer_encode(&(0..width).collect::<Vec<_>>()).is_none() {
            return Err(invalid(
                WHAT,
                format!("link_width {width} has no permutation code"),
            ));
        }
        drop((segment_ids, source_ids));
        // names, then ranks: cells sort by segment name, then source coordinates
        let sid = sources.first().map_or(0, |s| s.len());
        let segments: Vec<String> = offsets_of
            .iter()
            .map(|flat| {
                let split: Vec<Vec<i64>> = flat.chunks(sid.max(1)).map(<[i64]>::to_vec).collect();
                format_segment(&split)
            })
            .collect();
        let segment_rank = ranks(&segments);
        let source_rank = ranks(&sources);
        use rayon::prelude::*;
        entries.par_sort_unstable_by_key(|&(seg, src, r)| {
            (segment_rank[seg as usize], source_rank[src as usize], r)
        });
        let mut cells: Vec<(u32, u32, usize)> = Vec::new();
        let mut records = Vec::with_capacity(entries.len());
        for (i, &(seg, src, r)) in entries.iter().enumerate() {
            if cells.last().is_none_or(|c| (c.0, c.1) != (seg, src)) {
                if let Some(c) = cells.last_mut() {
                    c.2 = i;
                }
                cells.push((seg, src, 0));
            }
            records.push(r);
        }
        drop(entries);
        if let Some(last) = cells.last_mut() {
            last.2 = records.len();
        }
        Ok(Self {
            directed,
            width,
            segments,
            sources,
            records,
            cells,
        })
    }

    /// The number of cells.
    pub fn len(&self) -> usize {
        self.cells.len()
    }

    /// Whether no record was filed.
    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    /// The number of records filed.
    pub fn num_records(&self) -> usize {
        self.records.len()
    }

    /// The cells, in order.
    pub fn cells(&self) -> impl ExactSizeIterator<Item = PlannedCell<'_>> + '_ {
        let mut start = 0;
        self.cells.iter().map(move |&(seg, src, end)| {
            let records = &self.records[start..end];
            start = end;
            PlannedCell {
                segment: &self.segments[seg as usize],
                source: self.sources[src as usize],
                records,
            }
        })
    }

    /// The flat int64 rows `[perm_idx?, v_0, …]` of the cell of `records` (a cell's records),
    /// their endpoints given by `ends` as to [`CellPlan::new`].
    pub fn rows<'e>(
        &self,
        records: &[usize],
        ends: &impl EndsFn<'e>,
    ) -> Result<Vec<i64>, LayoutError> {
        let with_perm = has_perm(false, 0, self.directed, "canonical");
        let ncols = self.width + usize::from(with_perm);
        let mut rows = Vec::with_capacity(records.len() * ncols);
        let (mut out, mut sigma, mut offsets) = (Ends::new(), Vec::new(), Vec::new());
        for &r in records {
            out.clear();
            ends(r, &mut out)?;
            if out.len() != self.width {
                return Err(invalid(
                    WHAT,
                    format!("record {r} has {} endpoints, not {}", out.len(), self.width),
                ));
            }
            file(r, &out, self.directed, &mut sigma, &mut offsets)?;
            if with_perm {
                rows.push(lehmer_encode(&sigma).ok_or_else(|| {
                    invalid(
                        WHAT,
                        format!("link_width {} has no permutation code", self.width),
                    )
                })?);
            }
            for &j in &sigma {
                rows.push(
                    i64::try_from(out[j].1)
                        .map_err(|_| invalid(WHAT, format!("record {r}: a row exceeds int64")))?,
                );
            }
        }
        Ok(rows)
    }
}

/// The rank of each of `items` in their sorted order (equal items share a rank).
fn ranks<T: Ord>(items: &[T]) -> Vec<u32> {
    let mut order: Vec<u32> = (0..items.len() as u32).collect();
    order.sort_unstable_by(|&a, &b| items[a as usize].cmp(&items[b as usize]));
    let mut rank = vec![0u32; items.len()];
    for (k, &i) in order.iter().enumerate() {
        rank[i as usize] = k as u32;
    }
    rank
}

#[cfg(test)]
mod tests {
    use super::super::{lehmer_decode, parse_segment};
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn records_are_filed_canonically_or_as_written() {
        let mut links = CrossChunkLinks::new(3, 2);
        links
            .push(&[(&[0, 1], 5), (&[-1, 0], 2), (&[0, 1], 3)])
            .unwrap();
        let undirected = partition(&links, false).unwrap();
        // sorted: (-1.0, 2), (0.1, 3), (0.1, 5) = input positions 1, 2, 0
        assert_eq!(
            undirected[&("+1.+1_+1.+1".to_owned(), vec![-1, 0])].rows,
            vec![lehmer_encode(&[1, 2, 0]).unwrap(), 2, 3, 5]
        );
        let directed = partition(&links, true).unwrap();
        assert_eq!(
            directed[&("-1.-1_0.0".to_owned(), vec![0, 1])].rows,
            vec![5, 2, 3]
        );
        let mut intra = CrossChunkLinks::new(2, 2);
        intra.push(&[(&[0, 1], 5), (&[0, 1], 2)]).unwrap();
        assert!(partition(&intra, false).is_err());
        let mut far = CrossChunkLinks::new(2, 1);
        far.push(&[(&[i64::MIN], 0), (&[i64::MAX], 0)]).unwrap();
        assert!(partition(&far, true).is_err());
    }

    /// The endpoints of records given as `(chunk, row)` lists.
    fn ends_from(records: &[Vec<(Vec<i64>, u64)>]) -> impl EndsFn<'_> + '_ {
        move |r, out| {
            out.extend(records[r].iter().map(|(c, v)| (c.as_slice(), *v)));
            Ok(())
        }
    }

    #[test]
    fn a_plan_refuses_records_of_another_width_or_without_codes() {
        let two: Vec<(Vec<i64>, u64)> = vec![(vec![0], 1), (vec![1], 2)];
        let three: Vec<(Vec<i64>, u64)> = vec![(vec![0], 1), (vec![1], 2), (vec![2], 3)];
        let records = [two, three];
        let ends = ends_from(&records);
        let err = CellPlan::new(2, false, &ends).unwrap_err();
        assert!(
            err.to_string().contains("record 1 has 3 endpoints"),
            "{err}"
        );
        let wide = [(0..21).map(|i| (vec![i], 0)).collect::<Vec<_>>()];
        let ends = ends_from(&wide);
        assert!(CellPlan::new(1, false, &ends).is_err());
        assert!(CellPlan::new(1, true, &ends).is_ok());
        let empty = CellPlan::new(0, false, &ends).unwrap();
        assert!(empty.is_empty() && empty.num_records() == 0);
    }

    proptest! {
        /// A plan files every record once, in cells ordered by segment name then source
        /// chunk, each cell's records in the order given, with the rows of an independent
        /// filing (endpoints sorted, the first the source).
        #[test]
        fn a_plan_files_each_record_once_in_cell_order(
            recs in prop::collection::vec(prop::collection::vec(((-3i64..3, -3i64..3), 0u64..5), 2), 1..60),
            directed in any::<bool>(),
        ) {
            let recs: Vec<Vec<(Vec<i64>, u64)>> = recs
                .into_iter()
                .map(|r| r.into_iter().map(|((a, b), v)| (vec![a, b], v)).collect::<Vec<_>>())
                .filter(|r: &Vec<(Vec<i64>, u64)>| r[0].0 != r[1].0)
                .collect();
            let ends = ends_from(&recs);
            let plan = CellPlan::new(recs.len(), directed, &ends).unwrap();
            prop_assert_eq!(plan.num_records(), recs.len());
            let mut seen = vec![false; recs.len()];
            let mut expected: BTreeMap<(String, Vec<i64>), Vec<i64>> = BTreeMap::new();
            for rec in &recs {
                let mut order = vec![0usize, 1];
                if !directed && rec[1] < rec[0] {
                    order = vec![1, 0];
                }
                let (s, o) = (&rec[order[0]].0, &rec[order[1]].0);
                let offset: Vec<i64> = o.iter().zip(s).map(|(a, b)| a - b).collect();
                let row = expected.entry((format_segment(&[offset]), s.clone())).or_default();
                if !directed {
                    row.push(lehmer_encode(&order).unwrap());
                }
                row.extend(order.iter().map(|&k| rec[k].1 as i64));
            }
            let mut keys = Vec::new();
            for cell in plan.cells() {
                prop_assert!(cell.records.windows(2).all(|w| w[0] < w[1]));
                for &r in cell.records {
                    prop_assert!(!seen[r]);
                    seen[r] = true;
                }
                let key = (cell.segment.to_owned(), cell.source.to_vec());
                prop_assert_eq!(Some(&plan.rows(cell.records, &ends).unwrap()), expected.get(&key));
                keys.push(key);
            }
            prop_assert!(seen.iter().all(|&s| s));
            prop_assert_eq!(keys, expected.into_keys().collect::<Vec<_>>());
        }

        /// Every placed record decodes back to its endpoints in the order written.
        #[test]
        fn placement_round_trips(
            recs in prop::collection::vec(prop::collection::vec(((-2i64..2, -2i64..2), 0u64..9), 3), 1..20),
            directed in any::<bool>(),
        ) {
            let mut links = CrossChunkLinks::new(3, 2);
            let mut written = Vec::new();
            for r in &recs {
                let chunks: Vec<[i64; 2]> = r.iter().map(|((a, b), _)| [*a, *b]).collect();
                if chunks.iter().all(|c| *c == chunks[0]) {
                    continue;
                }
                let ends: Vec<(&[i64], u64)> = chunks.iter().zip(r).map(|(c, (_, v))| (&c[..], *v)).collect();
                links.push(&ends).unwrap();
                written.push(r.iter().map(|((a, b), v)| (vec![*a, *b], *v as i64)).collect::<Vec<_>>());
            }
            let mut back = vec![Vec::new(); written.len()];
            for ((seg, src), cell) in partition(&links, directed).unwrap() {
                let offs = parse_segment(&seg, 2, 3).unwrap();
                let ncols = 3 + usize::from(!directed);
                prop_assert_eq!(cell.records.len() * ncols, cell.rows.len());
                for (row, &record) in cell.rows.chunks_exact(ncols).zip(&cell.records) {
                    let (perm, vis) = if directed { (0, row) } else { (row[0], &row[1..]) };
                    let order = lehmer_decode(perm, 3).unwrap();
                    let mut rec = vec![(Vec::new(), 0); 3];
                    for (i, &v) in vis.iter().enumerate() {
                        let c = if i == 0 { src.clone() } else { src.iter().zip(&offs[i - 1]).map(|(s, o)| s + o).collect() };
                        rec[order[i]] = (c, v);
                    }
                    // each row is the record it says it is
                    back[record] = rec;
                }
            }
            prop_assert_eq!(back, written);
        }
    }
}
