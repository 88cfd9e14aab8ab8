//! Validated store keys and prefixes.
//!
//! A [`StoreKey`] names one value in a store (`"foo/bar/zarr.json"`); a [`StorePrefix`] names a
//! "directory" of keys (`""` for the root, otherwise a key followed by `/`). Their only
//! constructors check the text, so everything downstream (and every store implementation) can
//! trust that a key never escapes the store root:
//!
//! - no empty key, no leading or trailing `/`, no empty segment (`a//b`);
//! - no `.` or `..` segment;
//! - no backslash and no NUL character.
//!
//! ```
//! use zv_core::key::{StoreKey, StorePrefix};
//! let key = StoreKey::new("arr/c/0/1")?;
//! assert_eq!(key.parent(), StorePrefix::new("arr/c/0/")?);
//! assert!(StoreKey::new("../etc/passwd").is_err());
//! assert!(StoreKey::new("/abs").is_err());
//! # Ok::<(), zv_core::key::KeyError>(())
//! ```

use std::fmt;

/// Why a key, prefix, node path or node name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {what} {text:?}: {reason}")]
pub struct KeyError {
    /// What was being parsed ("store key", "store prefix", "node path", "node name").
    pub what: &'static str,
    /// The refused text.
    pub text: String,
    /// Why it was refused.
    pub reason: &'static str,
}

impl KeyError {
    pub(crate) fn new(what: &'static str, text: &str, reason: &'static str) -> Self {
        Self {
            what,
            text: text.to_owned(),
            reason,
        }
    }
}

/// Checks one `/`-free segment of a key. Returns the reason it is refused, if any.
pub(crate) fn segment_problem(segment: &str) -> Option<&'static str> {
    if segment.is_empty() {
        Some("empty segment")
    } else if segment == "." || segment == ".." {
        Some("`.` and `..` segments are not allowed")
    } else if segment.contains('\\') {
        Some("backslash is not allowed")
    } else if segment.contains('\0') {
        Some("NUL is not allowed")
    } else {
        None
    }
}

/// Checks a whole key. Returns the reason it is refused, if any. A valid prefix followed by a
/// text that passes this check is a valid key, so keys below a prefix check only their tail.
pub(crate) fn key_problem(text: &str) -> Option<&'static str> {
    if text.is_empty() {
        return Some("empty key");
    }
    if text.starts_with('/') {
        return Some("leading `/` (keys are relative to the store root)");
    }
    if text.ends_with('/') {
        return Some("trailing `/`");
    }
    text.split('/').find_map(segment_problem)
}

/// A validated key of a store value. See the [module docs](self).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StoreKey(pub(crate) String);

impl StoreKey {
    /// Parses and validates a key.
    pub fn new(text: impl Into<String>) -> Result<Self, KeyError> {
        let text = text.into();
        match key_problem(&text) {
            Some(reason) => Err(KeyError::new("store key", &text, reason)),
            None => Ok(Self(text)),
        }
    }

    /// The key text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The prefix holding this key (`"a/b/c"` → `"a/b/"`, `"c"` → `""`).
    pub fn parent(&self) -> StorePrefix {
        match self.0.rfind('/') {
            Some(i) => StorePrefix(self.0[..=i].to_owned()),
            None => StorePrefix(String::new()),
        }
    }

    /// The last segment of the key.
    pub fn name(&self) -> &str {
        match self.0.rfind('/') {
            Some(i) => &self.0[i + 1..],
            None => &self.0,
        }
    }

    /// The `/`-separated segments of the key.
    pub fn segments(&self) -> impl Iterator<Item = &str> {
        self.0.split('/')
    }

    /// Whether the key lies under `prefix`.
    pub fn has_prefix(&self, prefix: &StorePrefix) -> bool {
        self.0.starts_with(prefix.as_str())
    }

    /// This key as a prefix (`"a/b"` → `"a/b/"`).
    pub fn to_prefix(&self) -> StorePrefix {
        StorePrefix(format!("{}/", self.0))
    }
}

