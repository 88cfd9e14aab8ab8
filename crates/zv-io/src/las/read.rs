//! Reading a LAS/LAZ file into a new store, in batches (see the [module docs](super)).

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::Arc;

use zv_core::data_type::DataType;
use zv_core::store::Store;
use zv_format::writer::WriteSummary;
use zv_format::Geometry;

use super::dims::{decode, dims_of};
use super::header::{Kept, HEADER_ATTRIBUTE};
use crate::error::{FileName, Location, Result};
use crate::options::ImportOptions;
use crate::root_attrs::add_root_attribute;
use crate::sink::{Column, SinkSpec, VertexSink};

/// The size of an extended VLR's header (before its payload).
const EVLR_HEADER_LEN: u64 = 60;

/// What the header says about where the points are, checked against the file's length
/// before the `las` crate reads it (it allocates an extended VLR's payload at the length the
/// header gives). Gives the byte offset of the point records.
fn precheck(file: &FileName, f: &mut File) -> Result<u64> {
    let len = f.metadata().map_err(|e| file.io(e))?.len();
    let raw =
        las::raw::Header::read_from(&mut *f).map_err(|e| las_error(file, Location::Byte(0), e))?;
    if let Some(evlr) = raw.evlr {
        let start = evlr.start_of_first_evlr;
        let mut head = [0u8; EVLR_HEADER_LEN as usize];
        let fits = start
            .checked_add(EVLR_HEADER_LEN)
            .is_some_and(|end| end <= len);
        if !fits {
            return Err(file.parse(
                Location::Byte(start),
                format!("the header's first extended VLR starts at byte {start}, past the end of the file ({len} bytes)"),
            ));
        }
        f.seek(SeekFrom::Start(start)).map_err(|e| file.io(e))?;
        f.read_exact(&mut head).map_err(|e| file.io(e))?;
        let mut n = [0u8; 8];
        n.copy_from_slice(&head[20..28]);
        let payload = u64::from_le_bytes(n);
        if payload > len - start - EVLR_HEADER_LEN {
            return Err(file.parse(
                Location::Byte(start + 20),
                format!(
                    "the extended VLR claims {payload} bytes; the file has {} after it",
                    len - start - EVLR_HEADER_LEN
                ),
            ));
        }
    }
    let compressed = raw.point_data_record_format & 0x80 != 0;
    let n = if raw.number_of_point_records > 0 {
        u64::from(raw.number_of_point_records)
    } else {
        raw.large_file.map_or(0, |l| l.number_of_point_records)
    };
    let record = u64::from(raw.point_data_record_length);
    let start = u64::from(raw.offset_to_point_data);
    if !compressed && record > 0 {
        let fit = len.saturating_sub(start) / record;
        if fit < n {
            return Err(file.parse(
                Location::Byte(start + fit * record),
                format!(
                    "the file ends in point {fit}: the header says {n} points of {record} bytes from byte {start} (the file has {len} bytes)"
                ),
            ));
        }
    }
    if compressed {
        check_chunk_table(file, f, start, len)?;
    }
    f.seek(SeekFrom::Start(0)).map_err(|e| file.io(e))?;
    Ok(start)
}

/// The LAZ chunk table's count against the file's length (the `laz` crate reserves room for
/// the count it reads; every chunk takes at least a byte of the file). The table is found as
/// the `laz` crate finds it: at the offset stored where the point data starts, else at the
/// offset in the file's last 8 bytes; a file with neither is left to the `laz` crate's error.
fn check_chunk_table(file: &FileName, f: &mut File, start: u64, len: u64) -> Result<()> {
    let mut word = [0u8; 8];
    let read_at = |f: &mut File, at: u64, buf: &mut [u8]| -> Result<bool> {
        if at.checked_add(buf.len() as u64).is_none_or(|end| end > len) {
            return Ok(false);
        }
        f.seek(SeekFrom::Start(at)).map_err(|e| file.io(e))?;
        f.read_exact(buf).map_err(|e| file.io(e))?;
        Ok(true)
    };
    if !read_at(f, start, &mut word)? {
        return Err(file.parse(
            Location::Byte(start),
            "the LAZ point data is missing (the file ends where it starts)",
        ));
    }
    let mut table = i64::from_le_bytes(word);
    if table <= start as i64 && len >= 8 && read_at(f, len - 8, &mut word)? {
        table = i64::from_le_bytes(word);
    }
    let Ok(table) = u64::try_from(table) else {
        return Ok(());
    };
    if table <= start {
        return Ok(());
    }
    if !read_at(f, table, &mut word)? {
        return Err(file.parse(
            Location::Byte(start),
            format!(
                "the LAZ chunk table is at byte {table}, past the end of the file ({len} bytes)"
            ),
        ));
    }
    let chunks = u32::from_le_bytes([word[4], word[5], word[6], word[7]]);
    if u64::from(chunks) > len {
        return Err(file.parse(
            Location::Byte(table + 4),
            format!("the LAZ chunk table claims {chunks} chunks; the file has {len} bytes"),
        ));
    }
    Ok(())
}

