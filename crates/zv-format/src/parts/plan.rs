//! The plan of a distributed write (`.zv-parts/plan.json`): its run id, its number of parts
//! and the writer options every part and the commit use, written once by
//! [`prepare`](super::prepare).

use std::sync::Arc;

use bytes::Bytes;
use serde_json::{json, Map, Value};
use zv_core::data_type::DataType;
use zv_core::store::{Store, StoreError};

use super::parts_key;
use crate::error::{Error, Result};
use crate::geometry::Geometry;
use crate::metadata::Axis;
use crate::writer::{CodecChoice, FormatVersion, OutOfBounds, WriterOptions, ZvWriter};

/// The plan's name under [`PARTS_DIR`](super::PARTS_DIR).
pub(super) const PLAN: &str = "plan.json";

/// The largest plan read (a plan is a few hundred bytes).
const MAX_PLAN_BYTES: u64 = 1 << 20;

/// A staged distributed write.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The run's id: receipts of another run are refused.
    pub run: String,
    /// The number of parts.
    pub parts: u32,
    /// The writer options (the memory budget is each worker's own: the default).
    pub options: WriterOptions,
}

/// The stored form of `options` (all but the memory budget).
fn options_json(o: &WriterOptions) -> Value {
    json!({
        "geometry": o.geometry.name(),
        "axes": o.axes.as_ref().map(|a| a.iter().map(Axis::to_json).collect::<Vec<_>>()),
        "chunk_shape": o.chunk_shape,
        "bin_shape": o.bin_shape,
        "bounds": o.bounds,
        "out_of_bounds": o.out_of_bounds.name(),
        "vertex_type": o.vertex_type.name(),
        "codecs": o.codecs.spec(),
        "crs": o.crs,
        "format_version": o.format_version.name(),
        "shard_shape": o.shard_shape,
    })
}

/// The error of a plan that does not parse.
fn bad_plan(reason: impl Into<String>) -> Error {
    Error::Metadata {
        key: format!("{}/{PLAN}", super::PARTS_DIR),
        reason: reason.into(),
    }
}

/// Member `name` of `o`, deserialized.
fn member<T: serde::de::DeserializeOwned>(o: &Map<String, Value>, name: &str) -> Result<T> {
    serde_json::from_value(o.get(name).cloned().unwrap_or(Value::Null))
        .map_err(|e| bad_plan(format!("`{name}`: {e}")))
}

/// The options of a stored plan.
fn options_from(v: &Value) -> Result<WriterOptions> {
    let o = v
        .as_object()
        .ok_or_else(|| bad_plan("`options` is not an object"))?;
    let geometry: String = member(o, "geometry")?;
    let mut out = WriterOptions::new(Geometry::parse(&geometry), member(o, "chunk_shape")?);
    let axes: Option<Vec<Map<String, Value>>> = member(o, "axes")?;
    out.axes = axes
        .map(|a| {
            a.iter()
                .map(|x| Axis::from_object(x).ok_or_else(|| bad_plan("an axis has no name")))
                .collect::<Result<Vec<_>>>()
        })
        .transpose()?;
    out.bin_shape = member(o, "bin_shape")?;
    out.bounds = member(o, "bounds")?;
    out.out_of_bounds = OutOfBounds::parse(&member::<String>(o, "out_of_bounds")?)?;
    let vt: String = member(o, "vertex_type")?;
    out.vertex_type =
        DataType::from_name(&vt).ok_or_else(|| bad_plan(format!("vertex type `{vt}`")))?;
    out.codecs = CodecChoice::parse(&member::<String>(o, "codecs")?)?;
    out.crs = o.get("crs").cloned().filter(|c| !c.is_null());
    out.format_version = FormatVersion::parse(&member::<String>(o, "format_version")?)?;
    out.shard_shape = member(o, "shard_shape")?;
    Ok(out)
}

impl Plan {
    /// The stored form.
    fn to_json(&self) -> Vec<u8> {
        let v = json!({
            "zv_parts": 1,
            "run": self.run,
            "parts": self.parts,
            "options": options_json(&self.options),
        });
        serde_json::to_vec_pretty(&v).unwrap_or_default()
    }

    /// Parses a stored plan.
    fn from_json(bytes: &[u8]) -> Result<Self> {
        let v: Value = serde_json::from_slice(bytes).map_err(|e| bad_plan(e.to_string()))?;
        let o = v.as_object().ok_or_else(|| bad_plan("not a JSON object"))?;
        if o.get("zv_parts") != Some(&json!(1)) {
            return Err(bad_plan("`zv_parts` is not 1 (a plan of another release)"));
        }
        let parts: u32 = member(o, "parts")?;
        if parts == 0 {
            return Err(bad_plan("0 parts"));
        }
        let options = options_from(o.get("options").unwrap_or(&Value::Null))?;
        options.validate()?;
        Ok(Self {
            run: member(o, "run")?,
            parts,
            options,
        })
    }

