//! Writing level 0 of a store as a PLY file (see the [module docs](super)).

use std::io::Write;

use zv_core::data_type::DataType;
use zv_format::{Geometry, ZvStore};

use super::PlyType;
use crate::error::{FileName, Result};
use crate::level::{carried, level0, numeric_columns, ColumnView};
use crate::options::{ExportOptions, PlyEncoding};
use crate::points::{Column, Points};
use zv_format::export::links::Link;
use zv_format::export::points::PointChunk;
use zv_format::layout::attributes::AttributeRows;
use zv_format::progress::NoProgress;

/// A property to write: name, type, values.
struct Prop {
    name: String,
    ty: PlyType,
    values: ColumnView,
}

/// The properties of a set of attributes.
fn props(
    file: &FileName,
    what: &str,
    attrs: &std::collections::BTreeMap<String, zv_format::document::Attribute>,
) -> Result<Vec<Prop>> {
    let mut out = Vec::new();
    for (name, a) in attrs {
        let cols = numeric_columns(name, a).ok_or_else(|| {
            file.unsupported(format!(
                "{what} attribute `{name}` is categorical; PLY holds numbers"
            ))
        })?;
        for (n, values) in cols {
            let ty = PlyType::from_data_type(values.data_type()).ok_or_else(|| {
                file.unsupported(format!(
                    "{what} attribute `{name}` is {}, which PLY cannot hold",
                    values.data_type()
                ))
            })?;
            out.push(Prop {
                name: n,
                ty,
                values,
            });
        }
    }
    Ok(out)
}

/// The PLY properties of the vertex columns `cols`.
fn vertex_props(file: &FileName, cols: &[Column]) -> Result<Vec<(Column, PlyType)>> {
    cols.iter()
        .map(|c| {
            if c.categorical {
                return Err(file.unsupported(format!(
                    "vertex attribute `{}` is categorical; PLY holds numbers",
                    c.name
                )));
            }
            let ty = PlyType::from_data_type(c.data_type).ok_or_else(|| {
                file.unsupported(format!(
                    "vertex attribute `{}` is {}, which PLY cannot hold",
                    c.name, c.data_type
                ))
            })?;
            Ok((c.clone(), ty))
        })
        .collect()
}

/// Writes level 0 of `store` (a point cloud or a mesh) as PLY to `out`; `file` names the
/// output in errors. The level is read chunk by chunk in bounded memory: once to count the
/// vertices (and faces) for the header, once to write the vertices, and for a mesh once more
/// to write the faces (the links between chunks after them).
pub fn export(
    store: &ZvStore,
    out: &mut dyn Write,
    file: &str,
    opts: &ExportOptions,
) -> Result<()> {
    let file = FileName(file.to_owned());
    let source = source(store, &file, true)?;
    write(&source, out, &file, opts)
}

/// The faces of a PLY file.
enum Faces {
    /// A point cloud's: none.
    None,
    /// Read whole with the level (the tests' oracle).
    Document {
        faces: Vec<Vec<u64>>,
        props: Vec<Prop>,
    },
    /// Read chunk by chunk with the vertices ([`Points::links`]): each property's name, type,
    /// attribute and channel.
    Stream(Vec<(String, PlyType, usize, usize)>),
}

/// What a PLY file of level 0 holds: the points (streamed when `stream`, else read whole as
/// a document) and the faces.
struct Source {
    geometry: Geometry,
    ndim: usize,
    points: Points,
    faces: Faces,
}

