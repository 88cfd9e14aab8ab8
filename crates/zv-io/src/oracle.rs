//! The whole-level exporters as they were before the exports streamed: each reads level 0 as
//! a document ([`level0`]) and writes it. The tests' oracle: every streamed export must write
//! the same bytes.

use std::collections::BTreeMap;
use std::io::Write;

use zv_core::data_type::DataType;
use zv_format::document::{Attribute, AttributeValues, GeometryDocument};
use zv_format::{Geometry, ZvStore};

use crate::csv::edges::ID_COLUMN;
use crate::error::{FileName, Result};
use crate::level::{level0, number_text, numeric_columns};
use crate::swc::COMMENTS_ATTRIBUTE;
use crate::tck::{header_text, HEADER_ATTRIBUTE as TCK_HEADER};
use crate::trk::{affine, kept_header};

/// Level 0 of `store` for a streamline export: a 3-D line, polyline or streamline store.
pub(crate) fn streamline_level(
    store: &ZvStore,
    file: &FileName,
    format: &str,
) -> Result<GeometryDocument> {
    let doc = level0(store, file)?;
    if !doc.geometry.is_sequential() || doc.chunk_shape.len() != 3 {
        return Err(file.unsupported(format!(
            "{format} holds 3-D streamlines; the store is a {}-D {}",
            doc.chunk_shape.len(),
            doc.geometry.name()
        )));
    }
    Ok(doc)
}

/// A numeric attribute as rows of float64 (missing rows: NaN) and its channel count; `None`
/// for a categorical one.
pub(crate) fn numeric_rows(a: &Attribute) -> Option<(usize, impl Fn(usize, usize) -> f64 + '_)> {
    let AttributeValues::Numeric { rows, present } = &a.values else {
        return None;
    };
    let get = move |r: usize, c: usize| {
        if present
            .as_ref()
            .is_some_and(|p| !p.get(r).copied().unwrap_or(false))
        {
            return f64::NAN;
        }
        rows.get_f64(r, c).unwrap_or(f64::NAN)
    };
    Some((rows.channels(), get))
}

/// Writes level 0 of `store` as TCK to `out`; `file` names the output in errors.
pub(crate) fn tck(store: &ZvStore, out: &mut dyn Write, file: &str) -> Result<()> {
    let file = FileName(file.to_owned());
    let doc = streamline_level(store, &file, "TCK")?;
    let float64 = doc.vertex_dtype == Some(DataType::Float64);
    let mut other = BTreeMap::new();
    if let Some(o) = store
        .root_attributes()
        .get(TCK_HEADER)
        .and_then(serde_json::Value::as_object)
    {
        for (k, v) in o {
            if let Some(s) = v.as_str() {
                other.insert(k.clone(), s.to_owned());
            }
        }
    }
    let io = |e| file.io(e);
    let mut w = std::io::BufWriter::with_capacity(1 << 20, out);
    w.write_all(header_text(&other, float64, doc.polylines.len()).as_bytes())
        .map_err(io)?;
    let put = |w: &mut std::io::BufWriter<&mut dyn Write>, p: [f64; 3]| {
        for x in p {
            if float64 {
                w.write_all(&x.to_le_bytes())?;
            } else {
                w.write_all(&(x as f32).to_le_bytes())?;
            }
        }
        Ok::<(), std::io::Error>(())
    };
    for pl in &doc.polylines {
        for p in pl {
            put(&mut w, [p[0], p[1], p[2]]).map_err(io)?;
        }
        put(&mut w, [f64::NAN; 3]).map_err(io)?;
    }
    put(&mut w, [f64::INFINITY; 3]).map_err(io)?;
    w.flush().map_err(io)
}

