//! Plugin registries: codecs by name and stores by URL scheme, collected with `inventory`.
//!
//! A plugin crate submits one record per codec or store:
//!
//! ```text
//! inventory::submit! {
//!     zv_core::plugin::CodecPlugin::new("my-codec", zv_core::codec::CodecKind::BytesToBytes, create_my_codec)
//! }
//! ```
//!
//! `inventory` only sees crates that are linked into the final binary: a crate that relies on
//! a plugin crate's registrations must reference it (`use zv_codecs as _;`).
//!
//! A codec that a build leaves out can register as [`CodecPlugin::disabled`], so that asking
//! for it says which Cargo feature enables it instead of "unknown codec".

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};

use crate::codec::{ChunkRepresentation, Codec, CodecError, CodecKind};
use crate::metadata::ExtensionMetadata;
use crate::store::{Store, StoreError};

/// Builds a codec from its `zarr.json` entry and the chunk representation it will see.
pub type CodecFactory = fn(&ExtensionMetadata, &ChunkRepresentation) -> Result<Codec, CodecError>;

/// How a registered codec is provided.
#[derive(Debug, Clone, Copy)]
pub enum CodecProvider {
    /// Compiled in.
    Available(CodecFactory),
    /// Left out of this build; enabled by `feature` of crate `krate`.
    Disabled {
        /// The Cargo feature.
        feature: &'static str,
        /// The crate that has the feature.
        krate: &'static str,
    },
}

/// A registered codec.
#[derive(Debug)]
pub struct CodecPlugin {
    /// The codec name in `zarr.json`.
    pub name: &'static str,
    /// The codec kind.
    pub kind: CodecKind,
    /// The factory, or why there is none.
    pub provider: CodecProvider,
}

impl CodecPlugin {
    /// A codec compiled into this build.
    pub const fn new(name: &'static str, kind: CodecKind, factory: CodecFactory) -> Self {
        Self {
            name,
            kind,
            provider: CodecProvider::Available(factory),
        }
    }

    /// A codec left out of this build, enabled by `feature` of `krate`.
    pub const fn disabled(
        name: &'static str,
        kind: CodecKind,
        feature: &'static str,
        krate: &'static str,
    ) -> Self {
        Self {
            name,
            kind,
            provider: CodecProvider::Disabled { feature, krate },
        }
    }

    /// Whether the codec is compiled in.
    pub fn is_available(&self) -> bool {
        matches!(self.provider, CodecProvider::Available(_))
    }
}

inventory::collect!(CodecPlugin);

/// Every registered codec (available or disabled), in link order.
pub fn codec_plugins() -> impl Iterator<Item = &'static CodecPlugin> {
    inventory::iter::<CodecPlugin>.into_iter()
}

/// The names of the available codecs, sorted (duplicates kept, so that a test can see them).
pub fn registered_codec_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = codec_plugins()
        .filter(|p| p.is_available())
        .map(|p| p.name)
        .collect();
    names.sort_unstable();
    names
}

/// Sorted registered names for an error message, owned, each once.
fn distinct(sorted: Vec<&str>) -> Vec<String> {
    let mut names: Vec<String> = sorted.into_iter().map(str::to_owned).collect();
    names.dedup();
    names
}

/// Looks up a codec by name. An available registration wins over a disabled one.
pub fn codec_plugin(name: &str) -> Result<&'static CodecPlugin, CodecError> {
    let mut disabled = None;
    for p in codec_plugins().filter(|p| p.name == name) {
        if p.is_available() {
            return Ok(p);
        }
        disabled = Some(p);
    }
    match disabled {
        Some(CodecPlugin {
            provider: CodecProvider::Disabled { feature, krate },
            ..
        }) => Err(CodecError::Disabled {
            name: name.to_owned(),
            feature,
            krate,
        }),
        _ => Err(CodecError::Unknown {
            name: name.to_owned(),
            registered: distinct(registered_codec_names()),
        }),
    }
}

/// Builds the codec named by `metadata` for chunks of representation `repr`.
pub fn create_codec(
    metadata: &ExtensionMetadata,
    repr: &ChunkRepresentation,
) -> Result<Codec, CodecError> {
    let plugin = codec_plugin(&metadata.name)?;
    match plugin.provider {
        CodecProvider::Available(factory) => {
            let codec = factory(metadata, repr)?;
            if codec.kind() != plugin.kind {
                return Err(CodecError::Other {
                    codec: metadata.name.clone(),
                    message: format!(
                        "registered as {:?} but built a {:?} codec",
                        plugin.kind,
                        codec.kind()
                    ),
                });
            }
            Ok(codec)
        }
        CodecProvider::Disabled { feature, krate } => Err(CodecError::Disabled {
            name: metadata.name.clone(),
            feature,
            krate,
        }),
    }
}

/// A parsed store URL: `scheme://rest`, or a plain path (scheme `file`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreUrl {
    /// The scheme (`file`, `memory`, …).
    pub scheme: String,
    /// What follows `scheme://` (for `file`, the percent-decoded path).
    pub location: String,
    /// The original text.
    pub original: String,
}

