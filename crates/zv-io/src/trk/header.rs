//! The 1000-byte TrackVis header: reading ([`TrkHeader::parse`], either byte order, told by
//! `hdr_size`) and writing ([`TrkHeader::to_bytes`], little endian, version 2), and the
//! voxmm → RAS+mm affine nibabel applies ([`TrkHeader::voxmm_to_rasmm`]).
//!
//! Byte layout (TrackVis "TRK file format", version 2): `id_string` char\[6\] at 0, `dim`
//! int16\[3\] at 6, `voxel_size` float32\[3\] at 12, `origin` float32\[3\] at 24, `n_scalars`
//! int16 at 36, `scalar_name` char\[10\]\[20\] at 38, `n_properties` int16 at 238,
//! `property_name` char\[10\]\[20\] at 240, `vox_to_ras` float32\[4\]\[4\] at 440, reserved
//! to 948, `voxel_order` char\[4\] at 948, `pad2` at 952, `image_orientation_patient`
//! float32\[6\] at 956, `pad1` at 980, six flag bytes at 982, `n_count` int32 at 988,
//! `version` int32 at 992, `hdr_size` int32 (1000) at 996.

use crate::error::{FileName, Location, Result};
use crate::trk::affine::{self, Mat4};

/// The header's size in bytes.
pub const HEADER_SIZE: usize = 1000;
/// Name slots for scalars and for properties.
pub(crate) const NAME_SLOTS: usize = 10;
/// Bytes per name slot.
pub(crate) const NAME_BYTES: usize = 20;

/// The fields of a TRK header zv reads and writes.
#[derive(Debug, Clone, PartialEq)]
pub struct TrkHeader {
    /// Whether the file is big endian.
    pub big_endian: bool,
    /// The volume's dimensions (voxels).
    pub dimensions: [i16; 3],
    /// The voxel sizes (mm).
    pub voxel_sizes: [f32; 3],
    /// The volume origin (kept, unused by the affine, as in nibabel).
    pub origin: [f32; 3],
    /// Values per point after x, y, z.
    pub n_scalars: usize,
    /// The scalar names and their value counts (nibabel's `name\0count` encoding).
    pub scalar_names: Vec<(String, usize)>,
    /// Values per streamline.
    pub n_properties: usize,
    /// The property names and their value counts.
    pub property_names: Vec<(String, usize)>,
    /// The voxel → RAS+mm affine (identity when the file's is all zero, as nibabel reads it).
    pub vox_to_ras: Mat4,
    /// The voxel order, e.g. `RAS` (`LPS` when the file's is empty, as nibabel reads it).
    pub voxel_order: String,
    /// The streamline count (`0`: not known).
    pub n_count: u64,
    /// The version.
    pub version: i32,
}

impl Default for TrkHeader {
    fn default() -> Self {
        Self {
            big_endian: false,
            dimensions: [1, 1, 1],
            voxel_sizes: [1.0; 3],
            origin: [0.0; 3],
            n_scalars: 0,
            scalar_names: Vec::new(),
            n_properties: 0,
            property_names: Vec::new(),
            vox_to_ras: affine::IDENTITY,
            voxel_order: "RAS".into(),
            n_count: 0,
            version: 2,
        }
    }
}

/// Reads little- or big-endian fields of a header.
struct Fields<'a> {
    b: &'a [u8; HEADER_SIZE],
    be: bool,
}

impl Fields<'_> {
    fn bytes<const N: usize>(&self, at: usize) -> [u8; N] {
        let mut out = [0u8; N];
        out.copy_from_slice(&self.b[at..at + N]);
        out
    }
    fn i16(&self, at: usize) -> i16 {
        let v = self.bytes::<2>(at);
        if self.be {
            i16::from_be_bytes(v)
        } else {
            i16::from_le_bytes(v)
        }
    }
    fn i32(&self, at: usize) -> i32 {
        let v = self.bytes::<4>(at);
        if self.be {
            i32::from_be_bytes(v)
        } else {
            i32::from_le_bytes(v)
        }
    }
    fn f32(&self, at: usize) -> f32 {
        let v = self.bytes::<4>(at);
        if self.be {
            f32::from_be_bytes(v)
        } else {
            f32::from_le_bytes(v)
        }
    }
}

