//! The reference's `__shard_*` packs (`docs/format-decisions.md`, "`__shard_*` packing"):
//! per-chunk blobs of one array group packed into 1-D `uint8` arrays named `__shard_%06d`,
//! each with a `shard_index` attribute `{"<blob name>": [offset, nbytes], …}`.
//!
//! A group's packs are listed and their documents read once, on the first miss in that group
//! (threads that miss at once wait for the one listing); the index keeps each pack's array
//! handle, so reading a packed blob is one chunk read of its pack (plus the slice). zv never
//! writes packs.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;
use zv_core::array::Array;
use zv_core::metadata::NodeMetadata;
use zv_core::node::NodePath;

use super::read::{read_whole, BlobData};
use super::{last_name, Blobs};
use crate::error::{Error, Result};
use crate::names::{SHARD_INDEX, SHARD_PREFIX};

/// Where one packed blob lies.
#[derive(Debug)]
struct Packed {
    pack: Arc<Array>,
    offset: u64,
    len: u64,
}

/// The packs of one array group: blob name → its place in a pack.
#[derive(Debug, Default)]
pub(super) struct ShardIndex {
    entries: HashMap<String, Packed>,
}

impl ShardIndex {
    /// The names of the packed blobs.
    pub(super) fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(String::as_str)
    }
}

impl Blobs {
    /// The `__shard_*` index of the array group `group`, built on first use (an empty index
    /// for a group without packs).
    pub(super) fn shard_index(&self, group: &NodePath) -> Result<Arc<ShardIndex>> {
        // one thread lists the group while the threads that missed with it wait: a level's
        // chunks are read in parallel, and the chunks without a blob of some array each miss
        self.shards
            .get_or_make(group, || self.read_shard_index(group).map(Arc::new))
    }

    /// Lists the `__shard_*` packs of `group` and reads their documents.
    fn read_shard_index(&self, group: &NodePath) -> Result<ShardIndex> {
        let mut index = ShardIndex::default();
        for prefix in self.store.list_dir(&group.prefix())?.prefixes {
            if !last_name(&prefix).is_some_and(|n| n.starts_with(SHARD_PREFIX)) {
                continue;
            }
            let pack = NodePath::new_lenient(prefix.as_str())
                .map_err(|e| Error::InvalidInput(e.to_string()))?;
            let Some(NodeMetadata::Array(mut meta)) = self.node_at(&pack)? else {
                continue;
            };
            let pack_key = pack.metadata_key();
            // taken out of the attributes: the handle does not need a second copy
            let Some(Value::Object(entries)) = meta.attributes.remove(SHARD_INDEX) else {
                return Err(Error::metadata(
                    pack_key.as_str(),
                    "a shard pack without `shard_index`",
                ));
            };
            let array = Arc::new(self.open_array(&pack, meta)?);
            for (name, loc) in entries {
                let pair = loc
                    .as_array()
                    .filter(|a| a.len() == 2)
                    .and_then(|a| Some((a[0].as_u64()?, a[1].as_u64()?)));
                let (offset, len) = pair.ok_or_else(|| {
                    Error::metadata(
                        pack_key.as_str(),
                        format!("shard_index entry {name}: {loc} is not [offset, nbytes]"),
                    )
                })?;
                let pack = array.clone();
                index.entries.insert(name, Packed { pack, offset, len });
            }
        }
        Ok(index)
    }

    /// The blob at `path` sliced out of its group's pack, or `None` if no pack holds it.
    pub(super) fn read_from_shard(&self, path: &NodePath) -> Result<Option<BlobData>> {
        let (Some(group), Some(name)) = (path.parent().filter(|g| !g.is_root()), path.name())
        else {
            return Ok(None);
        };
        let index = self.shard_index(&group)?;
        let Some(Packed { pack, offset, len }) = index.entries.get(name.as_str()) else {
            return Ok(None);
        };
        let pack_key = pack.path().metadata_key();
        let bytes = read_whole(pack)?.into_bytes(&pack_key)?;
        let span = usize::try_from(*offset)
            .ok()
            .zip(
                offset
                    .checked_add(*len)
                    .and_then(|e| usize::try_from(e).ok()),
            )
            .and_then(|(start, end)| bytes.get(start..end));
        let slice = span.ok_or_else(|| {
            Error::inconsistent(
                pack_key.as_str(),
                format!(
                    "shard_index entry {name} [{offset}, {len}] is outside the {}-byte pack",
                    bytes.len()
                ),
            )
        })?;
        Ok(Some(BlobData::Bytes(slice.to_vec())))
    }
}
