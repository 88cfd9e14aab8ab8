//! The benchmark inputs, generated deterministically: uniform points with object ids and one
//! float32 attribute, and random-walk polylines; written to disk in the raw layout the Python
//! peer runner (`scripts/bench/peer.py`) reads.

use std::path::Path;

/// Edge of the cube the inputs lie in: `[0, EXTENT)^3`.
pub(crate) const EXTENT: f64 = 1000.0;

/// A small, fast, deterministic generator (xorshift64*).
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// Uniform in `[0, 1)`.
    pub(crate) fn unit(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The inputs of one benchmark run.
pub(crate) struct Inputs {
    /// Point coordinates, 3 per point, float32 values (held as f64).
    pub(crate) points: Vec<f64>,
    /// Object id of each point, uniform in `[0, objects)`.
    pub(crate) object_ids: Vec<u64>,
    /// The `intensity` attribute of each point.
    pub(crate) intensity: Vec<f64>,
    /// Polyline vertices, 3 per vertex, concatenated.
    pub(crate) polylines: Vec<f64>,
    /// Row offsets of the polylines (`P + 1` entries).
    pub(crate) offsets: Vec<usize>,
}

/// Rounds to float32 and keeps the value below `EXTENT`.
fn f32_below_extent(v: f64) -> f64 {
    let x = v as f32 as f64;
    if x >= EXTENT {
        f64::from(f32::from_bits((EXTENT as f32).to_bits() - 1))
    } else {
        x
    }
}

impl Inputs {
    /// `points` uniform points with ids in `[0, objects)`, and `polylines` random walks of
    /// `length` vertices (step up to 10 per axis, starting in `[100, 900)^3`).
    pub(crate) fn generate(points: usize, objects: u64, polylines: usize, length: usize) -> Self {
        let mut rng = Rng::new(1);
        let coords = (0..points * 3)
            .map(|_| f32_below_extent(rng.unit() * EXTENT))
            .collect();
        let object_ids = (0..points)
            .map(|_| ((rng.unit() * objects as f64) as u64).min(objects.saturating_sub(1)))
            .collect();
        let intensity = (0..points).map(|_| rng.unit() as f32 as f64).collect();
        let mut walk = Vec::with_capacity(polylines * length * 3);
        let mut offsets = Vec::with_capacity(polylines + 1);
        offsets.push(0);
        for _ in 0..polylines {
            let mut p = [0.0f64; 3];
            for c in &mut p {
                *c = 100.0 + rng.unit() * 800.0;
            }
            for _ in 0..length {
                for c in &mut p {
                    *c = (*c + (rng.unit() - 0.5) * 20.0).clamp(0.0, EXTENT - 0.1);
                    walk.push(f32_below_extent(*c));
                }
            }
            offsets.push(walk.len() / 3);
        }
        Inputs {
            points: coords,
            object_ids,
            intensity,
            polylines: walk,
            offsets,
        }
    }

    /// Number of points.
    pub(crate) fn num_points(&self) -> usize {
        self.object_ids.len()
    }

    /// How many points lie in the closed box `[lo, hi]`.
    pub(crate) fn count_in_box(&self, lo: &[f64; 3], hi: &[f64; 3]) -> usize {
        self.points
            .chunks_exact(3)
            .filter(|p| (0..3).all(|d| lo[d] <= p[d] && p[d] <= hi[d]))
            .count()
    }

    /// Writes the inputs for the Python peer runner into `dir`; `shard_shape` (chunks per
    /// shard), when given, is passed to the peers' writers as `shard_shape=`.
    pub(crate) fn write_for_peers(
        &self,
        dir: &Path,
        chunk: f64,
        lo: &[f64; 3],
        hi: &[f64; 3],
        shard_shape: Option<&[u64]>,
    ) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let f32s =
            |v: &[f64]| -> Vec<u8> { v.iter().flat_map(|x| (*x as f32).to_le_bytes()).collect() };
        let i64s = |v: &mut dyn Iterator<Item = i64>| -> Vec<u8> {
            v.flat_map(|x| x.to_le_bytes()).collect()
        };
        std::fs::write(dir.join("points.f32"), f32s(&self.points))?;
        std::fs::write(dir.join("intensity.f32"), f32s(&self.intensity))?;
        std::fs::write(dir.join("polylines.f32"), f32s(&self.polylines))?;
        std::fs::write(
            dir.join("object_ids.i64"),
            i64s(&mut self.object_ids.iter().map(|&i| i as i64)),
        )?;
        std::fs::write(
            dir.join("polyline_offsets.i64"),
            i64s(&mut self.offsets.iter().map(|&i| i as i64)),
        )?;
        let params = serde_json::json!({
            "chunk_shape": [chunk, chunk, chunk],
            "bounds": [[0.0, 0.0, 0.0], [EXTENT, EXTENT, EXTENT]],
            "box_lo": lo, "box_hi": hi,
            "shard_shape": shard_shape,
        });
        std::fs::write(dir.join("params.json"), params.to_string())
    }
}
