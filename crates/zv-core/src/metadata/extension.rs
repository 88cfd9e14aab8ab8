//! Named extension points (`{"name": …, "configuration": {…}}`): codecs, storage
//! transformers, chunk grids and chunk key encodings as they stand in `zarr.json`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::JsonObject;

/// A named extension point with optional configuration: a codec, a storage transformer, a
/// chunk grid. Accepts both `"name"` and `{"name": …, "configuration": {…}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "ExtensionRepr")]
pub struct ExtensionMetadata {
    /// The registered name (`"blosc"`, `"bytes"`, …).
    pub name: String,
    /// The configuration object, if present.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub configuration: Option<JsonObject>,
    /// `must_understand`, if present (absent means `true`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub must_understand: Option<bool>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum ExtensionRepr {
    Name(String),
    Full {
        name: String,
        #[serde(default)]
        configuration: Option<JsonObject>,
        #[serde(default)]
        must_understand: Option<bool>,
    },
}

impl From<ExtensionRepr> for ExtensionMetadata {
    fn from(r: ExtensionRepr) -> Self {
        match r {
            ExtensionRepr::Name(name) => Self {
                name,
                configuration: None,
                must_understand: None,
            },
            ExtensionRepr::Full {
                name,
                configuration,
                must_understand,
            } => Self {
                name,
                configuration,
                must_understand,
            },
        }
    }
}

impl ExtensionMetadata {
    /// An extension with a name and no configuration.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            configuration: None,
            must_understand: None,
        }
    }

    /// An extension with a configuration object (`value` must be a JSON object; anything
    /// else gives an empty configuration).
    pub fn with_configuration(name: impl Into<String>, value: Value) -> Self {
        Self {
            name: name.into(),
            configuration: match value {
                Value::Object(m) => Some(m),
                _ => Some(Map::new()),
            },
            must_understand: None,
        }
    }

    /// Whether a reader may ignore this extension when it does not know it.
    pub fn may_ignore(&self) -> bool {
        self.must_understand == Some(false)
    }

    /// The configuration, or an empty object.
    pub fn configuration_or_empty(&self) -> JsonObject {
        self.configuration.clone().unwrap_or_default()
    }
}