/// Writes level 0 of `store` as TRK to `out`; `file` names the output in errors.
pub(crate) fn trk(store: &ZvStore, out: &mut dyn Write, file: &str) -> Result<()> {
    let file = FileName(file.to_owned());
    let doc = streamline_level(store, &file, "TRK")?;
    let mut h = kept_header(store);
    let mut scalars = Vec::new();
    for (name, a) in &doc.vertex_attributes {
        let (c, get) = numeric_rows(a).ok_or_else(|| {
            file.unsupported(format!(
                "TRK holds numbers per point; vertex attribute `{name}` is categorical"
            ))
        })?;
        h.scalar_names.push((name.clone(), c));
        scalars.push((c, get));
    }
    let mut props = Vec::new();
    for (name, a) in &doc.object_attributes {
        let (c, get) = numeric_rows(a).ok_or_else(|| {
            file.unsupported(format!(
                "TRK holds numbers per streamline; object attribute `{name}` is categorical"
            ))
        })?;
        h.property_names.push((name.clone(), c));
        props.push((c, get));
    }
    h.n_scalars = h.scalar_names.iter().map(|n| n.1).sum();
    h.n_properties = h.property_names.iter().map(|n| n.1).sum();
    h.n_count = doc.polylines.len() as u64;
    let to_voxmm = affine::invert(&h.voxmm_to_rasmm(&file)?)
        .ok_or_else(|| file.unsupported("the kept vox_to_ras is singular"))?;
    let io = |e| file.io(e);
    let mut w = std::io::BufWriter::with_capacity(1 << 20, out);
    w.write_all(&h.to_bytes(&file)?).map_err(io)?;
    let mut v = 0usize;
    let mut bytes = Vec::new();
    for (s, pl) in doc.polylines.iter().enumerate() {
        bytes.clear();
        let n = i32::try_from(pl.len())
            .map_err(|_| file.unsupported(format!("streamline {s} has {} points", pl.len())))?;
        bytes.extend_from_slice(&n.to_le_bytes());
        for p in pl {
            let q = affine::apply(&to_voxmm, [p[0], p[1], p[2]]);
            for x in q {
                bytes.extend_from_slice(&(x as f32).to_le_bytes());
            }
            for (c, get) in &scalars {
                for ch in 0..*c {
                    bytes.extend_from_slice(&(get(v, ch) as f32).to_le_bytes());
                }
            }
            v += 1;
        }
        for (c, get) in &props {
            for ch in 0..*c {
                bytes.extend_from_slice(&(get(s, ch) as f32).to_le_bytes());
            }
        }
        w.write_all(&bytes).map_err(io)?;
    }
    w.flush().map_err(io)
}

/// Writes level 0 of `store` as OBJ to `out`; `file` names the output in errors.
pub(crate) fn obj(store: &ZvStore, out: &mut dyn Write, file: &str) -> Result<()> {
    let file = FileName(file.to_owned());
    let doc = level0(store, &file)?;
    let dt = doc.vertex_dtype.unwrap_or(DataType::Float32);
    let io = |e| file.io(e);
    let mut w = std::io::BufWriter::with_capacity(1 << 20, out);
    writeln!(w, "# written by zv").map_err(io)?;
    let v = |w: &mut std::io::BufWriter<&mut dyn Write>, p: &[f64]| {
        let mut line = String::from("v");
        for i in 0..3 {
            line.push(' ');
            line += &number_text(dt, p.get(i).copied().unwrap_or(0.0));
        }
        writeln!(w, "{line}").map_err(io)
    };
    match doc.geometry {
        Geometry::Mesh | Geometry::PointCloud => {
            for p in &doc.vertices {
                v(&mut w, p)?;
            }
            for f in &doc.faces {
                let ids: Vec<String> = f.iter().map(|i| (i + 1).to_string()).collect();
                writeln!(w, "f {}", ids.join(" ")).map_err(io)?;
            }
        }
        Geometry::Polyline | Geometry::Line | Geometry::Streamline => {
            let mut next = 1usize;
            for pl in &doc.polylines {
                for p in pl {
                    v(&mut w, p)?;
                }
                let ids: Vec<String> = (next..next + pl.len()).map(|i| i.to_string()).collect();
                next += pl.len();
                writeln!(w, "l {}", ids.join(" ")).map_err(io)?;
            }
        }
        ref g => {
            return Err(file.unsupported(format!(
                "OBJ export takes meshes, polylines and point clouds; the store is a {}",
                g.name()
            )))
        }
    }
    w.flush().map_err(io)
}

