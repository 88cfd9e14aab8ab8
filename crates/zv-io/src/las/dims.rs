//! The standard dimensions of a LAS point record, kept as vertex attributes under laspy's
//! names, and the packing of the flag bytes (written here: the `las` crate's `Point` maps
//! classification 12 to an overlap flag in the legacy formats and turns the scan angle into
//! degrees, so import and export go through its raw records, whose flag bytes are packed here).

use las::point::Format;
use las::raw::point::{Flags, ScanAngle};
use zv_core::data_type::DataType;

/// A standard dimension of a LAS point record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dim {
    Intensity,
    ReturnNumber,
    NumberOfReturns,
    ScanDirectionFlag,
    EdgeOfFlightLine,
    Classification,
    Synthetic,
    KeyPoint,
    Withheld,
    Overlap,
    ScannerChannel,
    ScanAngleRank,
    ScanAngle,
    UserData,
    PointSourceId,
    GpsTime,
    Red,
    Green,
    Blue,
    Nir,
}

/// Every dimension, in the order of [`Dim`] (the index of [`Values`]).
pub(crate) const ALL: [Dim; 20] = [
    Dim::Intensity,
    Dim::ReturnNumber,
    Dim::NumberOfReturns,
    Dim::ScanDirectionFlag,
    Dim::EdgeOfFlightLine,
    Dim::Classification,
    Dim::Synthetic,
    Dim::KeyPoint,
    Dim::Withheld,
    Dim::Overlap,
    Dim::ScannerChannel,
    Dim::ScanAngleRank,
    Dim::ScanAngle,
    Dim::UserData,
    Dim::PointSourceId,
    Dim::GpsTime,
    Dim::Red,
    Dim::Green,
    Dim::Blue,
    Dim::Nir,
];

/// The values of one point's dimensions, indexed by `Dim as usize`.
pub(crate) type Values = [f64; ALL.len()];

impl Dim {
    /// The attribute name (laspy's dimension name).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Dim::Intensity => "intensity",
            Dim::ReturnNumber => "return_number",
            Dim::NumberOfReturns => "number_of_returns",
            Dim::ScanDirectionFlag => "scan_direction_flag",
            Dim::EdgeOfFlightLine => "edge_of_flight_line",
            Dim::Classification => "classification",
            Dim::Synthetic => "synthetic",
            Dim::KeyPoint => "key_point",
            Dim::Withheld => "withheld",
            Dim::Overlap => "overlap",
            Dim::ScannerChannel => "scanner_channel",
            Dim::ScanAngleRank => "scan_angle_rank",
            Dim::ScanAngle => "scan_angle",
            Dim::UserData => "user_data",
            Dim::PointSourceId => "point_source_id",
            Dim::GpsTime => "gps_time",
            Dim::Red => "red",
            Dim::Green => "green",
            Dim::Blue => "blue",
            Dim::Nir => "nir",
        }
    }

    /// The dimension of an attribute name.
    pub(crate) fn from_name(name: &str) -> Option<Dim> {
        ALL.into_iter().find(|d| d.name() == name)
    }

    /// The stored type (flags as uint8 0/1).
    pub(crate) fn data_type(self) -> DataType {
        match self {
            Dim::Intensity | Dim::PointSourceId | Dim::Red | Dim::Green | Dim::Blue | Dim::Nir => {
                DataType::UInt16
            }
            Dim::ScanAngleRank => DataType::Int8,
            Dim::ScanAngle => DataType::Int16,
            Dim::GpsTime => DataType::Float64,
            _ => DataType::UInt8,
        }
    }

    /// The values the dimension holds in a point format (`extended`: formats 6–10), as an
    /// inclusive range; `None` for any float64.
    pub(crate) fn range(self, extended: bool) -> Option<(f64, f64)> {
        Some(match self {
            Dim::ReturnNumber | Dim::NumberOfReturns if extended => (0.0, 15.0),
            Dim::ReturnNumber | Dim::NumberOfReturns => (0.0, 7.0),
            Dim::Classification if extended => (0.0, 255.0),
            Dim::Classification => (0.0, 31.0),
            Dim::ScannerChannel => (0.0, 3.0),
            Dim::ScanDirectionFlag
            | Dim::EdgeOfFlightLine
            | Dim::Synthetic
            | Dim::KeyPoint
            | Dim::Withheld
            | Dim::Overlap => (0.0, 1.0),
            Dim::ScanAngleRank => (-128.0, 127.0),
            Dim::ScanAngle => (-32768.0, 32767.0),
            Dim::UserData => (0.0, 255.0),
            Dim::GpsTime => return None,
            _ => (0.0, 65535.0),
        })
    }
}

