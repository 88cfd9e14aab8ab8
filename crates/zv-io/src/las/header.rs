//! The header facts an import keeps as the root attribute [`HEADER_ATTRIBUTE`], and the header
//! an export writes from them (or, for a store that has none, from its attributes).

use serde_json::{json, Value};

use super::dims::Dim;
use crate::error::{FileName, Result};

/// The root attribute holding the header of an imported LAS/LAZ file.
pub const HEADER_ATTRIBUTE: &str = "las_header";

/// A variable length record kept from the file.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct KeptVlr {
    pub(crate) user_id: String,
    pub(crate) record_id: u16,
    pub(crate) description: String,
    pub(crate) data: Vec<u8>,
    /// An extended VLR (stored after the points, LAS 1.4).
    pub(crate) extended: bool,
}

/// The header facts kept beside the points.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Kept {
    pub(crate) version: (u8, u8),
    pub(crate) point_format: u8,
    pub(crate) scale: [f64; 3],
    pub(crate) offset: [f64; 3],
    pub(crate) system_identifier: String,
    pub(crate) generating_software: String,
    pub(crate) file_source_id: u16,
    /// The global encoding's GPS time type: standard (`true`) or week time.
    pub(crate) gps_standard_time: bool,
    pub(crate) vlrs: Vec<KeptVlr>,
}

/// Whether a VLR is the LAZ compression record (the writer adds its own).
fn is_laszip(v: &las::Vlr) -> bool {
    v.user_id == "laszip encoded" && v.record_id == 22204
}

impl Kept {
    /// The facts of a file's header.
    pub(crate) fn of(h: &las::Header) -> Result<Self, las::Error> {
        let t = h.transforms();
        let vlr = |v: &las::Vlr, extended| KeptVlr {
            user_id: v.user_id.clone(),
            record_id: v.record_id,
            description: v.description.clone(),
            data: v.data.clone(),
            extended,
        };
        let mut vlrs: Vec<KeptVlr> = h
            .vlrs()
            .iter()
            .filter(|v| !is_laszip(v))
            .map(|v| vlr(v, false))
            .collect();
        vlrs.extend(h.evlrs().iter().map(|v| vlr(v, true)));
        Ok(Self {
            version: (h.version().major, h.version().minor),
            point_format: h.point_format().to_u8()?,
            scale: [t.x.scale, t.y.scale, t.z.scale],
            offset: [t.x.offset, t.y.offset, t.z.offset],
            system_identifier: h.system_identifier().to_owned(),
            generating_software: h.generating_software().to_owned(),
            file_source_id: h.file_source_id(),
            gps_standard_time: h.gps_time_type().is_standard(),
            vlrs,
        })
    }

    /// The facts as JSON (the VLR payloads as hex text).
    pub(crate) fn to_json(&self) -> Value {
        let vlrs: Vec<Value> = self
            .vlrs
            .iter()
            .map(|v| {
                json!({
                    "user_id": v.user_id,
                    "record_id": v.record_id,
                    "description": v.description,
                    "extended": v.extended,
                    "data_hex": hex(&v.data),
                })
            })
            .collect();
        json!({
            "version": format!("{}.{}", self.version.0, self.version.1),
            "point_format": self.point_format,
            "scale": self.scale,
            "offset": self.offset,
            "system_identifier": self.system_identifier,
            "generating_software": self.generating_software,
            "file_source_id": self.file_source_id,
            "gps_time_type": if self.gps_standard_time { "standard" } else { "week" },
            "vlrs": vlrs,
        })
    }

