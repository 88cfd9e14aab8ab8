//! SWC: skeletons (neuron morphologies), one line per sample:
//! `id type x y z radius parent` (`parent` −1, or any negative, for a root).
//!
//! **Import** ([`import`]): every tree (a root and what hangs from it) becomes one object, in
//! the order of the roots in the file; vertices keep the file's order; each sample's link is
//! `[child, parent]`; `type` (int32) and `radius` (float64) become vertex attributes.
//! Positions are stored as float64 (decimal text), unless the options say otherwise.
//! Duplicate ids, a parent that is not in the file and parent cycles are errors naming the
//! line. SWC files are small by nature (a neuron has up to some 10⁵ samples), so the file is
//! read whole and its tree checked before anything is handed to the writer. `#` comment lines
//! (the header) are kept as the root attribute `swc_comments` (a list of strings, without the
//! `#`) and written back by export.
//!
//! **Export** ([`export`]): level 0 of a skeleton; samples are numbered from 1 in the level's
//! vertex order; `type` and `radius` come from those vertex attributes (0 and 1 without them).
//!
//! Written by hand: the format is seven numbers a line, and no maintained crate reads it.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use zv_core::data_type::DataType;
use zv_core::store::Store;
use zv_format::writer::WriteSummary;
use zv_format::{Geometry, ZvStore};

use crate::error::{FileName, Location, Result};
use crate::level::{carried, number_text};
use crate::options::ImportOptions;
use crate::root_attrs::add_root_attribute;
use crate::sink::{Column, SinkSpec, VertexSink};
use crate::source::Source;
use zv_format::export::links::LinkStream;
use zv_format::export::points::{ChunkColumn, PointChunk};
use zv_format::progress::Progress;

/// One sample of the file.
struct Sample {
    line: u64,
    id: i64,
    kind: f64,
    pos: [f64; 3],
    radius: f64,
    parent: i64,
}

/// The root attribute holding the file's `#` comment lines.
pub const COMMENTS_ATTRIBUTE: &str = "swc_comments";

/// Reads every sample, and the comment lines (without their `#`) into `comments`.
fn read_samples<R: std::io::Read>(
    src: &mut Source<R>,
    comments: &mut Vec<String>,
) -> Result<Vec<Sample>> {
    let mut out = Vec::new();
    let file = src.file.clone();
    while let Some(line) = src.read_line()?.map(str::to_owned) {
        let text = line.trim();
        if let Some(c) = text.strip_prefix('#') {
            comments.push(c.strip_prefix(' ').unwrap_or(c).to_owned());
            continue;
        }
        if text.is_empty() {
            continue;
        }
        let words: Vec<&str> = text.split_whitespace().collect();
        let at = src.line();
        let Location::Line(n) = at else { continue };
        let src = &file;
        if words.len() < 7 {
            return Err(src.parse(
                at,
                format!(
                    "{} fields, expected 7 (id type x y z radius parent)",
                    words.len()
                ),
            ));
        }
        let num = |i: usize, what: &str| {
            words[i]
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| src.parse(at, format!("{what} `{}` is not a number", words[i])))
        };
        let int = |i: usize, what: &str| {
            let v = num(i, what)?;
            if v.fract() != 0.0 || v.abs() > 9.0e15 {
                return Err(src.parse(at, format!("{what} `{}` is not an integer", words[i])));
            }
            Ok(v as i64)
        };
        out.push(Sample {
            line: n,
            id: int(0, "id")?,
            kind: num(1, "type")?,
            pos: [num(2, "x")?, num(3, "y")?, num(4, "z")?],
            radius: num(5, "radius")?,
            parent: int(6, "parent")?,
        });
    }
    Ok(out)
}