    /// Whether `other` stages the same write (same parts and options).
    fn same_write(&self, options: &WriterOptions, parts: u32) -> bool {
        self.parts == parts && options_json(&self.options) == options_json(options)
    }
}

/// The plan staged in `store`, if any.
pub(super) fn read(store: &dyn Store) -> Result<Option<Plan>> {
    match store.get_capped(&parts_key(PLAN)?, MAX_PLAN_BYTES)? {
        Some(bytes) => Plan::from_json(&bytes).map(Some),
        None => Ok(None),
    }
}

/// The plan staged in `store`; an error if there is none.
pub(super) fn require(store: &dyn Store) -> Result<Plan> {
    read(store)?.ok_or_else(|| {
        Error::InvalidInput(format!(
            "no distributed write is staged here ({}/{PLAN} is missing; prepare one first)",
            super::PARTS_DIR
        ))
    })
}

/// A run id unlikely to repeat: the time, the process and a per-process counter, mixed.
pub(crate) fn new_run_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let seed = [
        nanos,
        u64::from(std::process::id()),
        COUNTER.fetch_add(1, Ordering::Relaxed),
    ];
    let a = super::part_of(&seed.map(|x| x as i64), u32::MAX);
    let b = super::part_of(&[seed[2] as i64, seed[0] as i64, seed[1] as i64], u32::MAX);
    format!("{nanos:016x}-{a:08x}{b:08x}")
}

/// See [`super::prepare`].
pub(super) fn prepare(store: Arc<dyn Store>, options: &WriterOptions, parts: u32) -> Result<Plan> {
    if parts == 0 {
        return Err(Error::InvalidInput(
            "a distributed write has at least 1 part".into(),
        ));
    }
    // the checks of a writer: valid options, no root yet, a geometry parts can write
    ZvWriter::create_unclaimed(Arc::clone(&store), options.clone())?.check_part_options()?;
    let mismatch = |p: &Plan| {
        Error::InvalidInput(format!(
            "another distributed write is staged here (run {}, {} parts, other options); commit it or remove {}/",
            p.run,
            p.parts,
            super::PARTS_DIR
        ))
    };
    if let Some(p) = read(store.as_ref())? {
        return if p.same_write(options, parts) {
            Ok(p)
        } else {
            Err(mismatch(&p))
        };
    }
    let mut plan = Plan {
        run: new_run_id(),
        parts,
        options: options.clone(),
    };
    // the plan keeps what the options' stored form keeps
    plan.options = options_from(&options_json(options))?;
    match store.set_new(&parts_key(PLAN)?, Bytes::from(plan.to_json())) {
        Ok(()) => {
            store.sync()?;
            Ok(plan)
        }
        // another client staged at the same time: theirs wins if it is the same write
        Err(StoreError::AlreadyExists { .. }) => {
            let p = require(store.as_ref())?;
            if p.same_write(options, parts) {
                Ok(p)
            } else {
                Err(mismatch(&p))
            }
        }
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_round_trip_through_the_plan() {
        let mut o = WriterOptions::new(Geometry::PointCloud, vec![10.0, 20.0, 5.0]);
        o.bin_shape = Some(vec![5.0, 10.0, 5.0]);
        o.bounds = Some([vec![0.0; 3], vec![100.0; 3]]);
        o.out_of_bounds = OutOfBounds::Ignore;
        o.vertex_type = DataType::Float64;
        o.codecs = CodecChoice::parse("zstd:7+crc32c").unwrap();
        o.crs = Some(json!({"name": "x"}));
        o.axes = Some(vec![Axis::space("x"), Axis::space("y"), Axis::space("z")]);
        let plan = Plan {
            run: "r".into(),
            parts: 3,
            options: o.clone(),
        };
        let back = Plan::from_json(&plan.to_json()).unwrap();
        assert_eq!(back.options.memory_budget, o.memory_budget);
        assert_eq!(back, plan);
    }

    #[test]
    fn a_damaged_plan_is_an_error_naming_it() {
        for bad in [
            &b"{"[..],
            b"[]",
            b"{\"zv_parts\": 2}",
            b"{\"zv_parts\": 1, \"parts\": 0}",
            b"{\"zv_parts\": 1, \"parts\": 2, \"run\": \"r\", \"options\": {\"geometry\": \"point_cloud\", \"chunk_shape\": \"x\"}}",
        ] {
            let e = Plan::from_json(bad).unwrap_err().to_string();
            assert!(e.contains("plan.json"), "{e}");
        }
    }
}
