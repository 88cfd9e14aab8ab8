//! CSV: point clouds, one row per point (with the `csv` crate, for quoting and records), and
//! graphs: the nodes so, their edges in a second CSV file ([`edges`]).
//!
//! **Import** ([`import`]): the first row names the columns. The position columns are those
//! given ([`ImportOptions::columns`], `--columns x,y,z`), else `x, y, z` when all three are
//! there, else `x, y`. A column `object_id` (non-negative integers) gives the object ids.
//! Every other column becomes a vertex attribute: float64 when every non-empty cell of the
//! first batch of rows is a number (empty cells are NaN), categorical (strings) otherwise
//! (empty cells are missing); a later cell that is not a number in a numeric column is an
//! error naming its line. Positions are stored as float64 (decimal text holds any float64
//! exactly), unless the options say otherwise. Rows are read and handed to the writer in
//! batches, so a file of any size imports in bounded memory. With an edge list
//! ([`ImportOptions::edges`]) the store is a graph: the rows are its nodes, and an `id` column
//! (kept as an attribute too) names them in the edge file (see [`edges`]).
//!
//! **Export** ([`export`]): level 0 of a point cloud, read chunk by chunk in bounded memory,
//! or of a graph's nodes (its edges: [`edges::export_edges`]): the axis names, `object_id` when the
//! store has objects, then every vertex attribute (multi-channel ones as `NAME_CHANNEL`),
//! numbers in the shortest text that reads back to the same value of their type.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use zv_core::data_type::DataType;
use zv_core::store::Store;
use zv_format::writer::WriteSummary;
use zv_format::{Geometry, ZvStore};

use crate::error::{FileName, Location, Result};
use crate::level::number_text;
use crate::options::{ExportOptions, ImportOptions};
use crate::points::Points;
use crate::sink::{Column, SinkSpec, VertexSink};

pub mod edges;

use edges::{import_edges, NodeIds, ID_COLUMN};

/// What a CSV column is for.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Role {
    Axis(usize),
    ObjectId,
    Numeric(usize),
    Categorical(usize),
}

/// The line of a record (1-based; the header is line 1).
pub(crate) fn line_of(r: &::csv::StringRecord) -> Location {
    Location::Line(r.position().map_or(0, |p| p.line()))
}

/// Imports the CSV file at `path` into `store` (empty). See the [module docs](self).
pub fn import(path: &Path, store: Arc<dyn Store>, opts: &ImportOptions) -> Result<WriteSummary> {
    let file = FileName(path.display().to_string());
    let f = crate::source::open(path, &file, opts)?;
    import_reader(
        std::io::BufReader::with_capacity(1 << 20, f),
        file,
        store,
        opts,
    )
}

/// A `csv` crate error as ours.
pub(crate) fn csv_error(file: &FileName, e: ::csv::Error) -> crate::Error {
    let at = e
        .position()
        .map_or(Location::End, |p| Location::Line(p.line()));
    file.parse(at, e.to_string())
}

