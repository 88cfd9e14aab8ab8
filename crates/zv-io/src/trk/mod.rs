//! TrackVis `.trk`: tractography streamlines.
//!
//! **Import** ([`import`]): one object per streamline, in file order (streamline geometry,
//! float32 positions). Positions are stored in RAS+mm, as nibabel's `streamlines` API presents
//! them: the file's voxmm points go through [`TrkHeader::voxmm_to_rasmm`] (nibabel's
//! `get_affine_trackvis_to_rasmm`; see `docs/format-decisions.md`, "TRK and TCK"). Per-point
//! scalars become float32 vertex attributes and per-streamline properties float32 object
//! attributes, named as nibabel names them (`name` or `name\0count` slots give a
//! multi-channel attribute; unnamed values are `scalars` / `properties`). The header is kept as
//! the root attribute [`HEADER_ATTRIBUTE`] (dimensions, voxel sizes, origin, `vox_to_ras`,
//! voxel order) and written back by export. Either byte order is read (told by `hdr_size`);
//! `n_count` 0 means "read to the end"; otherwise the file must hold exactly that many
//! streamlines. A point count is checked against the bytes left in the file before anything
//! is allocated for it, so a header that lies is an error naming the byte, not an allocation.
//!
//! **Export** ([`export`]): level 0 of a 3-D streamline, polyline or line store, a batch of
//! objects at a time ([`zv_format::export::polylines`]), little endian, version 2; the positions go back through the inverse affine of the kept header (a
//! store without one gets an identity `vox_to_ras`, voxel size 1, `RAS`). Numeric vertex
//! attributes become scalars and numeric object attributes properties (as float32; at most
//! ten names of each, each fitting TRK's 20-byte name slot); categorical ones are refused.
//!
//! Written by hand: no maintained Rust crate reads and writes TRK (`trk-io` is unmaintained
//! and reads whole files); the format is a 1000-byte header and runs of float32.

pub(crate) mod affine;
mod header;

use std::io::{Read, Write};
use std::path::Path;
use std::sync::Arc;

use serde_json::json;
use zv_core::data_type::DataType;
use zv_core::store::Store;
use zv_format::writer::WriteSummary;
use zv_format::ZvStore;

use crate::error::{FileName, Location, Result};
use crate::options::ImportOptions;
use crate::root_attrs::add_root_attribute;
use crate::source::Source;
use crate::streamlines::{
    each_polyline, object_value, row_value, streamline_stream, StreamlineSink, ValueColumn,
};
use zv_format::export::polylines::Polyline;
use zv_format::progress::Progress;

pub use header::{TrkHeader, HEADER_SIZE};

/// The root attribute holding the imported header.
pub const HEADER_ATTRIBUTE: &str = "trk_header";

/// Imports the TRK file at `path` into `store` (empty). See the [module docs](self).
pub fn import(path: &Path, store: Arc<dyn Store>, opts: &ImportOptions) -> Result<WriteSummary> {
    let file = FileName(path.display().to_string());
    let f = crate::source::open(path, &file, opts)?;
    let len = f.get_ref().metadata().map_err(|e| file.io(e))?.len();
    import_reader(f, len, file, store, opts)
}

/// Reads one float32 of the file's byte order.
fn f32_at(b: &[u8], be: bool) -> f64 {
    let v = [b[0], b[1], b[2], b[3]];
    f64::from(if be {
        f32::from_be_bytes(v)
    } else {
        f32::from_le_bytes(v)
    })
}