/// Writes level 0 of `store` (a 3-D mesh) as binary STL to `out`; `file` names the output in
/// errors.
pub(crate) fn stl(store: &ZvStore, out: &mut dyn Write, file: &str) -> Result<()> {
    let file = FileName(file.to_owned());
    let doc = level0(store, &file)?;
    if doc.geometry != Geometry::Mesh || doc.chunk_shape.len() != 3 {
        return Err(file.unsupported(format!(
            "STL holds 3-D meshes; the store is a {}-D {}",
            doc.chunk_shape.len(),
            doc.geometry.name()
        )));
    }
    let mut tris: Vec<[u64; 3]> = Vec::new();
    for f in &doc.faces {
        match f.as_slice() {
            [a, b, c] => tris.push([*a, *b, *c]),
            [a, b, c, d] => tris.extend([[*a, *b, *c], [*a, *c, *d]]),
            _ => {}
        }
    }
    let count =
        u32::try_from(tris.len()).map_err(|_| file.unsupported("more than 2^32 − 1 triangles"))?;
    let io = |e| file.io(e);
    let mut w = std::io::BufWriter::with_capacity(1 << 20, out);
    let mut head = [b' '; 80];
    head[..14].copy_from_slice(b"written by zv ");
    w.write_all(&head).map_err(io)?;
    w.write_all(&count.to_le_bytes()).map_err(io)?;
    let p = |i: u64| -> [f32; 3] {
        let v = doc
            .vertices
            .get(i as usize)
            .map(Vec::as_slice)
            .unwrap_or(&[0.0, 0.0, 0.0]);
        [v[0] as f32, v[1] as f32, v[2] as f32]
    };
    let mut rec = Vec::with_capacity(50);
    for t in &tris {
        let [a, b, c] = t.map(p);
        let (u, v) = (
            [b[0] - a[0], b[1] - a[1], b[2] - a[2]],
            [c[0] - a[0], c[1] - a[1], c[2] - a[2]],
        );
        let mut n = [
            u[1] * v[2] - u[2] * v[1],
            u[2] * v[0] - u[0] * v[2],
            u[0] * v[1] - u[1] * v[0],
        ];
        let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
        if len > 0.0 {
            n = n.map(|x| x / len);
        }
        rec.clear();
        for x in n.iter().chain(&a).chain(&b).chain(&c) {
            rec.extend_from_slice(&x.to_le_bytes());
        }
        rec.extend_from_slice(&[0, 0]);
        w.write_all(&rec).map_err(io)?;
    }
    w.flush().map_err(io)
}

