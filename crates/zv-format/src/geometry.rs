//! The geometry type of a store: the first entry of its `geometry_types` and what follows
//! from it (sequential or explicit links).

/// The geometry of a store (its first `geometry_types` entry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Geometry {
    /// Points, with or without objects.
    PointCloud,
    /// Two-vertex lines.
    Line,
    /// Polylines.
    Polyline,
    /// Streamlines (polylines).
    Streamline,
    /// Graphs with explicit edges.
    Graph,
    /// Trees with `[child, parent]` links.
    Skeleton,
    /// Triangle or quad meshes.
    Mesh,
    /// Another type (treated as raw vertices and explicit links).
    Other(String),
}

impl Geometry {
    /// Parses a `geometry_types` entry.
    pub fn parse(name: &str) -> Self {
        match name {
            "point_cloud" => Geometry::PointCloud,
            "line" => Geometry::Line,
            "polyline" => Geometry::Polyline,
            "streamline" => Geometry::Streamline,
            "graph" => Geometry::Graph,
            "skeleton" => Geometry::Skeleton,
            "mesh" => Geometry::Mesh,
            other => Geometry::Other(other.to_owned()),
        }
    }

    /// The `geometry_types` name.
    pub fn name(&self) -> &str {
        match self {
            Geometry::PointCloud => "point_cloud",
            Geometry::Line => "line",
            Geometry::Polyline => "polyline",
            Geometry::Streamline => "streamline",
            Geometry::Graph => "graph",
            Geometry::Skeleton => "skeleton",
            Geometry::Mesh => "mesh",
            Geometry::Other(s) => s,
        }
    }

    /// Whether links are implicit and sequential along each object (polylines, lines).
    pub fn is_sequential(&self) -> bool {
        matches!(
            self,
            Geometry::Line | Geometry::Polyline | Geometry::Streamline
        )
    }

    /// The `link_width`s the geometry allows for same-level links (`links/0` rows and
    /// `cross_chunk_links/0` records); `None`: any width (point clouds, which have no links,
    /// and other geometry types). Graphs store edges (2), skeletons `[child, parent]` rows (2)
    /// or the specification's parent rows (1), meshes faces (3 or 4), and polylines, lines
    /// and streamlines only two-endpoint cross-chunk records (2). See
    /// `docs/format-decisions.md`, "Metadata that contradicts the layout".
    pub fn link_widths(&self) -> Option<&'static [usize]> {
        match self {
            Geometry::Graph => Some(&[2]),
            Geometry::Skeleton => Some(&[1, 2]),
            Geometry::Mesh => Some(&[3, 4]),
            Geometry::Line | Geometry::Polyline | Geometry::Streamline => Some(&[2]),
            Geometry::PointCloud | Geometry::Other(_) => None,
        }
    }

    /// Whether links are stored explicitly (graphs, skeletons, meshes, others).
    pub fn has_explicit_links(&self) -> bool {
        matches!(
            self,
            Geometry::Graph | Geometry::Skeleton | Geometry::Mesh | Geometry::Other(_)
        )
    }
}

/// The `link_width`s allowed for cross-level links (`links/±N`, `cross_chunk_links/±N`):
/// the reference's `(row here, row there)` pairs (2) and the specification's parent
/// references (1).
pub const CROSS_LEVEL_LINK_WIDTHS: &[usize] = &[1, 2];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_widths_follow_the_geometry() {
        assert_eq!(Geometry::Mesh.link_widths(), Some(&[3, 4][..]));
        assert_eq!(Geometry::Graph.link_widths(), Some(&[2][..]));
        assert_eq!(Geometry::Skeleton.link_widths(), Some(&[1, 2][..]));
        assert_eq!(Geometry::Streamline.link_widths(), Some(&[2][..]));
        assert_eq!(Geometry::PointCloud.link_widths(), None);
        assert_eq!(Geometry::parse("custom").link_widths(), None);
    }
}
