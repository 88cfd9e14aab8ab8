//! The group documents (`zarr.json` attributes) the writer writes: the per-array groups of the
//! level (`vertices`, `links/0`, the attribute groups, …), the level document and the root
//! document, which is written last.

use serde_json::{json, Map, Value};
use zv_core::data_type::DataType;

use super::columns::FinishedColumn;
use super::objects::DenseAttribute;
use super::{FormatVersion, Target, ZvWriter, SAME_LEVEL};
use crate::blob::{join, Blobs};
use crate::error::Result;
use crate::geometry::Geometry;
use crate::io_pool;
use crate::layout::attributes::AttributeRows;
use crate::metadata::arrays::{
    DenseAttributeArray, DenseAttributeKind, FragmentIndexArray, FragmentIndexKind, LinksArray,
    RowAttributeArray, RowAttributeKind, VerticesArray,
};
use crate::metadata::{Axis, ZV09_VERSION, ZV_VERSION};
use crate::names;

/// The members of a JSON object literal.
fn object(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

/// Writes a group without attributes at `path`.
pub(super) fn empty_group(blobs: &Blobs, path: &str) -> Result<()> {
    blobs.write_group(path, Map::new())
}

/// The document of a row-aligned attribute of `kind` from a finished column: its name, data
/// type and dictionary.
fn row_attribute(kind: RowAttributeKind, c: &FinishedColumn, dtype: DataType) -> RowAttributeArray {
    let mut doc = RowAttributeArray::new(kind, &c.name, dtype);
    doc.dictionary = c.dictionary.clone();
    doc
}

/// The document of a cross-chunk link attribute (`rows`, one per record).
pub(super) fn cross_chunk_attribute_document(
    c: &FinishedColumn,
    rows: &AttributeRows,
    num_links: u64,
) -> Map<String, Value> {
    let mut doc = row_attribute(RowAttributeKind::CrossChunkLink, c, rows.data_type());
    doc.level_delta = Some(0);
    doc.num_links = Some(num_links);
    let channels = rows.channels() as u64;
    doc.shape = Some(if channels > 1 {
        vec![num_links, channels]
    } else {
        vec![num_links]
    });
    doc.to_attributes()
}

/// The document of a dense object (`with_mask`) or group attribute of `rows` rows.
pub(super) fn dense_attribute_document(
    dense: &DenseAttribute<'_>,
    rows: u64,
    with_mask: bool,
) -> Map<String, Value> {
    let kind = if with_mask {
        DenseAttributeKind::Object
    } else {
        DenseAttributeKind::Group
    };
    let channels = dense.rows.channels() as u64;
    let mut doc =
        DenseAttributeArray::new(kind, dense.name, dense.rows.data_type(), rows, channels);
    if with_mask {
        doc.has_present_mask = Some(dense.present.is_some());
    }
    doc.dictionary = dense.dictionary.clone();
    doc.channel_names = dense.attribute.channel_names.clone();
    doc.to_attributes()
}

impl ZvWriter {
    /// Writes a group document at `path` from a JSON object literal.
    fn write_document(&self, path: &str, attrs: Value) -> Result<()> {
        self.blobs.write_group(path, object(attrs))
    }

    /// Writes the document of a fragment index group of `kind` at `path`.
    pub(super) fn write_fragment_index_document(
        &self,
        path: &str,
        kind: FragmentIndexKind,
    ) -> Result<()> {
        self.blobs.write_chunk_array_document(
            path,
            FragmentIndexArray::new(kind).to_attributes(),
            &self.codecs(8),
        )
    }

    /// The documents of `vertices`, `vertex_fragments` and the vertex and fragment attributes.
    pub(super) fn write_vertex_documents(
        &self,
        columns: &[FinishedColumn],
        fragment_columns: &[DenseAttribute<'_>],
    ) -> Result<()> {
        // none depends on another: all at once on an object store (`io_pool::all_requests`)
        let mut writes: Vec<io_pool::Write<'_>> = vec![
            Box::new(|| {
                self.blobs.write_chunk_array_document(
                    &join(&[&self.level, names::VERTICES]),
                    VerticesArray::new(self.grid.vertex_type).to_attributes(),
                    &self.codecs(self.grid.vsize),
                )
            }),
            Box::new(|| {
                self.write_fragment_index_document(
                    &join(&[&self.level, names::VERTEX_FRAGMENTS]),
                    FragmentIndexKind::Vertex,
                )
            }),
        ];
        let vertex_attributes = join(&[&self.level, names::VERTEX_ATTRIBUTES]);
        if !columns.is_empty() {
            let group = vertex_attributes.clone();
            writes.push(Box::new(move || empty_group(&self.blobs, &group)));
        }
        for c in columns {
            let mut doc = row_attribute(RowAttributeKind::Vertex, c, c.data_type);
            if c.channels > 1 || c.channel_names.is_some() {
                doc.channel_names = Some(c.channel_names_or_default());
            }
            let mut attributes = doc.to_attributes();
            if self.opts.format_version == FormatVersion::V0_9 {
                // 0.9.2 reads a row's width from `row_shape`
                let row_shape: Vec<u64> = if c.channels > 1 {
                    vec![c.channels as u64]
                } else {
                    vec![]
                };
                attributes.insert("row_shape".into(), json!(row_shape));
            }
            let path = join(&[&vertex_attributes, &c.name]);
            writes.push(Box::new(move || {
                self.blobs.write_chunk_array_document(
                    &path,
                    attributes,
                    &self.codecs(c.data_type.size().unwrap_or(1)),
                )
            }));
        }
        if !fragment_columns.is_empty() {
            let fragment_attributes = join(&[&self.level, names::FRAGMENT_ATTRIBUTES]);
            let group = fragment_attributes.clone();
            writes.push(Box::new(move || empty_group(&self.blobs, &group)));
            for f in fragment_columns {
                let mut doc =
                    RowAttributeArray::new(RowAttributeKind::Fragment, f.name, f.rows.data_type());
                doc.dictionary = f.dictionary.clone();
                doc.channel_names = f.attribute.channel_names.clone();
                let path = join(&[&fragment_attributes, f.name]);
                writes.push(Box::new(move || {
                    self.blobs.write_chunk_array_document(
                        &path,
                        doc.to_attributes(),
                        &self.codecs(f.rows.data_type().size().unwrap_or(1)),
                    )
                }));
            }
        }
        io_pool::all_requests(self.blobs.store().as_ref(), writes)
    }

    /// The documents of `links/0`, `link_fragments` and the link attributes (linked
    /// geometries), `intra_links` being the number of intra-chunk links.
    pub(super) fn write_link_documents(
        &self,
        columns: &[FinishedColumn],
        intra_links: u64,
    ) -> Result<()> {
        if !self.linked() {
            return Ok(());
        }
        let links = join(&[&self.level, names::LINKS]);
        empty_group(&self.blobs, &links)?;
        let width = self.links.width();
        self.blobs.write_group(
            &join(&[&links, SAME_LEVEL]),
            LinksArray::new(width, 0, Some(intra_links)).to_attributes(),
        )?;
        self.write_fragment_index_document(
            &join(&[&self.level, names::LINK_FRAGMENTS]),
            FragmentIndexKind::Link,
        )?;
        if columns.is_empty() {
            return Ok(());
        }
        let link_attributes = join(&[&self.level, names::LINK_ATTRIBUTES]);
        empty_group(&self.blobs, &link_attributes)?;
        for c in columns {
            empty_group(&self.blobs, &join(&[&link_attributes, &c.name]))?;
            let mut doc = row_attribute(RowAttributeKind::Link, c, c.data_type);
            doc.level_delta = Some(0);
            if c.channels > 1 {
                doc.channel_names = Some(c.channel_names_or_default());
            }
            self.blobs.write_group(
                &join(&[&link_attributes, &c.name, SAME_LEVEL]),
                doc.to_attributes(),
            )?;
        }
        Ok(())
    }

    /// The logical arrays of the level, for its document (informational: the reference
    /// writers' lists; lines in the 0.9 layout list 0.9.2's `write_lines` list).
    fn arrays_present(&self, vertex_attributes: bool) -> Vec<&'static str> {
        if self.opts.geometry == Geometry::Line && self.opts.format_version == FormatVersion::V0_9 {
            let mut out = vec![names::VERTICES, names::OBJECT_INDEX];
            if vertex_attributes {
                out.push(names::VERTEX_ATTRIBUTES);
            }
            return out;
        }
        let mut out = vec![names::VERTICES];
        if vertex_attributes && self.opts.geometry == Geometry::PointCloud {
            out.push(names::VERTEX_ATTRIBUTES);
        }
        if self.linked() {
            out.push(names::LINKS);
        }
        if self.has_objects() {
            out.push(names::OBJECT_INDEX);
        }
        out
    }

    /// Writes the level document, then commits: syncs the store (every blob and document
    /// written so far becomes durable at once), writes the root document — last: a store
    /// without it does not open as a ZV store — and syncs again.
    pub(super) fn write_level_and_root(
        &self,
        vertex_count: u64,
        vertex_attributes: bool,
    ) -> Result<()> {
        // every grid array's cells are stored (its document written) before the level commits
        self.blobs.check_grid_complete()?;
        if let Target::Level(fields) = &self.target {
            // a pyramid level: the builder commits and updates the root
            let mut level = fields.clone();
            level.insert("vertex_count".into(), json!(vertex_count));
            level.insert(
                "arrays_present".into(),
                json!(self.arrays_present(vertex_attributes)),
            );
            return self.write_document(&self.level, json!({(names::LEVEL_ATTRIBUTE): level}));
        }
        self.write_document(
            &self.level,
            json!({(names::LEVEL_ATTRIBUTE): {"level": 0, "vertex_count": vertex_count, "arrays_present": self.arrays_present(vertex_attributes),
                   "coarsening_method": "none", "parent_level": null, "object_sparsity": 1.0}}),
        )?;
        let geometry = &self.opts.geometry;
        let links_convention = match geometry {
            Geometry::Graph | Geometry::Mesh => "explicit",
            Geometry::Skeleton => "implicit_sequential_with_branches",
            _ => "implicit_sequential",
        };
        let mut zv = Map::new();
        let version = match self.opts.format_version {
            FormatVersion::V0_7 => ZV_VERSION,
            FormatVersion::V0_9 => ZV09_VERSION,
        };
        zv.insert("zv_version".into(), json!(version));
        zv.insert("format_capabilities".into(), json!(["fragment_index"]));
        zv.insert("chunk_shape".into(), json!(self.opts.chunk_shape));
        zv.insert(
            "bounds".into(),
            json!(self.extent.bounds(&self.opts.chunk_shape)),
        );
        zv.insert("geometry_types".into(), json!([geometry.name()]));
        if let Some(b) = &self.opts.bin_shape {
            zv.insert("base_bin_shape".into(), json!(b));
        }
        if let Some(c) = &self.opts.crs {
            zv.insert("crs".into(), c.clone());
        }
        zv.insert("links_convention".into(), json!(links_convention));
        zv.insert("object_index_convention".into(), json!("standard"));
        zv.insert("cross_chunk_strategy".into(), json!("explicit_links"));
        let axes: Vec<Value> = self
            .opts
            .axes_or_default()
            .iter()
            .map(Axis::to_json)
            .collect();
        let half: Vec<f64> = self.grid.bin_shape.iter().map(|b| b / 2.0).collect();
        let transforms = json!([
            {"type": "scale", "scale": vec![1.0; self.grid.ndim]},
            {"type": "translation", "translation": half},
        ]);
        // The commit: everything written so far is made durable, then the root document
        // that makes the store a ZV store, then that too. The root document is created
        // conditionally (`Store::set_new`): of two writers creating the same store, one
        // commits and the other fails.
        self.blobs.store().sync()?;
        self.blobs.create_group(
            "",
            object(json!({
                (names::ROOT_ATTRIBUTE): zv,
                "multiscales": [{"version": "0.4", "name": "default", "axes": axes,
                    "datasets": [{"path": &self.level, "coordinateTransformations": transforms}],
                    "metadata": {"format": "zarr_vectors"}}],
            })),
        )?;
        self.blobs.store().sync()?;
        Ok(())
    }
}
