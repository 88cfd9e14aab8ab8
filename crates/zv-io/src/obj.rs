//! Wavefront OBJ: meshes (`v`, `f`) and polylines (`v`, `l`).
//!
//! **Import** ([`import`]): a first pass over the lines finds what the file holds: `f` lines
//! make a mesh (faces of 3 or 4 vertices, one arity per file; larger polygons are refused
//! naming the line), `l` lines (and no `f`) polylines, one object each, only `v` a point cloud;
//! a file with both `f` and `l` is refused. Indices are 1-based; negative ones count back from
//! the last vertex defined so far; `v/vt/vn` forms use the vertex index. The `w` of `v x y z w`,
//! texture coordinates, normals, groups and materials are not kept. Positions are float64
//! (decimal text). Meshes and point clouds stream into the writer in batches; for polylines the
//! vertices are held in memory (24 bytes each) to resolve the `l` lines.
//!
//! **Export** ([`export`]): level 0 of a mesh (`v` and `f`), a polyline, line or streamline
//! store (`v` and one `l` per object) or a point cloud (`v`), streamed in bounded memory
//! ([`zv_format::export::links`], [`zv_format::export::polylines`]).
//!
//! Written by hand: `tobj` loads the whole file and re-indexes it for rendering; this keeps the
//! file's vertex order and streams.

use std::io::{Read, Write};
use std::path::Path;
use std::sync::Arc;

use zv_core::data_type::DataType;
use zv_core::store::Store;
use zv_format::export::polylines::PolylineStream;
use zv_format::progress::{NoProgress, Progress};
use zv_format::writer::{WriteSummary, ZvWriter};
use zv_format::{Geometry, ZvStore};

use crate::error::{FileName, Location, Result};
use crate::level::{carried, number_text};
use crate::options::ImportOptions;
use crate::points::Points;
use crate::sink::{auto_chunk_shape, writer_options, SinkSpec, VertexSink};
use crate::source::Source;

/// The 0-based vertex of an OBJ index `word` (`i`, `i/t`, `i/t/n`, `-k`), given `n` vertices
/// defined so far.
fn index(word: &str, n: u64) -> Option<u64> {
    let i: i64 = word.split('/').next()?.parse().ok()?;
    let v = match i {
        0 => return None,
        i if i > 0 => (i - 1) as u64,
        i => n.checked_sub(i.unsigned_abs())?,
    };
    (v < n).then_some(v)
}

/// Reads `v x y z` into `out`.
fn vertex(file: &FileName, at: Location, words: &[&str], out: &mut Vec<f64>) -> Result<()> {
    if words.len() < 4 {
        return Err(file.parse(at, "`v` needs x, y and z"));
    }
    for w in &words[1..4] {
        out.push(
            w.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| file.parse(at, format!("`{w}` is not a number")))?,
        );
    }
    Ok(())
}

/// The indices of an `f` or `l` line.
fn indices(file: &FileName, at: Location, words: &[&str], n: u64) -> Result<Vec<u64>> {
    words[1..]
        .iter()
        .map(|w| {
            index(w, n).ok_or_else(|| {
                file.parse(
                    at,
                    format!("`{w}` names no vertex ({n} are defined so far)"),
                )
            })
        })
        .collect()
}

/// Imports the OBJ file at `path` into `store` (empty). See the [module docs](self).
pub fn import(path: &Path, store: Arc<dyn Store>, opts: &ImportOptions) -> Result<WriteSummary> {
    let file = FileName(path.display().to_string());
    let open = || crate::source::open(path, &file, opts);
    // the first pass: what the file holds
    let (mut faces, mut lines) = (false, false);
    let mut src = Source::new(open()?, file.clone());
    while let Some(line) = src.read_line()? {
        let t = line.trim_start();
        faces |= t.starts_with("f ");
        lines |= t.starts_with("l ");
    }
    if faces && lines {
        return Err(file.unsupported("the file has both faces (`f`) and lines (`l`)"));
    }
    let src = Source::new(open()?, file.clone());
    if lines {
        return polylines(src, store, opts);
    }
    let spec = SinkSpec {
        geometry: if faces {
            Geometry::Mesh
        } else {
            Geometry::PointCloud
        },
        ndim: 3,
        vertex_type: DataType::Float64,
        columns: Vec::new(),
        with_ids: false,
    };
    mesh(
        src,
        VertexSink::new(&file, store, spec, opts),
        opts.batch.max(1),
    )
}

