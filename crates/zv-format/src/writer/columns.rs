//! Streamed attribute columns: the schema of the vertex (and link) attributes, fixed by the
//! first batch with rows, each row's record bytes as batches arrive (categorical values as
//! provisional codes), and the final encoding once every category is known.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use zv_core::data_type::DataType;

use crate::document::{Attribute, AttributeValues};
use crate::error::{AttributeKind, Error, InputItem, Result};
use crate::layout::attributes::{f64_to_le, AttributeRows, Dictionary};
use crate::parts::ColumnSchema;

/// The provisional code of a missing categorical value.
const MISSING_CODE: u32 = u32::MAX;

/// The final code of a missing categorical value (the dictionary's `_FillValue`).
const MISSING_VALUE: f64 = -1.0;

/// The type of one column, fixed by its first batch.
#[derive(Debug, Clone, PartialEq)]
enum ColumnKind {
    Numeric {
        data_type: DataType,
        channels: usize,
    },
    Categorical,
}

/// One attribute column while batches arrive.
#[derive(Debug, Clone)]
struct Column {
    name: String,
    kind: ColumnKind,
    channel_names: Option<Vec<String>>,
    /// Categorical: the categories in arrival order (the provisional code is the index).
    categories: Vec<String>,
    lookup: FxHashMap<String, u32>,
    /// Categorical: whether a missing value was seen.
    has_missing: bool,
}

/// The attribute columns of one kind (vertex or link): their schema once fixed.
#[derive(Debug, Clone)]
pub(super) struct Columns {
    of: AttributeKind,
    fixed: Option<Vec<Column>>,
}

/// A schema checked against a batch, to install once the whole batch is valid.
#[derive(Debug)]
pub(super) struct NewSchema(Option<Vec<Column>>);

/// A column with its final encoding, as the finish stages use it.
#[derive(Debug, Clone)]
pub(super) struct FinishedColumn {
    /// The attribute's name.
    pub(super) name: String,
    /// The channel names given with the attribute.
    pub(super) channel_names: Option<Vec<String>>,
    /// The stored data type (the code type for categorical columns).
    pub(super) data_type: DataType,
    /// Values per row.
    pub(super) channels: usize,
    /// The dictionary of a categorical column.
    pub(super) dictionary: Option<Dictionary>,
    /// Where the column's cell starts within a record's attribute part.
    pub(super) offset: usize,
    /// The length of the column's cell.
    pub(super) record_len: usize,
    categorical: bool,
    /// Categorical: the final code of each provisional one.
    remap: Vec<i64>,
}

/// Whether a numeric column of kind `of` and type `data_type` may have missing (null) rows:
/// link attributes of a float type, whose missing rows are stored as NaN
/// (`docs/format-decisions.md`, "Missing link attribute values").
fn nan_marks_missing(of: AttributeKind, data_type: DataType) -> bool {
    of == AttributeKind::Link
        && matches!(
            data_type,
            DataType::Float16 | DataType::Float32 | DataType::Float64
        )
}

impl Column {
    fn new(of: AttributeKind, name: &str, a: &Attribute) -> Result<Self> {
        super::checks::check_name(of, name)?;
        let kind = match &a.values {
            AttributeValues::Numeric { rows, present } => {
                if present.is_some() && !nan_marks_missing(of, rows.data_type()) {
                    return Err(Error::attribute(of, name, format!(
                        "missing (null) values are only allowed in object attributes, in string attributes and in float link attributes (stored as NaN); this one is {}",
                        rows.data_type()
                    )));
                }
                ColumnKind::Numeric {
                    data_type: rows.data_type(),
                    channels: rows.channels(),
                }
            }
            AttributeValues::Categorical(_) => ColumnKind::Categorical,
        };
        if let (Some(c), ColumnKind::Numeric { channels, .. }) = (&a.channel_names, &kind) {
            if c.len() != *channels {
                return Err(Error::attribute(
                    of,
                    name,
                    format!("{} channel names for {channels} channels", c.len()),
                ));
            }
        }
        Ok(Self {
            name: name.to_owned(),
            kind,
            channel_names: a.channel_names.clone(),
            categories: Vec::new(),
            lookup: FxHashMap::default(),
            has_missing: false,
        })
    }

