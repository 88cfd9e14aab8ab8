//! Writing level 0 of a store as a LAS or LAZ file (see the [module docs](super)).

use std::io::{Cursor, Write};

use zv_format::{Geometry, ZvStore};

use super::dims::{dims_of, encode, Dim, Values, ALL};
use super::header::{Kept, HEADER_ATTRIBUTE};
use crate::error::{FileName, Result};
use crate::level::{level0, numeric_columns, ColumnView};

/// Writes level 0 of `store` (a 3-D point cloud) as LAS, or LAZ when `compressed`, to `out`;
/// `file` names the output in errors.
pub fn export(store: &ZvStore, out: &mut dyn Write, file: &str, compressed: bool) -> Result<()> {
    let file = FileName(file.to_owned());
    let doc = level0(store, &file)?;
    if doc.geometry != Geometry::PointCloud {
        return Err(file.unsupported(format!(
            "LAS holds point clouds; the store is a {}",
            doc.geometry.name()
        )));
    }
    if doc.chunk_shape.len() != 3 {
        return Err(file.unsupported(format!(
            "LAS holds 3-D positions; the store has {} axes",
            doc.chunk_shape.len()
        )));
    }
    if doc.object_ids.is_some() {
        return Err(file.unsupported("the store has object ids, which LAS cannot hold"));
    }
    let mut cols: Vec<(Dim, ColumnView)> = Vec::new();
    for (name, a) in &doc.vertex_attributes {
        let d = Dim::from_name(name).ok_or_else(|| {
            file.unsupported(format!(
                "vertex attribute `{name}` is not a standard LAS dimension ({})",
                ALL.map(Dim::name).join(", ")
            ))
        })?;
        let mut c = numeric_columns(name, a)
            .filter(|c| c.len() == 1)
            .ok_or_else(|| {
                file.unsupported(format!(
                    "vertex attribute `{name}` is not one channel of numbers"
                ))
            })?;
        cols.extend(c.pop().map(|(_, view)| (d, view)));
    }
    let kept = match store.root_attributes().get(HEADER_ATTRIBUTE) {
        Some(v) => Kept::from_json(&file, v)?,
        None => {
            let names: Vec<&str> = cols.iter().map(|(d, _)| d.name()).collect();
            let mut lo = [f64::INFINITY; 3];
            for p in &doc.vertices {
                for (l, v) in lo.iter_mut().zip(p) {
                    *l = l.min(*v);
                }
            }
            Kept::default_for(&names, lo)
        }
    };
    let las_err = |e: las::Error| file.unsupported(e.to_string());
    let header = kept.header(compressed).map_err(las_err)?;
    let format = *header.point_format();
    let number = kept.point_format;
    let dims = dims_of(&format);
    if let Some((d, _)) = cols.iter().find(|(d, _)| !dims.contains(d)) {
        return Err(file.unsupported(format!(
            "vertex attribute `{}` is not a dimension of LAS point format {number}",
            d.name()
        )));
    }
    let transforms = *header.transforms();
    let n = doc.vertices.len();
    if kept.version < (1, 4) && n as u64 > u64::from(u32::MAX) {
        return Err(file.unsupported(format!(
            "{n} points do not fit a LAS {}.{} header (2^32 − 1 at most)",
            kept.version.0, kept.version.1
        )));
    }
    // everything is checked and encoded before the `las` writer exists: it closes itself when
    // dropped and panics if that fails
    let mut bytes = Vec::with_capacity(n.saturating_mul(usize::from(format.len())));
    let mut values: Values = [0.0; ALL.len()];
    for (i, p) in doc.vertices.iter().enumerate() {
        let mut xyz = [0i32; 3];
        for (a, t) in [transforms.x, transforms.y, transforms.z]
            .iter()
            .enumerate()
        {
            let v = p.get(a).copied().unwrap_or(f64::NAN);
            xyz[a] = t.inverse(v).ok().filter(|_| v.is_finite()).ok_or_else(|| {
                file.unsupported(format!(
                    "vertex {i}: {} = {v} does not fit LAS's 32-bit integers at scale {} and offset {}",
                    ["x", "y", "z"][a], t.scale, t.offset
                ))
            })?;
        }
        for (d, view) in &cols {
            let v = view.get(i);
            let fits = match d.range(format.is_extended) {
                // LAS before 1.4 counts returns 1 to 5 in its header
                Some(_) if *d == Dim::ReturnNumber && kept.version < (1, 4) && v > 5.0 => false,
                Some((lo, hi)) => v.fract() == 0.0 && (lo..=hi).contains(&v),
                None => true,
            };
            if !fits {
                return Err(file.unsupported(format!(
                    "vertex {i}: {} = {v} does not fit LAS {}.{} point format {number}",
                    d.name(),
                    kept.version.0,
                    kept.version.1
                )));
            }
            values[*d as usize] = v;
        }
        encode(xyz, &values, &format)
            .write_to(&mut bytes, &format)
            .map_err(las_err)?;
    }
    let pd = las::PointDataBuilder::new()
        .with_format(format)
        .with_transforms(transforms)
        .build_from_bytes(bytes)
        .map_err(las_err)?;
    let bytes = write_file(header, &pd).map_err(las_err)?;
    out.write_all(&bytes).map_err(|e| file.io(e))?;
    out.flush().map_err(|e| file.io(e))
}

/// The bytes of a LAS/LAZ file of `header` and the points `pd`.
fn write_file(header: las::Header, pd: &las::PointData) -> Result<Vec<u8>, las::Error> {
    let mut writer = las::Writer::new(Cursor::new(Vec::new()), header)?;
    if let Err(e) = writer.write_points(pd).and_then(|()| writer.close()) {
        // dropping an unclosed writer closes it again, which panics when closing fails
        std::mem::forget(writer);
        return Err(e);
    }
    writer.into_inner().map(Cursor::into_inner)
}
