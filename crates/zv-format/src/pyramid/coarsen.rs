//! Coarsening per geometry: how the vertices of a fine level become the metavertices of the
//! next one. Point clouds ([`points`]): one metavertex per occupied coarse bin per object.
//! Other geometries are not coarsened yet ([`crate::pyramid::build_pyramid`] refuses them).

pub mod points;

/// The coarse bin of a position: `floor(p_i / bin_i)` on every axis (the writer's and the
/// reader's rule for chunks and bins).
pub fn bin_of(position: &[f64], bin_shape: &[f64], out: &mut Vec<i64>) {
    out.clear();
    out.extend(
        position
            .iter()
            .zip(bin_shape)
            .map(|(p, b)| (p / b).floor() as i64),
    );
}
