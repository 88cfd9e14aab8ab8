//! A `zarr.json` parsed with some user attributes left as JSON text
//! ([`NodeMetadata::from_json_deferring`](super::NodeMetadata::from_json_deferring)).
//!
//! Written by hand on serde's visitor API: serde_json parses a document into a `Value` or
//! scans a part of it as `RawValue`, but has no way to do the one for a document and the
//! other for a few of its nested members.

use std::fmt;

use serde::de::{DeserializeSeed, MapAccess, Visitor};
use serde::Deserializer;
use serde_json::value::RawValue;
use serde_json::Value;

use super::JsonObject;

/// User attributes left unparsed: each key with its JSON text, in document order.
pub type DeferredAttributes = Vec<(String, Box<RawValue>)>;

/// The document `bytes` as an object, its `attributes` members named in `keys` left as
/// text; `None` if `bytes` is not one JSON object (the caller reports it).
pub(super) fn parse_deferring(
    bytes: &[u8],
    keys: &[&str],
) -> Option<(JsonObject, DeferredAttributes)> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let parsed = Document { keys }.deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(parsed)
}

/// The top level: every member parsed, `attributes` through [`Attributes`].
struct Document<'k> {
    keys: &'k [&'k str],
}

impl<'de> DeserializeSeed<'de> for Document<'_> {
    type Value = (JsonObject, DeferredAttributes);

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Document<'_> {
    type Value = (JsonObject, DeferredAttributes);

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = JsonObject::new();
        let mut deferred = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            if key == "attributes" {
                // an object of attributes, or any other value for the document's own check
                match map.next_value_seed(Attributes { keys: self.keys })? {
                    (Value::Object(a), d) => {
                        out.insert(key, Value::Object(a));
                        deferred = d;
                    }
                    (other, _) => {
                        out.insert(key, other);
                        deferred = Vec::new();
                    }
                }
            } else {
                let value: Value = map.next_value()?;
                out.insert(key, value);
            }
        }
        Ok((out, deferred))
    }
}

/// The `attributes` member: an object whose members named in `keys` are kept as text (a
/// key given twice keeps its last value, as a parsed object does), or any other value.
struct Attributes<'k> {
    keys: &'k [&'k str],
}

