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

    /// Whether links are stored explicitly (graphs, skeletons, meshes, others).
    pub fn has_explicit_links(&self) -> bool {
        matches!(
            self,
            Geometry::Graph | Geometry::Skeleton | Geometry::Mesh | Geometry::Other(_)
        )
    }
}
