//! What a validation finds: the rules ([`Rule`], every one in [`RULES`]), one [`Finding`] per
//! violation, and the [`Report`] of a run.

use std::fmt;

use serde_json::{json, Value};

/// How serious a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// The store does not conform: readers may fail or read wrong data.
    Error,
    /// Conformant, but unusual or not what the spec recommends.
    Warning,
}

impl Severity {
    /// `"error"` or `"warning"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A validation rule: its id, conformance level (1–5), severity and what it checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    /// The rule id (`kebab-case`, stable).
    pub id: &'static str,
    /// The conformance level (1 structure, 2 metadata, 3 consistency, 4 conformance,
    /// 5 multiresolution).
    pub level: u8,
    /// The severity of its findings.
    pub severity: Severity,
    /// What it checks, in one sentence.
    pub checks: &'static str,
}

macro_rules! rules {
    ($($name:ident = ($id:literal, $level:literal, $sev:ident, $checks:literal);)*) => {
        $(
            #[doc = $checks]
            pub const $name: Rule = Rule {
                id: $id,
                level: $level,
                severity: Severity::$sev,
                checks: $checks,
            };
        )*
        /// Every rule, by level.
        pub const RULES: &[Rule] = &[$($name),*];
    };
}

rules! {
    ROOT_DOCUMENT = ("root-document", 1, Error, "The root `zarr.json` exists, parses and is a group whose attributes hold a `zarr_vectors` object.");
    LEVEL_GROUPS = ("level-groups", 1, Error, "The store has level groups named by integers, level 0 among them, and each level group document that exists parses.");
    VERTICES_ARRAY = ("vertices-array", 1, Error, "Every level has a `vertices` array group.");
    ARRAY_DOCUMENT = ("array-document", 1, Error, "Every per-array group document parses and its `zv_array` names the array it sits at.");
    UNKNOWN_ARRAY = ("unknown-array", 1, Warning, "A level's children are known ZV arrays.");
    CHUNK_KEY = ("chunk-key", 1, Error, "Blob names in per-chunk arrays are chunk keys of the level's arity.");
    CHUNK_GRID = ("chunk-grid", 1, Error, "ZV 0.9: every per-chunk array is a `variable_length_bytes` array of the level's rank, its `chunk_grid_origin` has that rank, and every key in its `nonempty_chunks` is a chunk key of that rank inside the grid.");
    V09_UNREAD = ("v09-unread", 1, Error, "ZV 0.9: the level holds nothing this build does not read (the attributes of cross-level links, `link_attributes/<n>/<d ≠ 0>`), which is reported rather than passed unchecked.");
    LINK_SEGMENTS = ("link-segments", 1, Error, "ZV 0.9: the children of a `links/<d>` family are offsets segments of its `link_width` and `sid_ndim` (`+1.-1.0`, joined by `_`; `self` for width 1).");
    ZV_VERSION = ("zv-version", 2, Error, "`zv_version` is a version string (`MAJOR.MINOR[.PATCH]`) this build reads: 0.7.x or 0.9.x.");
    ROOT_SCHEMA = ("root-schema", 2, Error, "The root metadata parses (axes, `chunk_shape`, `bounds`, typed optional keys).");
    ROOT_SHAPES = ("root-shapes", 2, Error, "`chunk_shape` and both sides of `bounds` have one value per axis, `chunk_shape` > 0 and `bounds` min <= max.");
    BASE_BIN_SHAPE = ("base-bin-shape", 2, Error, "`base_bin_shape` has one positive value per axis and divides `chunk_shape`.");
    ENUMERATIONS = ("enumerations", 2, Error, "`links_convention`, `object_index_convention`, `cross_chunk_strategy`, `cross_level_storage` and `geometry_types` entries are values the spec defines.");
    CROSS_LEVEL_DEPTH = ("cross-level-depth", 2, Error, "`cross_level_depth` >= -1.");
    REDUCTION_FACTOR = ("reduction-factor", 2, Error, "`reduction_factor` >= 2.");
    CAPABILITIES = ("capabilities", 2, Warning, "`format_capabilities` tokens are ones the spec defines.");
    AXES = ("axes", 2, Warning, "Axis names are distinct and axis units are not placeholders.");
    LEVEL_SCHEMA = ("level-schema", 2, Error, "A level's `zarr_vectors_level` parses (typed keys, bin grid).");
    LEVEL_NUMBER = ("level-number", 2, Error, "`zarr_vectors_level.level` equals the level group's name.");
    LEVEL_PARENT = ("level-parent", 2, Error, "Level 0 has no `parent_level` and does not preserve object ids; a level > 0 names a `parent_level` below it and has a bin grid (NGFF dataset entry).");
    OBJECT_SPARSITY = ("object-sparsity", 2, Error, "`object_sparsity` is in (0, 1].");
    INHERITED_OBJECTS = ("inherited-objects", 2, Error, "`preserves_object_ids` comes with `inherited_num_objects`.");
    ARRAY_METADATA = ("array-metadata", 2, Error, "Per-array attributes hold values the spec defines: vertices `dtype` a float type and `encoding` raw or draco, fragment `encoding` fragment_index_v1, links `link_width` >= 1 and `level_delta` equal to the folder.");
    NONEMPTY_CHUNKS = ("nonempty-chunks", 3, Error, "ZV 0.9: `nonempty_chunks` lists exactly the cells that hold data (0.9.2 reads only the cells it lists).");
    VERTICES_DECODE = ("vertices-decode", 3, Error, "Every `vertices/<key>` blob decodes to whole rows of the vertex type.");
    FRAGMENT_INDEX = ("fragment-index", 3, Error, "Every fragment index decodes (magic, version, flags, popcount, CSR monotone, padding) and its fragments lie within the chunk's rows.");
    BINS_PER_CHUNK = ("bins-per-chunk", 3, Error, "An undifferentiated point cloud has at most one fragment per bin of a chunk.");
    MISSING_BLOB = ("missing-blob", 3, Error, "A chunk with vertices has its blob in every per-chunk array that needs one (`vertex_fragments`, vertex attributes, link fragments and attributes of its links).");
    ORPHAN_BLOB = ("orphan-blob", 3, Error, "No per-chunk array has a blob for a chunk without vertices.");
    NON_FINITE = ("non-finite", 3, Error, "Every vertex coordinate is finite.");
    VERTEX_COUNT = ("vertex-count", 3, Error, "A level's `vertex_count` equals the rows of its `vertices` blobs.");
    VERTEX_ATTRIBUTE = ("vertex-attribute", 3, Error, "Every vertex attribute blob has one row per vertex row of its chunk.");
    FRAGMENT_ATTRIBUTE = ("fragment-attribute", 3, Error, "Every fragment attribute blob has one row per fragment of its chunk.");
    LINK_ROWS = ("link-rows", 3, Error, "Every `links/0/<key>` blob decodes to rows of `link_width` indices of existing vertex rows of the chunk.");
    LINK_FRAGMENTS = ("link-fragments", 3, Error, "Every link fragment index decodes and covers rows of the chunk's links.");
    LINK_ATTRIBUTE = ("link-attribute", 3, Error, "Every link attribute blob has one row per link row of its chunk.");
    CROSS_LEVEL_LINKS = ("cross-level-links", 3, Error, "Every `links/<±N>/<key>` blob decodes, names existing rows of its chunk and chunks of level L+N.");
    OBJECT_INDEX = ("object-index", 3, Error, "The object index decodes: `num_objects` manifests, no truncation or trailing bytes.");
    MANIFEST_REFERENCES = ("manifest-references", 3, Error, "Every manifest block names a chunk with vertices and fragments below its fragment count.");
    SHARED_FRAGMENTS = ("shared-fragments", 3, Error, "Without `shared_fragments`, no (chunk, fragment) is named by two objects.");
    CROSS_CHUNK_LINKS = ("cross-chunk-links", 3, Error, "`cross_chunk_links/<d>/data` is `num_links × link_width × (sid_ndim + 1) × 8` bytes; in ZV 0.9 every cross-chunk segment of `links/<d>` decodes (offsets agreeing with its name, `perm_idx` in range).");
    CROSS_CHUNK_ENDPOINTS = ("cross-chunk-endpoints", 3, Error, "Every cross-chunk endpoint names an existing row of an existing chunk: endpoint 0 at the level, the others at level + delta.");
    CROSS_CHUNK_ATTRIBUTE = ("cross-chunk-attribute", 3, Error, "Every cross-chunk link attribute has `num_links` rows.");
    OBJECT_ATTRIBUTE = ("object-attribute", 3, Error, "Every object attribute has `num_objects` rows (and a `present_mask` of as many when it says so); in ZV 0.9 one row per object index row, absent rows holding the fill value.");
    GROUPS = ("groups", 3, Error, "`groups/data` + `offsets` (ZV 0.9: the `groups` vlen array) decode, `num_groups` matches and members are object ids of the level.");
    GROUP_ATTRIBUTE = ("group-attribute", 3, Error, "Every group attribute has `num_groups` rows.");
    LINKS_CONVENTION = ("links-convention", 4, Error, "The geometry allows the store's `links_convention` (graph and mesh explicit, polylines implicit_sequential, skeletons explicit or with branches).");
    LINK_WIDTH = ("link-width", 4, Error, "`links/0` has a width its geometry allows: meshes 3 or 4, graphs 2, skeletons 1 or 2, lines, polylines and streamlines 2.");
    POINT_CLOUD_LINKS = ("point-cloud-links", 4, Warning, "A point cloud has no `links/0`.");
    VERTEX_CHUNK = ("vertex-chunk", 4, Error, "Every vertex lies inside the chunk that stores it (floor rule at the level's chunk shape).");
    VERTEX_BIN = ("vertex-bin", 4, Error, "In an undifferentiated binned point cloud, every vertex of fragment f lies inside bin f.");
    VERTEX_BOUNDS = ("vertex-bounds", 4, Error, "Every vertex lies inside the root `bounds`.");
    LEVELS_CONTIGUOUS = ("levels-contiguous", 5, Error, "Levels are exactly 0..n-1.");
    LEVEL_CHUNK_SHAPE = ("level-chunk-shape", 5, Error, "A level's `chunk_shape` is a whole multiple of the root's and of its parent level's.");
    LEVEL_BIN_SHAPE = ("level-bin-shape", 5, Error, "A level's bin shape divides its chunk shape.");
    LEVEL_VERTEX_COUNTS = ("level-vertex-counts", 5, Error, "Vertex counts do not increase from a level to the next.");
    PRESERVED_IDS = ("preserved-ids", 5, Error, "A level preserving object ids has `inherited_num_objects` equal to its parent's object count, and as many objects itself (a level's objects: its object index's rows, the stored ids in ZV 0.9).");
    MULTISCALE_LINKS = ("multiscale-links", 5, Error, "Cross-level arrays (`links/<±N>`, `cross_chunk_links/<±N>`) exist only with the `multiscale_links` capability and `cross_level_storage` other than none.");
    MULTISCALE_TOKEN = ("multiscale-token", 5, Warning, "The `multiscale_links` capability comes with cross-level arrays.");
}

