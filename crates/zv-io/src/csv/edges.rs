//! CSV edge lists: the edges of a graph whose nodes are a CSV point cloud
//! (`zv import nodes.csv STORE --edges edges.csv`), and their export beside the nodes
//! (`zv export STORE out.csv` also writes `out.edges.csv`).
//!
//! **Import**: the edge file's first row names its columns; `source` and `target` name nodes
//! by the nodes file's `id` column (numbers compare by value, `7` and `7.0` alike; other text
//! as written), or by row index (0-based, the header aside) when the nodes have no `id`
//! column. Every other column is a float64 link attribute (empty cells are NaN). An edge naming
//! a missing node, a node linked to itself, or a cell that is not a number is an error naming
//! the edge file and the line. Edges are handed to the writer in batches.
//!
//! **Export** ([`export_edges`]): `source,target` as the nodes' `id` attribute values when the
//! store has one (one channel), else as row indices of the exported nodes file (the store's
//! vertex order), then every link attribute.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};

use zv_core::data_type::DataType;
use zv_format::{Geometry, ZvStore};

use super::{csv_error, line_of};
use crate::error::{FileName, Location, Result};
use crate::level::{carried, channel_name, number_text};
use crate::sink::{Column, VertexSink};
use zv_format::export::links::LinkStream;
use zv_format::export::points::{ChunkColumn, PointChunk};
use zv_format::progress::NoProgress;

/// The column of node ids.
pub const ID_COLUMN: &str = "id";

/// The edge file written beside a graph's nodes file: `out.csv` → `out.edges.csv`.
pub fn edges_path(nodes: &Path) -> PathBuf {
    let stem = nodes
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    nodes.with_file_name(format!("{stem}.edges.csv"))
}

/// A node id as the key that finds it: numbers by value, other text as written.
fn key(cell: &str) -> String {
    match cell.parse::<f64>() {
        Ok(v) if v.is_finite() => v.to_string(),
        _ => cell.to_owned(),
    }
}

/// The nodes read so far, and their ids when the nodes file has an `id` column.
pub(crate) struct NodeIds {
    column: Option<usize>,
    ids: HashMap<String, u64>,
    count: u64,
}

impl NodeIds {
    /// Nodes whose ids are in column `column` (row indices without one).
    pub(crate) fn new(column: Option<usize>) -> Self {
        Self {
            column,
            ids: HashMap::new(),
            count: 0,
        }
    }

    /// Records the node of row `r`; a repeated id is an error naming the line.
    pub(crate) fn add(&mut self, file: &FileName, r: &::csv::StringRecord) -> Result<()> {
        if let Some(c) = self.column {
            let cell = r.get(c).unwrap_or("");
            if cell.is_empty() {
                return Err(file.parse(line_of(r), "the node has no id"));
            }
            if self.ids.insert(key(cell), self.count).is_some() {
                return Err(file.parse(line_of(r), format!("node id `{cell}` is repeated")));
            }
        }
        self.count += 1;
        Ok(())
    }

    /// The vertex of a node named in an edge file.
    fn find(&self, cell: &str) -> Option<u64> {
        match self.column {
            Some(_) => self.ids.get(&key(cell)).copied(),
            None => cell.parse::<u64>().ok().filter(|i| *i < self.count),
        }
    }
}