/// The parent index of every sample (`None`: a root), checked: known parents, no cycles.
fn parents(file: &FileName, samples: &[Sample]) -> Result<Vec<Option<usize>>> {
    let mut index = HashMap::with_capacity(samples.len());
    for (i, s) in samples.iter().enumerate() {
        if let Some(j) = index.insert(s.id, i) {
            return Err(file.parse(
                Location::Line(s.line),
                format!("id {} again (first on line {})", s.id, samples[j].line),
            ));
        }
    }
    let parent: Vec<Option<usize>> = samples
        .iter()
        .map(|s| {
            if s.parent < 0 {
                return Ok(None);
            }
            index.get(&s.parent).copied().map(Some).ok_or_else(|| {
                file.parse(
                    Location::Line(s.line),
                    format!(
                        "sample {} names parent {}, which is not in the file",
                        s.id, s.parent
                    ),
                )
            })
        })
        .collect::<Result<_>>()?;
    // 0 unvisited, 1 on the current path, 2 reaches a root
    let mut state = vec![0u8; samples.len()];
    let mut path = Vec::new();
    for start in 0..samples.len() {
        let mut i = start;
        while state[i] == 0 {
            state[i] = 1;
            path.push(i);
            match parent[i] {
                Some(p) => i = p,
                None => break,
            }
        }
        if state[i] == 1 && parent[i].is_some() {
            let s = &samples[i];
            return Err(file.parse(
                Location::Line(s.line),
                format!("sample {} is its own ancestor (a parent cycle)", s.id),
            ));
        }
        for j in path.drain(..) {
            state[j] = 2;
        }
    }
    Ok(parent)
}

/// The tree (object) of every sample: roots numbered in file order.
fn trees(parent: &[Option<usize>]) -> Vec<u64> {
    let mut tree = vec![u64::MAX; parent.len()];
    let mut next = 0;
    for (i, p) in parent.iter().enumerate() {
        if p.is_none() {
            tree[i] = next;
            next += 1;
        }
    }
    let mut path = Vec::new();
    for start in 0..parent.len() {
        let mut i = start;
        while tree[i] == u64::MAX {
            path.push(i);
            // a sample without a tree has a parent (checked acyclic, so this ends at a root)
            i = parent[i].unwrap_or(i);
        }
        let t = tree[i];
        for j in path.drain(..) {
            tree[j] = t;
        }
    }
    tree
}

/// Imports the SWC file at `path` into `store` (empty). See the [module docs](self).
pub fn import(path: &Path, store: Arc<dyn Store>, opts: &ImportOptions) -> Result<WriteSummary> {
    let file = FileName(path.display().to_string());
    let f = crate::source::open(path, &file, opts)?;
    import_reader(f, file, store, opts)
}

/// Imports SWC from `reader`, named `file` in errors.
pub(crate) fn import_reader<R: std::io::Read>(
    reader: R,
    file: FileName,
    store: Arc<dyn Store>,
    opts: &ImportOptions,
) -> Result<WriteSummary> {
    let mut src = Source::new(reader, file.clone());
    let mut comments = Vec::new();
    let samples = read_samples(&mut src, &mut comments)?;
    let root_store = store.clone();
    let parent = parents(&file, &samples)?;
    let tree = trees(&parent);
    let spec = SinkSpec {
        geometry: Geometry::Skeleton,
        ndim: 3,
        vertex_type: DataType::Float64,
        columns: vec![
            Column::numeric("type", DataType::Int32),
            Column::numeric("radius", DataType::Float64),
        ],
        with_ids: true,
    };
    let mut sink = VertexSink::new(&file, store, spec, opts);
    for (s, t) in samples.iter().zip(&tree) {
        sink.coords.extend_from_slice(&s.pos);
        if let Some(ids) = sink.ids.as_mut() {
            ids.push(*t);
        }
        sink.columns[0].push_f64(s.kind);
        sink.columns[1].push_f64(s.radius);
        sink.maybe_flush()?;
    }
    let edges: Vec<[u64; 2]> = parent
        .iter()
        .enumerate()
        .filter_map(|(i, p)| p.map(|p| [i as u64, p as u64]))
        .collect();
    sink.writer_mut()?
        .add_edges(&edges, &BTreeMap::new())
        .map_err(|e| file.format(e))?;
    let summary = sink.finish()?;
    if !comments.is_empty() {
        add_root_attribute(
            &file,
            root_store.as_ref(),
            COMMENTS_ATTRIBUTE,
            serde_json::json!(comments),
        )?;
    }
    Ok(summary)
}

