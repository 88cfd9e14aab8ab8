//! The group documents (`zarr.json` attributes) the writer writes: the per-array groups of the
//! level (`vertices`, `links/0`, the attribute groups, …), the level document and the root
//! document, which is written last.

use serde_json::{json, Map, Value};
use zv_core::data_type::DataType;

use super::columns::FinishedColumn;
use super::objects::DenseAttribute;
use super::{ZvWriter, LEVEL, SAME_LEVEL};
use crate::blob::{join, Blobs};
use crate::error::Result;
use crate::geometry::Geometry;
use crate::layout::attributes::{AttributeRows, Dictionary};
use crate::metadata::{Axis, ZV_VERSION};
use crate::names;

/// The `zv_array` of a vertex attribute.
const VERTEX_ATTRIBUTE: &str = "attribute";
/// The `zv_array` of a fragment attribute.
const FRAGMENT_ATTRIBUTE: &str = "fragment_attribute";
/// The `zv_array` of a link attribute.
const LINK_ATTRIBUTE: &str = "link_attribute";
/// The `zv_array` of a cross-chunk link attribute.
const CROSS_CHUNK_LINK_ATTRIBUTE: &str = "cross_chunk_link_attribute";
/// The `zv_array` of an object attribute.
const OBJECT_ATTRIBUTE: &str = "object_attribute";
/// The `zv_array` of a group attribute.
const GROUP_ATTRIBUTE: &str = "groupings_attribute";
/// The `encoding` of a fragment index.
const FRAGMENT_INDEX: &str = "fragment_index_v1";

