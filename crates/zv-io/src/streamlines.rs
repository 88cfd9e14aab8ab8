//! What the streamline formats (TRK, TCK) share: [`StreamlineSink`], which gathers streamlines
//! (with per-point and per-streamline values) into batches for the streaming writer, and
//! [`streamline_stream`], the polylines an export writes, a batch of objects at a time.

use std::collections::BTreeMap;
use std::sync::Arc;

use zv_core::data_type::DataType;
use zv_core::store::Store;
use zv_format::document::{Attribute, AttributeValues};
use zv_format::export::polylines::{Polyline, PolylineStream};
use zv_format::layout::attributes::{f64_to_le, AttributeRows};
use zv_format::parts::PartWriter;
use zv_format::progress::Progress;
use zv_format::reader::DenseAttribute;
use zv_format::writer::{WriteSummary, ZvWriter};
use zv_format::{Geometry, ZvStore};

use crate::error::{FileName, Result};
use crate::level::carried;
use crate::options::ImportOptions;
use crate::sink::{auto_chunk_shape, writer_options};

/// A named float32 column of `channels` values per row.
#[derive(Debug)]
pub(crate) struct ValueColumn {
    /// The attribute name.
    pub(crate) name: String,
    /// Values per row.
    pub(crate) channels: usize,
    bytes: Vec<u8>,
}

impl ValueColumn {
    /// An empty column.
    pub(crate) fn new(name: &str, channels: usize) -> Self {
        Self {
            name: name.to_owned(),
            channels,
            bytes: Vec::new(),
        }
    }

    /// Appends one value (stored as float32).
    pub(crate) fn push(&mut self, v: f64) {
        f64_to_le(DataType::Float32, v, &mut self.bytes);
    }

    /// Takes the values as an attribute.
    fn take(&mut self) -> Result<Attribute, zv_format::Error> {
        let rows = AttributeRows::from_le(
            DataType::Float32,
            self.channels,
            std::mem::take(&mut self.bytes),
        )
        .map_err(|source| zv_format::Error::Blob {
            key: self.name.clone(),
            source,
        })?;
        Ok(Attribute {
            values: AttributeValues::Numeric {
                rows,
                present: None,
            },
            channel_names: None,
        })
    }
}

/// Takes every column as a named attribute.
fn take_all(file: &FileName, cols: &mut [ValueColumn]) -> Result<BTreeMap<String, Attribute>> {
    cols.iter_mut()
        .map(|c| Ok((c.name.clone(), c.take().map_err(|e| file.format(e))?)))
        .collect()
}

/// Where a streamline sink's batches go: the store's writer, or one part of a distributed
/// write (which reads the whole file and keeps the pieces in its chunks).
enum Writer {
    Whole(Box<ZvWriter>),
    Part(Box<PartWriter>),
}

/// Gathers streamlines into batches for the writer (streamline geometry, 3-D); the object
/// (per-streamline) values are held whole, 4 bytes per value.
pub(crate) struct StreamlineSink {
    file: FileName,
    store: Arc<dyn Store>,
    opts: ImportOptions,
    vertex_type: DataType,
    writer: Option<Writer>,
    coords: Vec<f64>,
    offsets: Vec<usize>,
    /// The per-point columns of the current batch.
    pub(crate) point_values: Vec<ValueColumn>,
    /// The per-streamline columns (all streamlines).
    pub(crate) streamline_values: Vec<ValueColumn>,
    streamlines: u64,
}

impl StreamlineSink {
    /// A sink into `store` (empty), storing positions as `vertex_type` unless the options say
    /// otherwise.
    pub(crate) fn new(
        file: &FileName,
        store: Arc<dyn Store>,
        vertex_type: DataType,
        opts: &ImportOptions,
    ) -> Self {
        Self {
            file: file.clone(),
            store,
            opts: opts.clone(),
            vertex_type,
            writer: None,
            coords: Vec::new(),
            offsets: vec![0],
            point_values: Vec::new(),
            streamline_values: Vec::new(),
            streamlines: 0,
        }
    }

    /// Appends a point to the current streamline.
    pub(crate) fn push_point(&mut self, p: [f64; 3]) {
        self.coords.extend_from_slice(&p);
    }

    /// Ends the current streamline (its points are those pushed since the last end).
    pub(crate) fn end_streamline(&mut self) -> Result<()> {
        self.offsets.push(self.coords.len() / 3);
        self.streamlines += 1;
        if self.coords.len() / 3 >= self.opts.batch.max(1) {
            self.flush()?;
        }
        Ok(())
    }