/// Imports CSV from `reader`, named `file` in errors.
pub(crate) fn import_reader<R: std::io::Read>(
    reader: R,
    file: FileName,
    store: Arc<dyn Store>,
    opts: &ImportOptions,
) -> Result<WriteSummary> {
    let mut rdr = ::csv::ReaderBuilder::new()
        .has_headers(true)
        .trim(::csv::Trim::All)
        .from_reader(reader);
    let headers = rdr.headers().map_err(|e| csv_error(&file, e))?.clone();
    let names: Vec<&str> = headers.iter().collect();
    let find = |n: &str| names.iter().position(|h| *h == n);
    let axes: Vec<String> = match &opts.columns {
        Some(c) => c.clone(),
        None if ["x", "y", "z"].iter().all(|a| find(a).is_some()) => {
            vec!["x".into(), "y".into(), "z".into()]
        }
        None => vec!["x".into(), "y".into()],
    };
    if axes.len() < 2 {
        return Err(file.unsupported("at least two position columns are needed"));
    }
    let mut roles = vec![None; names.len()];
    for (a, name) in axes.iter().enumerate() {
        let i = find(name).ok_or_else(|| {
            file.parse(
                Location::Line(1),
                format!("no column `{name}` (name the position columns with --columns)"),
            )
        })?;
        roles[i] = Some(Role::Axis(a));
    }
    let id_col = find("object_id").filter(|i| roles[*i].is_none());
    if let Some(i) = id_col {
        roles[i] = Some(Role::ObjectId);
    }
    // the first batch decides which columns are numbers
    let batch = opts.batch.max(1);
    let mut first = Vec::new();
    let mut record = ::csv::StringRecord::new();
    while first.len() < batch
        && rdr
            .read_record(&mut record)
            .map_err(|e| csv_error(&file, e))?
    {
        first.push(record.clone());
    }
    let mut columns = Vec::new();
    for (i, role) in roles.iter_mut().enumerate() {
        if role.is_some() {
            continue;
        }
        let numeric = first
            .iter()
            .filter_map(|r| r.get(i))
            .all(|v| v.is_empty() || v.parse::<f64>().is_ok());
        *role = Some(if numeric {
            columns.push(Column::numeric(names[i], DataType::Float64));
            Role::Numeric(columns.len() - 1)
        } else {
            columns.push(Column::categorical(names[i]));
            Role::Categorical(columns.len() - 1)
        });
    }
    let roles: Vec<Role> = roles.into_iter().flatten().collect();
    let node_column =
        find(ID_COLUMN).filter(|i| matches!(roles[*i], Role::Numeric(_) | Role::Categorical(_)));
    let mut nodes = opts.edges.as_ref().map(|_| NodeIds::new(node_column));
    let spec = SinkSpec {
        geometry: if opts.edges.is_some() {
            Geometry::Graph
        } else {
            Geometry::PointCloud
        },
        ndim: axes.len(),
        vertex_type: DataType::Float64,
        columns,
        with_ids: id_col.is_some(),
    };
    let mut sink = VertexSink::new(&file, store, spec, opts);
    let mut point = vec![0.0; axes.len()];
    for r in &first {
        row(&file, r, &names, &roles, &mut point, &mut sink)?;
        if let Some(n) = nodes.as_mut() {
            n.add(&file, r)?;
        }
    }
    drop(first);
    while rdr
        .read_record(&mut record)
        .map_err(|e| csv_error(&file, e))?
    {
        row(&file, &record, &names, &roles, &mut point, &mut sink)?;
        if let Some(n) = nodes.as_mut() {
            n.add(&file, &record)?;
        }
    }
    if let (Some(path), Some(n)) = (&opts.edges, &nodes) {
        import_edges(path, n, &file, &mut sink, batch)?;
    }
    sink.finish()
}

/// One row into the sink.
fn row(
    file: &FileName,
    r: &::csv::StringRecord,
    names: &[&str],
    roles: &[Role],
    point: &mut [f64],
    sink: &mut VertexSink,
) -> Result<()> {
    for (i, (cell, role)) in r.iter().zip(roles).enumerate() {
        let number = || {
            cell.parse::<f64>().map_err(|_| {
                file.parse(
                    line_of(r),
                    format!("column `{}`: `{cell}` is not a number", names[i]),
                )
            })
        };
        match *role {
            Role::Axis(a) => point[a] = number()?,
            Role::ObjectId => {
                let id = cell.parse::<u64>().map_err(|_| {
                    file.parse(
                        line_of(r),
                        format!("object_id `{cell}` is not an integer ≥ 0"),
                    )
                })?;
                if let Some(ids) = sink.ids.as_mut() {
                    ids.push(id);
                }
            }
            Role::Numeric(c) => {
                let v = if cell.is_empty() { f64::NAN } else { number()? };
                sink.columns[c].push_f64(v);
            }
            Role::Categorical(c) => {
                sink.columns[c].push_str((!cell.is_empty()).then_some(cell));
            }
        }
    }
    sink.coords.extend_from_slice(point);
    sink.maybe_flush()
}

/// Writes level 0 of `store` (a point cloud, chunk by chunk in bounded memory, or a graph's
/// nodes) as CSV to `out`; `file` names the output in errors, `opts` says where progress goes.
pub fn export(
    store: &ZvStore,
    out: &mut dyn Write,
    file: &str,
    opts: &ExportOptions,
) -> Result<()> {
    let file = FileName(file.to_owned());
    write_points(&points_of(store, &file, true)?, out, &file, opts)
}

