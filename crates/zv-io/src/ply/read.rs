//! Reading a PLY file into a new store, in batches (see the [module docs](super)).

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use zv_core::data_type::DataType;
use zv_core::store::Store;
use zv_format::writer::WriteSummary;
use zv_format::Geometry;

use super::header::{read_header, Element};
use super::PlyType;
use crate::error::{FileName, Location, Result};
use crate::options::{ImportOptions, PlyEncoding};
use crate::sink::{Column, SinkSpec, VertexSink};
use crate::source::Source;

/// The body of the file: values of the header's types, in its encoding.
struct Body<R> {
    src: Source<R>,
    encoding: PlyEncoding,
    buf: [u8; 8],
}

impl<R: Read> Body<R> {
    /// Where the reader is (the byte offset, or the line for ascii).
    fn here(&self) -> Location {
        match self.encoding {
            PlyEncoding::Ascii => self.src.line(),
            _ => self.src.byte(),
        }
    }

    /// The next value, of type `ty`; `what` names it for errors.
    fn value(&mut self, ty: PlyType, what: impl Fn() -> String) -> Result<f64> {
        if self.encoding == PlyEncoding::Ascii {
            let Some(tok) = self.src.token()? else {
                return Err(self.src.file.parse(
                    Location::End,
                    format!(
                        "the file ends in {} (fewer records than the header says)",
                        what()
                    ),
                ));
            };
            let v = if ty.is_integer() {
                tok.parse::<i64>()
                    .ok()
                    .filter(|v| ty.holds(*v))
                    .map(|v| v as f64)
            } else if ty == PlyType::F32 {
                tok.parse::<f32>().ok().map(f64::from)
            } else {
                tok.parse::<f64>().ok()
            };
            if let Some(v) = v {
                return Ok(v);
            }
            let tok = tok.to_owned();
            return Err(self.src.file.parse(
                self.src.line(),
                format!("{}: `{tok}` is not a {} value", what(), ty.name()),
            ));
        }
        let at = self.src.byte();
        let n = ty.size();
        if !self.src.read_exact(&mut self.buf[..n])? {
            return Err(self.src.file.parse(
                at,
                format!(
                    "the file is truncated in {} (fewer bytes than the header says)",
                    what()
                ),
            ));
        }
        Ok(ty.decode(
            &self.buf[..n],
            self.encoding == PlyEncoding::BinaryBigEndian,
        ))
    }

    /// The next list count (an integer ≥ 0).
    fn count(&mut self, ty: PlyType, what: impl Fn() -> String) -> Result<usize> {
        let v = self.value(ty, &what)?;
        let at = self.here();
        if v < 0.0 {
            return Err(self
                .src
                .file
                .parse(at, format!("{}: negative list length {v}", what())));
        }
        Ok(v as usize)
    }
}

/// What a vertex property is for.
enum Role {
    Axis(usize),
    ObjectId,
    Column(usize),
}

/// Imports the PLY file at `path` into `store` (empty). See the [module docs](super).
pub fn import(path: &Path, store: Arc<dyn Store>, opts: &ImportOptions) -> Result<WriteSummary> {
    let file = FileName(path.display().to_string());
    let f = crate::source::open(path, &file, opts)?;
    import_reader(f, file, store, opts)
}

