//! Zarr v3 groups and the hierarchy: create, open, list children, attributes.
//!
//! Stores written by some implementations lack `zarr.json` for intermediate groups; such a
//! prefix is an *implicit* group: [`Group::open_implicit`] opens it, and
//! [`Group::children`] reports it as [`NodeKind::ImplicitGroup`].

use std::sync::Arc;

use bytes::Bytes;

use crate::array::{read_node_metadata, Array};
use crate::error::{Error, Result};
use crate::metadata::{GroupMetadata, JsonObject, NodeMetadata, MAX_METADATA_BYTES};
use crate::node::{NodePath, METADATA_NAME};
use crate::store::Store;

/// The kind of a node found in a listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    /// A group with a `zarr.json`.
    Group,
    /// An array.
    Array,
    /// A prefix with descendants but no `zarr.json`.
    ImplicitGroup,
}

/// A child of a group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildNode {
    /// The child's name (as found in the store; names reserved by Zarr, such as `__x`, are
    /// listed too).
    pub name: String,
    /// The child's kind.
    pub kind: NodeKind,
}

/// A Zarr v3 group in a store.
#[derive(Debug, Clone)]
pub struct Group {
    store: Arc<dyn Store>,
    path: NodePath,
    metadata: GroupMetadata,
    implicit: bool,
}

impl Group {
    /// Creates a group with `attributes`, writing its `zarr.json` (replacing the document of a
    /// group already there; an array there is an error).
    pub fn create(store: Arc<dyn Store>, path: &NodePath, attributes: JsonObject) -> Result<Self> {
        let metadata = match read_node_metadata(store.as_ref(), path)? {
            Some(NodeMetadata::Array(_)) => {
                return Err(Error::NodeKind {
                    path: path.to_string(),
                    expected: "group",
                    actual: "array",
                })
            }
            Some(NodeMetadata::Group(mut g)) => {
                g.attributes = attributes;
                g
            }
            None => GroupMetadata::new(attributes),
        };
        let group = Self {
            store,
            path: path.clone(),
            metadata,
            implicit: false,
        };
        group.write_metadata()?;
        Ok(group)
    }

    /// Creates the group at `path` (empty attributes) and every ancestor that has no
    /// `zarr.json`, so that the whole path is explicit. Existing groups are left unchanged.
    pub fn create_all(store: Arc<dyn Store>, path: &NodePath) -> Result<Self> {
        let mut chain = vec![path.clone()];
        let mut cur = path.parent();
        while let Some(p) = cur {
            cur = p.parent();
            chain.push(p);
        }
        let mut last = None;
        for p in chain.into_iter().rev() {
            last = Some(match read_node_metadata(store.as_ref(), &p)? {
                Some(NodeMetadata::Group(metadata)) => Self {
                    store: store.clone(),
                    path: p,
                    metadata,
                    implicit: false,
                },
                Some(NodeMetadata::Array(_)) => {
                    return Err(Error::NodeKind {
                        path: p.to_string(),
                        expected: "group",
                        actual: "array",
                    })
                }
                None => Self::create(store.clone(), &p, JsonObject::new())?,
            });
        }
        last.ok_or_else(|| Error::NodeNotFound {
            path: path.to_string(),
            key: path.metadata_key().to_string(),
        })
    }

    /// Opens the group at `path`; its `zarr.json` must exist.
    pub fn open(store: Arc<dyn Store>, path: &NodePath) -> Result<Self> {
        match read_node_metadata(store.as_ref(), path)? {
            Some(NodeMetadata::Group(metadata)) => Ok(Self {
                store,
                path: path.clone(),
                metadata,
                implicit: false,
            }),
            Some(NodeMetadata::Array(_)) => Err(Error::NodeKind {
                path: path.to_string(),
                expected: "group",
                actual: "array",
            }),
            None => Err(Error::NodeNotFound {
                path: path.to_string(),
                key: path.metadata_key().to_string(),
            }),
        }
    }