/// The dimensions of a point format, in laspy's order.
pub(crate) fn dims_of(format: &Format) -> Vec<Dim> {
    let mut d = vec![Dim::Intensity, Dim::ReturnNumber, Dim::NumberOfReturns];
    if format.is_extended {
        d.extend([
            Dim::Synthetic,
            Dim::KeyPoint,
            Dim::Withheld,
            Dim::Overlap,
            Dim::ScannerChannel,
            Dim::ScanDirectionFlag,
            Dim::EdgeOfFlightLine,
            Dim::Classification,
            Dim::UserData,
            Dim::ScanAngle,
        ]);
    } else {
        d.extend([
            Dim::ScanDirectionFlag,
            Dim::EdgeOfFlightLine,
            Dim::Classification,
            Dim::Synthetic,
            Dim::KeyPoint,
            Dim::Withheld,
            Dim::ScanAngleRank,
            Dim::UserData,
        ]);
    }
    d.push(Dim::PointSourceId);
    if format.has_gps_time {
        d.push(Dim::GpsTime);
    }
    if format.has_color {
        d.extend([Dim::Red, Dim::Green, Dim::Blue]);
    }
    if format.has_nir {
        d.push(Dim::Nir);
    }
    d
}

/// The dimension values of a raw point (every dimension the record lacks is 0).
pub(crate) fn decode(p: &las::raw::Point) -> Values {
    let mut v = [0.0; ALL.len()];
    let mut set = |d: Dim, x: f64| v[d as usize] = x;
    set(Dim::Intensity, p.intensity.into());
    let bit = |b: u8, i: u32| f64::from((b >> i) & 1);
    match p.flags {
        Flags::TwoByte(a, b) => {
            set(Dim::ReturnNumber, (a & 7).into());
            set(Dim::NumberOfReturns, ((a >> 3) & 7).into());
            set(Dim::ScanDirectionFlag, bit(a, 6));
            set(Dim::EdgeOfFlightLine, bit(a, 7));
            set(Dim::Classification, (b & 31).into());
            set(Dim::Synthetic, bit(b, 5));
            set(Dim::KeyPoint, bit(b, 6));
            set(Dim::Withheld, bit(b, 7));
        }
        Flags::ThreeByte(a, b, c) => {
            set(Dim::ReturnNumber, (a & 15).into());
            set(Dim::NumberOfReturns, (a >> 4).into());
            set(Dim::Synthetic, bit(b, 0));
            set(Dim::KeyPoint, bit(b, 1));
            set(Dim::Withheld, bit(b, 2));
            set(Dim::Overlap, bit(b, 3));
            set(Dim::ScannerChannel, ((b >> 4) & 3).into());
            set(Dim::ScanDirectionFlag, bit(b, 6));
            set(Dim::EdgeOfFlightLine, bit(b, 7));
            set(Dim::Classification, c.into());
        }
    }
    match p.scan_angle {
        ScanAngle::Rank(r) => set(Dim::ScanAngleRank, r.into()),
        ScanAngle::Scaled(s) => set(Dim::ScanAngle, s.into()),
    }
    set(Dim::UserData, p.user_data.into());
    set(Dim::PointSourceId, p.point_source_id.into());
    if let Some(t) = p.gps_time {
        set(Dim::GpsTime, t);
    }
    if let Some(c) = p.color {
        set(Dim::Red, c.red.into());
        set(Dim::Green, c.green.into());
        set(Dim::Blue, c.blue.into());
    }
    if let Some(n) = p.nir {
        set(Dim::Nir, n.into());
    }
    v
}

