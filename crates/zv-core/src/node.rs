//! Node paths and names of a Zarr v3 hierarchy.
//!
//! A [`NodePath`] is `/` (the root) or `/` followed by `/`-separated [`NodeName`]s. A node name
//! is non-empty, contains no `/`, is not `.` or `..`, and does not start with `__` (reserved by
//! the Zarr v3 specification).
//!
//! ```
//! use zv_core::node::{NodeName, NodePath};
//! let p = NodePath::new("/level/0")?;
//! assert_eq!(p.metadata_key().as_str(), "level/0/zarr.json");
//! assert_eq!(p.name().unwrap().as_str(), "0");
//! assert!(NodePath::new("/a/../b").is_err());
//! assert!(NodeName::new("__private").is_err());
//! # Ok::<(), zv_core::key::KeyError>(())
//! ```

use std::fmt;

use crate::key::{key_problem, segment_problem, KeyError, StoreKey, StorePrefix};

/// The name of the metadata document of every node.
pub const METADATA_NAME: &str = "zarr.json";

/// Checks a node name; `reserved_ok` lets names starting with `__` through.
fn name_problem(text: &str, reserved_ok: bool) -> Option<&'static str> {
    if let Some(reason) = segment_problem(text) {
        return Some(reason);
    }
    if text.contains('/') {
        Some("`/` is not allowed in a node name")
    } else if !reserved_ok && text.starts_with("__") {
        Some("names starting with `__` are reserved")
    } else {
        None
    }
}

/// A validated node name. See the [module docs](self).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeName(String);

impl NodeName {
    /// Parses and validates a node name.
    pub fn new(text: impl Into<String>) -> Result<Self, KeyError> {
        let text = text.into();
        match name_problem(&text, false) {
            Some(reason) => Err(KeyError::new("node name", &text, reason)),
            None => Ok(Self(text)),
        }
    }

    /// The name text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for NodeName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A validated absolute node path. See the [module docs](self).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodePath(String);

impl NodePath {
    /// The root path `/`.
    pub fn root() -> Self {
        Self("/".to_owned())
    }

    /// Parses and validates a node path. A missing leading `/` is added (`"a/b"` = `"/a/b"`);
    /// a trailing `/` is ignored.
    pub fn new(text: impl AsRef<str>) -> Result<Self, KeyError> {
        Self::parse(text.as_ref(), false)
    }

    /// Like [`NodePath::new`], but names reserved by the Zarr specification (starting with
    /// `__`) are accepted: other implementations write such nodes (the ZV reference's
    /// `__shard_*` packs), and a reader must be able to address them. Every rule that keeps a
    /// key inside the store still holds.
    pub fn new_lenient(text: impl AsRef<str>) -> Result<Self, KeyError> {
        Self::parse(text.as_ref(), true)
    }

    fn parse(text: &str, reserved_ok: bool) -> Result<Self, KeyError> {
        let trimmed = text.strip_prefix('/').unwrap_or(text);
        let trimmed = trimmed.strip_suffix('/').unwrap_or(trimmed);
        if trimmed.is_empty() {
            return Ok(Self::root());
        }
        for segment in trimmed.split('/') {
            if let Some(reason) = name_problem(segment, reserved_ok) {
                return Err(KeyError::new("node path", text, reason));
            }
        }
        let mut path = String::with_capacity(trimmed.len() + 1);
        path.push('/');
        path.push_str(trimmed);
        Ok(Self(path))
    }

    /// The path text (`/` or `/a/b`).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether this is the root.
    pub fn is_root(&self) -> bool {
        self.0 == "/"
    }

    /// The last name of the path (`None` for the root).
    pub fn name(&self) -> Option<NodeName> {
        if self.is_root() {
            None
        } else {
            self.0.rsplit('/').next().map(|s| NodeName(s.to_owned()))
        }
    }

    /// The names from the root down.
    pub fn names(&self) -> impl Iterator<Item = NodeName> + '_ {
        self.0
            .split('/')
            .filter(|s| !s.is_empty())
            .map(|s| NodeName(s.to_owned()))
    }