/// The rule with id `id`.
pub fn rule(id: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.id == id)
}

/// One violation of a rule.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Finding {
    /// The conformance level of the rule.
    pub level: u8,
    /// Error or warning.
    pub severity: Severity,
    /// The rule id.
    pub rule: &'static str,
    /// The store key (a `zarr.json` key, or the node path of a blob or array group).
    pub key: String,
    /// What is wrong, in a sentence.
    pub message: String,
}

impl Finding {
    /// A finding of `rule` at `key`.
    pub fn new(rule: &Rule, key: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            level: rule.level,
            severity: rule.severity,
            rule: rule.id,
            key: key.into(),
            message: message.into(),
        }
    }

    /// The finding as JSON.
    pub fn to_json(&self) -> Value {
        json!({
            "severity": self.severity.as_str(),
            "level": self.level,
            "rule": self.rule,
            "key": self.key,
            "message": self.message,
        })
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} L{} {} `{}`: {}",
            self.severity, self.level, self.rule, self.key, self.message
        )
    }
}

/// The result of a validation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The level asked for (1–5).
    pub level: u8,
    /// The highest level whose checks ran (lower than `level` when a level with errors
    /// stopped the run: structure errors stop everything, metadata errors stop levels >= 3).
    pub checked_level: u8,
    /// Every finding, sorted by level, key and rule.
    pub findings: Vec<Finding>,
}

