//! MRtrix `.tck`: tractography streamlines, positions only.
//!
//! A text header (`mrtrix tracks`, then `key: value` lines, ending with `END`) names the
//! binary data's `datatype` (`Float32LE`, `Float32BE`, `Float64LE`, `Float64BE`) and where it
//! starts (`file: . OFFSET`). The data are x, y, z triplets in RAS+mm (the world space nibabel
//! presents as is); a NaN triplet ends each streamline and an infinite one ends the data.
//!
//! **Import** ([`import`]): one object per streamline, in file order (streamline geometry;
//! float32 or float64 positions as the file stores them). The other header lines are kept as
//! the root attribute [`HEADER_ATTRIBUTE`] (an object of strings) and written back by export.
//! A `count` that disagrees with the streamlines read is an error (MRtrix writes `count: 0`
//! while a file is incomplete, so 0 is taken as "not known"); a file that ends inside a
//! triplet or a streamline is an error naming the byte.
//!
//! **Export** ([`export`]): level 0 of a 3-D streamline, polyline or line store, a batch of
//! objects at a time ([`zv_format::export::polylines`]), little endian, in the store's
//! vertex type (float64 stays float64, anything else is float32). TCK holds no
//! attributes: vertex and object attributes are not written.
//!
//! Written by hand: no maintained Rust crate reads TCK; the format is a few text lines and a
//! run of floats.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::Path;
use std::sync::Arc;

use zv_core::data_type::DataType;
use zv_core::store::Store;
use zv_format::progress::Progress;
use zv_format::writer::WriteSummary;
use zv_format::ZvStore;

use crate::error::{FileName, Location, Result};
use crate::options::ImportOptions;
use crate::root_attrs::add_root_attribute;
use crate::source::Source;
use crate::streamlines::{each_polyline, streamline_stream, StreamlineSink};

/// The root attribute holding the imported header's other lines.
pub const HEADER_ATTRIBUTE: &str = "tck_header";

/// The first line of a TCK file.
pub const MAGIC: &str = "mrtrix tracks";

/// Header lines read before giving up on finding `END`.
const MAX_HEADER_LINES: u64 = 100_000;

/// The parsed header.
#[derive(Debug, Clone, PartialEq)]
pub struct TckHeader {
    /// Float64 (else float32) data.
    pub float64: bool,
    /// Big-endian data.
    pub big_endian: bool,
    /// The byte offset of the data.
    pub offset: u64,
    /// The `count` line (`None`: absent).
    pub count: Option<u64>,
    /// The other `key: value` lines, in file order (repeated keys joined by newlines).
    pub other: BTreeMap<String, String>,
}

/// Reads the header lines through `END`.
fn read_header<R: Read>(src: &mut Source<R>) -> Result<TckHeader> {
    let file = src.file.clone();
    match src.read_line() {
        Ok(Some(l)) if l.trim_end() == MAGIC => {}
        Ok(_) | Err(_) => {
            return Err(file.parse(
                Location::Line(1),
                format!("not a TCK file (the first line is not `{MAGIC}`)"),
            ))
        }
    }
    let (mut datatype, mut offset, mut count) = (None, None, None);
    let mut other: BTreeMap<String, String> = BTreeMap::new();
    loop {
        let line = src.read_line()?.map(str::to_owned);
        let at = src.line();
        let Some(line) = line else {
            return Err(file.parse(Location::End, "the header has no `END` line"));
        };
        if line.trim() == "END" {
            break;
        }
        if matches!(at, Location::Line(n) if n > MAX_HEADER_LINES) {
            return Err(file.parse(at, "the header has no `END` line"));
        }
        let Some((k, v)) = line.split_once(':') else {
            return Err(file.parse(at, format!("`{line}` is not `key: value`")));
        };
        let (k, v) = (k.trim(), v.trim());
        match k {
            "datatype" => datatype = Some((at, v.to_owned())),
            "file" => {
                let n = v
                    .strip_prefix('.')
                    .and_then(|o| o.trim().parse::<u64>().ok())
                    .ok_or_else(|| {
                        file.parse(
                            at,
                            format!("`file: {v}` is not `. OFFSET` (data in this file)"),
                        )
                    })?;
                offset = Some(n);
            }
            "count" => {
                count = Some(
                    v.parse::<u64>()
                        .map_err(|_| file.parse(at, format!("count `{v}` is not a number")))?,
                )
            }
            _ => {
                other
                    .entry(k.to_owned())
                    .and_modify(|s| {
                        s.push('\n');
                        s.push_str(v);
                    })
                    .or_insert_with(|| v.to_owned());
            }
        }
    }
    let (float64, big_endian) = match datatype.as_ref().map(|(at, d)| (*at, d.as_str())) {
        Some((_, "Float32LE")) => (false, false),
        Some((_, "Float32BE")) => (false, true),
        Some((_, "Float64LE")) => (true, false),
        Some((_, "Float64BE")) => (true, true),
        Some((at, d)) => {
            return Err(file.parse(at, format!("datatype `{d}` is not Float32/64 LE/BE")))
        }
        None => return Err(file.parse(Location::End, "the header has no `datatype`")),
    };
    let offset =
        offset.ok_or_else(|| file.parse(Location::End, "the header has no `file: . OFFSET`"))?;
    Ok(TckHeader {
        float64,
        big_endian,
        offset,
        count,
        other,
    })
}