    /// The facts of the kept JSON; a missing or malformed field is an error naming it.
    pub(crate) fn from_json(file: &FileName, v: &Value) -> Result<Self> {
        let bad = |field: &str| {
            file.unsupported(format!(
                "root attribute `{HEADER_ATTRIBUTE}`: `{field}` is missing or malformed"
            ))
        };
        let text = |field: &str| -> Result<String> {
            Ok(v.get(field)
                .and_then(Value::as_str)
                .ok_or_else(|| bad(field))?
                .to_owned())
        };
        let int = |field: &str, max: u64| -> Result<u64> {
            v.get(field)
                .and_then(Value::as_u64)
                .filter(|n| *n <= max)
                .ok_or_else(|| bad(field))
        };
        let triple = |field: &str| -> Result<[f64; 3]> {
            let a: Vec<f64> = v
                .get(field)
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_f64).collect())
                .unwrap_or_default();
            match a[..] {
                [x, y, z] if a.iter().all(|f| f.is_finite()) => Ok([x, y, z]),
                _ => Err(bad(field)),
            }
        };
        let version = text("version")?;
        let version = version
            .split_once('.')
            .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
            .ok_or_else(|| bad("version"))?;
        let scale = triple("scale")?;
        if scale.contains(&0.0) {
            return Err(bad("scale"));
        }
        let mut vlrs = Vec::new();
        for r in v
            .get("vlrs")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let s = |f: &str| r.get(f).and_then(Value::as_str).ok_or_else(|| bad("vlrs"));
            vlrs.push(KeptVlr {
                user_id: s("user_id")?.to_owned(),
                record_id: r
                    .get("record_id")
                    .and_then(Value::as_u64)
                    .and_then(|n| u16::try_from(n).ok())
                    .ok_or_else(|| bad("vlrs"))?,
                description: s("description")?.to_owned(),
                data: unhex(s("data_hex")?).ok_or_else(|| bad("vlrs"))?,
                extended: r.get("extended").and_then(Value::as_bool).unwrap_or(false),
            });
        }
        Ok(Self {
            version,
            point_format: int("point_format", 10)? as u8,
            scale,
            offset: triple("offset")?,
            system_identifier: text("system_identifier")?,
            generating_software: text("generating_software")?,
            file_source_id: int("file_source_id", u16::MAX.into())? as u16,
            gps_standard_time: text("gps_time_type")? == "standard",
            vlrs,
        })
    }

    /// The facts for a store imported from elsewhere: LAS 1.2 point format 0–3 (1.4 format 6–8
    /// when it has extended dimensions), chosen by the attributes present; scale 0.001 and an
    /// offset at the whole units below the smallest position.
    pub(crate) fn default_for(names: &[&str], lo: [f64; 3]) -> Self {
        let has = |d: Dim| names.contains(&d.name());
        let gps = has(Dim::GpsTime);
        let color = has(Dim::Red) || has(Dim::Green) || has(Dim::Blue);
        let nir = has(Dim::Nir);
        let extended = nir || has(Dim::ScanAngle) || has(Dim::Overlap) || has(Dim::ScannerChannel);
        let (version, point_format) = match (extended, gps, color) {
            (true, _, _) if nir => ((1, 4), 8),
            (true, _, true) => ((1, 4), 7),
            (true, _, false) => ((1, 4), 6),
            (false, false, false) => ((1, 2), 0),
            (false, true, false) => ((1, 2), 1),
            (false, false, true) => ((1, 2), 2),
            (false, true, true) => ((1, 2), 3),
        };
        Self {
            version,
            point_format,
            scale: [0.001; 3],
            offset: lo.map(|v| if v.is_finite() { v.floor() } else { 0.0 }),
            system_identifier: String::new(),
            generating_software: "zv".into(),
            file_source_id: 0,
            gps_standard_time: false,
            vlrs: Vec::new(),
        }
    }

    /// The `las` header of these facts, compressed (LAZ) or not.
    pub(crate) fn header(&self, compressed: bool) -> Result<las::Header, las::Error> {
        let mut b = las::Builder::from(self.version);
        b.point_format = las::point::Format::new(self.point_format)?;
        b.point_format.is_compressed = compressed;
        let t = |a: usize| las::Transform {
            scale: self.scale[a],
            offset: self.offset[a],
        };
        b.transforms = las::Vector {
            x: t(0),
            y: t(1),
            z: t(2),
        };
        b.system_identifier = self.system_identifier.clone();
        b.generating_software = self.generating_software.clone();
        b.file_source_id = self.file_source_id;
        if self.gps_standard_time {
            b.gps_time_type = las::GpsTimeType::Standard;
        }
        for v in &self.vlrs {
            let vlr = las::Vlr {
                user_id: v.user_id.clone(),
                record_id: v.record_id,
                description: v.description.clone(),
                data: v.data.clone(),
            };
            if v.extended {
                b.evlrs.push(vlr);
            } else {
                b.vlrs.push(vlr);
            }
        }
        b.into_header()
    }
}

/// Bytes as lowercase hex text.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    s
}

/// The bytes of hex text (either case); `None` if it is not hex.
pub(crate) fn unhex(s: &str) -> Option<Vec<u8>> {
    let digit = |c: u8| char::from(c).to_digit(16).map(|d| d as u8);
    let b = s.as_bytes();
    if b.len() % 2 != 0 {
        return None;
    }
    b.chunks_exact(2)
        .map(|p| Some(digit(p[0])? << 4 | digit(p[1])?))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn default_formats_follow_the_attributes() {
        let f = |names: &[&str]| Kept::default_for(names, [1.5, -2.5, 0.0]);
        assert_eq!(f(&[]).point_format, 0);
        assert_eq!(f(&["gps_time", "red"]).point_format, 3);
        assert_eq!(f(&["scan_angle"]).version, (1, 4));
        assert_eq!(f(&["nir", "red"]).point_format, 8);
        assert_eq!(f(&[]).offset, [1.0, -3.0, 0.0]);
    }

    #[test]
    fn malformed_kept_headers_are_refused_by_field() {
        let file = FileName("s".into());
        let mut v = Kept::default_for(&[], [0.0; 3]).to_json();
        v["scale"] = json!([0.001, 0.0, 1.0]);
        let e = Kept::from_json(&file, &v).err().map(|e| e.to_string());
        assert!(e.is_some_and(|e| e.contains("`scale`")));
        v["scale"] = json!([1.0, 1.0, 1.0]);
        v["point_format"] = json!(11);
        let e = Kept::from_json(&file, &v).err().map(|e| e.to_string());
        assert!(e.is_some_and(|e| e.contains("`point_format`")));
    }

    proptest! {
        #[test]
        fn hex_round_trip(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
            prop_assert_eq!(unhex(&hex(&bytes)), Some(bytes.clone()));
            prop_assert_eq!(unhex(&hex(&bytes).to_uppercase()), Some(bytes));
        }

        #[test]
        fn kept_json_round_trip(format in 0u8..=10, scale in 1e-6f64..10.0, offset in -1e6f64..1e6,
                                id in any::<u16>(), data in prop::collection::vec(any::<u8>(), 0..40)) {
            let k = Kept {
                version: (1, 4),
                point_format: format,
                scale: [scale, scale * 2.0, scale / 4.0],
                offset: [offset, -offset, 0.5],
                system_identifier: "sys".into(),
                generating_software: "gen".into(),
                file_source_id: id,
                gps_standard_time: id % 2 == 0,
                vlrs: vec![KeptVlr {
                    user_id: "LASF_Projection".into(),
                    record_id: id,
                    description: "d".into(),
                    data,
                    extended: id % 3 == 0,
                }],
            };
            let back = Kept::from_json(&FileName("s".into()), &k.to_json());
            prop_assert_eq!(back.ok(), Some(k));
        }
    }
}