/// Imports TRK from `reader` of `len` bytes, named `file` in errors.
pub(crate) fn import_reader<R: Read>(
    reader: R,
    len: u64,
    file: FileName,
    store: Arc<dyn Store>,
    opts: &ImportOptions,
) -> Result<WriteSummary> {
    let mut src = Source::new(reader, file.clone());
    let mut hb = [0u8; HEADER_SIZE];
    if !src.read_exact(&mut hb)? {
        return Err(file.parse(
            src.byte(),
            format!("the file ends inside the {HEADER_SIZE}-byte header"),
        ));
    }
    let h = TrkHeader::parse(&file, &hb)?;
    let to_ras = h.voxmm_to_rasmm(&file)?;
    let (ns, np, be) = (h.n_scalars, h.n_properties, h.big_endian);
    let mut sink = StreamlineSink::new(&file, store.clone(), DataType::Float32, opts);
    sink.point_values = h
        .scalar_names
        .iter()
        .map(|(n, c)| ValueColumn::new(n, *c))
        .collect();
    sink.streamline_values = h
        .property_names
        .iter()
        .map(|(n, c)| ValueColumn::new(n, *c))
        .collect();
    let row = 4 * (3 + ns);
    let mut buf = vec![0u8; row.max(4 * np)];
    loop {
        if h.n_count > 0 && sink.streamlines() == h.n_count {
            if !src.at_end()? {
                return Err(file.parse(
                    src.byte(),
                    format!(
                        "the header says {} streamlines, but bytes follow the last",
                        h.n_count
                    ),
                ));
            }
            break;
        }
        let start = src.byte();
        let mut nb = [0u8; 4];
        if !src.read_exact(&mut nb)? {
            if src.byte() != start || (h.n_count > 0 && sink.streamlines() < h.n_count) {
                return Err(file.parse(
                    start,
                    format!(
                        "the file ends after {} streamlines{}",
                        sink.streamlines(),
                        if h.n_count > 0 {
                            format!(", the header says {}", h.n_count)
                        } else {
                            String::new()
                        }
                    ),
                ));
            }
            break;
        }
        let n = if be {
            i32::from_be_bytes(nb)
        } else {
            i32::from_le_bytes(nb)
        };
        let Location::Byte(pos) = src.byte() else {
            break;
        };
        let need = u64::try_from(n)
            .ok()
            .and_then(|n| n.checked_mul(row as u64))
            .and_then(|b| b.checked_add(4 * np as u64));
        match need {
            Some(need) if need <= len.saturating_sub(pos) => {}
            _ => {
                return Err(file.parse(
                    start,
                    format!(
                        "streamline {} claims {n} points, more than the {} bytes left hold",
                        sink.streamlines(),
                        len.saturating_sub(pos)
                    ),
                ))
            }
        }
        for _ in 0..n {
            let at = src.byte();
            if !src.read_exact(&mut buf[..row])? {
                return Err(file.parse(at, "the file ends inside a streamline"));
            }
            let p = [
                f32_at(&buf[0..], be),
                f32_at(&buf[4..], be),
                f32_at(&buf[8..], be),
            ];
            sink.push_point(affine::apply(&to_ras, p));
            let mut k = 3;
            for col in &mut sink.point_values {
                for _ in 0..col.channels {
                    col.push(f32_at(&buf[4 * k..], be));
                    k += 1;
                }
            }
        }
        let at = src.byte();
        if !src.read_exact(&mut buf[..4 * np])? {
            return Err(file.parse(at, "the file ends inside a streamline's properties"));
        }
        let mut k = 0;
        for col in &mut sink.streamline_values {
            for _ in 0..col.channels {
                col.push(f32_at(&buf[4 * k..], be));
                k += 1;
            }
        }
        sink.end_streamline()?;
    }
    let summary = sink.finish()?;
    let kept = json!({
        "dimensions": h.dimensions,
        "voxel_sizes": h.voxel_sizes,
        "origin": h.origin,
        "vox_to_ras": h.vox_to_ras,
        "voxel_order": h.voxel_order,
    });
    add_root_attribute(&file, store.as_ref(), HEADER_ATTRIBUTE, kept)?;
    Ok(summary)
}

/// The header kept by an import (or the default one), with `n_count` and the names unset.
pub(crate) fn kept_header(store: &ZvStore) -> TrkHeader {
    let mut h = TrkHeader::default();
    let Some(k) = store.root_attributes().get(HEADER_ATTRIBUTE) else {
        return h;
    };
    let nums = |key: &str| -> Vec<f64> {
        k.get(key)
            .and_then(|v| v.as_array())
            .map(|a| a.iter().filter_map(serde_json::Value::as_f64).collect())
            .unwrap_or_default()
    };
    if let [a, b, c] = nums("dimensions")[..] {
        h.dimensions = [a as i16, b as i16, c as i16];
    }
    if let [a, b, c] = nums("voxel_sizes")[..] {
        h.voxel_sizes = [a as f32, b as f32, c as f32];
    }
    if let [a, b, c] = nums("origin")[..] {
        h.origin = [a as f32, b as f32, c as f32];
    }
    if let Some(rows) = k.get("vox_to_ras").and_then(|v| v.as_array()) {
        let m: Vec<Vec<f64>> = rows
            .iter()
            .filter_map(|r| r.as_array())
            .map(|r| r.iter().filter_map(serde_json::Value::as_f64).collect())
            .collect();
        if m.len() == 4 && m.iter().all(|r| r.len() == 4) {
            for (r, row) in m.iter().enumerate() {
                h.vox_to_ras[r].copy_from_slice(row);
            }
        }
    }
    if let Some(o) = k.get("voxel_order").and_then(|v| v.as_str()) {
        h.voxel_order = o.to_owned();
    }
    h
}