impl Report {
    /// A report of `findings` (sorted here).
    pub(crate) fn new(level: u8, checked_level: u8, mut findings: Vec<Finding>) -> Self {
        findings.sort();
        findings.dedup();
        Self {
            level,
            checked_level,
            findings,
        }
    }

    /// The error findings.
    pub fn errors(&self) -> impl Iterator<Item = &Finding> + '_ {
        self.findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
    }

    /// The warning findings.
    pub fn warnings(&self) -> impl Iterator<Item = &Finding> + '_ {
        self.findings
            .iter()
            .filter(|f| f.severity == Severity::Warning)
    }

    /// Whether the store is valid at the level asked for (no error, every level checked).
    pub fn is_valid(&self) -> bool {
        self.errors().next().is_none() && self.checked_level == self.level
    }

    /// The report as JSON: `{level, checked_level, valid, errors, warnings, findings}`.
    pub fn to_json(&self) -> Value {
        json!({
            "level": self.level,
            "checked_level": self.checked_level,
            "valid": self.is_valid(),
            "errors": self.errors().count(),
            "warnings": self.warnings().count(),
            "findings": self.findings.iter().map(Finding::to_json).collect::<Vec<_>>(),
        })
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for x in &self.findings {
            writeln!(f, "{x}")?;
        }
        let verdict = if self.is_valid() { "valid" } else { "invalid" };
        write!(
            f,
            "{verdict} at level {} ({} errors, {} warnings; levels 1–{} checked)",
            self.level,
            self.errors().count(),
            self.warnings().count(),
            self.checked_level
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_ids_are_unique_and_levels_in_range() {
        for (i, r) in RULES.iter().enumerate() {
            assert!((1..=5).contains(&r.level), "{}", r.id);
            assert!(RULES[..i].iter().all(|o| o.id != r.id), "{}", r.id);
            assert_eq!(rule(r.id), Some(r));
        }
        assert!(RULES.windows(2).all(|w| w[0].level <= w[1].level));
    }

    #[test]
    fn report_counts_and_verdict() {
        let w = Finding::new(&CAPABILITIES, "zarr.json", "unknown token `x`");
        let r = Report::new(5, 5, vec![w.clone()]);
        assert!(r.is_valid());
        assert_eq!(r.to_json()["warnings"], 1);
        let e = Finding::new(&NON_FINITE, "0/vertices/0.0.0", "NaN");
        let r = Report::new(5, 5, vec![e.clone(), w]);
        assert!(!r.is_valid());
        assert_eq!(r.errors().collect::<Vec<_>>(), vec![&e]);
        assert!(r
            .to_string()
            .contains("invalid at level 5 (1 errors, 1 warnings"));
        assert!(!Report::new(5, 2, vec![]).is_valid());
    }
}