/// Decodes the name slots at `at` as nibabel does: the text before the first NUL is the
/// name, a number after it the value count (1 without one); an empty slot counts 0 values.
fn names(file: &FileName, b: &[u8], at: usize) -> Result<Vec<(String, usize)>> {
    let mut out = Vec::new();
    for slot in 0..NAME_SLOTS {
        let start = at + slot * NAME_BYTES;
        let raw = &b[start..start + NAME_BYTES];
        let end = raw.iter().rposition(|&c| c != 0).map_or(0, |i| i + 1);
        if end == 0 {
            continue;
        }
        let parts: Vec<&[u8]> = raw[..end].split(|&c| c == 0).collect();
        let bad = |what: &str| file.parse(Location::Byte(start as u64), what.to_owned());
        let name = String::from_utf8(parts[0].to_vec())
            .map_err(|_| bad("a scalar or property name is not UTF-8 text"))?;
        let count = match parts.len() {
            1 => 1,
            2 => std::str::from_utf8(parts[1])
                .ok()
                .and_then(|t| t.parse::<usize>().ok())
                .ok_or_else(|| bad("the value count after a name is not a number"))?,
            _ => return Err(bad("a name slot holds bytes after its value count")),
        };
        if count > 0 {
            out.push((name, count));
        }
    }
    Ok(out)
}

/// Checks that the named counts fit in `total`, and names the rest `rest` (as nibabel does).
fn complete(
    file: &FileName,
    at: usize,
    mut named: Vec<(String, usize)>,
    total: usize,
    rest: &str,
) -> Result<Vec<(String, usize)>> {
    let sum: usize = named.iter().map(|n| n.1).sum();
    if sum > total {
        return Err(file.parse(
            Location::Byte(at as u64),
            format!("the names count {sum} values, the header says {total}"),
        ));
    }
    if sum < total {
        named.push((rest.to_owned(), total - sum));
    }
    Ok(named)
}

impl TrkHeader {
    /// Parses the header bytes of `file`.
    pub(crate) fn parse(file: &FileName, b: &[u8; HEADER_SIZE]) -> Result<Self> {
        let at = |o: u64| Location::Byte(o);
        if &b[0..5] != b"TRACK" {
            return Err(file.parse(at(0), "not a TrackVis file (no `TRACK` magic)"));
        }
        let be = match (
            i32::from_le_bytes([b[996], b[997], b[998], b[999]]),
            i32::from_be_bytes([b[996], b[997], b[998], b[999]]),
        ) {
            (1000, _) => false,
            (_, 1000) => true,
            (v, _) => {
                return Err(file.parse(
                    at(996),
                    format!("hdr_size is {v}, not 1000 in either byte order"),
                ))
            }
        };
        let f = Fields { b, be };
        let dimensions = [f.i16(6), f.i16(8), f.i16(10)];
        let voxel_sizes = [f.f32(12), f.f32(16), f.f32(20)];
        if voxel_sizes.iter().any(|v| !v.is_finite() || *v == 0.0) {
            return Err(file.parse(
                at(12),
                format!("voxel sizes {voxel_sizes:?} are not finite and non-zero"),
            ));
        }
        let origin = [f.f32(24), f.f32(28), f.f32(32)];
        let count = |o: usize, what: &str| {
            usize::try_from(f.i16(o))
                .map_err(|_| file.parse(at(o as u64), format!("{what} is negative")))
        };
        let n_scalars = count(36, "n_scalars")?;
        let n_properties = count(238, "n_properties")?;
        let scalar_names = complete(file, 38, names(file, b, 38)?, n_scalars, "scalars")?;
        let property_names = complete(file, 240, names(file, b, 240)?, n_properties, "properties")?;
        let mut vox_to_ras = [[0.0; 4]; 4];
        for (r, row) in vox_to_ras.iter_mut().enumerate() {
            for (c, v) in row.iter_mut().enumerate() {
                *v = f64::from(f.f32(440 + 4 * (4 * r + c)));
            }
        }
        if vox_to_ras[3][3] == 0.0 {
            vox_to_ras = affine::IDENTITY;
        }
        if vox_to_ras.iter().flatten().any(|v| !v.is_finite()) {
            return Err(file.parse(at(440), "vox_to_ras is not finite"));
        }
        let order = &b[948..952];
        let end = order.iter().position(|&c| c == 0).unwrap_or(4);
        let voxel_order = match std::str::from_utf8(&order[..end]) {
            Ok("") => "LPS".to_owned(),
            Ok(t) => t.to_ascii_uppercase(),
            Err(_) => return Err(file.parse(at(948), "voxel_order is not text")),
        };
        let n_count =
            u64::try_from(f.i32(988)).map_err(|_| file.parse(at(988), "n_count is negative"))?;
        Ok(Self {
            big_endian: be,
            dimensions,
            voxel_sizes,
            origin,
            n_scalars,
            scalar_names,
            n_properties,
            property_names,
            vox_to_ras,
            voxel_order,
            n_count,
            version: f.i32(992),
        })
    }