/// Imports the TCK file at `path` into `store` (empty). See the [module docs](self).
pub fn import(path: &Path, store: Arc<dyn Store>, opts: &ImportOptions) -> Result<WriteSummary> {
    let file = FileName(path.display().to_string());
    let f = crate::source::open(path, &file, opts)?;
    import_reader(f, file, store, opts)
}

/// Decodes one value.
fn value(b: &[u8], float64: bool, be: bool) -> f64 {
    if float64 {
        let mut v = [0u8; 8];
        v.copy_from_slice(&b[..8]);
        if be {
            f64::from_be_bytes(v)
        } else {
            f64::from_le_bytes(v)
        }
    } else {
        let v = [b[0], b[1], b[2], b[3]];
        f64::from(if be {
            f32::from_be_bytes(v)
        } else {
            f32::from_le_bytes(v)
        })
    }
}

/// Imports TCK from `reader`, named `file` in errors.
pub(crate) fn import_reader<R: Read>(
    reader: R,
    file: FileName,
    store: Arc<dyn Store>,
    opts: &ImportOptions,
) -> Result<WriteSummary> {
    let mut src = Source::new(reader, file.clone());
    let h = read_header(&mut src)?;
    let Location::Byte(pos) = src.byte() else {
        return Err(file.unsupported("no byte offset"));
    };
    if h.offset < pos {
        return Err(file.parse(
            Location::Byte(pos),
            format!("the data offset {} is inside the header", h.offset),
        ));
    }
    let mut skip = [0u8; 4096];
    let mut left = h.offset - pos;
    while left > 0 {
        let n = left.min(skip.len() as u64) as usize;
        if !src.read_exact(&mut skip[..n])? {
            return Err(file.parse(src.byte(), "the file ends before the data offset"));
        }
        left -= n as u64;
    }
    let vt = if h.float64 {
        DataType::Float64
    } else {
        DataType::Float32
    };
    let size = if h.float64 { 8 } else { 4 };
    let mut sink = StreamlineSink::new(&file, store.clone(), vt, opts);
    let mut buf = [0u8; 24];
    let mut open = 0u64;
    loop {
        let at = src.byte();
        if !src.read_exact(&mut buf[..3 * size])? {
            if src.byte() != at {
                return Err(file.parse(at, "the file ends inside a point"));
            }
            if open > 0 {
                return Err(file.parse(at, "the file ends inside a streamline"));
            }
            break;
        }
        let p = [0, 1, 2].map(|i| value(&buf[i * size..], h.float64, h.big_endian));
        if p.iter().any(|v| v.is_infinite()) {
            break;
        }
        if p.iter().any(|v| v.is_nan()) {
            sink.end_streamline()?;
            open = 0;
            continue;
        }
        sink.push_point(p);
        open += 1;
    }
    if let Some(c) = h.count.filter(|&c| c > 0 && c != sink.streamlines()) {
        return Err(file.parse(
            src.byte(),
            format!(
                "the header says {c} streamlines, the file has {}",
                sink.streamlines()
            ),
        ));
    }
    let summary = sink.finish()?;
    if !h.other.is_empty() {
        add_root_attribute(
            &file,
            store.as_ref(),
            HEADER_ATTRIBUTE,
            serde_json::json!(h.other),
        )?;
    }
    Ok(summary)
}