    fn record_len(&self) -> usize {
        match self.kind {
            ColumnKind::Numeric {
                data_type,
                channels,
            } => data_type.size().unwrap_or(1) * channels,
            ColumnKind::Categorical => 4,
        }
    }

    fn check(&self, of: AttributeKind, a: &Attribute) -> Result<()> {
        let same = match (&self.kind, &a.values) {
            (
                ColumnKind::Numeric {
                    data_type,
                    channels,
                },
                AttributeValues::Numeric { rows, present },
            ) => {
                (present.is_none() || nan_marks_missing(of, *data_type))
                    && *data_type == rows.data_type()
                    && *channels == rows.channels()
            }
            (ColumnKind::Categorical, AttributeValues::Categorical(_)) => true,
            _ => false,
        };
        if !same {
            return Err(Error::attribute(
                of,
                &self.name,
                "changes type or width between batches (or has null values)",
            ));
        }
        Ok(())
    }

    /// Appends the record bytes of row `r` (provisional codes for categorical values).
    fn push_row(&mut self, a: &Attribute, r: usize, out: &mut Vec<u8>) {
        match &a.values {
            AttributeValues::Numeric { rows, .. } => {
                out.extend_from_slice(rows.row_bytes(r).unwrap_or_default())
            }
            AttributeValues::Categorical(v) => {
                let code = match v.get(r).and_then(Option::as_ref) {
                    None => {
                        self.has_missing = true;
                        MISSING_CODE
                    }
                    Some(s) => match self.lookup.get(s) {
                        Some(&c) => c,
                        None => {
                            let c = self.categories.len() as u32;
                            self.categories.push(s.clone());
                            self.lookup.insert(s.clone(), c);
                            c
                        }
                    },
                };
                out.extend_from_slice(&code.to_le_bytes());
            }
        }
    }

    /// The final encoding. A categorical column is encoded by [`Dictionary::encode`] (the
    /// one rule for categories and code types) over its categories in arrival order, plus a
    /// missing value if one was seen: the code of each category is its final code.
    fn finish(&self, of: AttributeKind, offset: usize) -> Result<FinishedColumn> {
        let (data_type, channels, dictionary, remap) = match self.kind {
            ColumnKind::Numeric {
                data_type,
                channels,
            } => (data_type, channels, None, Vec::new()),
            ColumnKind::Categorical => {
                let mut values: Vec<Option<&str>> =
                    self.categories.iter().map(|s| Some(s.as_str())).collect();
                if self.has_missing {
                    values.push(None);
                }
                let (dictionary, codes) = Dictionary::encode(&values)
                    .map_err(|e| Error::attribute(of, &self.name, e.to_string()))?;
                let remap = (0..self.categories.len())
                    .map(|i| codes.get_f64(i, 0).unwrap_or(0.0) as i64)
                    .collect();
                (codes.data_type(), 1, Some(dictionary), remap)
            }
        };
        Ok(FinishedColumn {
            name: self.name.clone(),
            channel_names: self.channel_names.clone(),
            data_type,
            channels,
            dictionary,
            offset,
            record_len: self.record_len(),
            categorical: self.kind == ColumnKind::Categorical,
            remap,
        })
    }
}

impl Columns {
    /// No schema yet, for attributes of kind `of`.
    pub(super) fn new(of: AttributeKind) -> Self {
        Self { of, fixed: None }
    }

    /// The length of one row's cells.
    pub(super) fn record_len(&self) -> usize {
        self.fixed
            .as_ref()
            .map_or(0, |c| c.iter().map(Column::record_len).sum())
    }

