//! Object sparsity: which objects a step keeps (`1/s` of those with vertices), seeded and
//! deterministic. Kept objects keep their ids; the others get empty manifests.

use crate::error::{Error, Result};

/// How a sparse step chooses its objects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SparsityStrategy {
    /// A seeded random choice (splitmix64, Fisher–Yates).
    Random,
    /// The objects with the most vertices (ties: lower id first).
    Length,
    /// The objects with the largest value of this numeric object attribute (first channel;
    /// absent rows and NaN last; ties: lower id first).
    Attribute(String),
    /// Spread over space: objects ordered by the coarse chunk of their centroid, then every
    /// `s`-th one is kept.
    Coverage,
}

impl SparsityStrategy {
    /// The name [`SparsityStrategy::parse`] reads back.
    pub fn name(&self) -> String {
        match self {
            Self::Random => "random".into(),
            Self::Length => "length".into(),
            Self::Attribute(a) => format!("attribute:{a}"),
            Self::Coverage => "coverage".into(),
        }
    }

    /// Parses `random`, `length`, `attribute:NAME` or `coverage`.
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "random" => Ok(Self::Random),
            "length" => Ok(Self::Length),
            "coverage" => Ok(Self::Coverage),
            _ => match s.strip_prefix("attribute:") {
                Some(name) if !name.is_empty() => Ok(Self::Attribute(name.to_owned())),
                _ => Err(Error::InvalidInput(format!(
                    "--sparsity `{s}`: expected random, length, attribute:NAME or coverage"
                ))),
            },
        }
    }
}

/// What the strategies know of one object at the fine level.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ObjectStats {
    /// Its vertex count (0: the object is empty at this level and is never kept).
    pub length: u64,
    /// Its attribute value (`Attribute`), NaN when absent.
    pub score: f64,
    /// The coarse chunk of its centroid (`Coverage`).
    pub cell: Vec<i64>,
}

/// How many of `n` objects a factor `s` keeps: `⌈n / s⌉`.
pub fn keep_count(n: usize, s: u32) -> usize {
    n.div_ceil(s.max(1) as usize)
}

/// The splitmix64 step.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The kept mask over object ids: `1/s` of the objects with vertices (all of them when
/// `s == 1`).
pub fn select(
    strategy: &SparsityStrategy,
    objects: &[ObjectStats],
    s: u32,
    seed: u64,
) -> Vec<bool> {
    let mut ids: Vec<usize> = (0..objects.len())
        .filter(|&o| objects[o].length > 0)
        .collect();
    let mut keep = vec![false; objects.len()];
    if s <= 1 {
        ids.iter().for_each(|&o| keep[o] = true);
        return keep;
    }
    let k = keep_count(ids.len(), s);
    let chosen: Vec<usize> = match strategy {
        SparsityStrategy::Random => {
            let mut state = seed;
            for i in (1..ids.len()).rev() {
                let j = (splitmix(&mut state) % (i as u64 + 1)) as usize;
                ids.swap(i, j);
            }
            ids.truncate(k);
            ids
        }
        SparsityStrategy::Length => {
            ids.sort_by_key(|&o| (std::cmp::Reverse(objects[o].length), o));
            ids.truncate(k);
            ids
        }
        SparsityStrategy::Attribute(_) => {
            ids.sort_by(|&a, &b| {
                let (x, y) = (objects[a].score, objects[b].score);
                match (x.is_nan(), y.is_nan()) {
                    (false, false) => y.total_cmp(&x).then(a.cmp(&b)),
                    (nx, ny) => nx.cmp(&ny).then(a.cmp(&b)),
                }
            });
            ids.truncate(k);
            ids
        }
        SparsityStrategy::Coverage => {
            ids.sort_by(|&a, &b| objects[a].cell.cmp(&objects[b].cell).then(a.cmp(&b)));
            ids.into_iter().step_by(s as usize).collect()
        }
    };
    chosen.into_iter().for_each(|o| keep[o] = true);
    keep
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(n: usize) -> Vec<ObjectStats> {
        (0..n)
            .map(|i| ObjectStats {
                length: if i == 3 { 0 } else { i as u64 % 5 + 1 },
                score: i as f64,
                cell: vec![(i % 4) as i64],
            })
            .collect()
    }

    #[test]
    fn every_strategy_keeps_the_share_and_is_deterministic() {
        let objects = stats(20);
        let with_vertices = objects.iter().filter(|o| o.length > 0).count();
        for strategy in [
            SparsityStrategy::Random,
            SparsityStrategy::Length,
            SparsityStrategy::Attribute("a".into()),
            SparsityStrategy::Coverage,
        ] {
            let keep = select(&strategy, &objects, 3, 7);
            assert_eq!(keep, select(&strategy, &objects, 3, 7));
            assert_eq!(
                keep.iter().filter(|&&k| k).count(),
                keep_count(with_vertices, 3),
                "{strategy:?}"
            );
            assert!(!keep[3], "an object without vertices is never kept");
        }
        let by_score = select(&SparsityStrategy::Attribute("a".into()), &objects, 2, 0);
        assert!(by_score[19] && !by_score[0]);
        assert_ne!(
            select(&SparsityStrategy::Random, &objects, 2, 1),
            select(&SparsityStrategy::Random, &objects, 2, 2)
        );
        assert_eq!(
            select(&SparsityStrategy::Random, &objects, 1, 0)
                .iter()
                .filter(|&&k| k)
                .count(),
            19
        );
    }

    #[test]
    fn strategies_parse() {
        assert_eq!(
            SparsityStrategy::parse("attribute:score").unwrap(),
            SparsityStrategy::Attribute("score".into())
        );
        assert!(SparsityStrategy::parse("attribute:").is_err());
        assert!(SparsityStrategy::parse("best").is_err());
    }
}
