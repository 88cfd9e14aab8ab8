//! Writing level 0 of a store as a PLY file (see the [module docs](super)).

use std::io::Write;

use zv_core::data_type::DataType;
use zv_format::{Geometry, ZvStore};

use super::PlyType;
use crate::error::{FileName, Result};
use crate::level::{level0, numeric_columns, ColumnView};
use crate::options::{ExportOptions, PlyEncoding};

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

/// Writes level 0 of `store` (a point cloud or a mesh) as PLY to `out`; `file` names the
/// output in errors.
pub fn export(
    store: &ZvStore,
    out: &mut dyn Write,
    file: &str,
    opts: &ExportOptions,
) -> Result<()> {
    let file = FileName(file.to_owned());
    let doc = level0(store, &file)?;
    if !matches!(doc.geometry, Geometry::PointCloud | Geometry::Mesh) {
        return Err(file.unsupported(format!(
            "PLY holds point clouds and meshes; the store is a {}",
            doc.geometry.name()
        )));
    }
    let ndim = doc.chunk_shape.len();
    if !(2..=3).contains(&ndim) {
        return Err(file.unsupported(format!(
            "PLY holds 2-D or 3-D positions; the store has {ndim} axes"
        )));
    }
    let pos_ty = if doc.vertex_dtype == Some(DataType::Float64) {
        PlyType::F64
    } else {
        PlyType::F32
    };
    let vprops = props(&file, "vertex", &doc.vertex_attributes)?;
    let fprops = props(&file, "face", &doc.link_attributes)?;
    if doc
        .object_ids
        .iter()
        .flatten()
        .any(|&i| i > u32::MAX as u64)
    {
        return Err(file.unsupported("object ids above 2^32 − 1 do not fit PLY's uint"));
    }
    if doc.faces.iter().flatten().any(|&i| i > i32::MAX as u64) {
        return Err(file.unsupported("vertex indices above 2^31 − 1 do not fit PLY's int"));
    }
    let enc = opts.ply_encoding;
    let mut h = format!(
        "ply\nformat {} 1.0\ncomment written by zv\n",
        enc.header_name()
    );
    h += &format!("element vertex {}\n", doc.vertices.len());
    for a in ["x", "y", "z"].iter().take(ndim) {
        h += &format!("property {} {a}\n", pos_ty.name());
    }
    if doc.object_ids.is_some() {
        h += "property uint object_id\n";
    }
    for p in &vprops {
        h += &format!("property {} {}\n", p.ty.name(), p.name);
    }
    if doc.geometry == Geometry::Mesh {
        h += &format!(
            "element face {}\nproperty list uchar int vertex_indices\n",
            doc.faces.len()
        );
        for p in &fprops {
            h += &format!("property {} {}\n", p.ty.name(), p.name);
        }
    }
    h += "end_header\n";
    let io = |e| file.io(e);
    let mut w = std::io::BufWriter::with_capacity(1 << 20, out);
    w.write_all(h.as_bytes()).map_err(io)?;
    let mut rec = Record::new(enc);
    for (i, p) in doc.vertices.iter().enumerate() {
        for &v in p.iter().take(ndim) {
            rec.value(pos_ty, v);
        }
        if let Some(ids) = &doc.object_ids {
            rec.value(PlyType::U32, ids.get(i).copied().unwrap_or(0) as f64);
        }
        for p in &vprops {
            rec.value(p.ty, p.values.get(i));
        }
        rec.end(&mut w).map_err(io)?;
    }
    for (i, f) in doc.faces.iter().enumerate() {
        rec.value(PlyType::U8, f.len() as f64);
        for &v in f {
            rec.value(PlyType::I32, v as f64);
        }
        for p in &fprops {
            rec.value(p.ty, p.values.get(i));
        }
        rec.end(&mut w).map_err(io)?;
    }
    w.flush().map_err(io)
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
