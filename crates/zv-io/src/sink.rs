//! The one path from a parsed file into the streaming [`ZvWriter`]: [`VertexSink`] gathers
//! vertex rows (coordinates, object ids, attribute cells) into batches and hands each full
//! batch to [`ZvWriter::add_vertices_flat`], so that a file of any size imports in the
//! writer's bounded memory. The writer is created at the first batch, whose extent chooses the
//! chunk shape when none is given ([`auto_chunk_shape`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use zv_core::data_type::DataType;
use zv_core::store::Store;
use zv_format::document::{Attribute, AttributeValues};
use zv_format::layout::attributes::{f64_to_le, AttributeRows};
use zv_format::parts::PartWriter;
use zv_format::writer::{WriteSummary, WriterOptions, ZvWriter};
use zv_format::Geometry;

use crate::error::{FileName, Result};
use crate::options::ImportOptions;

/// How many chunks the automatic chunk shape puts along the longest axis of the first batch.
pub const AUTO_CHUNKS_PER_AXIS: f64 = 4.0;

/// The chunk shape chosen for data whose first batch spans `lo..=hi`: the same edge on every
/// axis, the smallest power of two (possibly below 1) at least the longest extent divided by
/// [`AUTO_CHUNKS_PER_AXIS`]; 1 for a batch of one point or none. Deterministic for a file.
pub fn auto_chunk_shape(lo: &[f64], hi: &[f64]) -> Vec<f64> {
    let longest = lo
        .iter()
        .zip(hi)
        .map(|(a, b)| b - a)
        .filter(|e| e.is_finite())
        .fold(0.0f64, f64::max);
    let edge = if longest > 0.0 {
        let e = (longest / AUTO_CHUNKS_PER_AXIS)
            .log2()
            .ceil()
            .clamp(-60.0, 60.0);
        2f64.powi(e as i32)
    } else {
        1.0
    };
    vec![edge; lo.len()]
}

/// The writer options of an import: `chunk`, the format's `vertex_type` unless the options
/// name one, and the options' codecs and memory budget.
pub(crate) fn writer_options(
    geometry: Geometry,
    chunk: Vec<f64>,
    vertex_type: DataType,
    opts: &ImportOptions,
) -> WriterOptions {
    let mut options = WriterOptions::new(geometry, chunk);
    options.vertex_type = opts.vertex_type.unwrap_or(vertex_type);
    options.codecs = opts.codecs;
    options.memory_budget = opts.memory_budget;
    options.format_version = opts.format_version;
    options.shard_shape = opts.shard_shape.clone();
    options
}

/// The values of one attribute column of the current batch.
#[derive(Debug)]
pub(crate) enum ColumnData {
    /// Numbers of a type, little endian, `channels` per row.
    Numeric {
        /// The type.
        data_type: DataType,
        /// The values.
        bytes: Vec<u8>,
    },
    /// Strings (missing: `None`).
    Categorical(Vec<Option<String>>),
}

/// A named attribute column of the current batch.
#[derive(Debug)]
pub(crate) struct Column {
    name: String,
    data: ColumnData,
}

impl Column {
    /// A numeric column.
    pub(crate) fn numeric(name: &str, data_type: DataType) -> Self {
        Self {
            name: name.to_owned(),
            data: ColumnData::Numeric {
                data_type,
                bytes: Vec::new(),
            },
        }
    }