impl StoreUrl {
    /// Parses `scheme://location` or a plain path. `file://` locations are percent-decoded.
    pub fn parse(text: &str) -> Result<Self, StoreError> {
        let bad = |reason: &str| StoreError::Open {
            url: text.to_owned(),
            reason: reason.to_owned(),
        };
        if let Some((scheme, rest)) = text.split_once("://") {
            let valid_scheme = !scheme.is_empty()
                && scheme.as_bytes()[0].is_ascii_alphabetic()
                && scheme
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'-' || b == b'.');
            if valid_scheme {
                let scheme = scheme.to_ascii_lowercase();
                let location = if scheme == "file" {
                    let decoded =
                        percent_decode(rest).ok_or_else(|| bad("invalid percent-encoding"))?;
                    // file:///abs/path has an empty authority; file://localhost/x too.
                    match decoded.strip_prefix("localhost") {
                        Some(p) if p.starts_with('/') => p.to_owned(),
                        _ => decoded,
                    }
                } else {
                    rest.to_owned()
                };
                return Ok(Self {
                    scheme,
                    location,
                    original: text.to_owned(),
                });
            }
        }
        if text.is_empty() {
            return Err(bad("empty path"));
        }
        Ok(Self {
            scheme: "file".to_owned(),
            location: text.to_owned(),
            original: text.to_owned(),
        })
    }
}

fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let s = std::str::from_utf8(hex).ok()?;
            out.push(u8::from_str_radix(s, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Opens a store for a parsed URL.
pub type StoreOpener = fn(&StoreUrl) -> Result<Arc<dyn Store>, StoreError>;

/// A registered store kind.
#[derive(Debug)]
pub struct StorePlugin {
    /// The URL scheme it handles.
    pub scheme: &'static str,
    /// A one-line description.
    pub description: &'static str,
    /// Opens (or creates) a store.
    pub open: StoreOpener,
}

impl StorePlugin {
    /// A store plugin for `scheme`.
    pub const fn new(scheme: &'static str, description: &'static str, open: StoreOpener) -> Self {
        Self {
            scheme,
            description,
            open,
        }
    }
}

inventory::collect!(StorePlugin);

/// Every registered store plugin.
pub fn store_plugins() -> impl Iterator<Item = &'static StorePlugin> {
    inventory::iter::<StorePlugin>.into_iter()
}

/// The registered store schemes, sorted (duplicates kept, so that a test can see them).
pub fn registered_store_schemes() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = store_plugins().map(|p| p.scheme).collect();
    v.sort_unstable();
    v
}

/// Opens a store by URL (`file:///path`, a plain path, `memory://name`, or any registered
/// scheme).
pub fn open_store(url: &str) -> Result<Arc<dyn Store>, StoreError> {
    let parsed = StoreUrl::parse(url)?;
    match store_plugins().find(|p| p.scheme == parsed.scheme) {
        Some(p) => (p.open)(&parsed),
        None => Err(StoreError::UnknownScheme {
            scheme: parsed.scheme,
            registered: distinct(registered_store_schemes()),
        }),
    }
}

/// A process-wide table of named objects, for stores such as `memory://name` that should
/// return the same instance each time a name is opened.
#[derive(Debug, Default)]
pub struct NamedInstances<T> {
    table: OnceLock<Mutex<BTreeMap<String, Arc<T>>>>,
}

impl<T> NamedInstances<T> {
    /// An empty table (usable in a `static`).
    pub const fn new() -> Self {
        Self {
            table: OnceLock::new(),
        }
    }

    /// The instance named `name`, created with `make` on first use.
    pub fn get_or_insert_with(&self, name: &str, make: impl FnOnce() -> T) -> Arc<T> {
        let table = self.table.get_or_init(|| Mutex::new(BTreeMap::new()));
        let mut guard = match table.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        guard
            .entry(name.to_owned())
            .or_insert_with(|| Arc::new(make()))
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let u = StoreUrl::parse("file:///tmp/my%20data").unwrap();
        assert_eq!(
            (u.scheme.as_str(), u.location.as_str()),
            ("file", "/tmp/my data")
        );
        let u = StoreUrl::parse("/tmp/x.zarr").unwrap();
        assert_eq!(
            (u.scheme.as_str(), u.location.as_str()),
            ("file", "/tmp/x.zarr")
        );
        let u = StoreUrl::parse("relative/dir").unwrap();
        assert_eq!(u.scheme, "file");
        let u = StoreUrl::parse("memory://scratch").unwrap();
        assert_eq!(
            (u.scheme.as_str(), u.location.as_str()),
            ("memory", "scratch")
        );
        let u = StoreUrl::parse("file://localhost/a").unwrap();
        assert_eq!(u.location, "/a");
        assert!(StoreUrl::parse("file:///bad%zz").is_err());
        assert!(StoreUrl::parse("").is_err());
    }

    #[test]
    fn unknown_codec_lists_registered() {
        let err = codec_plugin("definitely-not-a-codec").unwrap_err();
        assert!(matches!(err, CodecError::Unknown { .. }));
    }

    #[test]
    fn unknown_scheme_is_an_error() {
        let err = open_store("s3://bucket/x").err().unwrap();
        assert!(err
            .to_string()
            .contains("no store is registered for scheme `s3`"));
    }
}