/// The points of `store`: a point cloud or a graph's nodes, streamed (or, `stream` false, for
/// the tests' oracle, read whole as a document). A graph whose vertices all have object 0
/// (one object, as imported without ids) gets no `object_id` column.
fn points_of(store: &ZvStore, file: &FileName, stream: bool) -> Result<Points> {
    match store.geometry() {
        Geometry::PointCloud if stream => Points::stream(store, false, true, file),
        Geometry::Graph if stream => Points::stream(store, false, false, file),
        Geometry::PointCloud => Points::document(&crate::level::level0(store, file)?, file),
        Geometry::Graph => {
            let mut doc = crate::level::level0(store, file)?;
            if doc
                .object_ids
                .as_ref()
                .is_some_and(|ids| ids.iter().all(|&i| i == 0))
            {
                doc.object_ids = None;
            }
            Points::document(&doc, file)
        }
        g => Err(file.unsupported(format!(
            "CSV holds point clouds and graphs (nodes; edges in a second file); the store is a {}",
            g.name()
        ))),
    }
}

/// Writes `points` as CSV to `out`.
fn write_points(
    points: &Points,
    out: &mut dyn Write,
    file: &FileName,
    opts: &ExportOptions,
) -> Result<()> {
    let mut w =
        ::csv::WriterBuilder::new().from_writer(std::io::BufWriter::with_capacity(1 << 20, out));
    let err = |e: ::csv::Error| match e.into_kind() {
        ::csv::ErrorKind::Io(io) => file.io(io),
        other => file.unsupported(format!("writing: {other:?}")),
    };
    let mut cols = None;
    let header = |w: &mut ::csv::Writer<_>, cols: &[crate::points::Column]| {
        let mut header = points.axis_names.clone();
        if points.with_ids {
            header.push("object_id".into());
        }
        header.extend(cols.iter().map(|c| c.name.clone()));
        w.write_record(&header).map_err(err)
    };
    let mut cells: Vec<String> = Vec::new();
    points.for_each(&opts.progress, file, |chunk| {
        let cols = match &cols {
            Some(c) => c,
            None => {
                let c = points.columns(Some(chunk));
                header(&mut w, &c)?;
                cols.insert(c)
            }
        };
        for (i, p) in chunk.positions.iter().enumerate() {
            cells.clear();
            cells.extend(p.iter().map(|&v| number_text(points.vertex_type, v)));
            if let Some(ids) = &chunk.object_ids {
                cells.push(ids.get(i).copied().unwrap_or(0).to_string());
            }
            for c in cols.iter() {
                cells.push(if c.categorical {
                    c.text(chunk, i).unwrap_or_default().to_owned()
                } else {
                    number_text(c.data_type, c.number(chunk, i))
                });
            }
            w.write_record(&cells).map_err(err)?;
        }
        Ok(())
    })?;
    if cols.is_none() {
        header(&mut w, &points.columns(None))?;
    }
    w.flush().map_err(|e| file.io(e))
}

#[cfg(test)]
mod export_tests {
    use super::*;

    #[test]
    fn the_streamed_export_equals_the_export_read_whole() {
        let mut compared = 0;
        for (name, zv) in crate::points::tests::stores() {
            if zv.geometry() != Geometry::PointCloud {
                continue;
            }
            let file = FileName(format!("{name}.csv"));
            let opts = ExportOptions::default();
            let mut streamed = Vec::new();
            let mut whole = Vec::new();
            write_points(
                &points_of(&zv, &file, true).unwrap(),
                &mut streamed,
                &file,
                &opts,
            )
            .unwrap();
            write_points(
                &points_of(&zv, &file, false).unwrap(),
                &mut whole,
                &file,
                &opts,
            )
            .unwrap();
            assert!(streamed.len() > 100, "{name}: {} bytes", streamed.len());
            assert_eq!(
                String::from_utf8_lossy(&streamed),
                String::from_utf8_lossy(&whole),
                "{name}"
            );
            compared += 1;
        }
        assert_eq!(compared, 4);
    }
}
