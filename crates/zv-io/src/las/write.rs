//! Writing level 0 of a store as a LAS or LAZ file (see the [module docs](super)): streamed
//! chunk by chunk into a seekable output (the `las` writer seeks back to its header when it
//! closes), so memory stays bounded by the chunks in flight whatever the point count.

use std::io::{Cursor, Seek, Write};

use zv_format::export::points::{ChunkColumn, PointChunk};
use zv_format::progress::{NoProgress, Progress};
use zv_format::{Geometry, ZvStore};

use super::dims::{dims_of, encode, Dim, Values, ALL};
use super::header::{Kept, HEADER_ATTRIBUTE};
use crate::error::{FileName, Result};
use crate::points::{Column, Points};

/// Writes level 0 of `store` (a 3-D point cloud) as LAS, or LAZ when `compressed`, to `out`;
/// `file` names the output in errors. A plain writer cannot be sought, so the file is
/// assembled in memory first; [`export_seekable`] streams it.
pub fn export(
    store: &ZvStore,
    out: &mut dyn Write,
    file: &str,
    compressed: bool,
    progress: &dyn Progress,
) -> Result<()> {
    let bytes = export_seekable(store, Cursor::new(Vec::new()), file, compressed, progress)?;
    let fname = FileName(file.to_owned());
    out.write_all(bytes.get_ref()).map_err(|e| fname.io(e))?;
    out.flush().map_err(|e| fname.io(e))
}