/// Writes level 0 of `store` (a skeleton) as SWC to `out`, chunk by chunk in bounded memory
/// ([`zv_format::export::links`]: each chunk's vertices with their parents); `file` names
/// the output in errors, `progress` gets one unit per chunk.
pub fn export(
    store: &ZvStore,
    out: &mut dyn Write,
    file: &str,
    progress: &dyn Progress,
) -> Result<()> {
    let file = FileName(file.to_owned());
    let ndim = store.root().chunk_shape.len();
    if store.geometry() != Geometry::Skeleton || ndim != 3 {
        return Err(file.unsupported(format!(
            "SWC holds 3-D skeletons; the store is a {ndim}-D {}",
            store.geometry().name()
        )));
    }
    let stream = LinkStream::open(store).map_err(|e| file.format(e))?;
    let points = stream.points();
    // a one-channel numeric vertex attribute: its position among the attributes and type
    let column = |name: &str| {
        let i = points
            .infos()
            .iter()
            .position(|a| a.name == name && a.dictionary.is_none())?;
        Some((i, points.infos()[i].data_type))
    };
    let (kind, radius) = (column("type"), column("radius"));
    let value = |chunk: &PointChunk, c: Option<(usize, DataType)>, r: usize| {
        let (i, _) = c?;
        match chunk.attributes.get(i) {
            Some(ChunkColumn::Numeric(Some(rows))) if rows.channels() == 1 => {
                Some(rows.get_f64(r, 0).unwrap_or(f64::NAN))
            }
            Some(ChunkColumn::Numeric(Some(_))) => None,
            _ => Some(f64::NAN),
        }
    };
    let dt = points.vertex_type();
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
    let rt = radius.map_or(DataType::Float64, |c| c.1);
    carried(
        &file,
        |sink| stream.for_each(progress, sink),
        |chunk| {
            let rows = chunk.points.positions.len();
            let mut parent = vec![-1i64; rows];
            for l in &chunk.links {
                if let [c, p] = l.ends.as_slice() {
                    let slot = c
                        .checked_sub(chunk.offset)
                        .and_then(|i| parent.get_mut(i as usize));
                    if let Some(slot) = slot {
                        *slot = *p as i64 + 1;
                    }
                }
            }
            for (r, p) in chunk.points.positions.iter().enumerate() {
                let k = value(&chunk.points, kind, r).unwrap_or(0.0);
                let rad = value(&chunk.points, radius, r).unwrap_or(1.0);
                writeln!(
                    w,
                    "{} {} {} {} {} {} {}",
                    chunk.offset + r as u64 + 1,
                    number_text(DataType::Int64, k),
                    number_text(dt, p[0]),
                    number_text(dt, p[1]),
                    number_text(dt, p[2]),
                    number_text(rt, rad),
                    parent[r]
                )
                .map_err(io)?;
            }
            Ok(())
        },
    )?;
    w.flush().map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str) -> Result<Vec<Option<usize>>> {
        let file = FileName("n.swc".into());
        let mut src = Source::new(text.as_bytes(), file.clone());
        let samples = read_samples(&mut src, &mut Vec::new())?;
        parents(&file, &samples)
    }

    #[test]
    fn trees_follow_the_roots() {
        let p = check("# c\n1 1 0 0 0 1 -1\n2 3 1 0 0 1 1\n10 1 5 5 5 1 -1\n3 3 2 0 0 1 2\n");
        assert_eq!(p.as_ref().ok(), Some(&vec![None, Some(0), None, Some(1)]));
        assert_eq!(p.map(|p| trees(&p)).ok(), Some(vec![0, 0, 1, 0]));
    }

    #[test]
    fn cycles_unknown_parents_and_duplicates_name_the_line() {
        let e = check("1 1 0 0 0 1 -1\n2 3 1 0 0 1 3\n3 3 2 0 0 1 2\n");
        assert!(e.err().is_some_and(|e| e
            .to_string()
            .contains("line 2: sample 2 is its own ancestor")));
        let e = check("1 1 0 0 0 1 -1\n2 3 1 0 0 1 7\n");
        assert!(e
            .err()
            .is_some_and(|e| e.to_string().contains("line 2: sample 2 names parent 7")));
        let e = check("1 1 0 0 0 1 -1\n1 3 1 0 0 1 -1\n");
        assert!(e.err().is_some_and(|e| e
            .to_string()
            .contains("line 2: id 1 again (first on line 1)")));
        let e = check("1 1 0 0 zero 1 -1\n");
        assert!(e
            .err()
            .is_some_and(|e| e.to_string().contains("line 1: z `zero` is not a number")));
    }
}