/// Writes level 0 of `store` (a skeleton) as SWC to `out`; `file` names the output in errors.
pub(crate) fn swc(store: &ZvStore, out: &mut dyn Write, file: &str) -> Result<()> {
    let file = FileName(file.to_owned());
    let doc = level0(store, &file)?;
    if doc.geometry != Geometry::Skeleton || doc.chunk_shape.len() != 3 {
        return Err(file.unsupported(format!(
            "SWC holds 3-D skeletons; the store is a {}-D {}",
            doc.chunk_shape.len(),
            doc.geometry.name()
        )));
    }
    let column = |name: &str| {
        doc.vertex_attributes
            .get(name)
            .and_then(|a| numeric_columns(name, a))
            .and_then(|mut c| (c.len() == 1).then(|| c.remove(0).1))
    };
    let (kind, radius) = (column("type"), column("radius"));
    let mut parent = vec![-1i64; doc.vertices.len()];
    for [c, p] in &doc.edges {
        if let Some(slot) = parent.get_mut(*c as usize) {
            *slot = *p as i64 + 1;
        }
    }
    let dt = doc.vertex_dtype.unwrap_or(DataType::Float32);
    let io = |e| file.io(e);
    let mut w = std::io::BufWriter::with_capacity(1 << 20, out);
    let comments = store
        .root_attributes()
        .get(COMMENTS_ATTRIBUTE)
        .and_then(serde_json::Value::as_array);
    match comments {
        Some(lines) => {
            for l in lines {
                writeln!(w, "# {}", l.as_str().unwrap_or_default()).map_err(io)?;
            }
        }
        None => writeln!(w, "# written by zv\n# id type x y z radius parent").map_err(io)?,
    }
    for (i, p) in doc.vertices.iter().enumerate() {
        let k = kind.as_ref().map_or(0.0, |c| c.get(i));
        let r = radius.as_ref().map_or(1.0, |c| c.get(i));
        let rt = radius.as_ref().map_or(DataType::Float64, |c| c.data_type());
        writeln!(
            w,
            "{} {} {} {} {} {} {}",
            i + 1,
            number_text(DataType::Int64, k),
            number_text(dt, p[0]),
            number_text(dt, p[1]),
            number_text(dt, p[2]),
            number_text(rt, r),
            parent[i]
        )
        .map_err(io)?;
    }
    w.flush().map_err(io)
}

