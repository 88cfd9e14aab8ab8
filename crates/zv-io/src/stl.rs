//! STL (ascii and binary): triangle meshes.
//!
//! **Import** ([`import`]): every facet's three corners; corners with the same coordinates
//! (bit for bit, as float32) are merged into one vertex, in order of first appearance, so the
//! mesh is connected as the file means it. Positions are float32 (STL's type). Facet normals
//! and the binary attribute word are not kept (normals follow from the corners). A file is
//! ascii when it starts with `solid` and its size is not that of a binary file with the count
//! in its header. Vertices and faces stream into the writer in batches; the merge table holds
//! 20 bytes per distinct vertex.
//!
//! **Export** ([`export`]): level 0 of a mesh as binary STL, chunk by chunk in bounded memory
//! ([`zv_format::export::links`]; quads as two triangles), facet
//! normals computed from the corners.
//!
//! Written by hand: `stl_io` reads the whole file into memory and merges vertices in its own
//! order; the format is a header and fixed-size records.

use std::io::{Read, Write};
use std::path::Path;
use std::sync::Arc;

use zv_core::data_type::DataType;
use zv_core::store::Store;
use zv_format::writer::WriteSummary;
use zv_format::{Geometry, ZvStore};

use crate::error::{FileName, Location, Result};
use crate::level::carried;
use crate::options::ImportOptions;
use crate::sink::{SinkSpec, VertexSink};
use crate::source::Source;
use std::collections::HashMap;
use zv_format::export::links::LinkStream;
use zv_format::progress::Progress;

/// Merges corners into vertices and gathers faces for the writer.
struct Mesh {
    sink: VertexSink,
    index: HashMap<[u32; 3], u64>,
    faces: Vec<Vec<u64>>,
    batch: usize,
}

impl Mesh {
    /// Adds a facet.
    fn facet(&mut self, corners: [[f32; 3]; 3]) -> Result<()> {
        let mut face = Vec::with_capacity(3);
        for c in corners {
            let key = c.map(f32::to_bits);
            let next = self.sink.vertices();
            let i = *self.index.entry(key).or_insert(next);
            if i == next {
                self.sink.coords.extend(c.iter().map(|&v| f64::from(v)));
            }
            face.push(i);
        }
        self.faces.push(face);
        self.sink.maybe_flush()?;
        if self.faces.len() >= self.batch {
            self.flush_faces()?;
        }
        Ok(())
    }

    /// Hands the faces gathered to the writer.
    fn flush_faces(&mut self) -> Result<()> {
        if self.faces.is_empty() {
            return Ok(());
        }
        let file = self.sink.file();
        self.sink
            .writer_mut()?
            .add_faces(&self.faces, &Default::default())
            .map_err(|e| file.format(e))?;
        self.faces.clear();
        Ok(())
    }
}

/// Imports the STL file at `path` into `store` (empty). See the [module docs](self).
pub fn import(path: &Path, store: Arc<dyn Store>, opts: &ImportOptions) -> Result<WriteSummary> {
    let file = FileName(path.display().to_string());
    let size = std::fs::metadata(path).map_err(|e| file.io(e))?.len();
    let mut f = std::fs::File::open(path).map_err(|e| file.io(e))?;
    let mut head = [0u8; 84];
    let n = read_up_to(&mut f, &mut head).map_err(|e| file.io(e))?;
    let binary_count =
        (n == 84).then(|| u32::from_le_bytes([head[80], head[81], head[82], head[83]]));
    let binary = binary_count.is_some_and(|c| 84 + 50 * u64::from(c) == size)
        || !head[..n].starts_with(b"solid");
    let spec = SinkSpec {
        geometry: Geometry::Mesh,
        ndim: 3,
        vertex_type: DataType::Float32,
        columns: Vec::new(),
        with_ids: false,
    };
    let mut mesh = Mesh {
        sink: VertexSink::new(&file, store, spec, opts),
        index: HashMap::new(),
        faces: Vec::new(),
        batch: opts.batch.max(1),
    };
    let f = crate::source::open(path, &file, opts)?;
    let mut src = Source::new(f, file.clone());
    if binary {
        read_binary(&mut src, &mut mesh)?;
    } else {
        read_ascii(&mut src, &mut mesh)?;
    }
    mesh.flush_faces()?;
    mesh.sink.finish()
}

/// Reads up to `buf.len()` bytes.
fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        let k = r.read(&mut buf[n..])?;
        if k == 0 {
            break;
        }
        n += k;
    }
    Ok(n)
}

/// A binary file: 80 bytes, a count, 50 bytes per facet.
fn read_binary<R: Read>(src: &mut Source<R>, mesh: &mut Mesh) -> Result<()> {
    let mut head = [0u8; 84];
    if !src.read_exact(&mut head)? {
        return Err(src
            .file
            .parse(Location::End, "shorter than a binary STL header (84 bytes)"));
    }
    let count = u32::from_le_bytes([head[80], head[81], head[82], head[83]]);
    let mut rec = [0u8; 50];
    for t in 0..count {
        let at = src.byte();
        if !src.read_exact(&mut rec)? {
            return Err(src.file.parse(
                at,
                format!("the file is truncated in facet {t} (the header says {count})"),
            ));
        }
        let f = |i: usize| f32::from_le_bytes([rec[i], rec[i + 1], rec[i + 2], rec[i + 3]]);
        let corner = |k: usize| [f(12 + 12 * k), f(16 + 12 * k), f(20 + 12 * k)];
        mesh.facet([corner(0), corner(1), corner(2)])?;
    }
    if !src.at_end()? {
        return Err(src.file.parse(
            src.byte(),
            format!("data after the {count} facets the header says"),
        ));
    }
    Ok(())
}