    /// Checks a batch's attributes against the schema fixed by the first non-empty batch:
    /// `rows` values each, the same names, types and widths. Returns the schema to install
    /// when none is fixed yet and the batch has rows (the caller installs it once the whole
    /// batch has passed); a batch without rows fixes nothing and is not compared.
    pub(super) fn check(
        &self,
        attributes: &BTreeMap<String, Attribute>,
        rows: usize,
    ) -> Result<NewSchema> {
        let of = self.of;
        for (name, a) in attributes {
            if a.values.len() != rows {
                return Err(Error::attribute(
                    of,
                    name,
                    format!("has {} values for {rows} rows", a.values.len()),
                ));
            }
        }
        if rows == 0 {
            return Ok(NewSchema(None));
        }
        match &self.fixed {
            None => Ok(NewSchema(Some(
                attributes
                    .iter()
                    .map(|(n, a)| Column::new(of, n, a))
                    .collect::<Result<_>>()?,
            ))),
            Some(cols) => {
                let names: Vec<&String> = attributes.keys().collect();
                let known: Vec<&String> = cols.iter().map(|c| &c.name).collect();
                if names != known {
                    return Err(Error::input(
                        InputItem::Attributes(of),
                        format!(
                        "every batch must carry the same {of} attributes ({known:?}), got {names:?}"
                    ),
                    ));
                }
                for (c, a) in cols.iter().zip(attributes.values()) {
                    c.check(of, a)?;
                }
                Ok(NewSchema(None))
            }
        }
    }

    /// The schema of a part of a distributed write, for its receipt: each column's name, data
    /// type, channels and channel names. A categorical column is refused: its codes depend on
    /// every category of the whole write, which no part sees.
    pub(super) fn part_schema(&self) -> Result<Vec<ColumnSchema>> {
        self.fixed
            .iter()
            .flatten()
            .map(|c| match c.kind {
                ColumnKind::Numeric {
                    data_type,
                    channels,
                } => Ok(ColumnSchema {
                    name: c.name.clone(),
                    data_type: data_type.name().to_owned(),
                    channels,
                    channel_names: c.channel_names.clone(),
                }),
                ColumnKind::Categorical => Err(Error::Unsupported {
                    key: c.name.clone(),
                    what: format!(
                        "categorical {} attribute `{}` in a distributed write (its codes need every category of the whole write; store the codes as a numeric attribute)",
                        self.of, c.name
                    ),
                }),
            })
            .collect()
    }

    /// Fixes the schema of a commit from its parts' receipts (see [`Columns::part_schema`]).
    pub(super) fn install_part_schema(&mut self, schema: &[ColumnSchema]) -> Result<()> {
        let columns = schema
            .iter()
            .map(|c| {
                let data_type = DataType::from_name(&c.data_type).ok_or_else(|| {
                    Error::attribute(
                        self.of,
                        &c.name,
                        format!("unknown data type `{}`", c.data_type),
                    )
                })?;
                Ok(Column {
                    name: c.name.clone(),
                    kind: ColumnKind::Numeric {
                        data_type,
                        channels: c.channels,
                    },
                    channel_names: c.channel_names.clone(),
                    categories: Vec::new(),
                    lookup: FxHashMap::default(),
                    has_missing: false,
                })
            })
            .collect::<Result<_>>()?;
        self.fixed = Some(columns);
        Ok(())
    }

    /// Installs a schema returned by [`Columns::check`] (nothing if it returned none).
    pub(super) fn install(&mut self, schema: NewSchema) {
        if let Some(cols) = schema.0 {
            self.fixed = Some(cols);
        }
    }

    /// The cells of a batch's `attributes` (checked by [`Columns::check`]), row by row;
    /// nothing while no schema is fixed.
    pub(super) fn cells<'a>(
        &'a mut self,
        attributes: &'a BTreeMap<String, Attribute>,
    ) -> Cells<'a> {
        let columns = self
            .fixed
            .iter_mut()
            .flatten()
            .zip(attributes.values())
            .map(|(column, a)| {
                let numeric = match &a.values {
                    AttributeValues::Numeric { rows, present } => Some(NumericCells {
                        bytes: rows.as_le_bytes(),
                        width: column.record_len(),
                        present: present.as_deref(),
                        data_type: rows.data_type(),
                    }),
                    AttributeValues::Categorical(_) => None,
                };
                (column, a, numeric)
            })
            .collect();
        Cells { columns }
    }

    /// The columns with their final encodings.
    pub(super) fn finish(&self) -> Result<Vec<FinishedColumn>> {
        let mut offset = 0;
        let mut out = Vec::new();
        for c in self.fixed.iter().flatten() {
            out.push(c.finish(self.of, offset)?);
            offset += c.record_len();
        }
        Ok(out)
    }
}