/// A mesh or a point cloud, streamed.
fn mesh<R: Read>(mut src: Source<R>, mut sink: VertexSink, batch: usize) -> Result<WriteSummary> {
    let file = src.file.clone();
    let mut faces: Vec<Vec<u64>> = Vec::new();
    let mut arity = None;
    while let Some(line) = src.read_line()?.map(str::to_owned) {
        let at = src.line();
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.first().copied() {
            Some("v") => {
                vertex(&file, at, &words, &mut sink.coords)?;
                sink.maybe_flush()?;
            }
            Some("f") => {
                let f = indices(&file, at, &words, sink.vertices())?;
                if !(3..=4).contains(&f.len()) {
                    return Err(file.parse(
                        at,
                        format!(
                            "a face of {} vertices (zv meshes take triangles or quads)",
                            f.len()
                        ),
                    ));
                }
                if *arity.get_or_insert(f.len()) != f.len() {
                    return Err(file.parse(at, format!("a face of {} vertices after faces of {} (a ZV mesh has one face arity)", f.len(), arity.unwrap_or(0))));
                }
                faces.push(f);
                if faces.len() >= batch {
                    add_faces(&mut sink, &mut faces)?;
                }
            }
            _ => {}
        }
    }
    add_faces(&mut sink, &mut faces)?;
    sink.finish()
}

/// Hands faces to the writer.
fn add_faces(sink: &mut VertexSink, faces: &mut Vec<Vec<u64>>) -> Result<()> {
    if faces.is_empty() {
        return Ok(());
    }
    let file = sink.file();
    sink.writer_mut()?
        .add_faces(faces, &Default::default())
        .map_err(|e| file.format(e))?;
    faces.clear();
    Ok(())
}

/// Polylines: vertices held, `l` lines handed to the writer in batches.
fn polylines<R: Read>(
    mut src: Source<R>,
    store: Arc<dyn Store>,
    opts: &ImportOptions,
) -> Result<WriteSummary> {
    let file = src.file.clone();
    let mut vertices = Vec::new();
    let mut writer: Option<ZvWriter> = None;
    let (mut coords, mut offsets) = (Vec::new(), vec![0usize]);
    let batch = opts.batch.max(1);
    let flush = |w: &mut Option<ZvWriter>,
                 vertices: &[f64],
                 coords: &mut Vec<f64>,
                 offsets: &mut Vec<usize>|
     -> Result<()> {
        if w.is_none() {
            let chunk = opts.chunk_shape.clone().unwrap_or_else(|| {
                let (mut lo, mut hi) = ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]);
                for p in vertices.chunks_exact(3) {
                    for a in 0..3 {
                        lo[a] = lo[a].min(p[a]);
                        hi[a] = hi[a].max(p[a]);
                    }
                }
                auto_chunk_shape(&lo, &hi)
            });
            let o = writer_options(Geometry::Polyline, chunk, DataType::Float64, opts);
            *w = Some(ZvWriter::create(store.clone(), o).map_err(|e| file.format(e))?);
        }
        if let Some(w) = w.as_mut() {
            if offsets.len() > 1 {
                w.add_polylines_flat(coords, offsets, &Default::default())
                    .map_err(|e| file.format(e))?;
            }
        }
        coords.clear();
        offsets.truncate(1);
        Ok(())
    };
    while let Some(line) = src.read_line()?.map(str::to_owned) {
        let at = src.line();
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.first().copied() {
            Some("v") => vertex(&file, at, &words, &mut vertices)?,
            Some("l") => {
                let l = indices(&file, at, &words, (vertices.len() / 3) as u64)?;
                for i in l {
                    let i = i as usize * 3;
                    coords.extend_from_slice(&vertices[i..i + 3]);
                }
                offsets.push(coords.len() / 3);
                if offsets.len() > batch {
                    flush(&mut writer, &vertices, &mut coords, &mut offsets)?;
                }
            }
            _ => {}
        }
    }
    flush(&mut writer, &vertices, &mut coords, &mut offsets)?;
    match writer {
        Some(w) => w.finish().map_err(|e| file.format(e)),
        None => Err(file.unsupported("no polylines")),
    }
}