/// The raw point of `format` at integer coordinates `xyz` with the dimension values `v`, each
/// already within [`Dim::range`] (integers are truncated to their field's bits).
pub(crate) fn encode(xyz: [i32; 3], v: &Values, format: &Format) -> las::raw::Point {
    let g = |d: Dim| v[d as usize];
    let u = |d: Dim| g(d) as u8;
    let flags = if format.is_extended {
        Flags::ThreeByte(
            (u(Dim::ReturnNumber) & 15) | (u(Dim::NumberOfReturns) & 15) << 4,
            (u(Dim::Synthetic) & 1)
                | (u(Dim::KeyPoint) & 1) << 1
                | (u(Dim::Withheld) & 1) << 2
                | (u(Dim::Overlap) & 1) << 3
                | (u(Dim::ScannerChannel) & 3) << 4
                | (u(Dim::ScanDirectionFlag) & 1) << 6
                | (u(Dim::EdgeOfFlightLine) & 1) << 7,
            u(Dim::Classification),
        )
    } else {
        Flags::TwoByte(
            (u(Dim::ReturnNumber) & 7)
                | (u(Dim::NumberOfReturns) & 7) << 3
                | (u(Dim::ScanDirectionFlag) & 1) << 6
                | (u(Dim::EdgeOfFlightLine) & 1) << 7,
            (u(Dim::Classification) & 31)
                | (u(Dim::Synthetic) & 1) << 5
                | (u(Dim::KeyPoint) & 1) << 6
                | (u(Dim::Withheld) & 1) << 7,
        )
    };
    let u16_of = |d: Dim| g(d) as u16;
    las::raw::Point {
        x: xyz[0],
        y: xyz[1],
        z: xyz[2],
        intensity: u16_of(Dim::Intensity),
        flags,
        scan_angle: if format.is_extended {
            ScanAngle::Scaled(g(Dim::ScanAngle) as i16)
        } else {
            ScanAngle::Rank(g(Dim::ScanAngleRank) as i8)
        },
        user_data: u(Dim::UserData),
        point_source_id: u16_of(Dim::PointSourceId),
        gps_time: format.has_gps_time.then(|| g(Dim::GpsTime)),
        color: format
            .has_color
            .then(|| las::Color::new(u16_of(Dim::Red), u16_of(Dim::Green), u16_of(Dim::Blue))),
        waveform: None,
        nir: format.has_nir.then(|| u16_of(Dim::Nir)),
        extra_bytes: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn names_parse_back_and_formats_have_laspy_s_dimensions() {
        for d in ALL {
            assert_eq!(Dim::from_name(d.name()), Some(d));
            assert_eq!(ALL[d as usize], d);
        }
        let f = |n| Format::new(n).map(|f| dims_of(&f).len()).unwrap_or(0);
        // laspy: format 0 has 12 dimensions besides X, Y, Z; 1 adds gps_time, 3 also rgb; 6 has 15
        assert_eq!(
            [f(0), f(1), f(3), f(6), f(7), f(8)],
            [12, 13, 16, 15, 18, 19]
        );
    }

    proptest! {
        #[test]
        fn encode_decode_round_trip(n in prop::sample::select(vec![0u8, 1, 2, 3, 6, 7, 8]),
                                    raw in prop::collection::vec(any::<u64>(), ALL.len()),
                                    xyz in any::<[i32; 3]>()) {
            let format = Format::new(n).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let dims = dims_of(&format);
            let mut v = [0.0; ALL.len()];
            for (d, r) in dims.iter().zip(&raw) {
                v[*d as usize] = match d.range(format.is_extended) {
                    Some((lo, hi)) => lo + (*r % (hi - lo + 1.0) as u64) as f64,
                    None => f64::from_bits(*r),
                };
            }
            let p = encode(xyz, &v, &format);
            let mut bytes = Vec::new();
            p.write_to(&mut bytes, &format).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(bytes.len(), usize::from(format.len()));
            let back = las::raw::Point::read_from(&bytes[..], &format)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!([back.x, back.y, back.z], xyz);
            let w = decode(&back);
            for d in dims {
                let (a, b) = (v[d as usize], w[d as usize]);
                prop_assert!(a == b || (a.is_nan() && b.is_nan()), "{}: {} != {}", d.name(), a, b);
            }
        }
    }
}