/// The [`Source`] of `store`.
fn source(store: &ZvStore, file: &FileName, stream: bool) -> Result<Source> {
    let geometry = store.geometry();
    if !matches!(geometry, Geometry::PointCloud | Geometry::Mesh) {
        return Err(file.unsupported(format!(
            "PLY holds point clouds and meshes; the store is a {}",
            geometry.name()
        )));
    }
    let ndim = store.root().chunk_shape.len();
    if !(2..=3).contains(&ndim) {
        return Err(file.unsupported(format!(
            "PLY holds 2-D or 3-D positions; the store has {ndim} axes"
        )));
    }
    let big = || file.unsupported("vertex indices above 2^31 − 1 do not fit PLY's int");
    if geometry == Geometry::PointCloud && stream {
        let points = Points::stream(store, true, true, file)?;
        return Ok(Source {
            geometry,
            ndim,
            points,
            faces: Faces::None,
        });
    }
    if stream {
        let points = Points::with_links(store, true, file)?;
        let links = points.links().ok_or_else(|| file.unsupported("no links"))?;
        if points.count.unwrap_or(0) > i32::MAX as u64 + 1 {
            return Err(big());
        }
        let mut props = Vec::new();
        for (ai, (info, &c)) in links.infos().iter().zip(links.channels()).enumerate() {
            if info.dictionary.is_some() {
                return Err(file.unsupported(format!(
                    "face attribute `{}` is categorical; PLY holds numbers",
                    info.name
                )));
            }
            let ty = PlyType::from_data_type(info.data_type).ok_or_else(|| {
                file.unsupported(format!(
                    "face attribute `{}` is {}, which PLY cannot hold",
                    info.name, info.data_type
                ))
            })?;
            for ch in 0..c {
                let name =
                    crate::level::channel_name(&info.name, info.channel_names.as_deref(), c, ch);
                props.push((name, ty, ai, ch));
            }
        }
        return Ok(Source {
            geometry,
            ndim,
            points,
            faces: Faces::Stream(props),
        });
    }
    let doc = level0(store, file)?;
    let fprops = props(file, "face", &doc.link_attributes)?;
    if doc.faces.iter().flatten().any(|&i| i > i32::MAX as u64) {
        return Err(big());
    }
    let faces = match geometry {
        Geometry::Mesh => Faces::Document {
            faces: doc.faces.clone(),
            props: fprops,
        },
        _ => Faces::None,
    };
    Ok(Source {
        geometry,
        ndim,
        points: Points::document(&doc, file)?,
        faces,
    })
}

/// Writes `source` as PLY to `out`.
fn write(
    source: &Source,
    out: &mut dyn Write,
    file: &FileName,
    opts: &ExportOptions,
) -> Result<()> {
    let Source {
        geometry,
        ndim,
        points,
        faces,
    } = source;
    let ndim = *ndim;
    let pos_ty = if points.vertex_type == DataType::Float64 {
        PlyType::F64
    } else {
        PlyType::F32
    };
    let enc = opts.ply_encoding;
    let header = |vprops: &[(Column, PlyType)]| {
        let mut h = format!(
            "ply\nformat {} 1.0\ncomment written by zv\n",
            enc.header_name()
        );
        h += &format!("element vertex {}\n", points.count.unwrap_or(0));
        for a in ["x", "y", "z"].iter().take(ndim) {
            h += &format!("property {} {a}\n", pos_ty.name());
        }
        if points.with_ids {
            h += "property uint object_id\n";
        }
        for (c, ty) in vprops {
            h += &format!("property {} {}\n", ty.name(), c.name);
        }
        if *geometry == Geometry::Mesh {
            let (count, names): (u64, Vec<(&str, PlyType)>) = match faces {
                Faces::None => (0, Vec::new()),
                Faces::Document { faces, props } => (
                    faces.len() as u64,
                    props.iter().map(|p| (p.name.as_str(), p.ty)).collect(),
                ),
                Faces::Stream(props) => (
                    points.links().map_or(0, |l| l.count()),
                    props.iter().map(|p| (p.0.as_str(), p.1)).collect(),
                ),
            };
            h += &format!("element face {count}\nproperty list uchar int vertex_indices\n");
            for (name, ty) in names {
                h += &format!("property {} {name}\n", ty.name());
            }
        }
        h += "end_header\n";
        h
    };
    let io = |e| file.io(e);
    let mut w = std::io::BufWriter::with_capacity(1 << 20, out);
    let mut rec = Record::new(enc);
    let mut vprops: Option<Vec<(Column, PlyType)>> = None;
    points.for_each(&opts.progress, file, |chunk| {
        let vprops = match &vprops {
            Some(v) => v,
            None => {
                let v = vertex_props(file, &points.columns(Some(chunk)))?;
                check_ids(file, chunk)?;
                w.write_all(header(&v).as_bytes()).map_err(io)?;
                vprops.insert(v)
            }
        };
        check_ids(file, chunk)?;
        for (i, p) in chunk.positions.iter().enumerate() {
            for &v in p.iter().take(ndim) {
                rec.value(pos_ty, v);
            }
            if let Some(ids) = &chunk.object_ids {
                rec.value(PlyType::U32, ids.get(i).copied().unwrap_or(0) as f64);
            }
            for (c, ty) in vprops {
                rec.value(*ty, c.number(chunk, i));
            }
            rec.end(&mut w).map_err(io)?;
        }
        Ok(())
    })?;
    if vprops.is_none() {
        let v = vertex_props(file, &points.columns(None))?;
        w.write_all(header(&v).as_bytes()).map_err(io)?;
    }
    match faces {
        Faces::None => {}
        Faces::Document { faces, props } => {
            for (i, f) in faces.iter().enumerate() {
                rec.value(PlyType::U8, f.len() as f64);
                for &v in f {
                    rec.value(PlyType::I32, v as f64);
                }
                for p in props.iter() {
                    rec.value(p.ty, p.values.get(i));
                }
                rec.end(&mut w).map_err(io)?;
            }
        }
        Faces::Stream(props) => {
            let Some(links) = points.links() else {
                return Ok(());
            };
            let face = |rec: &mut Record,
                        w: &mut std::io::BufWriter<&mut dyn Write>,
                        l: &Link,
                        attrs: &[Option<AttributeRows>]| {
                rec.value(PlyType::U8, l.ends.len() as f64);
                for &v in &l.ends {
                    rec.value(PlyType::I32, v as f64);
                }
                for &(_, ty, a, ch) in props {
                    rec.value(ty, links.value(attrs, a, l.row, ch));
                }
                rec.end(w).map_err(io)
            };
            carried(
                file,
                |sink| links.for_each(&NoProgress, sink),
                |chunk| {
                    for l in &chunk.links {
                        face(&mut rec, &mut w, l, &chunk.attributes)?;
                    }
                    Ok(())
                },
            )?;
            for l in links.cross_links() {
                face(&mut rec, &mut w, &l, &[])?;
            }
        }
    }
    w.flush().map_err(io)
}