/// Writes the edges of level 0 of `store` (a graph) as CSV to `out`; `file` names the output
/// in errors. See the [module docs](self).
pub(crate) fn edges(store: &ZvStore, out: &mut dyn Write, file: &str) -> Result<()> {
    let file = FileName(file.to_owned());
    let doc = level0(store, &file)?;
    if doc.geometry != Geometry::Graph {
        return Err(file.unsupported(format!(
            "an edge list holds a graph's edges; the store is a {}",
            doc.geometry.name()
        )));
    }
    let ids: Option<Box<dyn Fn(u64) -> String>> = match doc.vertex_attributes.get(ID_COLUMN) {
        None => None,
        Some(a) => match (&a.values, numeric_columns(ID_COLUMN, a)) {
            (AttributeValues::Categorical(v), _) => {
                let v = v.clone();
                Some(Box::new(move |i| {
                    v.get(i as usize).cloned().flatten().unwrap_or_default()
                }))
            }
            (_, Some(mut c)) if c.len() == 1 => {
                let view = c.remove(0).1;
                Some(Box::new(move |i| {
                    number_text(view.data_type(), view.get(i as usize))
                }))
            }
            _ => {
                return Err(file.unsupported(format!(
                    "vertex attribute `{ID_COLUMN}` has several channels"
                )))
            }
        },
    };
    let mut header = vec!["source".to_owned(), "target".to_owned()];
    let mut cols = Vec::new();
    for (name, a) in &doc.link_attributes {
        let cs = numeric_columns(name, a)
            .ok_or_else(|| file.unsupported(format!("link attribute `{name}` is categorical")))?;
        for (n, v) in cs {
            header.push(n);
            cols.push(v);
        }
    }
    let mut w =
        ::csv::WriterBuilder::new().from_writer(std::io::BufWriter::with_capacity(1 << 20, out));
    let err = |e: ::csv::Error| match e.into_kind() {
        ::csv::ErrorKind::Io(io) => file.io(io),
        other => file.unsupported(format!("writing: {other:?}")),
    };
    w.write_record(&header).map_err(err)?;
    let name = |v: u64| match &ids {
        Some(f) => f(v),
        None => v.to_string(),
    };
    let mut cells: Vec<String> = Vec::with_capacity(header.len());
    for (i, e) in doc.edges.iter().enumerate() {
        cells.clear();
        cells.push(name(e[0]));
        cells.push(name(e[1]));
        cells.extend(cols.iter().map(|v| number_text(v.data_type(), v.get(i))));
        w.write_record(&cells).map_err(err)?;
    }
    w.flush().map_err(|e| file.io(e))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use proptest::prelude::*;
    use zv_format::document::GeometryDocument;
    use zv_format::progress::NoProgress;
    use zv_format::ZvStore;

    type Export = fn(&ZvStore, &mut dyn std::io::Write, &str) -> crate::Result<()>;

    /// Each streamed exporter beside its whole-level oracle.
    fn exporters() -> Vec<(&'static str, Export, Export)> {
        vec![
            (
                "tck",
                |z, o, f| crate::tck::export(z, o, f, &NoProgress),
                super::tck,
            ),
            (
                "trk",
                |z, o, f| crate::trk::export(z, o, f, &NoProgress),
                super::trk,
            ),
            (
                "obj",
                |z, o, f| crate::obj::export(z, o, f, &NoProgress),
                super::obj,
            ),
            (
                "stl",
                |z, o, f| crate::stl::export(z, o, f, &NoProgress),
                super::stl,
            ),
            (
                "swc",
                |z, o, f| crate::swc::export(z, o, f, &NoProgress),
                super::swc,
            ),
            ("edges.csv", crate::csv::edges::export_edges, super::edges),
        ]
    }

    /// Exports `zv` with every exporter both ways; where the oracle writes a file the streamed
    /// export must write the same bytes. Returns the formats compared.
    fn compare(name: &str, zv: &ZvStore) -> Result<Vec<&'static str>, String> {
        let mut compared = Vec::new();
        for (ext, streamed, whole) in exporters() {
            let file = format!("{name}.{ext}");
            let run = |f: Export| {
                let mut out = Vec::new();
                f(zv, &mut out, &file).map(|()| out)
            };
            let Ok(want) = run(whole) else { continue };
            match run(streamed) {
                Ok(got) if got == want => compared.push(ext),
                Ok(got) => {
                    return Err(format!(
                        "{file}: the streamed export differs ({} bytes, whole {} bytes)",
                        got.len(),
                        want.len()
                    ))
                }
                Err(e) => return Err(format!("{file}: only the streamed export fails: {e}")),
            }
        }
        Ok(compared)
    }

    #[test]
    fn every_fixture_streams_the_bytes_of_the_whole_level_export() {
        let dir = zv_testkit::env::fixtures_dir();
        let mut compared = Vec::new();
        for name in [
            "streamlines_basic",
            "mesh_basic",
            "skeleton_basic",
            "graph_basic",
            "points_basic",
        ] {
            let path = dir.join(format!("{name}.zarr"));
            let zv = ZvStore::open_url(&path.display().to_string()).expect("the fixture opens");
            for ext in compare(name, &zv).unwrap() {
                compared.push(format!("{name}.{ext}"));
            }
        }
        assert_eq!(
            compared,
            [
                "streamlines_basic.tck",
                "streamlines_basic.trk",
                "streamlines_basic.obj",
                "mesh_basic.obj",
                "mesh_basic.stl",
                "skeleton_basic.swc",
                "graph_basic.edges.csv",
                "points_basic.obj",
            ]
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]
        #[test]
        fn random_documents_stream_the_bytes_of_the_whole_level_export(
            mut doc in zv_testkit_geometry::strategy::geometry_document(),
            batch in 1usize..8,
            numeric in any::<bool>(),
        ) {
            if numeric {
                // the formats hold numbers: without categorical attributes every exporter
                // takes the document
                for group in ["vertex_attributes", "link_attributes", "object_attributes"] {
                    if let Some(m) = doc.get_mut(group).and_then(|g| g.as_object_mut()) {
                        m.retain(|_, a| a["dtype"] != "string");
                    }
                }
            }
            let doc = GeometryDocument::from_value(&doc).unwrap();
            let store = Arc::new(zv_store_mem::MemoryStore::new());
            let written = zv_format::import::write_document(store.clone(), &doc, batch);
            prop_assume!(written.is_ok());
            let zv = ZvStore::open(store).unwrap();
            compare(doc.geometry.name(), &zv).map_err(TestCaseError::fail)?;
        }
    }
}
