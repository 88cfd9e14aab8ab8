//! The vertices the CSV, PLY, OBJ, STL and SWC exporters write, chunk by chunk ([`Points`]):
//! from the streaming readers of level 0 ([`zv_format::export::points::PointStream`],
//! [`zv_format::export::links::LinkStream`] with the links; bounded memory), or from a
//! level-0 document as one chunk (the tests' oracle). Both give the same columns, so one
//! writer per format serves both.

use zv_core::data_type::DataType;
use zv_format::document::{AttributeValues, GeometryDocument};
use zv_format::export::links::LinkStream;
use zv_format::export::points::{ChunkColumn, PointChunk, PointStream};
use zv_format::progress::Progress;
use zv_format::reader::Positions;
use zv_format::ZvStore;

use crate::error::{FileName, Result};
use crate::level::carried;

/// A vertex attribute as the exporters see it.
#[derive(Debug, Clone)]
pub(crate) struct Attr {
    /// The name.
    pub name: String,
    /// The stored type (numeric attributes).
    pub data_type: DataType,
    /// `channel_names`, if recorded.
    pub channel_names: Option<Vec<String>>,
    /// Whether the values are strings.
    pub categorical: bool,
}

/// One output column: a channel of a numeric attribute, or a categorical attribute.
#[derive(Debug, Clone)]
pub(crate) struct Column {
    /// `name` for one channel, else `name_CHANNEL` (the channel names, else numbers).
    pub name: String,
    /// The numeric type (meaningless for categorical columns).
    pub data_type: DataType,
    /// Whether the values are strings.
    pub categorical: bool,
    attr: usize,
    channel: usize,
}

impl Column {
    /// The index of the attribute this column is a channel of (in [`Points::attrs`]).
    pub(crate) fn attr_index(&self) -> usize {
        self.attr
    }

    /// Row `r`'s number in `chunk` (NaN when missing or categorical).
    pub(crate) fn number(&self, chunk: &PointChunk, r: usize) -> f64 {
        match chunk.attributes.get(self.attr) {
            Some(ChunkColumn::Numeric(Some(rows))) => {
                rows.get_f64(r, self.channel).unwrap_or(f64::NAN)
            }
            _ => f64::NAN,
        }
    }

    /// Row `r`'s string in `chunk` (`None` when missing or numeric).
    pub(crate) fn text<'a>(&self, chunk: &'a PointChunk, r: usize) -> Option<&'a str> {
        match chunk.attributes.get(self.attr) {
            Some(ChunkColumn::Categorical(v)) => v.get(r).and_then(|s| s.as_deref()),
            _ => None,
        }
    }
}

enum Source {
    Stream(Box<PointStream>),
    Links(Box<LinkStream>),
    Document(PointChunk),
}

/// The points of level 0 with what the headers need (see the [module docs](self)).
pub(crate) struct Points {
    /// The axis names (`x, y, z, w` when the store names none).
    pub axis_names: Vec<String>,
    /// The stored vertex type.
    pub vertex_type: DataType,
    /// The vertex attributes, in name order.
    pub attrs: Vec<Attr>,
    /// Whether every point has an object id.
    pub with_ids: bool,
    /// The number of points, when known before they are read.
    pub count: Option<u64>,
    source: Source,
}

/// Default axis names.
fn default_axes(ndim: usize) -> Vec<String> {
    ["x", "y", "z", "w"]
        .iter()
        .take(ndim)
        .map(|s| s.to_string())
        .collect()
}

impl Points {
    /// Level 0 of `store` (a point cloud, mesh, graph or skeleton) streamed (`count`: survey
    /// the level first so that [`Points::count`] is known; `single_ids`: keep object ids when
    /// every vertex's is 0).
    pub(crate) fn stream(
        store: &ZvStore,
        count: bool,
        single_ids: bool,
        file: &FileName,
    ) -> Result<Self> {
        let mut stream = PointStream::open(store, count).map_err(|e| file.format(e))?;
        if !single_ids {
            stream.drop_single_object_ids();
        }
        let head = Self::head(store, &stream);
        Ok(Self {
            source: Source::Stream(Box::new(stream)),
            ..head
        })
    }

    /// The vertices of level 0 of `store` (a mesh, graph or skeleton) with their links
    /// ([`Points::links`]); the level is surveyed.
    pub(crate) fn with_links(store: &ZvStore, single_ids: bool, file: &FileName) -> Result<Self> {
        let mut stream = LinkStream::open(store).map_err(|e| file.format(e))?;
        if !single_ids {
            stream.points_mut().drop_single_object_ids();
        }
        let head = Self::head(store, stream.points());
        Ok(Self {
            source: Source::Links(Box::new(stream)),
            ..head
        })
    }

    /// The links of [`Points::with_links`].
    pub(crate) fn links(&self) -> Option<&LinkStream> {
        match &self.source {
            Source::Links(l) => Some(l),
            _ => None,
        }
    }

    /// What the headers need of `stream` (its source a placeholder).
    fn head(store: &ZvStore, stream: &PointStream) -> Self {
        let root = store.root();
        let ndim = root.chunk_shape.len();
        let mut axis_names: Vec<String> = root.axes.iter().map(|a| a.name.clone()).collect();
        if axis_names.is_empty() {
            axis_names = default_axes(ndim);
        }
        let attrs = stream
            .infos()
            .iter()
            .map(|i| Attr {
                name: i.name.clone(),
                data_type: i.data_type,
                channel_names: i.channel_names.clone(),
                categorical: i.dictionary.is_some(),
            })
            .collect();
        Self {
            axis_names,
            vertex_type: stream.vertex_type(),
            attrs,
            with_ids: stream.has_object_ids(),
            count: stream.count(),
            source: Source::Document(PointChunk {
                key: zv_format::metadata::ChunkKey(Vec::new()),
                positions: Positions::new(ndim),
                attributes: Vec::new(),
                object_ids: None,
            }),
        }
    }