impl<'de> DeserializeSeed<'de> for Attributes<'_> {
    type Value = (Value, DeferredAttributes);

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Attributes<'_> {
    type Value = (Value, DeferredAttributes);

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = JsonObject::new();
        let mut deferred: DeferredAttributes = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            if self.keys.contains(&key.as_str()) {
                let raw: Box<RawValue> = map.next_value()?;
                deferred.retain(|(k, _)| *k != key);
                deferred.push((key, raw));
            } else {
                let value: Value = map.next_value()?;
                out.insert(key, value);
            }
        }
        Ok((Value::Object(out), deferred))
    }

    // anything but an object is parsed whole and left to the document's check
    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok((Value::Bool(v), Vec::new()))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok((Value::from(v), Vec::new()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok((Value::from(v), Vec::new()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok((Value::from(v), Vec::new()))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok((Value::from(v), Vec::new()))
    }

    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok((Value::String(v), Vec::new()))
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok((Value::Null, Vec::new()))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element::<Value>()? {
            out.push(v);
        }
        Ok((Value::Array(out), Vec::new()))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::super::NodeMetadata;

    fn doc(attributes: serde_json::Value) -> Vec<u8> {
        serde_json::to_vec(&json!({
            "zarr_format": 3,
            "node_type": "array",
            "shape": [4],
            "data_type": "uint8",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
            "chunk_key_encoding": {"name": "default"},
            "fill_value": 0,
            "codecs": [{"name": "bytes"}],
            "attributes": attributes,
        }))
        .unwrap()
    }

    /// The deferring parse, its deferred members put back in document order, against the
    /// plain parse.
    fn check(bytes: &[u8], keys: &[&str]) {
        let plain = NodeMetadata::from_json(bytes);
        let deferred = NodeMetadata::from_json_deferring(bytes, keys);
        match (plain, deferred) {
            (Ok(plain), Ok((mut meta, rest))) => {
                for (k, raw) in &rest {
                    assert!(keys.contains(&k.as_str()), "{k} was not asked for");
                    assert!(!meta.attributes().contains_key(k), "{k} parsed too");
                    let v: serde_json::Value = serde_json::from_str(raw.get()).unwrap();
                    assert_eq!(plain.attributes().get(k), Some(&v), "{k}");
                }
                for k in keys {
                    if !rest.iter().any(|(d, _)| d == k) {
                        assert!(!plain.attributes().contains_key(*k), "{k} not deferred");
                    }
                }
                // the others, in their order
                let kept: Vec<_> = plain
                    .attributes()
                    .iter()
                    .filter(|(k, _)| !keys.contains(&k.as_str()))
                    .collect();
                let got: Vec<_> = meta.attributes().iter().collect();
                assert_eq!(got, kept);
                // everything else equal
                let attrs = plain.attributes().clone();
                match &mut meta {
                    NodeMetadata::Array(a) => a.attributes = attrs,
                    NodeMetadata::Group(g) => g.attributes = attrs,
                }
                assert_eq!(meta, plain);
            }
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
            (a, b) => panic!("plain {a:?}, deferring {b:?}"),
        }
    }

    #[test]
    fn deferred_members_are_left_as_text() {
        let bytes = doc(json!({"a": 1, "big": ["0.0", "1.-2"], "z": {"big": 2}}));
        let (meta, rest) = NodeMetadata::from_json_deferring(&bytes, &["big"]).unwrap();
        assert_eq!(rest.len(), 1);
        assert_eq!(rest[0].0, "big");
        assert_eq!(rest[0].1.get(), r#"["0.0","1.-2"]"#);
        // nested members of the same name are not user attributes
        assert_eq!(meta.attributes().get("z"), Some(&json!({"big": 2})));
        check(&bytes, &["big"]);
        check(&bytes, &["a", "missing"]);
        check(&bytes, &[]);
    }

    #[test]
    fn odd_documents_parse_or_fail_as_the_plain_parse_does() {
        check(&doc(json!(null)), &["a"]);
        check(&doc(json!([1, {"a": 2}])), &["a"]);
        check(&doc(json!("text")), &["a"]);
        check(&doc(json!(1.5)), &["a"]);
        check(
            br#"{"node_type": "group", "zarr_format": 3, "attributes": {"a": 1, "a": [2]}}"#,
            &["a"],
        );
        check(
            br#"{"node_type": "group", "zarr_format": 3, "attributes": {"a": 1}} x"#,
            &["a"],
        );
        check(br#"[1, 2]"#, &["a"]);
        check(b"", &["a"]);
        check(
            br#"{"node_type": "group", "zarr_format": 3, "attributes": {"a": [1,"#,
            &["a"],
        );
    }

    fn json_value() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            Just(json!(null)),
            any::<bool>().prop_map(|b| json!(b)),
            any::<i64>().prop_map(|i| json!(i)),
            (-1e6f64..1e6).prop_map(|f| json!(f)),
            "[a-z0-9.\\-]{0,6}".prop_map(|s| json!(s)),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::Array),
                prop::collection::vec(("[a-c]{1,2}", inner), 0..4)
                    .prop_map(|kv| serde_json::Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn deferring_agrees_with_the_plain_parse(
            attributes in prop::collection::vec(("[a-c]{1,2}", json_value()), 0..6),
        ) {
            let attributes: serde_json::Map<String, serde_json::Value> =
                attributes.into_iter().collect();
            let bytes = doc(serde_json::Value::Object(attributes));
            check(&bytes, &["a", "bc"]);
        }
    }
}