/// An ascii file: `solid`, facets of `outer loop` and three `vertex` lines, `endsolid`.
fn read_ascii<R: Read>(src: &mut Source<R>, mesh: &mut Mesh) -> Result<()> {
    let mut corners: Vec<[f32; 3]> = Vec::with_capacity(3);
    let mut facets = 0u64;
    while let Some(line) = src.read_line()?.map(str::to_owned) {
        let at = src.line();
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.first().copied() {
            Some("vertex") => {
                let v: Option<Vec<f32>> = words[1..].iter().map(|w| w.parse().ok()).collect();
                match v.as_deref() {
                    Some([x, y, z]) if corners.len() < 3 => corners.push([*x, *y, *z]),
                    Some([_, _, _]) => {
                        return Err(src
                            .file
                            .parse(at, format!("facet {facets} has more than 3 vertices")))
                    }
                    _ => {
                        return Err(src
                            .file
                            .parse(at, format!("`{}` is not `vertex x y z`", line.trim())))
                    }
                }
            }
            Some("endloop") => {
                if corners.len() != 3 {
                    return Err(src.file.parse(
                        at,
                        format!("facet {facets} has {} vertices, not 3", corners.len()),
                    ));
                }
                mesh.facet([corners[0], corners[1], corners[2]])?;
                corners.clear();
                facets += 1;
            }
            Some("solid" | "facet" | "outer" | "endfacet" | "endsolid") | None => {}
            Some(other) => {
                return Err(src
                    .file
                    .parse(at, format!("unexpected `{other}` in an ascii STL")))
            }
        }
    }
    if !corners.is_empty() {
        return Err(src.file.parse(
            Location::End,
            format!("the file ends inside facet {facets}"),
        ));
    }
    Ok(())
}

/// Writes level 0 of `store` (a 3-D mesh) as binary STL to `out`, chunk by chunk in bounded
/// memory (a survey counts the triangles for the header; the corners of faces between chunks
/// are kept as their chunks pass); `file` names the output in errors, `progress` gets one unit
/// per chunk.
pub fn export(
    store: &ZvStore,
    out: &mut dyn Write,
    file: &str,
    progress: &dyn Progress,
) -> Result<()> {
    let file = FileName(file.to_owned());
    let ndim = store.root().chunk_shape.len();
    if store.geometry() != Geometry::Mesh || ndim != 3 {
        return Err(file.unsupported(format!(
            "STL holds 3-D meshes; the store is a {ndim}-D {}",
            store.geometry().name()
        )));
    }
    let stream = LinkStream::open(store).map_err(|e| file.format(e))?;
    let cross = stream.cross_links();
    let triangles = |n: usize| match n {
        3 => 1u64,
        4 => 2,
        _ => 0,
    };
    let count = (stream.count() - cross.len() as u64) * triangles(stream.width())
        + cross.iter().map(|l| triangles(l.ends.len())).sum::<u64>();
    let count =
        u32::try_from(count).map_err(|_| file.unsupported("more than 2^32 − 1 triangles"))?;
    // the corners of the faces between chunks, kept as their chunks pass
    let mut corners: Vec<(u64, [f32; 3])> = stream
        .cross_vertices()
        .into_iter()
        .map(|v| (v, [0.0; 3]))
        .collect();
    let io = |e| file.io(e);
    let mut w = std::io::BufWriter::with_capacity(1 << 20, out);
    let mut head = [b' '; 80];
    head[..14].copy_from_slice(b"written by zv ");
    w.write_all(&head).map_err(io)?;
    w.write_all(&count.to_le_bytes()).map_err(io)?;
    let mut rec = Vec::with_capacity(50);
    carried(
        &file,
        |sink| stream.for_each(progress, sink),
        |chunk| {
            let pos = &chunk.points.positions;
            let p = |i: u64| -> [f32; 3] {
                let v = i
                    .checked_sub(chunk.offset)
                    .and_then(|r| pos.get(r as usize))
                    .unwrap_or(&[0.0, 0.0, 0.0]);
                [v[0] as f32, v[1] as f32, v[2] as f32]
            };
            let end = chunk.offset + pos.len() as u64;
            let first = corners.partition_point(|c| c.0 < chunk.offset);
            for (r, slot) in corners[first..].iter_mut().take_while(|c| c.0 < end) {
                *slot = p(*r);
            }
            for l in &chunk.links {
                facet(&mut w, &mut rec, &l.ends, p).map_err(io)?;
            }
            Ok(())
        },
    )?;
    for l in &cross {
        let p = |i: u64| match corners.binary_search_by_key(&i, |c| c.0) {
            Ok(k) => corners[k].1,
            Err(_) => [0.0; 3],
        };
        facet(&mut w, &mut rec, &l.ends, p).map_err(io)?;
    }
    w.flush().map_err(io)
}

/// Writes the triangles of `face` (3 or 4 vertices; others none), corners from `p`.
fn facet(
    w: &mut impl Write,
    rec: &mut Vec<u8>,
    face: &[u64],
    p: impl Fn(u64) -> [f32; 3],
) -> std::io::Result<()> {
    let tris: &[[u64; 3]] = &match face {
        [a, b, c] => vec![[*a, *b, *c]],
        [a, b, c, d] => vec![[*a, *b, *c], [*a, *c, *d]],
        _ => Vec::new(),
    };
    for t in tris {
        let [a, b, c] = t.map(&p);
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
        w.write_all(rec)?;
    }
    Ok(())
}