/// Imports PLY from `reader`, named `file` in errors.
pub(crate) fn import_reader<R: Read>(
    reader: R,
    file: FileName,
    store: Arc<dyn Store>,
    opts: &ImportOptions,
) -> Result<WriteSummary> {
    let mut src = Source::new(reader, file.clone());
    let header = read_header(&mut src)?;
    let mut body = Body {
        src,
        encoding: header.encoding,
        buf: [0; 8],
    };
    let find = |name: &str| header.elements.iter().position(|e| e.name == name);
    let vi = find("vertex").ok_or_else(|| file.unsupported("the file has no `vertex` element"))?;
    let fi = find("face");
    if fi.is_some_and(|fi| fi < vi) {
        return Err(file.unsupported("the `face` element comes before the `vertex` element"));
    }
    for el in &header.elements {
        if el.name != "vertex" && el.name != "face" && el.count > 0 {
            return Err(file.unsupported(format!(
                "element `{}` ({} records): zv imports `vertex` and `face`",
                el.name, el.count
            )));
        }
    }
    let (roles, spec) = vertex_layout(&file, &header.elements[vi], fi.is_some())?;
    let mut sink = VertexSink::new(&file, store, spec, opts);
    read_vertices(&mut body, &header.elements[vi], &roles, &mut sink)?;
    if let Some(fi) = fi {
        read_faces(
            &mut body,
            &header.elements[fi],
            &mut sink,
            opts.batch.max(1),
        )?;
    }
    if !body.src.at_end()? && body.encoding != PlyEncoding::Ascii {
        return Err(file.parse(
            body.src.byte(),
            "data after the last element (the header's counts are too small)",
        ));
    }
    if body.encoding == PlyEncoding::Ascii {
        if let Some(tok) = body.src.token()?.map(str::to_owned) {
            return Err(file.parse(
                body.src.line(),
                format!("`{tok}` after the last element (the header's counts are too small)"),
            ));
        }
    }
    sink.finish()
}

/// The role of every vertex property, and the sink's description.
fn vertex_layout(file: &FileName, el: &Element, mesh: bool) -> Result<(Vec<Role>, SinkSpec)> {
    let axes = ["x", "y", "z"];
    let mut found = [None; 3];
    let mut roles = Vec::new();
    let mut columns = Vec::new();
    let mut with_ids = false;
    for (i, p) in el.properties.iter().enumerate() {
        if p.count.is_some() {
            return Err(file.unsupported(format!(
                "vertex property `{}` is a list (zv takes scalar vertex properties)",
                p.name
            )));
        }
        // a repeated name would give a vertex two x values, two ids or two same-named columns
        if el.properties[..i].iter().any(|q| q.name == p.name) {
            return Err(file.unsupported(format!("vertex property `{}` is declared twice", p.name)));
        }
        if let Some(a) = axes.iter().position(|a| *a == p.name) {
            found[a] = Some(p.ty);
            roles.push(Role::Axis(a));
        } else if p.name == "object_id" {
            if !p.ty.is_integer() {
                return Err(file.unsupported("vertex property `object_id` is not an integer type"));
            }
            with_ids = true;
            roles.push(Role::ObjectId);
        } else {
            roles.push(Role::Column(columns.len()));
            columns.push(Column::numeric(&p.name, p.ty.data_type()));
        }
    }
    let ndim = match found {
        [Some(_), Some(_), Some(_)] => 3,
        [Some(_), Some(_), None] => 2,
        _ => return Err(file.unsupported("the vertex element has no `x` and `y` properties")),
    };
    let wide = found
        .iter()
        .flatten()
        .any(|t| matches!(t, PlyType::F64 | PlyType::I32 | PlyType::U32));
    let spec = SinkSpec {
        geometry: if mesh {
            Geometry::Mesh
        } else {
            Geometry::PointCloud
        },
        ndim,
        vertex_type: if wide {
            DataType::Float64
        } else {
            DataType::Float32
        },
        columns,
        with_ids,
    };
    Ok((roles, spec))
}

