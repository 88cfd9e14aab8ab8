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
//! **Export** ([`export`]): level 0 of a point cloud or of a graph's nodes (its edges:
//! [`edges::export_edges`]): the axis names, `object_id` when the
//! store has objects, then every vertex attribute (multi-channel ones as `NAME_CHANNEL`),
//! numbers in the shortest text that reads back to the same value of their type.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use zv_core::data_type::DataType;
use zv_core::store::Store;
use zv_format::document::AttributeValues;
use zv_format::writer::WriteSummary;
use zv_format::{Geometry, ZvStore};

use crate::error::{FileName, Location, Result};
use crate::level::{level0, number_text, numeric_columns};
use crate::options::ImportOptions;
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
    let f = std::fs::File::open(path).map_err(|e| file.io(e))?;
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

/// Writes level 0 of `store` (a point cloud, or a graph's nodes) as CSV to `out`; `file`
/// names the output in errors.
pub fn export(store: &ZvStore, out: &mut dyn Write, file: &str) -> Result<()> {
    let file = FileName(file.to_owned());
    let doc = level0(store, &file)?;
    if !matches!(doc.geometry, Geometry::PointCloud | Geometry::Graph) {
        return Err(file.unsupported(format!(
            "CSV holds point clouds and graphs (nodes; edges in a second file); the store is a {}",
            doc.geometry.name()
        )));
    }
    let ndim = doc.chunk_shape.len();
    let mut header: Vec<String> = match &doc.axes {
        Some(a) => a.iter().map(|a| a.name.clone()).collect(),
        None => ["x", "y", "z", "w"]
            .iter()
            .take(ndim)
            .map(|s| s.to_string())
            .collect(),
    };
    // a graph without object ids has them all 0 (one object): not written
    let object_ids = doc
        .object_ids
        .as_ref()
        .filter(|ids| doc.geometry != Geometry::Graph || ids.iter().any(|&i| i != 0));
    if object_ids.is_some() {
        header.push("object_id".into());
    }
    enum Col {
        Num(crate::level::ColumnView),
        Cat(Vec<Option<String>>),
    }
    let mut cols = Vec::new();
    for (name, a) in &doc.vertex_attributes {
        match (&a.values, numeric_columns(name, a)) {
            (_, Some(cs)) => {
                for (n, v) in cs {
                    header.push(n);
                    cols.push(Col::Num(v));
                }
            }
            (AttributeValues::Categorical(v), None) => {
                header.push(name.clone());
                cols.push(Col::Cat(v.clone()));
            }
            _ => {}
        }
    }
    let pos_dt = doc.vertex_dtype.unwrap_or(DataType::Float32);
    let mut w =
        ::csv::WriterBuilder::new().from_writer(std::io::BufWriter::with_capacity(1 << 20, out));
    let err = |e: ::csv::Error| match e.into_kind() {
        ::csv::ErrorKind::Io(io) => file.io(io),
        other => file.unsupported(format!("writing: {other:?}")),
    };
    w.write_record(&header).map_err(err)?;
    let mut cells: Vec<String> = Vec::with_capacity(header.len());
    for (i, p) in doc.vertices.iter().enumerate() {
        cells.clear();
        cells.extend(p.iter().map(|&v| number_text(pos_dt, v)));
        if let Some(ids) = object_ids {
            cells.push(ids.get(i).copied().unwrap_or(0).to_string());
        }
        for c in &cols {
            cells.push(match c {
                Col::Num(v) => number_text(v.data_type(), v.get(i)),
                Col::Cat(v) => v.get(i).cloned().flatten().unwrap_or_default(),
            });
        }
        w.write_record(&cells).map_err(err)?;
    }
    w.flush().map_err(|e| file.io(e))
}
