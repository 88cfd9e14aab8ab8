//! The models of the groups that hold a level's structure: vertices, fragment indices, links,
//! cross-chunk links, the object index and the groups.

use serde_json::Value;
use zv_core::data_type::DataType;

use super::super::json::{as_uint, opt_value, unknown_keys};
use super::{
    accepted_kind, at, delta, document, finish, is_discriminator, one_of, parse_dtype, put, string,
    ZvArray,
};
use crate::error::{Error, Result};
use crate::geometry::{Geometry, CROSS_LEVEL_LINK_WIDTHS};
use crate::metadata::JsonObject;

/// The `encoding` of fragment index groups.
pub const FRAGMENT_INDEX_V1: &str = "fragment_index_v1";
/// The `layout` of the reference's vlen-bytes object index (`object_index/manifests`).
pub const VLEN_MANIFESTS_V1: &str = "vlen_manifests_v1";
/// The `layout` of ZV 0.9's object index: [`VLEN_MANIFESTS_V1`]'s manifests by row, plus an
/// `object_ids` array naming the object id of each row.
pub const VLEN_MANIFESTS_V2: &str = "vlen_manifests_v2";
/// The `encoding` of raw vertex rows.
const RAW: &str = "raw";
/// The `encoding` of Draco-compressed vertices (recognised, then refused when read).
const DRACO: &str = "draco";

/// Checks the links of the folder `<array>/<folder_delta>` against their metadata and the
/// store's geometry: a stored `level_delta` must name the folder's delta, and the
/// `link_width` must be one the geometry allows (same level) or a cross-level width.
fn check_links(
    level_delta: Option<i32>,
    link_width: usize,
    folder_delta: i32,
    geometry: &Geometry,
    key: &str,
) -> Result<()> {
    if let Some(d) = level_delta.filter(|d| *d != folder_delta) {
        return Err(Error::metadata(
            key,
            format!("`level_delta` is {d}, but the folder is for delta {folder_delta}"),
        ));
    }
    let (allowed, what) = if folder_delta == 0 {
        match geometry.link_widths() {
            Some(w) => (w, format!("a {} store", geometry.name())),
            None => return Ok(()),
        }
    } else {
        (CROSS_LEVEL_LINK_WIDTHS, "cross-level links".to_owned())
    };
    if allowed.contains(&link_width) {
        return Ok(());
    }
    Err(Error::metadata(
        key,
        format!(
            "`link_width` is {link_width}, but {what} has links of width {}",
            allowed
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(" or ")
        ),
    ))
}

/// The largest `link_width` and `sid_ndim` accepted (a sanity bound on stored values).
const MAX_WIDTH: u64 = 64;

/// A `link_width` or `sid_ndim` in `lo..=MAX_WIDTH`.
fn width(lo: u64) -> impl Fn(&Value) -> Option<usize> {
    move |v| {
        as_uint(v)
            .filter(|w| (lo..=MAX_WIDTH).contains(w))
            .and_then(|w| usize::try_from(w).ok())
    }
}

/// `vertices`: `{"zv_array": "vertices", "dtype": "float32", "encoding": "raw"}`.
#[derive(Debug, Clone, PartialEq)]
pub struct VerticesArray {
    /// The vertex data type (a float type; `float32` when absent).
    pub dtype: DataType,
    /// `raw` (when absent) or `draco`; any other value is an error when read.
    pub encoding: String,
    /// Keys not interpreted here.
    pub extra: JsonObject,
}

impl VerticesArray {
    /// Raw vertices of `dtype`.
    pub fn new(dtype: DataType) -> Self {
        Self {
            dtype,
            encoding: RAW.to_owned(),
            extra: JsonObject::new(),
        }
    }

    /// Reads the attributes of a `vertices` group; `key` names its `zarr.json` in errors.
    pub fn from_attributes(attributes: &JsonObject, key: &str) -> Result<Self> {
        let kind = accepted_kind(attributes, key, &[ZvArray::Vertices])?;
        let dtype = parse_dtype(attributes, key, DataType::Float32)?;
        if !matches!(
            dtype,
            DataType::Float16 | DataType::Float32 | DataType::Float64
        ) {
            return Err(Error::metadata(
                key,
                format!("vertex dtype {dtype} is not a float type"),
            ));
        }
        let encoding = opt_value(attributes, "encoding", string).map_err(at(key))?;
        let encoding = one_of(encoding, "encoding", &[RAW, DRACO], key)?;
        Ok(Self {
            dtype,
            encoding: encoding.unwrap_or_else(|| RAW.to_owned()),
            extra: unknown_keys(attributes, |k| {
                is_discriminator(k, kind.is_some(), attributes) || k == "dtype" || k == "encoding"
            }),
        })
    }