    /// The header as little-endian bytes (version 2; the names encoded as nibabel does).
    /// Names that do not fit their slots, or more than ten, are refused.
    pub(crate) fn to_bytes(&self, file: &FileName) -> Result<[u8; HEADER_SIZE]> {
        let mut b = [0u8; HEADER_SIZE];
        b[0..6].copy_from_slice(b"TRACK\0");
        let mut put = |at: usize, v: &[u8]| b[at..at + v.len()].copy_from_slice(v);
        for i in 0..3 {
            put(6 + 2 * i, &self.dimensions[i].to_le_bytes());
            put(12 + 4 * i, &self.voxel_sizes[i].to_le_bytes());
            put(24 + 4 * i, &self.origin[i].to_le_bytes());
        }
        let small = |n: usize, what: &str| {
            i16::try_from(n).map_err(|_| file.unsupported(format!("{n} {what} per item")))
        };
        put(36, &small(self.n_scalars, "scalars")?.to_le_bytes());
        put(238, &small(self.n_properties, "properties")?.to_le_bytes());
        for (at, list) in [(38, &self.scalar_names), (240, &self.property_names)] {
            if list.len() > NAME_SLOTS {
                return Err(file.unsupported(format!(
                    "TRK has {NAME_SLOTS} name slots for scalars and for properties; {} are needed",
                    list.len()
                )));
            }
            for (i, (name, count)) in list.iter().enumerate() {
                let text = if *count == 1 {
                    name.clone()
                } else {
                    format!("{name}\0{count}")
                };
                if text.len() > NAME_BYTES || name.as_bytes().contains(&0) {
                    return Err(file.unsupported(format!(
                        "the name `{name}` does not fit TRK's {NAME_BYTES}-byte name slot"
                    )));
                }
                put(at + i * NAME_BYTES, text.as_bytes());
            }
        }
        for (r, row) in self.vox_to_ras.iter().enumerate() {
            for (c, v) in row.iter().enumerate() {
                put(440 + 4 * (4 * r + c), &(*v as f32).to_le_bytes());
            }
        }
        let order = self.voxel_order.as_bytes();
        put(948, &order[..order.len().min(4)]);
        let n = i32::try_from(self.n_count)
            .map_err(|_| file.unsupported(format!("{} streamlines", self.n_count)))?;
        put(988, &n.to_le_bytes());
        put(992, &2i32.to_le_bytes());
        put(996, &(HEADER_SIZE as i32).to_le_bytes());
        Ok(b)
    }