    /// The streamlines ended so far.
    pub(crate) fn streamlines(&self) -> u64 {
        self.streamlines
    }

    /// Hands the ended streamlines to the writer (created at the first batch, its chunk
    /// shape chosen from that batch when the options give none).
    fn flush(&mut self) -> Result<()> {
        let file = self.file.clone();
        if self.writer.is_none() {
            let chunk = self.opts.chunk_shape.clone().unwrap_or_else(|| {
                let (mut lo, mut hi) = ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]);
                for p in self.coords.chunks_exact(3) {
                    for a in 0..3 {
                        lo[a] = lo[a].min(p[a]);
                        hi[a] = hi[a].max(p[a]);
                    }
                }
                auto_chunk_shape(&lo, &hi)
            });
            let o = writer_options(Geometry::Streamline, chunk, self.vertex_type, &self.opts);
            self.writer = Some(match self.opts.part {
                None => Writer::Whole(Box::new(
                    ZvWriter::create(self.store.clone(), o).map_err(|e| file.format(e))?,
                )),
                Some((part, parts)) => {
                    zv_format::parts::prepare(self.store.clone(), &o, parts)
                        .map_err(|e| file.format(e))?;
                    Writer::Part(Box::new(
                        PartWriter::open_with_budget(self.store.clone(), part, o.memory_budget)
                            .map_err(|e| file.format(e))?,
                    ))
                }
            });
        }
        if self.offsets.len() > 1 {
            let attrs = take_all(&file, &mut self.point_values)?;
            match self.writer.as_mut() {
                Some(Writer::Whole(w)) => w.add_polylines_flat(&self.coords, &self.offsets, &attrs),
                Some(Writer::Part(w)) => {
                    w.add_polylines_flat(&self.coords, &self.offsets, None, &attrs)
                }
                None => Ok(()),
            }
            .map_err(|e| file.format(e))?;
        }
        self.coords.clear();
        self.offsets.truncate(1);
        Ok(())
    }

    /// Flushes, sets the per-streamline attributes and finishes the store. A file without
    /// streamlines is refused (a ZV store holds at least one object).
    pub(crate) fn finish(mut self) -> Result<WriteSummary> {
        if self.streamlines == 0 {
            return Err(self.file.unsupported("the file holds no streamlines"));
        }
        self.flush()?;
        let file = self.file.clone();
        let objects = take_all(&file, &mut self.streamline_values)?;
        match self.writer.take() {
            Some(Writer::Whole(mut w)) => {
                if !objects.is_empty() {
                    w.set_object_attributes(objects);
                }
                w.finish().map_err(|e| file.format(e))
            }
            Some(Writer::Part(w)) => {
                if let Some(name) = objects.keys().next() {
                    return Err(file.unsupported(format!(
                        "a distributed import (a part) does not carry per-streamline values yet (`{name}`)"
                    )));
                }
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

/// Level 0 of `store` for a streamline export, a batch of objects at a time: a 3-D line,
/// polyline or streamline store.
pub(crate) fn streamline_stream(
    store: &ZvStore,
    file: &FileName,
    format: &str,
) -> Result<PolylineStream> {
    let geometry = store.geometry();
    let ndim = store.root().chunk_shape.len();
    if !geometry.is_sequential() || ndim != 3 {
        return Err(file.unsupported(format!(
            "{format} holds 3-D streamlines; the store is a {ndim}-D {}",
            geometry.name()
        )));
    }
    PolylineStream::open(store).map_err(|e| file.format(e))
}

/// Channel `c` of row `r` of numeric rows (NaN past the end or without rows).
pub(crate) fn row_value(rows: Option<&AttributeRows>, r: usize, c: usize) -> f64 {
    rows.and_then(|a| a.get_f64(r, c)).unwrap_or(f64::NAN)
}

/// Channel `c` of object `r`'s row of an object attribute (NaN where `present_mask` is 0).
pub(crate) fn object_value(a: &DenseAttribute, r: usize, c: usize) -> f64 {
    if a.present_mask
        .as_ref()
        .is_some_and(|p| !p.get(r).copied().unwrap_or(false))
    {
        return f64::NAN;
    }
    a.values.rows.get_f64(r, c).unwrap_or(f64::NAN)
}

/// Hands every polyline of `stream` to `f` (see [`carried`]).
pub(crate) fn each_polyline(
    stream: &PolylineStream,
    progress: &dyn Progress,
    file: &FileName,
    f: impl FnMut(Polyline) -> Result<()>,
) -> Result<()> {
    carried(file, |sink| stream.for_each(progress, sink), f)
}