    /// The attributes, as the writer writes them.
    pub fn to_attributes(&self) -> JsonObject {
        let mut m = document(Some(&ZvArray::Vertices));
        m.insert("dtype".into(), Value::from(self.dtype.name()));
        m.insert("encoding".into(), Value::from(self.encoding.as_str()));
        finish(m, &self.extra)
    }
}

/// Which fragment index a group holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FragmentIndexKind {
    /// `vertex_fragments`.
    Vertex,
    /// `link_fragments`.
    Link,
}

impl FragmentIndexKind {
    fn zv_array(self) -> ZvArray {
        match self {
            FragmentIndexKind::Vertex => ZvArray::VertexFragments,
            FragmentIndexKind::Link => ZvArray::LinkFragments,
        }
    }
}

/// `vertex_fragments` / `link_fragments`: `{"zv_array": …, "encoding": "fragment_index_v1"}`;
/// the reference leaves `link_fragments` as `{}`, which reads with no kind and no encoding
/// (and writes back as `{}`).
#[derive(Debug, Clone, PartialEq)]
pub struct FragmentIndexArray {
    /// The discriminator found (`None` if absent or unknown).
    pub kind: Option<FragmentIndexKind>,
    /// `encoding` ([`FRAGMENT_INDEX_V1`], the only one read), if given.
    pub encoding: Option<String>,
    /// Keys not interpreted here.
    pub extra: JsonObject,
}

impl FragmentIndexArray {
    /// A fragment index group of `kind`, version 1.
    pub fn new(kind: FragmentIndexKind) -> Self {
        Self {
            kind: Some(kind),
            encoding: Some(FRAGMENT_INDEX_V1.to_owned()),
            extra: JsonObject::new(),
        }
    }

    /// Reads the attributes of a fragment index group; `key` names its `zarr.json` in errors.
    pub fn from_attributes(attributes: &JsonObject, key: &str) -> Result<Self> {
        let accepted = [ZvArray::VertexFragments, ZvArray::LinkFragments];
        let kind = accepted_kind(attributes, key, &accepted)?;
        Ok(Self {
            kind: kind.as_ref().map(|k| {
                if *k == ZvArray::LinkFragments {
                    FragmentIndexKind::Link
                } else {
                    FragmentIndexKind::Vertex
                }
            }),
            encoding: one_of(
                opt_value(attributes, "encoding", string).map_err(at(key))?,
                "encoding",
                &[FRAGMENT_INDEX_V1],
                key,
            )?,
            extra: unknown_keys(attributes, |k| {
                is_discriminator(k, kind.is_some(), attributes) || k == "encoding"
            }),
        })
    }

    /// The attributes, as the writer writes them.
    pub fn to_attributes(&self) -> JsonObject {
        let mut m = document(self.kind.map(FragmentIndexKind::zv_array).as_ref());
        put(&mut m, "encoding", self.encoding.as_deref());
        finish(m, &self.extra)
    }
}

/// `links/<d>`: `{"zv_array": "links", "dtype": "int64", "link_width": L, "level_delta": d,
/// "num_links": M}` (the reference writes no `num_links`).
#[derive(Debug, Clone, PartialEq)]
pub struct LinksArray {
    /// `dtype` (`int64` when absent), as written; another type is an error when read.
    pub dtype: String,
    /// Vertices per link row, 1 to 64 (2 when absent).
    pub link_width: usize,
    /// `level_delta`, if given (the folder name `links/<d>` is authoritative).
    pub level_delta: Option<i32>,
    /// `num_links`, if given.
    pub num_links: Option<u64>,
    /// Keys not interpreted here.
    pub extra: JsonObject,
}

impl LinksArray {
    /// `int64` link rows of `link_width` at `level_delta`.
    pub fn new(link_width: usize, level_delta: i32, num_links: Option<u64>) -> Self {
        Self {
            dtype: "int64".to_owned(),
            link_width,
            level_delta: Some(level_delta),
            num_links,
            extra: JsonObject::new(),
        }
    }

