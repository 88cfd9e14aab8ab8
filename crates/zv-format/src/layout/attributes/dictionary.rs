//! Dictionary (categorical) encoding: integer codes into a sorted `categories` list kept in
//! the array's attributes, in the smallest code type that fits.

use serde_json::{Map, Value};
use zv_core::data_type::DataType;

use super::super::{invalid, LayoutError};
use super::{AttributeRows, WHAT};

/// A dictionary (categorical) encoding.
#[derive(Debug, Clone, PartialEq)]
pub struct Dictionary {
    /// The categories; code `i` means `categories[i]`.
    pub categories: Vec<Value>,
    /// The code of a missing value (`_FillValue`, -1 when written by the reference), if any.
    pub missing_code: Option<i64>,
    /// Whether the categories are ordered.
    pub ordered: bool,
}

impl Dictionary {
    /// Encodes strings (`None` = missing) as codes: categories sorted, code type the smallest
    /// unsigned type, or the smallest signed type with `-1` for missing values.
    pub fn encode(values: &[Option<&str>]) -> Result<(Self, AttributeRows), LayoutError> {
        let mut cats: Vec<&str> = values.iter().flatten().copied().collect();
        cats.sort_unstable();
        cats.dedup();
        let missing = values.iter().any(Option::is_none);
        let n = cats.len();
        let data_type = if missing {
            if n <= 128 {
                DataType::Int8
            } else if n <= 32768 {
                DataType::Int16
            } else {
                DataType::Int32
            }
        } else if n <= 256 {
            DataType::UInt8
        } else if n <= 65536 {
            DataType::UInt16
        } else {
            DataType::UInt32
        };
        let mut codes = Vec::with_capacity(values.len());
        for v in values {
            let code = match v {
                None => -1.0,
                Some(s) => cats.binary_search(s).map_or(-1.0, |i| i as f64),
            };
            codes.push(code);
        }
        let rows = AttributeRows::from_f64s(data_type, 1, &codes)?;
        Ok((
            Self {
                categories: cats
                    .into_iter()
                    .map(|s| Value::from(s.to_owned()))
                    .collect(),
                missing_code: missing.then_some(-1),
                ordered: false,
            },
            rows,
        ))
    }

    /// Reads the dictionary from an array's attributes (`"encoding": "dictionary"`), or
    /// `None` if the attribute is not dictionary-encoded.
    pub fn from_attributes(attributes: &Map<String, Value>) -> Result<Option<Self>, LayoutError> {
        if attributes.get("encoding").and_then(Value::as_str) != Some("dictionary") {
            return Ok(None);
        }
        let categories = attributes
            .get("categories")
            .and_then(Value::as_array)
            .ok_or_else(|| invalid(WHAT, "dictionary encoding without a `categories` list"))?
            .clone();
        let missing_code = match attributes.get("_FillValue") {
            None | Some(Value::Null) => None,
            Some(v) => Some(
                v.as_i64()
                    .ok_or_else(|| invalid(WHAT, format!("_FillValue {v} is not an integer")))?,
            ),
        };
        let ordered = attributes
            .get("ordered")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        Ok(Some(Self {
            categories,
            missing_code,
            ordered,
        }))
    }

    /// The attribute keys describing this dictionary.
    pub fn to_attributes(&self, attributes: &mut Map<String, Value>) {
        attributes.insert("encoding".into(), Value::from("dictionary"));
        attributes.insert("categories".into(), Value::Array(self.categories.clone()));
        attributes.insert("ordered".into(), Value::Bool(self.ordered));
        if let Some(m) = self.missing_code {
            attributes.insert("_FillValue".into(), Value::from(m));
        }
    }

    /// Decodes codes into category values (`None` for the missing code). A code that is
    /// neither a category nor the missing code is an error.
    pub fn decode_values(&self, codes: &AttributeRows) -> Result<Vec<Option<Value>>, LayoutError> {
        if codes.channels() != 1 || codes.data_type().is_float() {
            return Err(invalid(
                WHAT,
                "dictionary codes must be one integer channel",
            ));
        }
        (0..codes.num_rows())
            .map(|r| {
                let code = codes.get_f64(r, 0).unwrap_or(-1.0) as i64;
                if Some(code) == self.missing_code {
                    return Ok(None);
                }
                usize::try_from(code)
                    .ok()
                    .and_then(|i| self.categories.get(i))
                    .cloned()
                    .map(Some)
                    .ok_or_else(|| {
                        invalid(
                            WHAT,
                            format!(
                                "row {r}: code {code} is not one of {} categories",
                                self.categories.len()
                            ),
                        )
                    })
            })
            .collect()
    }

    /// Decodes codes into strings (categories that are not strings are shown as JSON).
    pub fn decode(&self, codes: &AttributeRows) -> Result<Vec<Option<String>>, LayoutError> {
        Ok(self
            .decode_values(codes)?
            .into_iter()
            .map(|v| {
                v.map(|v| match v {
                    Value::String(s) => s,
                    other => other.to_string(),
                })
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dictionaries() {
        let (d, codes) = Dictionary::encode(&[Some("soma"), None, Some("axon")]).unwrap();
        assert_eq!(codes.data_type(), DataType::Int8);
        assert_eq!(d.missing_code, Some(-1));
        assert_eq!(d.categories, vec![Value::from("axon"), Value::from("soma")]);
        assert_eq!(
            d.decode(&codes).unwrap(),
            vec![Some("soma".to_owned()), None, Some("axon".to_owned())]
        );
        let mut attrs = Map::new();
        d.to_attributes(&mut attrs);
        assert_eq!(
            Dictionary::from_attributes(&attrs).unwrap(),
            Some(d.clone())
        );
        let bad = AttributeRows::from_f64s(DataType::Int8, 1, &[5.0]).unwrap();
        assert!(d.decode(&bad).is_err());
        let many: Vec<String> = (0..300).map(|i| format!("c{i:03}")).collect();
        let refs: Vec<Option<&str>> = many.iter().map(|s| Some(s.as_str())).collect();
        assert_eq!(
            Dictionary::encode(&refs).unwrap().1.data_type(),
            DataType::UInt16
        );
    }
}
