//! Consistency of a level's per-chunk arrays: which arrays hold per-chunk blobs, and that
//! none has a blob for a chunk without vertices (an orphan, as a deleted `vertices` blob
//! leaves behind).

use std::collections::BTreeSet;

use super::Level;
use crate::blob::join;
use crate::error::{Error, Result};
use crate::metadata::ChunkKey;
use crate::names;

/// Which link deltas [`Level::chunk_arrays`] lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deltas {
    /// Every `links/<delta>` and `link_attributes/<name>/<delta>` folder.
    All,
    /// `links/0` and `link_attributes/<name>/0` only (whether or not they exist).
    Zero,
}

impl Level {
    /// The per-chunk arrays of the level, as paths inside it: `vertices`, `vertex_fragments`,
    /// `link_fragments`, `vertex_attributes/<name>`, `links/<delta>` and
    /// `link_attributes/<name>/<delta>`, in that order. An array may not exist.
    pub fn chunk_arrays(&self, deltas: Deltas) -> Result<Vec<String>> {
        let mut arrays: Vec<String> = [
            names::VERTICES,
            names::VERTEX_FRAGMENTS,
            names::LINK_FRAGMENTS,
        ]
        .map(str::to_owned)
        .to_vec();
        for n in self.vertex_attribute_names()? {
            arrays.push(join(&[names::VERTEX_ATTRIBUTES, &n]));
        }
        let deltas_of = |folder: &str| -> Result<Vec<String>> {
            Ok(match deltas {
                Deltas::All => self.children_of(folder)?,
                Deltas::Zero => vec!["0".to_owned()],
            })
        };
        for d in deltas_of(names::LINKS)? {
            arrays.push(join(&[names::LINKS, &d]));
        }
        for n in self.link_attribute_names()? {
            let folder = join(&[names::LINK_ATTRIBUTES, &n]);
            for d in deltas_of(&folder)? {
                arrays.push(join(&[&folder, &d]));
            }
        }
        Ok(arrays)
    }

    /// Checks that every per-chunk array only has blobs for chunks that have vertices (a
    /// deleted `vertices` blob shows up here), naming the missing key.
    pub fn check_chunk_arrays(&self) -> Result<()> {
        let vertices: BTreeSet<ChunkKey> = self.chunk_keys()?.into_iter().collect();
        for a in self.chunk_arrays(Deltas::Zero)? {
            for k in self.keys_of(&a)? {
                if !vertices.contains(&k) {
                    return Err(Error::Missing {
                        key: self
                            .blobs
                            .missing_key(&self.p(&[names::VERTICES, &k.to_string()])),
                        what: format!(
                            "the vertices of chunk {k} (`{}` has a blob for it)",
                            self.p(&[&a, &k.to_string()])
                        ),
                    });
                }
            }
        }
        Ok(())
    }
}