    /// A categorical column.
    pub(crate) fn categorical(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            data: ColumnData::Categorical(Vec::new()),
        }
    }

    /// Appends a string (missing: `None`). Ignored by numeric columns.
    pub(crate) fn push_str(&mut self, v: Option<&str>) {
        if let ColumnData::Categorical(values) = &mut self.data {
            values.push(v.map(str::to_owned));
        }
    }

    /// Appends a number (converted to the column's type). Ignored by categorical columns.
    pub(crate) fn push_f64(&mut self, v: f64) {
        if let ColumnData::Numeric { data_type, bytes } = &mut self.data {
            f64_to_le(*data_type, v, bytes);
        }
    }

    /// Takes the batch's values as a named attribute.
    pub(crate) fn take_named(&mut self) -> Result<(String, Attribute), zv_format::Error> {
        Ok((self.name.clone(), self.take()?))
    }

    /// Takes the batch's values as an attribute.
    fn take(&mut self) -> Result<Attribute, zv_format::Error> {
        let values = match &mut self.data {
            ColumnData::Numeric { data_type, bytes } => AttributeValues::Numeric {
                rows: AttributeRows::from_le(*data_type, 1, std::mem::take(bytes)).map_err(
                    |source| zv_format::Error::Blob {
                        key: self.name.clone(),
                        source,
                    },
                )?,
                present: None,
            },
            ColumnData::Categorical(v) => AttributeValues::Categorical(std::mem::take(v)),
        };
        Ok(Attribute {
            values,
            channel_names: None,
        })
    }
}

/// What a file's vertices are.
pub(crate) struct SinkSpec {
    /// The geometry.
    pub(crate) geometry: Geometry,
    /// Coordinates per vertex.
    pub(crate) ndim: usize,
    /// The format's vertex type (the options may override it).
    pub(crate) vertex_type: DataType,
    /// The vertex attribute columns.
    pub(crate) columns: Vec<Column>,
    /// Whether vertices come with object ids.
    pub(crate) with_ids: bool,
}

/// Where a sink's batches go: the store's writer, or one part of a distributed write.
enum SinkWriter {
    Whole(Box<ZvWriter>),
    Part(Box<PartWriter>),
}

/// Gathers vertex rows into batches for the writer. See the [module docs](self).
pub(crate) struct VertexSink {
    file: FileName,
    store: Arc<dyn Store>,
    options: WriterOptions,
    chunk_given: bool,
    batch: usize,
    ndim: usize,
    writer: Option<SinkWriter>,
    /// `(part, parts)` of a distributed write.
    part: Option<(u32, u32)>,
    /// The current batch's coordinates (`ndim` per vertex).
    pub(crate) coords: Vec<f64>,
    /// The current batch's object ids, when the file has them.
    pub(crate) ids: Option<Vec<u64>>,
    /// The current batch's attribute columns.
    pub(crate) columns: Vec<Column>,
    /// Vertices handed to the writer so far.
    flushed: u64,
}

impl VertexSink {
    /// A sink for the vertices `spec` describes, into `store`.
    pub(crate) fn new(
        file: &FileName,
        store: Arc<dyn Store>,
        spec: SinkSpec,
        opts: &ImportOptions,
    ) -> Self {
        let SinkSpec {
            geometry,
            ndim,
            vertex_type,
            columns,
            with_ids,
        } = spec;
        let chunk = opts.chunk_shape.clone().unwrap_or_else(|| vec![1.0; ndim]);
        let options = writer_options(geometry, chunk, vertex_type, opts);
        Self {
            file: file.clone(),
            store,
            options,
            chunk_given: opts.chunk_shape.is_some(),
            batch: opts.batch.max(1),
            ndim,
            writer: None,
            part: opts.part,
            coords: Vec::new(),
            ids: with_ids.then(Vec::new),
            columns,
            flushed: 0,
        }
    }

    /// The file, for errors.
    pub(crate) fn file(&self) -> FileName {
        self.file.clone()
    }

    /// The vertices given so far (flushed or in the current batch).
    pub(crate) fn vertices(&self) -> u64 {
        self.flushed + (self.coords.len() / self.ndim.max(1)) as u64
    }

    /// Hands the batch to the writer when it is full.
    pub(crate) fn maybe_flush(&mut self) -> Result<()> {
        if self.coords.len() >= self.batch * self.ndim {
            self.flush()?;
        }
        Ok(())
    }