/// The cells of a numeric column of one batch.
struct NumericCells<'a> {
    /// The rows' bytes.
    bytes: &'a [u8],
    /// The length of one cell.
    width: usize,
    /// Which rows are present (`None`: all); a missing row is stored as NaN.
    present: Option<&'a [bool]>,
    data_type: DataType,
}

/// One column of a batch: the column, its attribute, and (numeric columns) its cells.
type BatchColumn<'a> = (&'a mut Column, &'a Attribute, Option<NumericCells<'a>>);

/// The attribute cells of one batch: numeric columns as their bytes and cell length.
pub(super) struct Cells<'a> {
    columns: Vec<BatchColumn<'a>>,
}

impl NumericCells<'_> {
    /// Appends the cell of row `r` to `out` (NaN where the row is missing).
    fn push(&self, r: usize, out: &mut Vec<u8>) {
        if self
            .present
            .is_some_and(|p| !p.get(r).copied().unwrap_or(true))
        {
            let size = self.data_type.size().unwrap_or(1).max(1);
            for _ in 0..self.width / size {
                f64_to_le(self.data_type, f64::NAN, out);
            }
        } else {
            out.extend_from_slice(&self.bytes[r * self.width..(r + 1) * self.width]);
        }
    }
}

impl Cells<'_> {
    /// Appends the cells of row `r` (provisional codes for categorical values) to `out`.
    pub(super) fn push_row(&mut self, r: usize, out: &mut Vec<u8>) {
        for (column, a, numeric) in &mut self.columns {
            match numeric {
                Some(n) => n.push(r, out),
                None => column.push_row(a, r, out),
            }
        }
    }

    /// [`Cells::push_row`] through a shared reference, from several threads at once, for cells
    /// that are all numeric (a categorical column's cell is left out).
    pub(super) fn push_numeric_row(&self, r: usize, out: &mut Vec<u8>) {
        for (_, _, numeric) in &self.columns {
            if let Some(n) = numeric {
                n.push(r, out);
            }
        }
    }
}

impl FinishedColumn {
    /// The column's cell in `record`, whose attribute part starts at `base`.
    pub(super) fn cell<'a>(&self, record: &'a [u8], base: usize) -> &'a [u8] {
        &record[base + self.offset..base + self.offset + self.record_len]
    }

    /// Encodes the column's cells of the given rows.
    pub(super) fn encode<'c>(
        &self,
        cells: impl ExactSizeIterator<Item = &'c [u8]>,
    ) -> AttributeRows {
        let dt = self.data_type;
        if !self.categorical {
            let mut le = Vec::with_capacity(cells.len() * self.record_len);
            for r in cells {
                crate::short_copy::append(&mut le, r);
            }
            return AttributeRows::from_le(dt, self.channels, le)
                .unwrap_or_else(|_| AttributeRows::empty(dt, self.channels));
        }
        let codes: Vec<f64> = cells
            .map(|r| {
                let c = u32::from_le_bytes([r[0], r[1], r[2], r[3]]);
                if c == MISSING_CODE {
                    MISSING_VALUE
                } else {
                    self.remap.get(c as usize).copied().unwrap_or(0) as f64
                }
            })
            .collect();
        AttributeRows::from_f64s(dt, 1, &codes).unwrap_or_else(|_| AttributeRows::empty(dt, 1))
    }

    /// The channel names to write: the given ones, or `ch0, ch1, …`.
    pub(super) fn channel_names_or_default(&self) -> Vec<String> {
        self.channel_names
            .clone()
            .unwrap_or_else(|| (0..self.channels).map(|i| format!("ch{i}")).collect())
    }
}
