//! Names of the nodes of a ZV level and of their group attributes: the one place the
//! hierarchy's spelling is written down (see `docs/format-decisions.md`, "Layout").
//!
//! A level `<L>/` holds one group per logical array (`vertices`, `links/<delta>`, …); inside
//! it, per-chunk blobs are arrays named by the chunk key and level-global blobs are arrays named
//! [`DATA`], [`OFFSETS`] or [`PRESENT_MASK`].

/// Vertex rows, one blob per chunk.
pub const VERTICES: &str = "vertices";
/// Fragment index over the vertex rows of a chunk.
pub const VERTEX_FRAGMENTS: &str = "vertex_fragments";
/// Link rows, one group per level delta (`links/0`, `links/+1`, …).
pub const LINKS: &str = "links";
/// Fragment index over the `links/0` rows of a chunk.
pub const LINK_FRAGMENTS: &str = "link_fragments";
/// Per-vertex attributes, one group per attribute name.
pub const VERTEX_ATTRIBUTES: &str = "vertex_attributes";
/// Per-fragment attributes (spec chapter 5), one group per attribute name.
pub const FRAGMENT_ATTRIBUTES: &str = "fragment_attributes";
/// Per-link attributes, `link_attributes/<name>/<delta>/<key>`.
pub const LINK_ATTRIBUTES: &str = "link_attributes";
/// The object index (manifests).
pub const OBJECT_INDEX: &str = "object_index";
/// The 0.7.0 reference's vlen-bytes manifest array inside [`OBJECT_INDEX`].
pub const MANIFESTS: &str = "manifests";
/// The row → object id table of a ZV 0.9 object index (`object_index/object_ids`).
pub const OBJECT_IDS: &str = "object_ids";
/// Dense per-object attributes, `object_attributes/<name>/data`.
pub const OBJECT_ATTRIBUTES: &str = "object_attributes";
/// Groups of objects (`groups/data` + `groups/offsets`).
pub const GROUPS: &str = "groups";
/// Dense per-group attributes, `group_attributes/<name>/data`.
pub const GROUP_ATTRIBUTES: &str = "group_attributes";
/// Links whose endpoints lie in different chunks, `cross_chunk_links/<delta>/data`.
pub const CROSS_CHUNK_LINKS: &str = "cross_chunk_links";
/// Attributes of cross-chunk links, `cross_chunk_link_attributes/<name>/<delta>/data`.
pub const CROSS_CHUNK_LINK_ATTRIBUTES: &str = "cross_chunk_link_attributes";

/// A level-global blob.
pub const DATA: &str = "data";
/// Byte offsets beside a level-global [`DATA`] blob.
pub const OFFSETS: &str = "offsets";
/// The presence mask of a dense attribute with missing values.
pub const PRESENT_MASK: &str = "present_mask";
/// Prefix of the reference's `__shard_*` packs of per-chunk blobs.
pub const SHARD_PREFIX: &str = "__shard_";

/// The per-array group attribute that names what a group holds.
pub const ZV_ARRAY: &str = "zv_array";
/// Legacy spelling of [`ZV_ARRAY`], accepted on read.
pub const ZVF_ARRAY: &str = "zvf_array";
/// Root attribute holding the ZV root metadata.
pub const ROOT_ATTRIBUTE: &str = "zarr_vectors";
/// Level attribute holding the ZV level metadata.
pub const LEVEL_ATTRIBUTE: &str = "zarr_vectors_level";

/// Every logical array of a level, in the order a writer creates them.
pub const LEVEL_ARRAYS: &[&str] = &[
    VERTICES,
    VERTEX_FRAGMENTS,
    LINKS,
    LINK_FRAGMENTS,
    VERTEX_ATTRIBUTES,
    FRAGMENT_ATTRIBUTES,
    LINK_ATTRIBUTES,
    OBJECT_INDEX,
    OBJECT_ATTRIBUTES,
    GROUPS,
    GROUP_ATTRIBUTES,
    CROSS_CHUNK_LINKS,
    CROSS_CHUNK_LINK_ATTRIBUTES,
];

/// Whether `name` is a level-global blob name rather than a chunk key.
pub fn is_global_blob(name: &str) -> bool {
    matches!(name, DATA | OFFSETS | PRESENT_MASK) || name.starts_with(SHARD_PREFIX)
}

/// The attribute of a `__shard_*` pack that locates its blobs (`{"<blob>": [offset, nbytes]}`).
pub const SHARD_INDEX: &str = "shard_index";
