//! Choosing the blocks of a manifest: the most compact encoding of one chunk's fragments.

use super::BlockFragments;

/// Splits the fragments of one chunk (in order) into blocks of minimal encoded size.
pub(super) fn plan_blocks(frags: &[u64], sid_ndim: usize) -> Vec<BlockFragments> {
    let m = frags.len();
    let head = 8 * sid_ndim + 1;
    // dp[i]: smallest size of blocks covering frags[..i]; how[i]: (start, mode) of the last block.
    let mut dp = vec![0usize; m + 1];
    let mut how = vec![(0usize, 0u8); m + 1];
    let mut run_start = 0usize;
    // best (dp[j] - 8j, j) over j < i, for mode 2 blocks frags[j..i]
    let mut best_explicit = (0isize, 0usize);
    for i in 1..=m {
        if i >= 2 && frags[i - 2].checked_add(1) == Some(frags[i - 1]) {
            // the run continues
        } else {
            run_start = i - 1;
        }
        let j = i - 1;
        let cand = dp[j] as isize - 8 * j as isize;
        if cand < best_explicit.0 || j == 0 {
            best_explicit = (cand, j);
        }
        // mode 1 over the whole run ending here (dp is non-decreasing, so the earliest start wins)
        let mut best = (dp[run_start] + head + 16, (run_start, 1u8));
        let single = dp[i - 1] + head + 8;
        if single < best.0 {
            best = (single, (i - 1, 0));
        }
        let explicit = (best_explicit.0 + (head + 4) as isize + 8 * i as isize) as usize;
        if explicit < best.0 {
            best = (explicit, (best_explicit.1, 2));
        }
        dp[i] = best.0;
        how[i] = best.1;
    }
    let mut out = Vec::new();
    let mut i = m;
    while i > 0 {
        let (j, mode) = how[i];
        out.push(match mode {
            0 => BlockFragments::Single(frags[j]),
            1 if i - j == 1 => BlockFragments::Single(frags[j]),
            1 => BlockFragments::Range {
                start: frags[j],
                count: (i - j) as u64,
            },
            _ => BlockFragments::Explicit(frags[j..i].to_vec()),
        });
        i = j;
    }
    out.reverse();
    out
}

#[cfg(test)]
mod tests {
    use super::super::{BlockFragments, Manifest};

    #[test]
    fn mode_choice() {
        let c = vec![0i64, 0, 0];
        let plan = |fr: &[u64]| {
            Manifest::from_refs(&fr.iter().map(|&f| (c.clone(), f)).collect::<Vec<_>>())
                .blocks
                .into_iter()
                .map(|b| b.fragments)
                .collect::<Vec<_>>()
        };
        assert_eq!(plan(&[7]), vec![BlockFragments::Single(7)]);
        assert_eq!(
            plan(&[3, 4, 5]),
            vec![BlockFragments::Range { start: 3, count: 3 }]
        );
        assert_eq!(
            plan(&[5, 1, 2, 7]),
            vec![BlockFragments::Explicit(vec![5, 1, 2, 7])]
        );
        assert_eq!(plan(&[9, 2]), vec![BlockFragments::Explicit(vec![9, 2])]);
        assert_eq!(
            plan(&[0, 1, 2, 3, 4, 5, 6, 7, 9]),
            vec![
                BlockFragments::Range { start: 0, count: 8 },
                BlockFragments::Single(9)
            ]
        );
        // different chunks never share a block, and order is kept
        let m = Manifest::from_refs(&[(vec![0], 1), (vec![1], 0), (vec![0], 2)]);
        assert_eq!(m.blocks.len(), 3);
        let refs: Vec<(Vec<i64>, u64)> = m.refs().map(|(c, f)| (c.to_vec(), f)).collect();
        assert_eq!(refs, vec![(vec![0], 1), (vec![1], 0), (vec![0], 2)]);
    }
}
