//! Chunk keys (`"1.-2.3"`) and the chunk of a position (`docs/format-decisions.md`, "Chunk
//! coordinates": `floor(p / chunk_shape)`, absolute origin, negative allowed).

use std::fmt;
use std::str::FromStr;

/// Chunk coordinates (one integer per chunk-key component; may be negative).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ChunkKey(pub Vec<i64>);

impl ChunkKey {
    /// The coordinates.
    pub fn coords(&self) -> &[i64] {
        &self.0
    }

    /// The number of components.
    pub fn arity(&self) -> usize {
        self.0.len()
    }
}

impl fmt::Display for ChunkKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, c) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            write!(f, "{c}")?;
        }
        Ok(())
    }
}

impl FromStr for ChunkKey {
    type Err = String;

    /// Parses `"1.-2.3"`; every component must be a decimal integer.
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        if s.is_empty() {
            return Err("empty chunk key".into());
        }
        s.split('.')
            .map(|p| {
                let digits = p.strip_prefix('-').unwrap_or(p);
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(format!("`{s}` is not a chunk key"));
                }
                p.parse::<i64>()
                    .map_err(|_| format!("`{s}`: component out of range"))
            })
            .collect::<std::result::Result<Vec<_>, _>>()
            .map(ChunkKey)
    }
}
/// `floor(p / chunk_shape)` per axis, the chunk of a position (absolute origin).
pub fn chunk_of(position: &[f64], chunk_shape: &[f64]) -> Vec<i64> {
    position
        .iter()
        .zip(chunk_shape)
        .map(|(p, c)| (p / c).floor() as i64)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_keys() {
        let k: ChunkKey = "1.-2.30".parse().unwrap();
        assert_eq!(k.0, vec![1, -2, 30]);
        assert_eq!(k.to_string(), "1.-2.30");
        for bad in ["", "1..2", "a.1", "1.2.", "-", "1.+2", "c"] {
            assert!(bad.parse::<ChunkKey>().is_err(), "{bad}");
        }
        assert!(ChunkKey(vec![0, 1]) < ChunkKey(vec![1, -5]));
        assert_eq!(
            chunk_of(&[10.0, -0.5, 9.99], &[10.0, 10.0, 10.0]),
            vec![1, -1, 0]
        );
    }
}