/// Reads the edge file at `path` and hands its edges to the writer, in batches of `batch`;
/// `nodes_file` names the nodes in errors.
pub(crate) fn import_edges(
    path: &Path,
    nodes: &NodeIds,
    nodes_file: &FileName,
    sink: &mut VertexSink,
    batch: usize,
) -> Result<()> {
    let file = FileName(path.display().to_string());
    let f = std::fs::File::open(path).map_err(|e| file.io(e))?;
    let mut rdr = ::csv::ReaderBuilder::new()
        .has_headers(true)
        .trim(::csv::Trim::All)
        .from_reader(std::io::BufReader::with_capacity(1 << 20, f));
    let headers = rdr.headers().map_err(|e| csv_error(&file, e))?.clone();
    let names: Vec<&str> = headers.iter().collect();
    let find = |n: &str| {
        names.iter().position(|h| *h == n).ok_or_else(|| {
            file.parse(
                Location::Line(1),
                format!("no column `{n}` (an edge file has `source` and `target` columns)"),
            )
        })
    };
    let (s, t) = (find("source")?, find("target")?);
    let mut columns: Vec<(usize, Column)> = names
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != s && *i != t)
        .map(|(i, n)| (i, Column::numeric(n, DataType::Float64)))
        .collect();
    let how = if nodes.column.is_some() {
        format!("no node of {} has this `{ID_COLUMN}`", nodes_file.0)
    } else {
        format!(
            "{} has no `{ID_COLUMN}` column, so nodes are named by row index, 0 to {}",
            nodes_file.0,
            nodes.count.saturating_sub(1)
        )
    };
    let mut edges: Vec<[u64; 2]> = Vec::new();
    let mut record = ::csv::StringRecord::new();
    loop {
        let more = rdr
            .read_record(&mut record)
            .map_err(|e| csv_error(&file, e))?;
        if more {
            let node = |c: usize, what: &str| {
                let cell = record.get(c).unwrap_or("");
                nodes
                    .find(cell)
                    .ok_or_else(|| file.parse(line_of(&record), format!("{what} `{cell}`: {how}")))
            };
            let e = [node(s, "source")?, node(t, "target")?];
            if e[0] == e[1] {
                return Err(file.parse(
                    line_of(&record),
                    format!("the edge links node `{}` to itself", &record[s]),
                ));
            }
            edges.push(e);
            for (i, c) in &mut columns {
                let cell = record.get(*i).unwrap_or("");
                let v = if cell.is_empty() {
                    f64::NAN
                } else {
                    cell.parse::<f64>().map_err(|_| {
                        file.parse(
                            line_of(&record),
                            format!(
                                "column `{}`: `{cell}` is not a number (edge attributes are numbers)",
                                names[*i]
                            ),
                        )
                    })?
                };
                c.push_f64(v);
            }
        }
        if edges.len() >= batch || (!more && !edges.is_empty()) {
            let mut attrs = BTreeMap::new();
            for (_, c) in &mut columns {
                let (name, a) = c.take_named().map_err(|e| file.format(e))?;
                attrs.insert(name, a);
            }
            sink.writer_mut()?
                .add_edges(&edges, &attrs)
                .map_err(|e| file.format(e))?;
            edges.clear();
        }
        if !more {
            return Ok(());
        }
    }
}

