//! 4 × 4 affines for TRK's voxmm ↔ RAS+mm transform, and the voxel reordering nibabel applies
//! when a header's `voxel_order` differs from the orientation of its `vox_to_ras`
//! (`aff2axcodes`, `ornt_transform`, `inv_ornt_aff`).

/// A row-major 4 × 4 affine.
pub(crate) type Mat4 = [[f64; 4]; 4];

/// The identity.
pub(crate) const IDENTITY: Mat4 = [
    [1.0, 0.0, 0.0, 0.0],
    [0.0, 1.0, 0.0, 0.0],
    [0.0, 0.0, 1.0, 0.0],
    [0.0, 0.0, 0.0, 1.0],
];

/// `a · b`.
pub(crate) fn mul(a: &Mat4, b: &Mat4) -> Mat4 {
    let mut out = [[0.0; 4]; 4];
    for (r, row) in out.iter_mut().enumerate() {
        for (c, v) in row.iter_mut().enumerate() {
            *v = (0..4).map(|k| a[r][k] * b[k][c]).sum();
        }
    }
    out
}

/// Every entry rounded to float32.
pub(crate) fn round_f32(a: &Mat4) -> Mat4 {
    a.map(|row| row.map(|v| f64::from(v as f32)))
}

/// The inverse (Gauss–Jordan with partial pivoting); `None` if singular.
pub(crate) fn invert(a: &Mat4) -> Option<Mat4> {
    let mut m = *a;
    let mut inv = IDENTITY;
    for col in 0..4 {
        let pivot = (col..4).max_by(|&i, &j| m[i][col].abs().total_cmp(&m[j][col].abs()))?;
        if m[pivot][col].abs() < 1e-12 {
            return None;
        }
        m.swap(col, pivot);
        inv.swap(col, pivot);
        let p = m[col][col];
        for c in 0..4 {
            m[col][c] /= p;
            inv[col][c] /= p;
        }
        for r in 0..4 {
            if r != col {
                let f = m[r][col];
                for c in 0..4 {
                    m[r][c] -= f * m[col][c];
                    inv[r][c] -= f * inv[col][c];
                }
            }
        }
    }
    Some(inv)
}

/// `a` applied to the point `p`.
pub(crate) fn apply(a: &Mat4, p: [f64; 3]) -> [f64; 3] {
    let mut out = [0.0; 3];
    for (r, o) in out.iter_mut().enumerate() {
        *o = a[r][0] * p[0] + a[r][1] * p[1] + a[r][2] * p[2] + a[r][3];
    }
    out
}

/// The RAS labels of each world axis: (negative, positive).
const LABELS: [(char, char); 3] = [('L', 'R'), ('P', 'A'), ('I', 'S')];

/// Axis codes (`RAS`, `LPS`, …) as (world axis, flip ±1) per voxel axis.
fn codes_to_ornt(codes: &str) -> Option<[(usize, f64); 3]> {
    let chars: Vec<char> = codes.chars().collect();
    if chars.len() != 3 {
        return None;
    }
    let mut out = [(0, 1.0); 3];
    let mut seen = [false; 3];
    for (i, ch) in chars.iter().enumerate() {
        let (axis, (neg, _)) = LABELS
            .iter()
            .enumerate()
            .find(|(_, (n, p))| n == ch || p == ch)?;
        if std::mem::replace(&mut seen[axis], true) {
            return None;
        }
        out[i] = (axis, if *ch == *neg { -1.0 } else { 1.0 });
    }
    Some(out)
}

/// The orientation of an affine's voxel axes: for each column, the world axis it points
/// along most and its sign, taken greedily by the largest entry (nibabel's `io_orientation`
/// for affines without shear).
fn affine_ornt(a: &Mat4) -> Option<[(usize, f64); 3]> {
    let mut m = [[0.0f64; 3]; 3];
    for c in 0..3 {
        let norm = (0..3).map(|r| a[r][c] * a[r][c]).sum::<f64>().sqrt();
        if norm == 0.0 {
            return None;
        }
        for r in 0..3 {
            m[r][c] = a[r][c] / norm;
        }
    }
    let mut out = [(usize::MAX, 1.0); 3];
    for _ in 0..3 {
        let mut best = (0, 0, -1.0);
        for (r, row) in m.iter().enumerate() {
            for (c, v) in row.iter().enumerate() {
                if v.abs() > best.2 {
                    best = (r, c, v.abs());
                }
            }
        }
        let (r, c, _) = best;
        out[c] = (r, m[r][c].signum());
        for v in m[r].iter_mut() {
            *v = 0.0;
        }
        for row in m.iter_mut() {
            row[c] = 0.0;
        }
    }
    Some(out)
}

/// The affine taking voxel coordinates in `voxel_order` to voxel coordinates in the order of
/// `vox_to_ras` (`inv_ornt_aff(ornt_transform(header, affine), dimensions)`); identity when
/// they agree. `None` if `voxel_order` is not three axis codes.
pub(crate) fn reorder(voxel_order: &str, vox_to_ras: &Mat4, dimensions: [i16; 3]) -> Option<Mat4> {
    let start = codes_to_ornt(voxel_order)?;
    let Some(end) = affine_ornt(vox_to_ras) else {
        return Some(IDENTITY);
    };
    // ornt_transform(start, end)
    let mut ornt = [(0usize, 1.0f64); 3];
    for (end_in, &(end_out, end_flip)) in end.iter().enumerate() {
        for (start_in, &(start_out, start_flip)) in start.iter().enumerate() {
            if end_out == start_out {
                ornt[start_in] = (end_in, if start_flip == end_flip { 1.0 } else { -1.0 });
                break;
            }
        }
    }
    // inv_ornt_aff(ornt, dimensions)
    let mut undo_reorder = [[0.0; 4]; 4];
    for (i, &(axis, _)) in ornt.iter().enumerate() {
        undo_reorder[i] = IDENTITY[axis];
    }
    undo_reorder[3] = IDENTITY[3];
    let mut undo_flip = IDENTITY;
    for (i, &(_, flip)) in ornt.iter().enumerate() {
        let center = -(f64::from(dimensions[i]) - 1.0) / 2.0;
        undo_flip[i][i] = flip;
        undo_flip[i][3] = flip * center - center;
    }
    Some(mul(&undo_flip, &undo_reorder))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse_and_apply() {
        let a = [
            [2.0, 0.0, 0.0, 1.0],
            [0.0, 0.0, 3.0, -2.0],
            [0.0, -1.0, 0.0, 5.0],
            [0.0, 0.0, 0.0, 1.0],
        ];
        let inv = invert(&a).unwrap_or(IDENTITY);
        let p = apply(&inv, apply(&a, [1.0, 2.0, 3.0]));
        assert!(p
            .iter()
            .zip([1.0, 2.0, 3.0])
            .all(|(a, b)| (a - b).abs() < 1e-12));
        assert_eq!(invert(&[[0.0; 4]; 4]), None);
    }

    #[test]
    fn matching_orders_need_no_reordering_and_a_flip_mirrors_the_volume() {
        assert_eq!(reorder("RAS", &IDENTITY, [10, 10, 10]), Some(IDENTITY));
        // LAS voxels under a RAS affine: x is mirrored about the volume's centre
        let m = reorder("LAS", &IDENTITY, [10, 10, 10]).unwrap_or(IDENTITY);
        assert_eq!(apply(&m, [0.0, 1.0, 2.0]), [9.0, 1.0, 2.0]);
        assert_eq!(reorder("RAX", &IDENTITY, [1, 1, 1]), None);
        assert_eq!(reorder("RAR", &IDENTITY, [1, 1, 1]), None);
    }
}