impl fmt::Display for StoreKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for StoreKey {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl TryFrom<&str> for StoreKey {
    type Error = KeyError;
    fn try_from(value: &str) -> Result<Self, KeyError> {
        Self::new(value)
    }
}

impl std::str::FromStr for StoreKey {
    type Err = KeyError;
    fn from_str(s: &str) -> Result<Self, KeyError> {
        Self::new(s)
    }
}

/// A validated prefix: `""` (the root) or a valid key followed by `/`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct StorePrefix(pub(crate) String);

impl StorePrefix {
    /// The root prefix `""`.
    pub fn root() -> Self {
        Self(String::new())
    }

    /// Parses and validates a prefix.
    pub fn new(text: impl Into<String>) -> Result<Self, KeyError> {
        let text = text.into();
        if text.is_empty() {
            return Ok(Self(text));
        }
        let Some(stem) = text.strip_suffix('/') else {
            return Err(KeyError::new(
                "store prefix",
                &text,
                "a non-root prefix ends with `/`",
            ));
        };
        match key_problem(stem) {
            Some(reason) => Err(KeyError::new("store prefix", &text, reason)),
            None => Ok(Self(text)),
        }
    }

    /// The prefix text (`""` or ending with `/`).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether this is the root prefix.
    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// The key `prefix + name`, where `name` may itself contain `/`.
    pub fn key(&self, name: &str) -> Result<StoreKey, KeyError> {
        let text = format!("{}{}", self.0, name);
        // the prefix is valid: checking `name` checks the whole key
        match key_problem(name) {
            Some(reason) => Err(KeyError::new("store key", &text, reason)),
            None => Ok(StoreKey(text)),
        }
    }

    /// The prefix `prefix + name + "/"`.
    pub fn child(&self, name: &str) -> Result<StorePrefix, KeyError> {
        StorePrefix::new(format!("{}{}/", self.0, name))
    }

    /// The parent prefix (`"a/b/"` → `"a/"`); the root is its own parent.
    pub fn parent(&self) -> StorePrefix {
        let stem = self.0.strip_suffix('/').unwrap_or(&self.0);
        match stem.rfind('/') {
            Some(i) => StorePrefix(stem[..=i].to_owned()),
            None => StorePrefix(String::new()),
        }
    }
}

impl fmt::Display for StorePrefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for StorePrefix {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_that_escape_or_are_malformed_are_refused() {
        for bad in [
            "", "/", "/a", "a/", "a//b", "..", "a/../b", "./a", "a/.", "a\\b", "a\0b",
        ] {
            assert!(StoreKey::new(bad).is_err(), "{bad:?} accepted");
        }
        for good in [
            "a",
            "a/b",
            "zarr.json",
            "c/0/0",
            "-1.0.2",
            "__shard_000001",
            "a..b",
        ] {
            assert_eq!(StoreKey::new(good).unwrap().as_str(), good);
        }
    }

    #[test]
    fn prefixes() {
        assert!(StorePrefix::new("").unwrap().is_root());
        assert!(StorePrefix::new("a").is_err());
        assert!(StorePrefix::new("/").is_err());
        assert!(StorePrefix::new("a//").is_err());
        assert!(StorePrefix::new("../").is_err());
        let p = StorePrefix::new("a/b/").unwrap();
        assert_eq!(p.parent().as_str(), "a/");
        assert_eq!(p.parent().parent().as_str(), "");
        assert_eq!(p.key("zarr.json").unwrap().as_str(), "a/b/zarr.json");
        assert_eq!(p.child("c").unwrap().as_str(), "a/b/c/");
        assert!(p.key("../x").is_err());
    }

    #[test]
    fn key_parts() {
        let k = StoreKey::new("a/b/c").unwrap();
        assert_eq!(k.name(), "c");
        assert_eq!(k.parent().as_str(), "a/b/");
        assert_eq!(k.to_prefix().as_str(), "a/b/c/");
        assert!(k.has_prefix(&StorePrefix::new("a/").unwrap()));
        assert_eq!(StoreKey::new("c").unwrap().parent().as_str(), "");
    }
}