    /// The parent path (`None` for the root).
    pub fn parent(&self) -> Option<NodePath> {
        if self.is_root() {
            return None;
        }
        match self.0.rfind('/') {
            Some(0) | None => Some(Self::root()),
            Some(i) => Some(Self(self.0[..i].to_owned())),
        }
    }

    /// The path of the child `name`.
    pub fn child(&self, name: &NodeName) -> NodePath {
        if self.is_root() {
            Self(format!("/{}", name.0))
        } else {
            Self(format!("{}/{}", self.0, name.0))
        }
    }

    /// The path of a descendant given as a relative path (`"a/b"`).
    pub fn join(&self, relative: &str) -> Result<NodePath, KeyError> {
        let rel = relative.strip_prefix('/').unwrap_or(relative);
        if self.is_root() {
            NodePath::new(rel)
        } else if rel.is_empty() {
            Ok(self.clone())
        } else {
            NodePath::new(format!("{}/{}", self.0, rel))
        }
    }

    /// The store prefix of the node's keys (`""` for the root, `"a/b/"` for `/a/b`).
    pub fn prefix(&self) -> StorePrefix {
        // The names were validated by the constructor.
        StorePrefix(self.prefixed(""))
    }

    /// `prefix + name` as text, in one allocation (paths are built on every node access).
    fn prefixed(&self, name: &str) -> String {
        let names = self.0.get(1..).unwrap_or_default();
        let mut text = String::with_capacity(names.len() + 1 + name.len());
        if !names.is_empty() {
            text.push_str(names);
            text.push('/');
        }
        text.push_str(name);
        text
    }

    /// The key of the node's `zarr.json`.
    pub fn metadata_key(&self) -> StoreKey {
        StoreKey(self.prefixed(METADATA_NAME))
    }

    /// The key `prefix + relative` for a key below this node (`relative` is validated).
    pub fn key(&self, relative: &str) -> Result<StoreKey, KeyError> {
        match key_problem(relative) {
            Some(reason) => Err(KeyError::new("store key", &self.prefixed(relative), reason)),
            None => Ok(StoreKey(self.prefixed(relative))),
        }
    }
}

impl fmt::Display for NodePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        assert!(NodePath::new("/").unwrap().is_root());
        assert!(NodePath::new("").unwrap().is_root());
        let p = NodePath::new("a/b/").unwrap();
        assert_eq!(p.as_str(), "/a/b");
        assert_eq!(p.parent().unwrap().as_str(), "/a");
        assert_eq!(p.parent().unwrap().parent().unwrap().as_str(), "/");
        assert_eq!(p.prefix().as_str(), "a/b/");
        assert_eq!(p.metadata_key().as_str(), "a/b/zarr.json");
        assert_eq!(NodePath::root().metadata_key().as_str(), "zarr.json");
        assert_eq!(p.names().count(), 2);
        assert_eq!(p.join("c/d").unwrap().as_str(), "/a/b/c/d");
        assert_eq!(p.key("c/0").unwrap().as_str(), "a/b/c/0");
        assert_eq!(NodePath::root().key("c/0").unwrap().as_str(), "c/0");
        assert_eq!(NodePath::root().prefix().as_str(), "");
        for bad in ["", "/c", "c/", "c//0", "../x", "c/./0"] {
            assert!(p.key(bad).is_err(), "{bad:?}");
            assert!(NodePath::root().key(bad).is_err(), "{bad:?}");
        }
        for bad in ["/a//b", "/a/../b", "/..", "/a/__x", "/a/./b", "/a\\b"] {
            assert!(NodePath::new(bad).is_err(), "{bad:?}");
        }
        // the lenient form only lets reserved names through
        let packed = NodePath::new_lenient("a/__shard_000001").unwrap();
        assert_eq!(packed.metadata_key().as_str(), "a/__shard_000001/zarr.json");
        assert_eq!(packed.name().unwrap().as_str(), "__shard_000001");
        for bad in ["/a//b", "/a/../b", "/..", "/a/./b", "/a\\b"] {
            assert!(NodePath::new_lenient(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn names() {
        for bad in ["", ".", "..", "a/b", "__x"] {
            assert!(NodeName::new(bad).is_err(), "{bad:?}");
        }
        assert!(NodeName::new("_x").is_ok());
        assert!(NodeName::new("0.1.-2").is_ok());
    }
}