/// Writes the edges of level 0 of `store` (a graph) as CSV to `out`, chunk by chunk in
/// bounded memory (the names of the endpoints of edges between chunks are kept as their
/// chunks pass); `file` names the output in errors. See the [module docs](self).
pub fn export_edges(store: &ZvStore, out: &mut dyn Write, file: &str) -> Result<()> {
    let file = FileName(file.to_owned());
    if store.geometry() != Geometry::Graph {
        return Err(file.unsupported(format!(
            "an edge list holds a graph's edges; the store is a {}",
            store.geometry().name()
        )));
    }
    let stream = LinkStream::open(store).map_err(|e| file.format(e))?;
    // the `id` attribute's position, if it names the nodes
    let id = stream
        .points()
        .infos()
        .iter()
        .position(|i| i.name == ID_COLUMN);
    let id_type = id.map(|i| stream.points().infos()[i].data_type);
    // the name of row `r` of `chunk` (vertex `v`)
    let name = |chunk: &PointChunk, r: usize, v: u64| -> Result<String> {
        let Some(i) = id else {
            return Ok(v.to_string());
        };
        match chunk.attributes.get(i) {
            Some(ChunkColumn::Categorical(c)) => {
                Ok(c.get(r).cloned().flatten().unwrap_or_default())
            }
            Some(ChunkColumn::Numeric(Some(rows))) if rows.channels() != 1 => Err(file
                .unsupported(format!(
                    "vertex attribute `{ID_COLUMN}` has several channels"
                ))),
            Some(ChunkColumn::Numeric(rows)) => {
                let x = rows
                    .as_ref()
                    .and_then(|a| a.get_f64(r, 0))
                    .unwrap_or(f64::NAN);
                Ok(number_text(id_type.unwrap_or(DataType::Float64), x))
            }
            None => Ok(String::new()),
        }
    };
    let mut header = vec!["source".to_owned(), "target".to_owned()];
    let mut cols = Vec::new();
    for (ai, (info, &c)) in stream.infos().iter().zip(stream.channels()).enumerate() {
        if info.dictionary.is_some() {
            return Err(file.unsupported(format!("link attribute `{}` is categorical", info.name)));
        }
        for ch in 0..c {
            header.push(channel_name(
                &info.name,
                info.channel_names.as_deref(),
                c,
                ch,
            ));
            cols.push((ai, ch, info.data_type));
        }
    }
    let mut w =
        ::csv::WriterBuilder::new().from_writer(std::io::BufWriter::with_capacity(1 << 20, out));
    let err = |e: ::csv::Error| match e.into_kind() {
        ::csv::ErrorKind::Io(io) => file.io(io),
        other => file.unsupported(format!("writing: {other:?}")),
    };
    w.write_record(&header).map_err(err)?;
    // the names of the endpoints of edges between chunks, kept as their chunks pass
    let mut kept: Vec<(u64, String)> = stream
        .cross_vertices()
        .into_iter()
        .map(|v| (v, v.to_string()))
        .collect();
    let mut cells: Vec<String> = Vec::with_capacity(header.len());
    let mut record = |w: &mut ::csv::Writer<_>, ends: [String; 2], attrs: &[Option<_>], row| {
        cells.clear();
        cells.extend(ends);
        for &(a, ch, dt) in &cols {
            cells.push(number_text(dt, stream.value(attrs, a, row, ch)));
        }
        w.write_record(&cells).map_err(err)
    };
    carried(
        &file,
        |sink| stream.for_each(&NoProgress, sink),
        |chunk| {
            let rows = chunk.points.positions.len() as u64;
            let local = |v: u64| v.checked_sub(chunk.offset).filter(|&r| r < rows);
            let first = kept.partition_point(|k| k.0 < chunk.offset);
            for k in kept[first..]
                .iter_mut()
                .take_while(|k| k.0 < chunk.offset + rows)
            {
                k.1 = name(&chunk.points, (k.0 - chunk.offset) as usize, k.0)?;
            }
            for l in &chunk.links {
                let n = |v: u64| match local(v) {
                    Some(r) => name(&chunk.points, r as usize, v),
                    None => Ok(v.to_string()),
                };
                let (a, b) = (n(l.ends[0])?, n(l.ends[1])?);
                record(&mut w, [a, b], &chunk.attributes, l.row)?;
            }
            Ok(())
        },
    )?;
    for l in stream.cross_links() {
        let n = |v: u64| match kept.binary_search_by_key(&v, |k| k.0) {
            Ok(i) => kept[i].1.clone(),
            Err(_) => v.to_string(),
        };
        let ends = [n(l.ends[0]), n(l.ends[1])];
        record(&mut w, ends, &[], l.row)?;
    }
    w.flush().map_err(|e| file.io(e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_found_by_value_and_rows_by_index() {
        let file = FileName("n.csv".into());
        let mut ids = NodeIds::new(Some(0));
        for (line, id) in ["7", "b", "1e3"].iter().enumerate() {
            let mut r = ::csv::StringRecord::from(vec![*id]);
            r.set_position(Some({
                let mut p = ::csv::Position::new();
                p.set_line(line as u64 + 2);
                p
            }));
            assert!(ids.add(&file, &r).is_ok());
        }
        assert_eq!(ids.find("7.0"), Some(0));
        assert_eq!(ids.find("b"), Some(1));
        assert_eq!(ids.find("1000"), Some(2));
        assert_eq!(ids.find("8"), None);
        let dup = ids.add(&file, &::csv::StringRecord::from(vec!["7.00"]));
        assert!(dup.is_err_and(|e| e.to_string().contains("node id `7.00` is repeated")));
        let mut rows = NodeIds::new(None);
        let r = ::csv::StringRecord::from(vec!["x"]);
        for _ in 0..3 {
            assert!(rows.add(&file, &r).is_ok());
        }
        assert_eq!(
            (rows.find("2"), rows.find("3"), rows.find("-1")),
            (Some(2), None, None)
        );
        assert_eq!(
            edges_path(Path::new("a/out.csv")),
            PathBuf::from("a/out.edges.csv")
        );
    }
}