    /// Reads the attributes of a `links/<d>` group; `key` names its `zarr.json` in errors.
    pub fn from_attributes(attributes: &JsonObject, key: &str) -> Result<Self> {
        let kind = accepted_kind(attributes, key, &[ZvArray::Links])?;
        let err = at(key);
        if parse_dtype(attributes, key, DataType::Int64)? != DataType::Int64 {
            return Err(Error::metadata(
                key,
                format!(
                    "link rows are int64, not {}",
                    attributes.get("dtype").unwrap_or(&Value::Null)
                ),
            ));
        }
        Ok(Self {
            dtype: opt_value(attributes, "dtype", string)
                .map_err(&err)?
                .unwrap_or_else(|| "int64".to_owned()),
            link_width: opt_value(attributes, "link_width", width(1))
                .map_err(&err)?
                .unwrap_or(2),
            level_delta: opt_value(attributes, "level_delta", delta).map_err(&err)?,
            num_links: opt_value(attributes, "num_links", as_uint).map_err(&err)?,
            extra: unknown_keys(attributes, |k| {
                is_discriminator(k, kind.is_some(), attributes)
                    || matches!(k, "dtype" | "link_width" | "level_delta" | "num_links")
            }),
        })
    }

    /// Checks the group of `links/<folder_delta>` (its `zarr.json` is `key`) against the
    /// folder and `geometry`: a stored `level_delta` names the folder's delta; `links/0` has a
    /// width the geometry allows ([`Geometry::link_widths`]), `links/±N` width 1 or 2.
    pub fn check(&self, folder_delta: i32, geometry: &Geometry, key: &str) -> Result<()> {
        check_links(
            self.level_delta,
            self.link_width,
            folder_delta,
            geometry,
            key,
        )
    }

    /// The attributes, as the writer writes them.
    pub fn to_attributes(&self) -> JsonObject {
        let mut m = document(Some(&ZvArray::Links));
        m.insert("dtype".into(), Value::from(self.dtype.as_str()));
        m.insert("link_width".into(), Value::from(self.link_width));
        put(&mut m, "level_delta", self.level_delta);
        put(&mut m, "num_links", self.num_links);
        finish(m, &self.extra)
    }
}

/// `cross_chunk_links/<d>`: `{"zv_array": "cross_chunk_links", "level_delta": d,
/// "link_width": L, "num_links": M, "sid_ndim": k}`; the reference writes `num_links` and
/// `sid_ndim` only once data has been written.
#[derive(Debug, Clone, PartialEq)]
pub struct CrossChunkLinksArray {
    /// `level_delta`, if given (the folder name is authoritative).
    pub level_delta: Option<i32>,
    /// Endpoints per record, 1 to 64 (2 when absent).
    pub link_width: usize,
    /// `num_links`, if given (else derived from the data length).
    pub num_links: Option<u64>,
    /// Chunk-coordinate arity of the records, if given (else the level's key arity).
    pub sid_ndim: Option<usize>,
    /// Keys not interpreted here.
    pub extra: JsonObject,
}

impl CrossChunkLinksArray {
    /// The records of `level_delta`: `num_links` records of `link_width` endpoints with
    /// `sid_ndim` chunk coordinates each.
    pub fn new(level_delta: i32, link_width: usize, num_links: u64, sid_ndim: usize) -> Self {
        Self {
            level_delta: Some(level_delta),
            link_width,
            num_links: Some(num_links),
            sid_ndim: Some(sid_ndim),
            extra: JsonObject::new(),
        }
    }

    /// Reads the attributes of a `cross_chunk_links/<d>` group; `key` names its `zarr.json`.
    pub fn from_attributes(attributes: &JsonObject, key: &str) -> Result<Self> {
        let kind = accepted_kind(attributes, key, &[ZvArray::CrossChunkLinks])?;
        let err = at(key);
        Ok(Self {
            level_delta: opt_value(attributes, "level_delta", delta).map_err(&err)?,
            link_width: opt_value(attributes, "link_width", width(1))
                .map_err(&err)?
                .unwrap_or(2),
            num_links: opt_value(attributes, "num_links", as_uint).map_err(&err)?,
            sid_ndim: opt_value(attributes, "sid_ndim", width(0)).map_err(&err)?,
            extra: unknown_keys(attributes, |k| {
                is_discriminator(k, kind.is_some(), attributes)
                    || matches!(k, "level_delta" | "link_width" | "num_links" | "sid_ndim")
            }),
        })
    }

    /// Checks the group of `cross_chunk_links/<folder_delta>` (its `zarr.json` is `key`)
    /// as [`LinksArray::check`] does: the records of delta 0 have a width the geometry allows.
    pub fn check(&self, folder_delta: i32, geometry: &Geometry, key: &str) -> Result<()> {
        check_links(
            self.level_delta,
            self.link_width,
            folder_delta,
            geometry,
            key,
        )
    }