/// Object ids must fit PLY's `uint`.
fn check_ids(file: &FileName, chunk: &PointChunk) -> Result<()> {
    if chunk
        .object_ids
        .iter()
        .flatten()
        .any(|&i| i > u32::MAX as u64)
    {
        return Err(file.unsupported("object ids above 2^32 − 1 do not fit PLY's uint"));
    }
    Ok(())
}

/// One record being encoded.
struct Record {
    enc: PlyEncoding,
    buf: Vec<u8>,
}

impl Record {
    fn new(enc: PlyEncoding) -> Self {
        Self {
            enc,
            buf: Vec::new(),
        }
    }

    /// Appends a value.
    fn value(&mut self, ty: PlyType, v: f64) {
        match self.enc {
            PlyEncoding::Ascii => {
                if !self.buf.is_empty() {
                    self.buf.push(b' ');
                }
                let text = match ty {
                    PlyType::F32 => (v as f32).to_string(),
                    PlyType::F64 => v.to_string(),
                    _ => (v as i64).to_string(),
                };
                self.buf.extend_from_slice(text.as_bytes());
            }
            PlyEncoding::BinaryLittleEndian => ty.encode(v, false, &mut self.buf),
            PlyEncoding::BinaryBigEndian => ty.encode(v, true, &mut self.buf),
        }
    }

    /// Writes the record out.
    fn end(&mut self, w: &mut impl Write) -> std::io::Result<()> {
        if self.enc == PlyEncoding::Ascii {
            self.buf.push(b'\n');
        }
        w.write_all(&self.buf)?;
        self.buf.clear();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_streamed_export_equals_the_export_read_whole() {
        let mut compared = 0;
        for (name, zv) in crate::points::tests::stores() {
            for enc in [
                PlyEncoding::Ascii,
                PlyEncoding::BinaryLittleEndian,
                PlyEncoding::BinaryBigEndian,
            ] {
                let file = FileName(format!("{name}.ply"));
                let opts = ExportOptions {
                    ply_encoding: enc,
                    ..Default::default()
                };
                let export = |stream| {
                    let mut out = Vec::new();
                    let result =
                        source(&zv, &file, stream).and_then(|s| write(&s, &mut out, &file, &opts));
                    result.map(|()| out).map_err(|e| e.to_string())
                };
                let (streamed, whole) = (export(true), export(false));
                if name == "generated" {
                    // a categorical attribute: both refuse it
                    let err = streamed.unwrap_err();
                    assert!(err.contains("`kind` is categorical"), "{err}");
                    assert_eq!(whole.unwrap_err(), err);
                    continue;
                }
                let streamed = streamed.unwrap();
                assert!(streamed.len() > 500, "{name}: {} bytes", streamed.len());
                assert!(streamed == whole.unwrap(), "{name} {enc:?}");
                compared += 1;
            }
        }
        assert_eq!(compared, 12);
    }
}