    /// The voxmm → RAS+mm affine nibabel applies on load (`get_affine_trackvis_to_rasmm`):
    /// divide by the voxel sizes, shift by half a voxel (TrackVis puts 0 at a voxel's
    /// corner), reorder the voxel axes from `voxel_order` to the order of `vox_to_ras`, then
    /// `vox_to_ras`. Rounded to float32, as nibabel's is.
    pub(crate) fn voxmm_to_rasmm(&self, file: &FileName) -> Result<Mat4> {
        let mut scale = affine::IDENTITY;
        for (i, row) in scale.iter_mut().take(3).enumerate() {
            row[i] = 1.0 / f64::from(self.voxel_sizes[i]);
        }
        let mut offset = affine::IDENTITY;
        for row in offset.iter_mut().take(3) {
            row[3] = -0.5;
        }
        let reorder = affine::reorder(&self.voxel_order, &self.vox_to_ras, self.dimensions)
            .ok_or_else(|| {
                file.unsupported(format!(
                    "voxel_order `{}` is not three of L/R, P/A, I/S",
                    self.voxel_order
                ))
            })?;
        let m = affine::mul(
            &self.vox_to_ras,
            &affine::mul(&reorder, &affine::mul(&offset, &scale)),
        );
        Ok(affine::round_f32(&m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file() -> FileName {
        FileName("t.trk".into())
    }

    #[test]
    fn a_header_round_trips_and_big_endian_is_told_by_hdr_size() {
        let h = TrkHeader {
            scalar_names: vec![("fa".into(), 1), ("rgb".into(), 3)],
            n_scalars: 4,
            property_names: vec![("len".into(), 1)],
            n_properties: 1,
            n_count: 7,
            voxel_sizes: [2.0, 2.0, 2.5],
            dimensions: [10, 20, 30],
            ..TrkHeader::default()
        };
        let b = h.to_bytes(&file()).unwrap_or([0; HEADER_SIZE]);
        assert_eq!(TrkHeader::parse(&file(), &b).ok().as_ref(), Some(&h));
        // the same header, big endian
        let mut be = b;
        for (at, n) in [
            (6, 2),
            (8, 2),
            (10, 2),
            (36, 2),
            (238, 2),
            (988, 4),
            (992, 4),
            (996, 4),
        ]
        .into_iter()
        .chain((12..36).step_by(4).map(|a| (a, 4)))
        .chain((440..504).step_by(4).map(|a| (a, 4)))
        {
            be[at..at + n].reverse();
        }
        let parsed = TrkHeader::parse(&file(), &be).ok();
        assert_eq!(parsed.as_ref().map(|p| p.big_endian), Some(true));
        assert_eq!(
            parsed.map(|p| TrkHeader {
                big_endian: false,
                ..p
            }),
            Some(h)
        );
    }

    #[test]
    fn garbage_headers_are_errors_naming_the_byte() {
        let good = TrkHeader::default()
            .to_bytes(&file())
            .unwrap_or([0; HEADER_SIZE]);
        let err = |b: &[u8; HEADER_SIZE]| {
            TrkHeader::parse(&file(), b)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        let mut b = good;
        b[0] = b'X';
        assert!(err(&b).contains("t.trk: byte 0: not a TrackVis file"));
        let mut b = good;
        b[996..1000].copy_from_slice(&999i32.to_le_bytes());
        assert!(err(&b).contains("byte 996: hdr_size is 999"));
        let mut b = good;
        b[36..38].copy_from_slice(&(-1i16).to_le_bytes());
        assert!(err(&b).contains("byte 36: n_scalars is negative"));
        let mut b = good;
        b[12..16].copy_from_slice(&0f32.to_le_bytes());
        assert!(err(&b).contains("byte 12: voxel sizes"));
        let mut b = good;
        b[988..992].copy_from_slice(&(-5i32).to_le_bytes());
        assert!(err(&b).contains("byte 988: n_count is negative"));
        let mut b = good;
        b[38..41].copy_from_slice(b"fa\0");
        b[41] = b'x';
        assert!(err(&b).contains("byte 38: the value count"));
        let mut b = good;
        b[38..40].copy_from_slice(b"fa");
        assert!(err(&b).contains("byte 38: the names count 1 values, the header says 0"));
    }

    #[test]
    fn unnamed_values_are_named_as_nibabel_names_them() {
        let mut h = TrkHeader {
            n_scalars: 2,
            n_properties: 1,
            ..TrkHeader::default()
        };
        let b = h.to_bytes(&file()).unwrap_or([0; HEADER_SIZE]);
        h.scalar_names = vec![("scalars".into(), 2)];
        h.property_names = vec![("properties".into(), 1)];
        assert_eq!(TrkHeader::parse(&file(), &b).ok(), Some(h));
    }
}