    /// Opens the group at `path`, or an implicit group (empty attributes) if there is no
    /// `zarr.json` but keys exist below the path.
    pub fn open_implicit(store: Arc<dyn Store>, path: &NodePath) -> Result<Self> {
        match Self::open(store.clone(), path) {
            Err(Error::NodeNotFound { .. }) => {
                let listing = store.list_dir(&path.prefix())?;
                if listing.keys.is_empty() && listing.prefixes.is_empty() {
                    return Err(Error::NodeNotFound {
                        path: path.to_string(),
                        key: path.metadata_key().to_string(),
                    });
                }
                Ok(Self {
                    store,
                    path: path.clone(),
                    metadata: GroupMetadata::default(),
                    implicit: true,
                })
            }
            other => other,
        }
    }

    fn write_metadata(&self) -> Result<()> {
        self.store.set(
            &self.path.metadata_key(),
            Bytes::from(self.metadata.to_json_pretty()),
        )?;
        Ok(())
    }

    /// The node path.
    pub fn path(&self) -> &NodePath {
        &self.path
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// Whether the group has no `zarr.json`.
    pub fn is_implicit(&self) -> bool {
        self.implicit
    }

    /// The metadata.
    pub fn metadata(&self) -> &GroupMetadata {
        &self.metadata
    }

    /// The user attributes.
    pub fn attributes(&self) -> &JsonObject {
        &self.metadata.attributes
    }

    /// Replaces the attributes and rewrites `zarr.json` atomically (an implicit group becomes
    /// explicit).
    pub fn set_attributes(&mut self, attributes: JsonObject) -> Result<()> {
        self.metadata.attributes = attributes;
        self.write_metadata()?;
        self.implicit = false;
        Ok(())
    }

    /// Updates the attributes with `f` and rewrites `zarr.json` atomically.
    pub fn update_attributes(&mut self, f: impl FnOnce(&mut JsonObject)) -> Result<()> {
        let mut attributes = self.metadata.attributes.clone();
        f(&mut attributes);
        self.set_attributes(attributes)
    }

    /// The children of the group, sorted by name: every child prefix that holds a
    /// `zarr.json` or any other key.
    pub fn children(&self) -> Result<Vec<ChildNode>> {
        let listing = self.store.list_dir(&self.path.prefix())?;
        let mut out = Vec::new();
        for prefix in listing.prefixes {
            let name = prefix
                .as_str()
                .trim_end_matches('/')
                .rsplit('/')
                .next()
                .unwrap_or_default()
                .to_owned();
            let key = prefix.key(METADATA_NAME)?;
            let kind = match self.store.get_capped(&key, MAX_METADATA_BYTES)? {
                Some(bytes) => match NodeMetadata::from_json(&bytes) {
                    Ok(NodeMetadata::Array(_)) => NodeKind::Array,
                    Ok(NodeMetadata::Group(_)) => NodeKind::Group,
                    Err(source) => {
                        return Err(Error::Metadata {
                            key: key.to_string(),
                            source,
                        })
                    }
                },
                None => NodeKind::ImplicitGroup,
            };
            out.push(ChildNode { name, kind });
        }
        Ok(out)
    }
}

/// An opened node of either kind.
#[derive(Debug, Clone)]
pub enum Node {
    /// An array.
    Array(Box<Array>),
    /// A group (possibly implicit).
    Group(Group),
}

impl Node {
    /// Opens the node at `path`; a prefix without `zarr.json` but with keys below it opens as
    /// an implicit group.
    pub fn open(store: Arc<dyn Store>, path: &NodePath) -> Result<Self> {
        match read_node_metadata(store.as_ref(), path)? {
            Some(NodeMetadata::Array(meta)) => {
                Array::from_metadata(store, path, meta).map(|a| Node::Array(Box::new(a)))
            }
            Some(NodeMetadata::Group(metadata)) => Ok(Node::Group(Group {
                store,
                path: path.clone(),
                metadata,
                implicit: false,
            })),
            None => Group::open_implicit(store, path).map(Node::Group),
        }
    }
}