/// Writes level 0 of `store` as TRK to `out`, a batch of streamlines at a time; `file` names
/// the output in errors, `progress` gets one unit per streamline. The per-point scalars are
/// the vertex attributes (their channels as the first streamline's rows hold them, else
/// their channel names, else one), the per-streamline properties the object attributes.
pub fn export(
    store: &ZvStore,
    out: &mut dyn Write,
    file: &str,
    progress: &dyn Progress,
) -> Result<()> {
    let file = FileName(file.to_owned());
    let stream = streamline_stream(store, &file, "TRK")?;
    let mut h = kept_header(store);
    for info in stream.infos() {
        if info.dictionary.is_some() {
            return Err(file.unsupported(format!(
                "TRK holds numbers per point; vertex attribute `{}` is categorical",
                info.name
            )));
        }
    }
    let mut props = Vec::new();
    for (name, a) in stream.object_attributes() {
        if a.dictionary.is_some() {
            return Err(file.unsupported(format!(
                "TRK holds numbers per streamline; object attribute `{name}` is categorical"
            )));
        }
        let c = a.values.rows.channels();
        h.property_names.push((name.clone(), c));
        props.push((c, a));
    }
    h.n_properties = h.property_names.iter().map(|n| n.1).sum();
    h.n_count = stream.num_objects();
    let to_voxmm = affine::invert(&h.voxmm_to_rasmm(&file)?)
        .ok_or_else(|| file.unsupported("the kept vox_to_ras is singular"))?;
    let io = |e| file.io(e);
    let mut w = std::io::BufWriter::with_capacity(1 << 20, out);
    // the header waits for the first streamline, whose rows say the scalars' channels
    let mut channels: Option<Vec<usize>> = None;
    let mut head = |w: &mut std::io::BufWriter<&mut dyn Write>, first: Option<&Polyline>| {
        let c: Vec<usize> = stream
            .infos()
            .iter()
            .enumerate()
            .map(|(i, info)| {
                let stored =
                    first.and_then(|p| p.attributes.get(i)?.as_ref().map(|r| r.channels()));
                stored.or(info.channels()).unwrap_or(1)
            })
            .collect();
        h.scalar_names = stream
            .infos()
            .iter()
            .zip(&c)
            .map(|(info, &c)| (info.name.clone(), c))
            .collect();
        h.n_scalars = c.iter().sum();
        w.write_all(&h.to_bytes(&file)?).map_err(io)?;
        Ok::<_, crate::Error>(c)
    };
    let mut bytes = Vec::new();
    each_polyline(&stream, progress, &file, |pl| {
        let scalars = match &channels {
            Some(c) => c,
            None => channels.insert(head(&mut w, Some(&pl))?),
        };
        bytes.clear();
        let s = pl.id as usize;
        let n = i32::try_from(pl.positions.len()).map_err(|_| {
            file.unsupported(format!("streamline {s} has {} points", pl.positions.len()))
        })?;
        bytes.extend_from_slice(&n.to_le_bytes());
        for (v, p) in pl.positions.iter().enumerate() {
            let q = affine::apply(&to_voxmm, [p[0], p[1], p[2]]);
            for x in q {
                bytes.extend_from_slice(&(x as f32).to_le_bytes());
            }
            for (rows, c) in pl.attributes.iter().zip(scalars) {
                for ch in 0..*c {
                    let x = row_value(rows.as_ref(), v, ch);
                    bytes.extend_from_slice(&(x as f32).to_le_bytes());
                }
            }
        }
        for (c, a) in &props {
            for ch in 0..*c {
                bytes.extend_from_slice(&(object_value(a, s, ch) as f32).to_le_bytes());
            }
        }
        w.write_all(&bytes).map_err(io)
    })?;
    if channels.is_none() {
        head(&mut w, None)?;
    }
    w.flush().map_err(io)
}
