//! A bcolz ctable: `__rootdirs__` (`{"names": [...]}`) and one carray per column under
//! `<root>/<name>/`, plus the table's `__attrs__`.

use std::path::Path;

use serde_json::{Map, Value};

use super::carray::open_carray;
use super::storage::ATTRS_FILE;
use crate::array::LegacyArray;
use crate::error::{Error, Result};
use crate::files::{read_attributes, read_json};

/// The file naming the columns, relative to the ctable's root.
pub const ROOTDIRS_FILE: &str = "__rootdirs__";

/// An opened ctable.
#[derive(Debug)]
pub struct Ctable {
    columns: Vec<(String, LegacyArray)>,
    attributes: Map<String, Value>,
}

/// Whether `name` is a plain directory name (no separators, not `.` or `..`).
fn is_plain_name(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\\', '\0'])
}

impl Ctable {
    /// Opens the ctable in directory `root` and every column.
    pub fn open(root: &Path) -> Result<Self> {
        let path = root.join(ROOTDIRS_FILE);
        let doc = read_json(&path)?;
        let names = doc
            .get("names")
            .and_then(Value::as_array)
            .and_then(|a| {
                a.iter()
                    .map(|n| n.as_str().map(str::to_owned))
                    .collect::<Option<Vec<_>>>()
            })
            .ok_or_else(|| Error::invalid(&path, "`names` must be a list of strings"))?;
        for (i, name) in names.iter().enumerate() {
            if !is_plain_name(name) {
                return Err(Error::invalid(
                    &path,
                    format!("column name {name:?} is not a plain directory name"),
                ));
            }
            if names[..i].contains(name) {
                return Err(Error::invalid(
                    &path,
                    format!("column {name:?} is named twice"),
                ));
            }
        }
        let mut columns: Vec<(String, LegacyArray)> = Vec::with_capacity(names.len());
        for name in names {
            let dir = root.join(&name);
            if dir.join(ROOTDIRS_FILE).exists() {
                return Err(Error::unsupported(&dir, "nested ctable columns"));
            }
            let array = open_carray(&dir)?;
            if let Some((first, a)) = columns.first() {
                if a.shape()[0] != array.shape()[0] {
                    return Err(Error::invalid(
                        &dir,
                        format!(
                            "column has {} rows, column {first:?} has {}",
                            array.shape()[0],
                            a.shape()[0]
                        ),
                    ));
                }
            }
            columns.push((name, array));
        }
        let attributes = read_attributes(&root.join(ATTRS_FILE))?;
        Ok(Self {
            columns,
            attributes,
        })
    }

    /// The columns in table order.
    pub fn columns(&self) -> impl Iterator<Item = (&str, &LegacyArray)> {
        self.columns.iter().map(|(n, a)| (n.as_str(), a))
    }

    /// The column called `name`.
    pub fn column(&self, name: &str) -> Option<&LegacyArray> {
        self.columns.iter().find(|(n, _)| n == name).map(|(_, a)| a)
    }

    /// The table's user attributes.
    pub fn attributes(&self) -> &Map<String, Value> {
        &self.attributes
    }

    /// The number of rows.
    pub fn len(&self) -> u64 {
        self.columns.first().map_or(0, |(_, a)| a.shape()[0])
    }

    /// Whether the table has no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