    /// Hands the current batch to the writer (creating it at the first batch).
    pub(crate) fn flush(&mut self) -> Result<()> {
        let n = self.coords.len() / self.ndim.max(1);
        if n == 0 && self.writer.is_some() {
            return Ok(());
        }
        let file = self.file.clone();
        let mut attrs = BTreeMap::new();
        for c in &mut self.columns {
            attrs.insert(c.name.clone(), c.take().map_err(|e| file.format(e))?);
        }
        self.writer()?;
        let ids = self.ids.as_deref();
        match self.writer.as_mut() {
            Some(SinkWriter::Whole(w)) => {
                w.add_vertices_flat(&self.coords, ids, &attrs)
                    .map_err(|e| file.format(e))?;
            }
            Some(SinkWriter::Part(w)) => {
                w.add_owned_vertices_flat(&self.coords, ids, &attrs)
                    .map_err(|e| file.format(e))?;
            }
            None => {}
        }
        self.flushed += n as u64;
        self.coords.clear();
        if let Some(ids) = self.ids.as_mut() {
            ids.clear();
        }
        Ok(())
    }

    /// The writer, created now if needed (with the chunk shape of the current batch).
    fn writer(&mut self) -> Result<()> {
        if self.writer.is_some() {
            return Ok(());
        }
        if !self.chunk_given {
            let mut lo = vec![f64::INFINITY; self.ndim];
            let mut hi = vec![f64::NEG_INFINITY; self.ndim];
            for p in self.coords.chunks_exact(self.ndim.max(1)) {
                for (a, &v) in p.iter().enumerate() {
                    lo[a] = lo[a].min(v);
                    hi[a] = hi[a].max(v);
                }
            }
            self.options.chunk_shape = auto_chunk_shape(&lo, &hi);
        }
        let w = match self.part {
            None => SinkWriter::Whole(Box::new(
                ZvWriter::create(self.store.clone(), self.options.clone())
                    .map_err(|e| self.file.format(e))?,
            )),
            Some((part, parts)) => {
                zv_format::parts::prepare(self.store.clone(), &self.options, parts)
                    .map_err(|e| self.file.format(e))?;
                SinkWriter::Part(Box::new(
                    PartWriter::open_with_budget(
                        self.store.clone(),
                        part,
                        self.options.memory_budget,
                    )
                    .map_err(|e| self.file.format(e))?,
                ))
            }
        };
        self.writer = Some(w);
        Ok(())
    }

    /// Flushes the vertices and gives the writer (for faces and edges, after every vertex).
    pub(crate) fn writer_mut(&mut self) -> Result<&mut ZvWriter> {
        self.flush()?;
        self.writer()?;
        match self.writer.as_mut() {
            Some(SinkWriter::Whole(w)) => Ok(w),
            Some(SinkWriter::Part(_)) => Err(self
                .file
                .unsupported("a distributed import (a part) takes point clouds, without links")),
            None => Err(self.file.unsupported("the writer could not be created")),
        }
    }

    /// Flushes and finishes the store.
    /// A part's summary counts what the part wrote: its vertices and chunks.
    pub(crate) fn finish(mut self) -> Result<WriteSummary> {
        self.flush()?;
        self.writer()?;
        let file = self.file.clone();
        match self.writer.take() {
            Some(SinkWriter::Whole(w)) => (*w).finish().map_err(|e| file.format(e)),
            Some(SinkWriter::Part(w)) => {
                let receipt = w.finish().map_err(|e| file.format(e))?;
                Ok(WriteSummary {
                    vertices: receipt.vertices,
                    chunks: receipt.chunks.len(),
                    ..Default::default()
                })
            }
            None => Err(file.unsupported("the writer could not be created")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_chunk_shape_is_a_power_of_two_per_quarter_of_the_longest_extent() {
        assert_eq!(
            auto_chunk_shape(&[0.0, 0.0], &[100.0, 3.0]),
            vec![32.0, 32.0]
        );
        assert_eq!(
            auto_chunk_shape(&[0.0, 0.0, 0.0], &[1.0, 0.5, 0.0]),
            vec![0.25; 3]
        );
        assert_eq!(auto_chunk_shape(&[5.0, 5.0], &[5.0, 5.0]), vec![1.0, 1.0]);
        assert_eq!(
            auto_chunk_shape(&[f64::INFINITY; 3], &[f64::NEG_INFINITY; 3]),
            vec![1.0; 3]
        );
    }
}
