//! What the exporters share: running a streaming reader ([`carried`]), level 0 of a store as
//! a [`GeometryDocument`] (LAS export, and the tests' oracle), numbers as text.

use zv_core::data_type::DataType;
use zv_format::document::{Attribute, AttributeValues, GeometryDocument};
use zv_format::layout::attributes::AttributeRows;
use zv_format::ZvStore;

use crate::error::{FileName, Result};

/// Level 0 of `store` as a document (`file` names the output in errors).
pub(crate) fn level0(store: &ZvStore, file: &FileName) -> Result<GeometryDocument> {
    let value = zv_format::export::export_geometry(store).map_err(|e| file.format(e))?;
    GeometryDocument::from_value(&value).map_err(|e| file.format(e))
}

/// Runs a streaming reader, `read`, handing what it reads to `f`: `f`'s errors (the
/// output's) are carried out of the reader's callback as they are, the reader's own name
/// `file`.
pub(crate) fn carried<T>(
    file: &FileName,
    read: impl FnOnce(&mut dyn FnMut(T) -> zv_format::Result<()>) -> zv_format::Result<()>,
    mut f: impl FnMut(T) -> Result<()>,
) -> Result<()> {
    let mut failed = None;
    let result = read(&mut |item| match f(item) {
        Ok(()) => Ok(()),
        Err(e) => {
            failed = Some(e);
            Err(zv_format::Error::InvalidInput("export stopped".into()))
        }
    });
    match (failed, result) {
        (Some(e), _) => Err(e),
        (None, r) => r.map_err(|e| file.format(e)),
    }
}

/// A numeric attribute split into single-channel columns named `name` (one channel) or
/// `name_CHANNEL` (the channel names, else the channel numbers); `None` for categorical ones.
/// Rows the attribute marks absent read as NaN.
pub(crate) fn numeric_columns(name: &str, a: &Attribute) -> Option<Vec<(String, ColumnView)>> {
    let AttributeValues::Numeric { rows, present } = &a.values else {
        return None;
    };
    let c = rows.channels();
    Some(
        (0..c)
            .map(|ch| {
                (
                    channel_name(name, a.channel_names.as_deref(), c, ch),
                    ColumnView {
                        rows: rows.clone(),
                        present: present.clone(),
                        channel: ch,
                    },
                )
            })
            .collect(),
    )
}

/// The column name of channel `ch` of `c` of attribute `name`: `name` for one channel, else
/// `name_CHANNEL` (the channel names, else the channel numbers).
pub(crate) fn channel_name(name: &str, names: Option<&[String]>, c: usize, ch: usize) -> String {
    if c == 1 {
        return name.to_owned();
    }
    match names.and_then(|cn| cn.get(ch)) {
        Some(cn) => format!("{name}_{cn}"),
        None => format!("{name}_{ch}"),
    }
}

/// One channel of numeric rows.
#[derive(Debug, Clone)]
pub(crate) struct ColumnView {
    rows: AttributeRows,
    /// The rows that have a value (`None`: all).
    present: Option<Vec<bool>>,
    channel: usize,
}

impl ColumnView {
    /// The data type.
    pub(crate) fn data_type(&self) -> zv_core::data_type::DataType {
        self.rows.data_type()
    }

    /// Row `r`'s value (NaN past the end, and for absent rows).
    pub(crate) fn get(&self, r: usize) -> f64 {
        if self
            .present
            .as_ref()
            .is_some_and(|p| !p.get(r).copied().unwrap_or(false))
        {
            return f64::NAN;
        }
        self.rows.get_f64(r, self.channel).unwrap_or(f64::NAN)
    }
}

/// The shortest text of `v` that reads back as the same value of `dt`.
pub(crate) fn number_text(dt: DataType, v: f64) -> String {
    if v.is_nan() {
        return String::new();
    }
    match dt {
        DataType::Float32 | DataType::Float16 => (v as f32).to_string(),
        dt if !dt.is_float() && v.fract() == 0.0 && v.abs() < 9.0e15 => (v as i64).to_string(),
        _ => v.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_written_in_their_type_s_shortest_text() {
        assert_eq!(number_text(DataType::Float32, 0.1f32 as f64), "0.1");
        assert_eq!(number_text(DataType::Float64, 0.1), "0.1");
        assert_eq!(number_text(DataType::UInt8, 255.0), "255");
        assert_eq!(number_text(DataType::Float64, f64::NAN), "");
    }
}