    /// The vertices of `doc` (a level-0 document) as one chunk.
    pub(crate) fn document(doc: &GeometryDocument, file: &FileName) -> Result<Self> {
        let ndim = doc.chunk_shape.len();
        let axis_names = match &doc.axes {
            Some(a) => a.iter().map(|a| a.name.clone()).collect(),
            None => default_axes(ndim),
        };
        let mut attrs = Vec::new();
        let mut columns = Vec::new();
        for (name, a) in &doc.vertex_attributes {
            let (data_type, categorical, column) = match &a.values {
                AttributeValues::Numeric { rows, .. } => (
                    rows.data_type(),
                    false,
                    ChunkColumn::Numeric(Some(rows.clone())),
                ),
                AttributeValues::Categorical(v) => {
                    (DataType::UInt32, true, ChunkColumn::Categorical(v.clone()))
                }
            };
            attrs.push(Attr {
                name: name.clone(),
                data_type,
                channel_names: a.channel_names.clone(),
                categorical,
            });
            columns.push(column);
        }
        let positions = Positions::from_rows(&doc.vertices).map_err(|e| file.format(e))?;
        let count = Some(doc.vertices.len() as u64);
        let chunk = PointChunk {
            key: zv_format::metadata::ChunkKey(Vec::new()),
            positions,
            attributes: columns,
            object_ids: doc.object_ids.clone(),
        };
        Ok(Self {
            axis_names,
            vertex_type: doc.vertex_dtype.unwrap_or(DataType::Float32),
            attrs,
            with_ids: doc.object_ids.is_some(),
            count,
            source: Source::Document(chunk),
        })
    }

    /// The output columns of the attributes; the channels of a numeric attribute are those
    /// of its rows in `first` (the first chunk), else its channel names, else one.
    pub(crate) fn columns(&self, first: Option<&PointChunk>) -> Vec<Column> {
        let mut out = Vec::new();
        for (ai, a) in self.attrs.iter().enumerate() {
            if a.categorical {
                out.push(Column {
                    name: a.name.clone(),
                    data_type: a.data_type,
                    categorical: true,
                    attr: ai,
                    channel: 0,
                });
                continue;
            }
            let stored = first.and_then(|c| match c.attributes.get(ai) {
                Some(ChunkColumn::Numeric(Some(rows))) => Some(rows.channels()),
                _ => None,
            });
            let channels = stored
                .or_else(|| a.channel_names.as_ref().map(Vec::len))
                .unwrap_or(1);
            for ch in 0..channels {
                let name =
                    crate::level::channel_name(&a.name, a.channel_names.as_deref(), channels, ch);
                out.push(Column {
                    name,
                    data_type: a.data_type,
                    categorical: false,
                    attr: ai,
                    channel: ch,
                });
            }
        }
        out
    }

    /// Hands the points to `f` chunk by chunk, in the level's order; `progress` gets one unit
    /// per chunk (a document is one chunk).
    pub(crate) fn for_each(
        &self,
        progress: &dyn Progress,
        file: &FileName,
        mut f: impl FnMut(&PointChunk) -> Result<()>,
    ) -> Result<()> {
        match &self.source {
            Source::Document(chunk) => {
                progress.set_total(1, "chunks");
                f(chunk)?;
                progress.advance(1);
                Ok(())
            }
            Source::Stream(stream) => {
                carried(file, |sink| stream.for_each(progress, sink), |c| f(&c))
            }
            Source::Links(stream) => carried(
                file,
                |sink| stream.points().for_each(progress, sink),
                |c| f(&c),
            ),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::Arc;

    use zv_format::document::GeometryDocument;
    use zv_format::ZvStore;

    /// The fixtures' point clouds and meshes, plus a point cloud with categorical,
    /// multi-channel and integer attributes, objects and several chunks: the stores whose
    /// streamed export is compared with the export read whole.
    pub(crate) fn stores() -> Vec<(String, ZvStore)> {
        let mut out = Vec::new();
        let dir = zv_testkit::env::fixtures_dir();
        for name in [
            "points_basic",
            "points_binned",
            "pyramid_points",
            "mesh_basic",
        ] {
            let path = dir.join(format!("{name}.zarr"));
            let zv = ZvStore::open_url(&path.display().to_string()).expect("the fixture opens");
            out.push((name.to_owned(), zv));
        }
        let doc = GeometryDocument::from_json(
            br#"{"format": "zv-geometry/1", "geometry": "point_cloud", "chunk_shape": [2, 2, 2],
            "vertices": [[0.5, 0.5, 0.5], [3.25, 1, 1], [1, 3.5, 1], [0.1, 0.2, 0.3], [5, 5, 5]],
            "object_ids": [2, 0, 1, 2, 1],
            "vertex_attributes": {
              "kind": {"dtype": "string", "values": ["a", null, "b", "a", "c"]},
              "rgb": {"dtype": "uint8", "channel_names": ["r", "g", "b"],
                      "values": [[1, 2, 3], [4, 5, 6], [7, 8, 9], [10, 11, 12], [13, 14, 15]]},
              "w": {"dtype": "float64", "values": [0.1, "NaN", 1e300, -2, 3]}}}"#,
        )
        .expect("the document parses");
        let store = Arc::new(zv_store_mem::MemoryStore::new());
        zv_format::import::write_document(store.clone(), &doc, 2).expect("the store is written");
        out.push(("generated".into(), ZvStore::open(store).expect("opens")));
        out
    }
}