/// Writes level 0 of `store` as LAS (LAZ when `compressed`) into `out` from its current
/// position, streaming the points chunk by chunk (one unit of `progress` per chunk), and gives
/// `out` back positioned at the start of the file.
pub fn export_seekable<W: Write + Seek + Send + Sync + 'static>(
    store: &ZvStore,
    out: W,
    file: &str,
    compressed: bool,
    progress: &dyn Progress,
) -> Result<W> {
    let file = FileName(file.to_owned());
    if store.geometry() != Geometry::PointCloud {
        return Err(file.unsupported(format!(
            "LAS holds point clouds; the store is a {}",
            store.geometry().name()
        )));
    }
    let ndim = store.root().chunk_shape.len();
    if ndim != 3 {
        return Err(file.unsupported(format!(
            "LAS holds 3-D positions; the store has {ndim} axes"
        )));
    }
    let points = Points::stream(store, true, false, &file)?;
    if points.with_ids {
        return Err(file.unsupported("the store has object ids, which LAS cannot hold"));
    }
    let cols = columns(&points, &file)?;
    let kept = match store.root_attributes().get(HEADER_ATTRIBUTE) {
        Some(v) => Kept::from_json(&file, v)?,
        None => {
            let names: Vec<&str> = cols.iter().map(|(d, _)| d.name()).collect();
            Kept::default_for(&names, lowest(&points, &file)?)
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
    let n = points.count.unwrap_or(0);
    if kept.version < (1, 4) && n > u64::from(u32::MAX) {
        return Err(file.unsupported(format!(
            "{n} points do not fit a LAS {}.{} header (2^32 − 1 at most)",
            kept.version.0, kept.version.1
        )));
    }
    let encoder = Encoder {
        file: &file,
        cols: &cols,
        format,
        transforms: *header.transforms(),
        version: kept.version,
        number,
    };
    // what the header holds but the points is checked before the writer exists, so that
    // closing it fails only on the output's errors
    header.clone().into_raw().map_err(las_err)?;
    let mut writer = las::Writer::new(out, header).map_err(las_err)?;
    let mut first = 0u64;
    let written = points.for_each(progress, &file, |chunk| {
        let bytes = encoder.chunk(chunk, first)?;
        first += chunk.positions.len() as u64;
        let pd = las::PointDataBuilder::new()
            .with_format(format)
            .with_transforms(encoder.transforms)
            .build_from_bytes(bytes)
            .map_err(las_err)?;
        writer.write_points(&pd).map_err(las_err)
    });
    let closed = written.and_then(|()| writer.close().map_err(las_err));
    if let Err(e) = closed {
        // a writer dropped unclosed closes itself and panics if that fails: closed here (after
        // an error of ours, or a second try), it drops quietly; if it cannot be closed (the
        // output fails), it is leaked rather than dropped
        if writer.close().is_err() && writer.close().is_err() {
            std::mem::forget(writer);
        }
        return Err(e);
    }
    writer.into_inner().map_err(las_err)
}

/// The vertex attributes as LAS dimensions with their columns; an attribute that is not a
/// standard dimension, or not one channel of numbers, is refused by name.
fn columns(points: &Points, file: &FileName) -> Result<Vec<(Dim, Column)>> {
    for a in &points.attrs {
        if Dim::from_name(&a.name).is_none() {
            return Err(file.unsupported(format!(
                "vertex attribute `{}` is not a standard LAS dimension ({})",
                a.name,
                ALL.map(Dim::name).join(", ")
            )));
        }
        if a.categorical || a.channel_names.as_ref().is_some_and(|c| c.len() != 1) {
            return Err(not_one_channel(file, &a.name));
        }
    }
    Ok(points
        .columns(None)
        .into_iter()
        .filter_map(|c| Dim::from_name(&c.name).map(|d| (d, c)))
        .collect())
}

fn not_one_channel(file: &FileName, name: &str) -> crate::error::Error {
    file.unsupported(format!(
        "vertex attribute `{name}` is not one channel of numbers"
    ))
}

/// The smallest coordinate per axis over level 0 (a pass over the positions; infinite when
/// there are none), which places the default offset.
fn lowest(points: &Points, file: &FileName) -> Result<[f64; 3]> {
    let mut lo = [f64::INFINITY; 3];
    points.for_each(&NoProgress, file, |chunk| {
        for p in chunk.positions.iter() {
            for (l, v) in lo.iter_mut().zip(p) {
                *l = l.min(*v);
            }
        }
        Ok(())
    })?;
    Ok(lo)
}

/// `v` on the integer grid of `t`, if it fits LAS's 32-bit integers, also as the header's
/// bounds: the `las` writer rounds the scaled-back coordinate down (minimum) and up (maximum)
/// when it closes, and fails then if either leaves the integers, which near their ends a
/// large offset's rounding can cause.
fn fitted(t: &las::Transform, v: f64) -> Option<i32> {
    let i = t.inverse(v).ok().filter(|_| v.is_finite())?;
    let q = (t.direct(i) - t.offset) / t.scale;
    let ints = f64::from(i32::MIN)..=f64::from(i32::MAX);
    (ints.contains(&q.floor()) && ints.contains(&q.ceil())).then_some(i)
}

/// Encodes chunks of points as LAS point records, checking that each value fits its field.
struct Encoder<'a> {
    file: &'a FileName,
    cols: &'a [(Dim, Column)],
    format: las::point::Format,
    transforms: las::Vector<las::Transform>,
    version: (u8, u8),
    number: u8,
}

impl Encoder<'_> {
    /// The records of `chunk`, whose first point is vertex `first` of the level.
    fn chunk(&self, chunk: &PointChunk, first: u64) -> Result<Vec<u8>> {
        let file = self.file;
        for (d, c) in self.cols {
            if let Some(ChunkColumn::Numeric(Some(rows))) = chunk.attributes.get(c.attr_index()) {
                if rows.channels() != 1 {
                    return Err(not_one_channel(file, d.name()));
                }
            }
        }
        let las_err = |e: las::Error| file.unsupported(e.to_string());
        let t = [self.transforms.x, self.transforms.y, self.transforms.z];
        let mut values: Values = [0.0; ALL.len()];
        let mut bytes = Vec::with_capacity(chunk.positions.len() * usize::from(self.format.len()));
        for (r, p) in chunk.positions.iter().enumerate() {
            let i = first + r as u64;
            let mut xyz = [0i32; 3];
            for (a, t) in t.iter().enumerate() {
                let v = p.get(a).copied().unwrap_or(f64::NAN);
                xyz[a] = fitted(t, v).ok_or_else(|| {
                    file.unsupported(format!(
                        "vertex {i}: {} = {v} does not fit LAS's 32-bit integers at scale {} and offset {}",
                        ["x", "y", "z"][a], t.scale, t.offset
                    ))
                })?;
            }
            for (d, c) in self.cols {
                let v = c.number(chunk, r);
                let fits = match d.range(self.format.is_extended) {
                    // LAS before 1.4 counts returns 1 to 5 in its header
                    Some(_) if *d == Dim::ReturnNumber && self.version < (1, 4) && v > 5.0 => false,
                    Some((lo, hi)) => v.fract() == 0.0 && (lo..=hi).contains(&v),
                    None => true,
                };
                if !fits {
                    return Err(file.unsupported(format!(
                        "vertex {i}: {} = {v} does not fit LAS {}.{} point format {}",
                        d.name(),
                        self.version.0,
                        self.version.1,
                        self.number
                    )));
                }
                values[*d as usize] = v;
            }
            encode(xyz, &values, &self.format)
                .write_to(&mut bytes, &self.format)
                .map_err(las_err)?;
        }
        Ok(bytes)
    }
}
