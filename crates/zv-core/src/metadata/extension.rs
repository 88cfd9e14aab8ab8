//! Named extension points (`{"name": …, "configuration": {…}}`): codecs, storage
//! transformers, chunk grids and chunk key encodings as they stand in `zarr.json`.

use serde::Serialize;
use serde_json::{Map, Value};

use super::JsonObject;

/// A named extension point with optional configuration: a codec, a storage transformer, a
/// chunk grid. Accepts both `"name"` and `{"name": …, "configuration": {…}}`.
///
/// Deserialized by hand (module `de` below) rather than as an untagged enum: serde tries an
/// untagged enum's forms one after the other on a buffered copy, building an error for each
/// form that fails, and every codec of every `zarr.json` read paid for that.
#[derive(Debug, Clone, PartialEq, Serialize)]
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

mod de {
    use std::fmt;

    use serde::de::{Error, IgnoredAny, MapAccess, Visitor};
    use serde::{Deserialize, Deserializer};

    use super::{ExtensionMetadata, JsonObject};

    impl<'de> Deserialize<'de> for ExtensionMetadata {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_any(Extension)
        }
    }

    /// Reads either form of an extension point.
    struct Extension;

    impl<'de> Visitor<'de> for Extension {
        type Value = ExtensionMetadata;

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an extension name or an object with a \"name\"")
        }

        fn visit_str<E: Error>(self, name: &str) -> Result<Self::Value, E> {
            Ok(ExtensionMetadata::new(name))
        }

        fn visit_string<E: Error>(self, name: String) -> Result<Self::Value, E> {
            Ok(ExtensionMetadata::new(name))
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut name: Option<String> = None;
            let mut configuration: Option<Option<JsonObject>> = None;
            let mut must_understand: Option<Option<bool>> = None;
            while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                match key.as_ref() {
                    "name" if name.is_some() => return Err(A::Error::duplicate_field("name")),
                    "name" => name = Some(map.next_value()?),
                    "configuration" if configuration.is_some() => {
                        return Err(A::Error::duplicate_field("configuration"));
                    }
                    "configuration" => configuration = Some(map.next_value()?),
                    "must_understand" if must_understand.is_some() => {
                        return Err(A::Error::duplicate_field("must_understand"));
                    }
                    "must_understand" => must_understand = Some(map.next_value()?),
                    // other members are ignored, as they were by the derived form
                    _ => {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
            }
            Ok(ExtensionMetadata {
                name: name.ok_or_else(|| A::Error::missing_field("name"))?,
                configuration: configuration.flatten(),
                must_understand: must_understand.flatten(),
            })
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

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::{json, Value};

    use super::*;

    /// The derived form this module replaced: an untagged enum of the two forms.
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Derived {
        Name(String),
        Full {
            name: String,
            #[serde(default)]
            configuration: Option<JsonObject>,
            #[serde(default)]
            must_understand: Option<bool>,
        },
    }

    fn derived(v: &Value) -> Option<ExtensionMetadata> {
        Some(match Derived::deserialize(v).ok()? {
            Derived::Name(name) => ExtensionMetadata::new(name),
            Derived::Full {
                name,
                configuration,
                must_understand,
            } => ExtensionMetadata {
                name,
                configuration,
                must_understand,
            },
        })
    }

    #[test]
    fn the_hand_written_form_reads_what_the_derived_form_read() {
        let cases = [
            json!("bytes"),
            json!(""),
            json!({"name": "bytes"}),
            json!({"name": "bytes", "configuration": {"endian": "little"}}),
            json!({"name": "blosc", "configuration": null}),
            json!({"name": "x", "must_understand": false}),
            json!({"name": "x", "must_understand": null, "configuration": {}}),
            json!({"name": "x", "other": [1, 2, {"a": null}], "configuration": {"k": 1}}),
            json!({"configuration": {"k": 1}}),
            json!({"name": 3}),
            json!({"name": "x", "configuration": [1]}),
            json!({"name": "x", "configuration": "s"}),
            json!({"name": "x", "must_understand": "no"}),
            json!({}),
            json!(3),
            json!(null),
            json!(true),
            json!(["bytes"]),
        ];
        for v in &cases {
            let ours = ExtensionMetadata::deserialize(v).ok();
            assert_eq!(ours, derived(v), "{v}");
            // from text too (borrowed and owned strings)
            let text = v.to_string();
            let parsed: Option<ExtensionMetadata> = serde_json::from_str(&text).ok();
            assert_eq!(parsed, derived(v), "{text}");
        }
    }

    #[test]
    fn a_repeated_member_is_an_error_naming_it() {
        for (text, field) in [
            (r#"{"name": "a", "name": "b"}"#, "name"),
            (
                r#"{"name": "a", "configuration": {}, "configuration": {}}"#,
                "configuration",
            ),
            (
                r#"{"name": "a", "must_understand": true, "must_understand": false}"#,
                "must_understand",
            ),
        ] {
            let err = serde_json::from_str::<ExtensionMetadata>(text).unwrap_err();
            assert!(
                err.to_string()
                    .contains(&format!("duplicate field `{field}`")),
                "{err}"
            );
        }
        let err =
            serde_json::from_str::<ExtensionMetadata>(r#"{"configuration": {}}"#).unwrap_err();
        assert!(err.to_string().contains("missing field `name`"), "{err}");
    }

    #[test]
    fn both_forms_serialize_back_as_they_were_read() {
        for v in [
            json!({"name": "bytes", "configuration": {"endian": "little"}}),
            json!({"name": "x", "must_understand": false}),
        ] {
            let e = ExtensionMetadata::deserialize(&v).unwrap();
            assert_eq!(serde_json::to_value(&e).unwrap(), v);
        }
        let e = ExtensionMetadata::deserialize(&json!("bytes")).unwrap();
        assert_eq!(serde_json::to_value(&e).unwrap(), json!({"name": "bytes"}));
    }
}