/// The members of a JSON object literal.
pub(super) fn object(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

/// Writes a group without attributes at `path`.
pub(super) fn empty_group(blobs: &Blobs, path: &str) -> Result<()> {
    blobs.write_group(path, Map::new())
}

/// The first members of an attribute's document.
fn attribute_document(zv_array: &str, name: &str, data_type: DataType) -> Map<String, Value> {
    let mut attrs = Map::new();
    attrs.insert(names::ZV_ARRAY.into(), json!(zv_array));
    attrs.insert("name".into(), json!(name));
    attrs.insert("dtype".into(), json!(data_type.name()));
    attrs
}

/// Adds a dictionary's members, if there is one.
fn add_dictionary(attrs: &mut Map<String, Value>, dictionary: Option<&Dictionary>) {
    if let Some(d) = dictionary {
        d.to_attributes(attrs);
    }
}

/// The shape of a dense array of `rows` rows of `channels` values.
fn shape(rows: u64, channels: usize) -> Vec<u64> {
    if channels > 1 {
        vec![rows, channels as u64]
    } else {
        vec![rows]
    }
}

/// The document of a cross-chunk link attribute (`rows`, one per record).
pub(super) fn cross_chunk_attribute_document(
    c: &FinishedColumn,
    rows: &AttributeRows,
    num_links: u64,
) -> Map<String, Value> {
    let mut attrs = attribute_document(CROSS_CHUNK_LINK_ATTRIBUTE, &c.name, rows.data_type());
    attrs.insert("level_delta".into(), json!(0));
    attrs.insert("num_links".into(), json!(num_links));
    attrs.insert("shape".into(), json!(shape(num_links, rows.channels())));
    add_dictionary(&mut attrs, c.dictionary.as_ref());
    attrs
}

/// The document of a dense object (`with_mask`) or group attribute of `rows` rows.
pub(super) fn dense_attribute_document(
    dense: &DenseAttribute<'_>,
    rows: u64,
    with_mask: bool,
) -> Map<String, Value> {
    let zv_array = if with_mask {
        OBJECT_ATTRIBUTE
    } else {
        GROUP_ATTRIBUTE
    };
    let c = dense.rows.channels();
    let mut attrs = attribute_document(zv_array, dense.name, dense.rows.data_type());
    attrs.insert("num_channels".into(), json!(c));
    attrs.insert("shape".into(), json!(shape(rows, c)));
    if with_mask {
        attrs.insert("has_present_mask".into(), json!(dense.present.is_some()));
    }
    add_dictionary(&mut attrs, dense.dictionary.as_ref());
    if let Some(cn) = &dense.attribute.channel_names {
        attrs.insert("channel_names".into(), json!(cn));
    }
    attrs
}

impl ZvWriter {
    /// Writes a group document at `path` from a JSON object literal.
    fn write_document(&self, path: &str, attrs: Value) -> Result<()> {
        self.blobs.write_group(path, object(attrs))
    }

    /// The documents of `vertices`, `vertex_fragments` and the vertex and fragment attributes.
    pub(super) fn write_vertex_documents(
        &self,
        columns: &[FinishedColumn],
        fragment_columns: &[DenseAttribute<'_>],
    ) -> Result<()> {
        self.write_document(
            &join(&[LEVEL, names::VERTICES]),
            json!({(names::ZV_ARRAY): names::VERTICES, "dtype": self.grid.vertex_type.name(), "encoding": "raw"}),
        )?;
        self.write_document(
            &join(&[LEVEL, names::VERTEX_FRAGMENTS]),
            json!({(names::ZV_ARRAY): names::VERTEX_FRAGMENTS, "encoding": FRAGMENT_INDEX}),
        )?;
        let vertex_attributes = join(&[LEVEL, names::VERTEX_ATTRIBUTES]);
        if !columns.is_empty() {
            empty_group(&self.blobs, &vertex_attributes)?;
        }
        for c in columns {
            let mut attrs = attribute_document(VERTEX_ATTRIBUTE, &c.name, c.data_type);
            if c.channels > 1 || c.channel_names.is_some() {
                attrs.insert("channel_names".into(), json!(c.channel_names_or_default()));
            }
            add_dictionary(&mut attrs, c.dictionary.as_ref());
            self.blobs
                .write_group(&join(&[&vertex_attributes, &c.name]), attrs)?;
        }
        if fragment_columns.is_empty() {
            return Ok(());
        }
        let fragment_attributes = join(&[LEVEL, names::FRAGMENT_ATTRIBUTES]);
        empty_group(&self.blobs, &fragment_attributes)?;
        for f in fragment_columns {
            let mut attrs = attribute_document(FRAGMENT_ATTRIBUTE, f.name, f.rows.data_type());
            add_dictionary(&mut attrs, f.dictionary.as_ref());
            if let Some(c) = &f.attribute.channel_names {
                attrs.insert("channel_names".into(), json!(c));
            }
            self.blobs
                .write_group(&join(&[&fragment_attributes, f.name]), attrs)?;
        }
        Ok(())
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
        let links = join(&[LEVEL, names::LINKS]);
        empty_group(&self.blobs, &links)?;
        self.write_document(
            &join(&[&links, SAME_LEVEL]),
            json!({(names::ZV_ARRAY): names::LINKS, "dtype": "int64", "link_width": self.links.width(), "level_delta": 0, "num_links": intra_links}),
        )?;
        self.write_document(
            &join(&[LEVEL, names::LINK_FRAGMENTS]),
            json!({(names::ZV_ARRAY): names::LINK_FRAGMENTS, "encoding": FRAGMENT_INDEX}),
        )?;
        if columns.is_empty() {
            return Ok(());
        }
        let link_attributes = join(&[LEVEL, names::LINK_ATTRIBUTES]);
        empty_group(&self.blobs, &link_attributes)?;
        for c in columns {
            empty_group(&self.blobs, &join(&[&link_attributes, &c.name]))?;
            let mut attrs = attribute_document(LINK_ATTRIBUTE, &c.name, c.data_type);
            attrs.insert("level_delta".into(), json!(0));
            add_dictionary(&mut attrs, c.dictionary.as_ref());
            if c.channels > 1 {
                attrs.insert("channel_names".into(), json!(c.channel_names_or_default()));
            }
            self.blobs
                .write_group(&join(&[&link_attributes, &c.name, SAME_LEVEL]), attrs)?;
        }
        Ok(())
    }

    /// The logical arrays of the level, for its document.
    fn arrays_present(&self, vertex_attributes: bool) -> Vec<&'static str> {
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
        self.write_document(
            LEVEL,
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
        zv.insert("zv_version".into(), json!(ZV_VERSION));
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
        // that makes the store a ZV store, then that too.
        self.blobs.store().sync()?;
        self.write_document(
            "",
            json!({
                (names::ROOT_ATTRIBUTE): zv,
                "multiscales": [{"version": "0.4", "name": "default", "axes": axes,
                    "datasets": [{"path": LEVEL, "coordinateTransformations": transforms}],
                    "metadata": {"format": "zarr_vectors"}}],
            }),
        )?;
        self.blobs.store().sync()?;
        Ok(())
    }
}