/// Writes level 0 of `store` as OBJ to `out`, in bounded memory: a mesh's or point cloud's
/// vertices chunk by chunk, then a mesh's faces chunk by chunk (the links between chunks
/// last); a polyline store's objects a batch at a time. `file` names the output in errors,
/// `progress` gets the first pass.
pub fn export(
    store: &ZvStore,
    out: &mut dyn Write,
    file: &str,
    progress: &dyn Progress,
) -> Result<()> {
    let file = FileName(file.to_owned());
    let geometry = store.geometry();
    let io = |e| file.io(e);
    let mut w = std::io::BufWriter::with_capacity(1 << 20, out);
    let v = |w: &mut std::io::BufWriter<&mut dyn Write>, dt: DataType, p: &[f64]| {
        let mut line = String::from("v");
        for i in 0..3 {
            line.push(' ');
            line += &number_text(dt, p.get(i).copied().unwrap_or(0.0));
        }
        writeln!(w, "{line}").map_err(io)
    };
    let indices = |w: &mut std::io::BufWriter<&mut dyn Write>, tag: &str, ids: &[u64]| {
        let ids: Vec<String> = ids.iter().map(|i| (i + 1).to_string()).collect();
        writeln!(w, "{tag} {}", ids.join(" ")).map_err(io)
    };
    match geometry {
        Geometry::PointCloud => {
            let points = Points::stream(store, false, true, &file)?;
            writeln!(w, "# written by zv").map_err(io)?;
            points.for_each(progress, &file, |chunk| {
                for p in chunk.positions.iter() {
                    v(&mut w, points.vertex_type, p)?;
                }
                Ok(())
            })?;
        }
        Geometry::Mesh => {
            let points = Points::with_links(store, true, &file)?;
            let links = points.links().ok_or_else(|| file.unsupported("no links"))?;
            writeln!(w, "# written by zv").map_err(io)?;
            points.for_each(progress, &file, |chunk| {
                for p in chunk.positions.iter() {
                    v(&mut w, points.vertex_type, p)?;
                }
                Ok(())
            })?;
            carried(
                &file,
                |sink| links.for_each(&NoProgress, sink),
                |chunk| {
                    for l in &chunk.links {
                        indices(&mut w, "f", &l.ends)?;
                    }
                    Ok(())
                },
            )?;
            for l in links.cross_links() {
                indices(&mut w, "f", &l.ends)?;
            }
        }
        Geometry::Polyline | Geometry::Line | Geometry::Streamline => {
            let stream = PolylineStream::open(store).map_err(|e| file.format(e))?;
            let dt = stream.vertex_type();
            writeln!(w, "# written by zv").map_err(io)?;
            let mut next = 0u64;
            carried(
                &file,
                |sink| stream.for_each(progress, sink),
                |pl| {
                    for p in pl.positions.iter() {
                        v(&mut w, dt, p)?;
                    }
                    let n = pl.positions.len() as u64;
                    let ids: Vec<u64> = (next..next + n).collect();
                    next += n;
                    indices(&mut w, "l", &ids)
                },
            )?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_are_one_based_or_count_back() {
        assert_eq!(index("1", 3), Some(0));
        assert_eq!(index("3/1/2", 3), Some(2));
        assert_eq!(index("-1", 3), Some(2));
        assert_eq!(index("-3//4", 3), Some(0));
        assert_eq!(index("-4", 3), None);
        assert_eq!(index("0", 3), None);
        assert_eq!(index("4", 3), None);
        assert_eq!(index("x", 3), None);
    }
}