/// A `las` crate error at `at`.
pub(crate) fn las_error(file: &FileName, at: Location, e: las::Error) -> crate::Error {
    file.parse(at, e.to_string())
}

/// Imports the LAS or LAZ file at `path` into `store` (empty). See the [module docs](super).
pub fn import(path: &Path, store: Arc<dyn Store>, opts: &ImportOptions) -> Result<WriteSummary> {
    let file = FileName(path.display().to_string());
    let mut f = File::open(path).map_err(|e| file.io(e))?;
    let start = precheck(&file, &mut f)?;
    let mut reader = las::Reader::new(BufReader::with_capacity(1 << 20, f)).map_err(|e| {
        // the header was read by the check: what fails here is what follows it
        file.parse(
            Location::Byte(start),
            format!("the LAZ point data (its chunk table) or the VLRs: {e}"),
        )
    })?;
    let header = reader.header().clone();
    let format = *header.point_format();
    if format.has_waveform {
        return Err(file.unsupported(format!(
            "point format {} carries waveform packets, which zv does not import",
            format.to_u8().unwrap_or(0)
        )));
    }
    if format.extra_bytes > 0 {
        return Err(file.unsupported(format!(
            "the point records carry {} extra bytes (extra dimensions), which zv does not import",
            format.extra_bytes
        )));
    }
    let kept = Kept::of(&header).map_err(|e| las_error(&file, Location::Byte(0), e))?;
    let dims = dims_of(&format);
    let columns = dims
        .iter()
        .map(|d| Column::numeric(d.name(), d.data_type()))
        .collect();
    let spec = SinkSpec {
        geometry: Geometry::PointCloud,
        ndim: 3,
        vertex_type: DataType::Float64,
        columns,
        with_ids: false,
    };
    let mut sink = VertexSink::new(&file, store.clone(), spec, opts);
    let transforms = *header.transforms();
    let total = header.number_of_points();
    let record_len = usize::from(format.len());
    let batch = opts.batch.max(1) as u64;
    let mut pd = las::PointDataBuilder::new().for_header(&header).build();
    let mut done = 0u64;
    while done < total {
        let at = if format.is_compressed {
            Location::Point(done)
        } else {
            Location::Byte(start + done * record_len as u64)
        };
        let n = reader
            .fill_points(batch.min(total - done), &mut pd)
            .map_err(|e| file.parse(at, format!("points {done}.. of {total}: {e}")))?;
        if n == 0 {
            return Err(file.parse(
                at,
                format!("the file ends after {done} of the header's {total} points"),
            ));
        }
        for (i, rec) in pd.raw_bytes().chunks_exact(record_len).enumerate() {
            let p = las::raw::Point::read_from(rec, &format)
                .map_err(|e| file.parse(Location::Point(done + i as u64), e.to_string()))?;
            sink.coords.extend_from_slice(&[
                transforms.x.direct(p.x),
                transforms.y.direct(p.y),
                transforms.z.direct(p.z),
            ]);
            let v = decode(&p);
            for (c, d) in dims.iter().enumerate() {
                sink.columns[c].push_f64(v[*d as usize]);
            }
            sink.maybe_flush()?;
        }
        done += n;
    }
    let summary = sink.finish()?;
    add_root_attribute(&file, store.as_ref(), HEADER_ATTRIBUTE, kept.to_json())?;
    Ok(summary)
}