    /// The attributes, as the writer writes them.
    pub fn to_attributes(&self) -> JsonObject {
        let mut m = document(Some(&ZvArray::CrossChunkLinks));
        put(&mut m, "level_delta", self.level_delta);
        m.insert("link_width".into(), Value::from(self.link_width));
        put(&mut m, "num_links", self.num_links);
        put(&mut m, "sid_ndim", self.sid_ndim);
        finish(m, &self.extra)
    }
}

/// `object_index`: `{"zv_array": "object_index", "num_objects": B, "sid_ndim": k}`, plus
/// `"layout": "vlen_manifests_v1"` in the reference's stores.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectIndexArray {
    /// The number of objects (required).
    pub num_objects: u64,
    /// Chunk-coordinate arity of the manifests, if given (else the level's key arity).
    pub sid_ndim: Option<usize>,
    /// The container of the manifests ([`VLEN_MANIFESTS_V1`], or [`VLEN_MANIFESTS_V2`] with
    /// its row → id table; absent for `data` with or without `offsets`), if given.
    pub layout: Option<String>,
    /// Keys not interpreted here.
    pub extra: JsonObject,
}

impl ObjectIndexArray {
    /// The index of `num_objects` objects whose manifests name chunks of `sid_ndim`
    /// coordinates, in zv's container (no `layout`).
    pub fn new(num_objects: u64, sid_ndim: usize) -> Self {
        Self {
            num_objects,
            sid_ndim: Some(sid_ndim),
            layout: None,
            extra: JsonObject::new(),
        }
    }

    /// Reads the attributes of an `object_index` group; `key` names its `zarr.json`.
    pub fn from_attributes(attributes: &JsonObject, key: &str) -> Result<Self> {
        let kind = accepted_kind(attributes, key, &[ZvArray::ObjectIndex])?;
        let err = at(key);
        let num_objects = attributes
            .get("num_objects")
            .and_then(as_uint)
            .ok_or_else(|| Error::metadata(key, "object_index has no integer `num_objects`"))?;
        Ok(Self {
            num_objects,
            sid_ndim: opt_value(attributes, "sid_ndim", width(0)).map_err(&err)?,
            layout: one_of(
                opt_value(attributes, "layout", string).map_err(&err)?,
                "layout",
                &[VLEN_MANIFESTS_V1, VLEN_MANIFESTS_V2],
                key,
            )?,
            extra: unknown_keys(attributes, |k| {
                is_discriminator(k, kind.is_some(), attributes)
                    || matches!(k, "num_objects" | "sid_ndim" | "layout")
            }),
        })
    }

    /// The attributes, as the writer writes them.
    pub fn to_attributes(&self) -> JsonObject {
        let mut m = document(Some(&ZvArray::ObjectIndex));
        m.insert("num_objects".into(), Value::from(self.num_objects));
        put(&mut m, "sid_ndim", self.sid_ndim);
        put(&mut m, "layout", self.layout.as_deref());
        finish(m, &self.extra)
    }
}

/// `groups`: `{"zv_array": "groups", "num_groups": G}` (`groupings` is read too).
#[derive(Debug, Clone, PartialEq)]
pub struct GroupsArray {
    /// `num_groups`, if given.
    pub num_groups: Option<u64>,
    /// Keys not interpreted here.
    pub extra: JsonObject,
}

impl GroupsArray {
    /// `num_groups` groups.
    pub fn new(num_groups: u64) -> Self {
        Self {
            num_groups: Some(num_groups),
            extra: JsonObject::new(),
        }
    }

    /// Reads the attributes of a `groups` group; `key` names its `zarr.json` in errors.
    pub fn from_attributes(attributes: &JsonObject, key: &str) -> Result<Self> {
        let kind = accepted_kind(attributes, key, &[ZvArray::Groups])?;
        Ok(Self {
            num_groups: opt_value(attributes, "num_groups", as_uint).map_err(at(key))?,
            extra: unknown_keys(attributes, |k| {
                is_discriminator(k, kind.is_some(), attributes) || k == "num_groups"
            }),
        })
    }

    /// The attributes, as the writer writes them.
    pub fn to_attributes(&self) -> JsonObject {
        let mut m = document(Some(&ZvArray::Groups));
        put(&mut m, "num_groups", self.num_groups);
        finish(m, &self.extra)
    }
}