/// The header text of a file of `count` streamlines, with the data at its end.
pub(crate) fn header_text(other: &BTreeMap<String, String>, float64: bool, count: usize) -> String {
    let mut head = format!("{MAGIC}\n");
    for (k, v) in other {
        for line in v.lines() {
            head += &format!("{k}: {line}\n");
        }
    }
    head += &format!(
        "datatype: {}\ncount: {count:010}\n",
        if float64 { "Float64LE" } else { "Float32LE" }
    );
    // the offset's own digits move the data: settle it
    let mut offset = head.len() + "file: . \nEND\n".len();
    loop {
        let text = format!("{head}file: . {offset}\nEND\n");
        if text.len() == offset {
            return text;
        }
        offset = text.len();
    }
}

/// Writes level 0 of `store` as TCK to `out`, a batch of streamlines at a time (the count in
/// the header is the store's number of objects); `file` names the output in errors,
/// `progress` gets one unit per streamline.
pub fn export(
    store: &ZvStore,
    out: &mut dyn Write,
    file: &str,
    progress: &dyn Progress,
) -> Result<()> {
    let file = FileName(file.to_owned());
    let stream = streamline_stream(store, &file, "TCK")?;
    let float64 = stream.vertex_type() == DataType::Float64;
    let mut other = BTreeMap::new();
    if let Some(o) = store
        .root_attributes()
        .get(HEADER_ATTRIBUTE)
        .and_then(serde_json::Value::as_object)
    {
        for (k, v) in o {
            if let Some(s) = v.as_str() {
                other.insert(k.clone(), s.to_owned());
            }
        }
    }
    let io = |e| file.io(e);
    let mut w = std::io::BufWriter::with_capacity(1 << 20, out);
    let count = stream.num_objects() as usize;
    w.write_all(header_text(&other, float64, count).as_bytes())
        .map_err(io)?;
    let put = |w: &mut std::io::BufWriter<&mut dyn Write>, p: [f64; 3]| {
        for x in p {
            if float64 {
                w.write_all(&x.to_le_bytes())?;
            } else {
                w.write_all(&(x as f32).to_le_bytes())?;
            }
        }
        Ok::<(), std::io::Error>(())
    };
    each_polyline(&stream, progress, &file, |pl| {
        for p in pl.positions.iter() {
            put(&mut w, [p[0], p[1], p[2]]).map_err(io)?;
        }
        put(&mut w, [f64::NAN; 3]).map_err(io)
    })?;
    put(&mut w, [f64::INFINITY; 3]).map_err(io)?;
    w.flush().map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(text: &str) -> Result<TckHeader> {
        let mut src = Source::new(text.as_bytes(), FileName("t.tck".into()));
        read_header(&mut src)
    }

    #[test]
    fn the_header_is_read_through_end() {
        let h = header("mrtrix tracks\ndatatype: Float32BE\ncount: 0000000002\nstep_size: 0.5\nfile: . 90\nEND\n");
        assert_eq!(
            h.ok(),
            Some(TckHeader {
                float64: false,
                big_endian: true,
                offset: 90,
                count: Some(2),
                other: [("step_size".to_owned(), "0.5".to_owned())].into(),
            })
        );
    }

    #[test]
    fn bad_headers_name_the_line() {
        let err = |t: &str| header(t).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err("PLY\n").contains("t.tck: line 1: not a TCK file"));
        assert!(err("mrtrix tracks\ndatatype: Int8\nfile: . 40\nEND\n")
            .contains("line 2: datatype `Int8`"));
        assert!(
            err("mrtrix tracks\ndatatype: Float32LE\nfile: other.dat 0\nEND\n")
                .contains("line 3: `file: other.dat 0` is not `. OFFSET`")
        );
        assert!(err("mrtrix tracks\ndatatype: Float32LE\nfile: . 40\n")
            .contains("end of file: the header has no `END`"));
        assert!(err("mrtrix tracks\nfile: . 40\nEND\n").contains("no `datatype`"));
        assert!(err("mrtrix tracks\ngarbage\nEND\n").contains("line 2: `garbage` is not"));
    }

    #[test]
    fn the_written_offset_is_where_the_header_ends() {
        for n in [0, 9, 10_000] {
            let t = header_text(&BTreeMap::new(), false, n);
            let h = header(&t).ok();
            assert_eq!(h.map(|h| h.offset), Some(t.len() as u64));
        }
    }
}