/// Reads every vertex record into the sink.
fn read_vertices<R: Read>(
    body: &mut Body<R>,
    el: &Element,
    roles: &[Role],
    sink: &mut VertexSink,
) -> Result<()> {
    let ndim = roles.iter().filter(|r| matches!(r, Role::Axis(_))).count();
    let mut point = [0.0f64; 3];
    for i in 0..el.count {
        for (p, role) in el.properties.iter().zip(roles) {
            let at = body.here();
            let v = body.value(p.ty, || format!("vertex {i}, property `{}`", p.name))?;
            match role {
                Role::Axis(a) => point[*a] = v,
                Role::ObjectId => {
                    if v < 0.0 {
                        return Err(body
                            .src
                            .file
                            .parse(at, format!("vertex {i}: negative object_id {v}")));
                    }
                    if let Some(ids) = sink.ids.as_mut() {
                        ids.push(v as u64);
                    }
                }
                Role::Column(c) => sink.columns[*c].push_f64(v),
            }
        }
        sink.coords.extend_from_slice(&point[..ndim]);
        sink.maybe_flush()?;
    }
    Ok(())
}

/// Reads every face record and hands them to the writer in batches of `batch`.
fn read_faces<R: Read>(
    body: &mut Body<R>,
    el: &Element,
    sink: &mut VertexSink,
    batch: usize,
) -> Result<()> {
    let file = body.src.file.clone();
    let n_vertices = sink.vertices();
    let is_index = |name: &str| name == "vertex_indices" || name == "vertex_index";
    let Some(_) = el
        .properties
        .iter()
        .find(|p| is_index(&p.name) && p.count.is_some())
    else {
        return Err(file.unsupported("the face element has no `vertex_indices` list"));
    };
    let mut columns = Vec::new();
    for p in &el.properties {
        if !is_index(&p.name) {
            if p.count.is_some() {
                return Err(file.unsupported(format!(
                    "face property `{}` is a list (zv takes the vertex indices and scalar face properties)",
                    p.name
                )));
            }
            columns.push(Column::numeric(&p.name, p.ty.data_type()));
        }
    }
    let mut arity = None;
    let mut faces: Vec<Vec<u64>> = Vec::with_capacity(batch.min(1 << 20));
    for f in 0..el.count {
        let mut col = 0;
        for p in &el.properties {
            let what = || format!("face {f}, property `{}`", p.name);
            match p.count {
                Some(ct) if is_index(&p.name) => {
                    let n = body.count(ct, what)?;
                    // (binary: the offset after the count)
                    let at = body.here();
                    if !(3..=4).contains(&n) {
                        return Err(file.parse(
                            at,
                            format!(
                                "face {f} has {n} vertices (zv meshes take triangles or quads)"
                            ),
                        ));
                    }
                    if *arity.get_or_insert(n) != n {
                        return Err(file.parse(at, format!("face {f} has {n} vertices, earlier faces {} (a ZV mesh has one face arity)", arity.unwrap_or(n))));
                    }
                    let mut face = Vec::with_capacity(n);
                    for _ in 0..n {
                        let at = body.here();
                        let v = body.value(p.ty, what)?;
                        if v < 0.0 || v >= n_vertices as f64 {
                            return Err(file.parse(at, format!("face {f} names vertex {v}, but the file has {n_vertices} vertices")));
                        }
                        face.push(v as u64);
                    }
                    faces.push(face);
                }
                _ => {
                    let v = body.value(p.ty, what)?;
                    if let Some(c) = columns.get_mut(col) {
                        c.push_f64(v);
                    }
                    col += 1;
                }
            }
        }
        if faces.len() >= batch {
            add_faces(sink, &mut faces, &mut columns)?;
        }
    }
    add_faces(sink, &mut faces, &mut columns)
}

/// Hands a batch of faces (and their attribute rows) to the writer.
fn add_faces(
    sink: &mut VertexSink,
    faces: &mut Vec<Vec<u64>>,
    columns: &mut [Column],
) -> Result<()> {
    if faces.is_empty() {
        return Ok(());
    }
    let mut attrs = BTreeMap::new();
    for c in columns.iter_mut() {
        let (name, a) = c.take_named().map_err(|e| sink.file().format(e))?;
        attrs.insert(name, a);
    }
    let file = sink.file();
    sink.writer_mut()?
        .add_faces(faces, &attrs)
        .map_err(|e| file.format(e))?;
    faces.clear();
    Ok(())
}
